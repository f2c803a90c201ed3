#include "node/sim/recorded_run.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "coding/neighbourhood_code.h"
#include "node/config/resolved_config.h"
#include "node/metrics/output_files.h"
#include "topology/topology.h"

namespace fastk::node::sim {
namespace {

using Json = nlohmann::ordered_json;

std::invalid_argument bad(const std::filesystem::path& folder, const std::string& what) {
  return std::invalid_argument("fastk sim --replay " + folder.string() + ": " + what);
}

Json read_json(const std::filesystem::path& folder, const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in)
    throw bad(folder, "no " + path.filename().string() + " in " + path.parent_path().string());
  Json j = Json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw bad(folder, path.string() + " is not JSON");
  return j;
}

// A CSV of the run folder, read row by row with its columns found by name.
class CsvRows {
 public:
  CsvRows(const std::filesystem::path& folder, const std::string& name,
          const std::vector<std::string>& wanted)
      : folder_(folder), path_(folder / name), in_(path_) {
    if (!in_) {
      throw bad(folder,
                "no " + name +
                    (name == "arrivals.csv" ? " (recorded by a fastk before replays, or with "
                                              "run.neighbours_csv = false: run it again)"
                                            : ""));
    }
    std::string header;
    std::getline(in_, header);
    const std::vector<std::string> names = split(header);
    for (const auto& w : wanted) {
      const auto it = std::find(names.begin(), names.end(), w);
      if (it == names.end()) throw bad(folder, name + " has no column '" + w + "'");
      index_.push_back(static_cast<std::size_t>(it - names.begin()));
    }
  }
  // The wanted columns of the next row, as numbers; false at the end.
  bool next(std::vector<double>& values) {
    std::string line;
    if (!std::getline(in_, line)) return false;
    ++line_;
    const std::vector<std::string> cells = split(line);
    values.clear();
    for (const std::size_t i : index_) {
      char* end = nullptr;
      const double v = i < cells.size() ? std::strtod(cells[i].c_str(), &end) : NAN;
      if (i >= cells.size() || end == cells[i].c_str() || *end != '\0') {
        throw bad(folder_, path_.filename().string() + " line " + std::to_string(line_ + 1) +
                               ": not a row of numbers");
      }
      values.push_back(v);
    }
    return true;
  }
  std::string where() const {
    return path_.filename().string() + " line " + std::to_string(line_ + 1);
  }

 private:
  static std::vector<std::string> split(const std::string& line) {
    std::vector<std::string> cells;
    std::stringstream s(line);
    for (std::string cell; std::getline(s, cell, ',');) cells.push_back(cell);
    return cells;
  }
  std::filesystem::path folder_, path_;
  std::ifstream in_;
  std::vector<std::size_t> index_;
  std::int64_t line_ = 0;
};

// The config the run ran: its copy in the folder, relative paths resolved where the original
// was (the peers' launch.json names it), with the overrides of the run's summary.
ExperimentConfig recorded_config(const std::filesystem::path& folder, const Json& summary) {
  std::ifstream in(folder / "config.toml");
  if (!in) throw bad(folder, "no config.toml (not the folder of a `fastk run`)");
  std::stringstream text;
  text << in.rdbuf();
  std::filesystem::path base = folder;
  std::ifstream launch(metrics::peer_folder(folder, 0) / "launch.json");
  const Json l = launch ? Json::parse(launch, nullptr, false) : Json();
  if (l.is_object() && l.contains("config") && l["config"].is_string()) {
    base = std::filesystem::path(l["config"].get<std::string>()).parent_path();
  }
  std::vector<std::string> overrides;
  if (summary.contains("overrides") && summary["overrides"].is_array()) {
    for (const auto& o : summary["overrides"]) overrides.push_back(o.get<std::string>());
  }
  return parse_config(text.str(), (folder / "config.toml").string(), base, overrides);
}

// What a replay re-enacts: one message per link and tag, and gradients the trace timed.
void check_replayable(const std::filesystem::path& folder, const ExperimentConfig& c) {
  const consensus::ProtocolConfig& p = c.consensus.protocol;
  if (p.policy.kind == consensus::PolicyKind::kAdPsgd) {
    throw bad(folder,
              "policy ad_psgd is not replayed (a link carries requests and replies of "
              "one tag, which arrivals.csv does not tell apart)");
  }
  if (p.coding.scheme != coding::Scheme::kNone) {
    throw bad(folder,
              "coded runs ([coding]) are not replayed (a link carries a model and coded "
              "gradients of one tag)");
  }
  if (p.validate && p.validation_score == consensus::ValidationScore::kLoss) {
    throw bad(folder, "validation by losses is not replayed (the record does not time it)");
  }
}

void read_iterations(const std::filesystem::path& folder, RecordedRun& run) {
  CsvRows rows(folder, "iterations.csv",
               {"peer", "iteration", "awaited", "start_s", "gradient_done_s", "update_s"});
  const int n = static_cast<int>(run.peers.size());
  for (std::vector<double> v; rows.next(v);) {
    const int peer = static_cast<int>(v[0]);
    if (!(v[0] >= 0 && v[0] < n))
      throw bad(folder, rows.where() + ": no peer " + std::to_string(peer));
    RecordedPeer& p = run.peers[static_cast<std::size_t>(peer)];
    if (v[1] != static_cast<double>(p.iterations.size())) {
      throw bad(folder, rows.where() + ": peer " + std::to_string(peer) + "'s iteration " +
                            std::to_string(static_cast<std::int64_t>(v[1])) + " comes after " +
                            std::to_string(p.iterations.size()) + " rows of it");
    }
    p.iterations.push_back(
        {v[3] + p.began_s, v[4] + p.began_s, v[5] + p.began_s, static_cast<int>(v[2]), {}});
  }
  for (int i = 0; i < n; ++i) {
    const auto have =
        static_cast<std::int64_t>(run.peers[static_cast<std::size_t>(i)].iterations.size());
    if (have < run.config.run.iterations) {
      throw bad(folder, "the trace is cut short: peer " + std::to_string(i) + " ran " +
                            std::to_string(have) + " of " +
                            std::to_string(run.config.run.iterations) +
                            " iterations (a replay needs every iteration's times: record a run "
                            "that ends by its iterations)");
    }
  }
}

void read_used(const std::filesystem::path& folder, RecordedRun& run) {
  CsvRows rows(folder, "neighbours.csv", {"peer", "iteration", "neighbour", "used", "tag_lag"});
  for (std::vector<double> v; rows.next(v);) {
    const auto peer = static_cast<std::size_t>(v[0]);
    const auto k = static_cast<std::size_t>(v[1]);
    if (peer >= run.peers.size() || k >= run.peers[peer].iterations.size()) {
      throw bad(folder, rows.where() + ": no such peer and iteration in iterations.csv");
    }
    if (v[3] != 0) {
      run.peers[peer].iterations[k].used.emplace_back(static_cast<int>(v[2]),
                                                      static_cast<std::int64_t>(v[1] - v[4]));
    }
  }
  for (auto& p : run.peers) {
    for (auto& it : p.iterations) std::sort(it.used.begin(), it.used.end());
  }
}

void read_arrivals(const std::filesystem::path& folder, const topology::Graph& graph,
                   RecordedRun& run) {
  CsvRows rows(folder, "arrivals.csv", {"peer", "tag", "from", "at_s", "bye"});
  const int n = static_cast<int>(run.peers.size());
  for (std::vector<double> v; rows.next(v);) {
    const int to = static_cast<int>(v[0]), from = static_cast<int>(v[2]);
    const bool ids = v[0] >= 0 && v[0] < n && v[2] >= 0 && v[2] < n;
    if (!ids || from == to || !graph.has_edge(to, from) || !std::isfinite(v[3])) {
      throw bad(folder,
                rows.where() + ": peer " + std::to_string(to) + " took a message from " +
                    std::to_string(from) +
                    ", not its neighbour in the config's graph (a trace of another config?)");
    }
    const double at_s = v[3] + run.peers[static_cast<std::size_t>(to)].began_s;
    if (v[4] != 0) {
      run.goodbyes.emplace(std::pair{to, from}, at_s);
    } else {
      run.arrivals[{to, from}].emplace(static_cast<std::int64_t>(v[1]), at_s);
    }
    ++run.messages;
  }
}

// When each peer began, on one clock: the machine's monotonic clock when every peer ran on it
// (each summary's monotonic and Unix times then differ by one offset, within the moment
// between reading the two clocks), else the Unix clock.
std::vector<double> began_times(const std::filesystem::path& folder, int n, bool& shared) {
  std::vector<double> unix_s, monotonic_s;
  for (int i = 0; i < n; ++i) {
    const Json s = read_json(folder, metrics::peer_folder(folder, i) / "summary.json");
    for (const char* key : {"first_iteration_unix_s", "first_iteration_monotonic_s"}) {
      if (!s.contains(key) || !s[key].is_number()) {
        throw bad(folder, "peer " + std::to_string(i) + "'s summary.json has no " + key +
                              " (the peer did not begin, or a fastk before replays wrote it)");
      }
    }
    unix_s.push_back(s["first_iteration_unix_s"].get<double>());
    monotonic_s.push_back(s["first_iteration_monotonic_s"].get<double>());
  }
  constexpr double kSameMachine_s = 0.01;
  shared = true;
  for (int i = 0; i < n; ++i) {
    const auto u = static_cast<std::size_t>(i);
    shared = shared &&
             std::abs((unix_s[u] - monotonic_s[u]) - (unix_s[0] - monotonic_s[0])) < kSameMachine_s;
  }
  return shared ? monotonic_s : unix_s;
}

// An absent timers.csv: no peer's timer fired (merge_peer_csv writes none without rows).
void read_timers(const std::filesystem::path& folder, RecordedRun& run) {
  run.timers_fired_s.resize(run.peers.size());
  if (!std::filesystem::exists(folder / "timers.csv")) return;
  CsvRows rows(folder, "timers.csv", {"peer", "at_s"});
  for (std::vector<double> v; rows.next(v);) {
    if (!(v[0] >= 0 && v[0] < static_cast<double>(run.peers.size()))) {
      throw bad(folder, rows.where() + ": no such peer");
    }
    const auto peer = static_cast<std::size_t>(v[0]);
    run.timers_fired_s[peer].push_back(v[1] + run.peers[peer].began_s);
  }
  for (auto& t : run.timers_fired_s) std::sort(t.begin(), t.end());
}

}  // namespace

RecordedRun read_recorded_run(const std::filesystem::path& folder) {
  if (!std::filesystem::is_directory(folder)) throw bad(folder, "no such folder");
  const Json summary = read_json(folder, folder / "summary.json");
  if (summary.value("runtime", std::string()) != "real") {
    throw bad(folder, "not a real run's folder (its summary.json says runtime '" +
                          summary.value("runtime", std::string("?")) + "')");
  }
  RecordedRun run;
  run.folder = folder;
  run.config = recorded_config(folder, summary);
  check_replayable(folder, run.config);
  const topology::Topology topo = topology::build_topology(run.config.topology);
  const int n = topo.graph.size();
  const std::vector<double> began = began_times(folder, n, run.clocks_shared);
  const double first = *std::min_element(began.begin(), began.end());
  run.peers.resize(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < began.size(); ++i) run.peers[i].began_s = began[i] - first;
  read_iterations(folder, run);
  read_used(folder, run);
  read_arrivals(folder, topo.graph, run);
  read_timers(folder, run);
  if (summary.contains("time_to_target_s") && summary["time_to_target_s"].is_number()) {
    run.time_to_target_s = summary["time_to_target_s"].get<double>();
  }
  run.training_phase_s = summary.value("training_phase_s", 0.0);
  return run;
}

void check_same_config(const RecordedRun& run, const ExperimentConfig& other) {
  const auto as_json = [](const ExperimentConfig& c) {
    Json j = resolved_config(c, topology::build_topology(c.topology), 0);
    j["run"].erase("name"), j["run"].erase("output"), j["run"].erase("eval_interval_s");
    j.erase("sim");
    return j;
  };
  const Json recorded = as_json(run.config), given = as_json(other);
  std::string differences;
  int count = 0;
  for (const auto& [table, keys] : recorded.items()) {
    if (!keys.is_object()) continue;
    for (const auto& [key, value] : keys.items()) {
      const Json mine = given.contains(table) ? given[table].value(key, Json()) : Json();
      if (mine == value || ++count > 4) continue;
      differences += "; " + table + "." + key + " is " + value.dump() + " in the record, " +
                     mine.dump() + " in CONFIG";
    }
  }
  if (count > 0) {
    throw bad(run.folder, "the trace is of another config" + differences +
                              (count > 4 ? "; and " + std::to_string(count - 4) + " more" : ""));
  }
}

}  // namespace fastk::node::sim
