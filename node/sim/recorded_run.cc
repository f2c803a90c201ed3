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
    wanted_ = wanted;
  }
  // Wanted column i of the row next() read, as a whole number in [lo, hi].
  std::int64_t whole(const std::vector<double>& v, std::size_t i, double lo, double hi) const {
    if (!(v[i] >= lo && v[i] <= hi && v[i] == std::floor(v[i]))) {
      throw bad(folder_, where() + ": " + wanted_[i] + " is not a whole number from " +
                             std::to_string(static_cast<std::int64_t>(lo)) + " to " +
                             std::to_string(static_cast<std::int64_t>(hi)));
    }
    return static_cast<std::int64_t>(v[i]);
  }
  // Wanted column i as a time: finite, and within a day of the run's start (a run is
  // replayed second by second of its evaluation interval: a wrong time must not stretch it).
  double time(const std::vector<double>& v, std::size_t i) const {
    constexpr double kLongestRun_s = 86400;
    if (!(std::abs(v[i]) <= kLongestRun_s)) {
      throw bad(folder_, where() + ": " + wanted_[i] + " is not a time of the run");
    }
    return v[i];
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
  std::vector<std::string> wanted_;
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
    for (const auto& o : summary["overrides"]) {
      if (!o.is_string()) throw bad(folder, "summary.json's overrides are not strings");
      overrides.push_back(o.get<std::string>());
    }
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
  if (!c.churn.schedule.empty()) {
    throw bad(folder,
              "runs with [churn] are not replayed (the record does not say when each "
              "process of a peer that came back began)");
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
    const auto peer = static_cast<std::size_t>(rows.whole(v, 0, 0, n - 1));
    RecordedPeer& p = run.peers[peer];
    const std::int64_t k = rows.whole(v, 1, 0, 1e15);
    if (k != static_cast<std::int64_t>(p.iterations.size())) {
      throw bad(folder, rows.where() + ": peer " + std::to_string(peer) + "'s iteration " +
                            std::to_string(k) + " comes after " +
                            std::to_string(p.iterations.size()) + " rows of it");
    }
    const double start = rows.time(v, 3), done = rows.time(v, 4), update = rows.time(v, 5);
    if (!(start <= done && done <= update)) {
      throw bad(folder, rows.where() +
                            ": the iteration does not begin, take its gradient and "
                            "update in that order");
    }
    p.iterations.push_back({start + p.began_s,
                            done + p.began_s,
                            update + p.began_s,
                            static_cast<int>(rows.whole(v, 2, 0, n)),
                            {}});
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
  const int n = static_cast<int>(run.peers.size());
  for (std::vector<double> v; rows.next(v);) {
    const auto peer = static_cast<std::size_t>(rows.whole(v, 0, 0, n - 1));
    const auto k = rows.whole(v, 1, 0, static_cast<double>(run.peers[peer].iterations.size()) - 1);
    if (v[3] == 0) continue;
    const auto neighbour = static_cast<int>(rows.whole(v, 2, 0, n - 1));
    const std::int64_t tag = k - rows.whole(v, 4, -1e15, 1e15);
    run.peers[peer].iterations[static_cast<std::size_t>(k)].used.emplace_back(neighbour, tag);
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
    const auto to = static_cast<int>(rows.whole(v, 0, 0, n - 1));
    const auto from = static_cast<int>(rows.whole(v, 2, 0, n - 1));
    const std::int64_t tag = rows.whole(v, 1, 0, 1e15);
    if (from == to || !graph.has_edge(to, from)) {
      throw bad(folder,
                rows.where() + ": peer " + std::to_string(to) + " took a message from " +
                    std::to_string(from) +
                    ", not its neighbour in the config's graph (a trace of another config?)");
    }
    const double at_s = rows.time(v, 3) + run.peers[static_cast<std::size_t>(to)].began_s;
    if (v[4] != 0) {
      run.goodbyes.emplace(std::pair{to, from}, at_s);
    } else {
      run.arrivals[{to, from}].emplace(tag, at_s);
    }
    ++run.messages;
  }
}

// When each peer began, on one clock: the machine's monotonic clock when every peer ran on it
// (each summary's monotonic and Unix times then differ by one offset, within the moment
// between reading the two clocks), else the Unix clock. A peer that came back (a failure, and
// `--restart-failed`) ran as two processes, whose seam the record does not hold: refused.
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
    if (s.value("resumed", false)) {
      throw bad(folder, "peer " + std::to_string(i) +
                            " came back after a failure (--restart-failed): a replay re-enacts "
                            "one process per peer");
    }
    unix_s.push_back(s["first_iteration_unix_s"].get<double>());
    monotonic_s.push_back(s["first_iteration_monotonic_s"].get<double>());
  }
  constexpr double kSameMachine_s = 0.01;
  shared = true;
  for (std::size_t i = 0; i < unix_s.size(); ++i) {
    shared = shared &&
             std::abs((unix_s[i] - monotonic_s[i]) - (unix_s[0] - monotonic_s[0])) < kSameMachine_s;
  }
  const std::vector<double>& began = shared ? monotonic_s : unix_s;
  // Peers start within a moment of the go; minutes apart, the hosts' clocks disagree.
  constexpr double kLongestStartSpread_s = 60;
  const auto [first, last] = std::minmax_element(began.begin(), began.end());
  if (*last - *first > kLongestStartSpread_s) {
    throw bad(folder, "the peers' first iterations lie " + std::to_string(*last - *first) +
                          " s apart on their hosts' clocks: the clocks disagree (synchronise "
                          "them, e.g. with NTP, and record the run again)");
  }
  return began;
}

// An absent timers.csv: no peer's timer fired (merge_peer_csv writes none without rows).
void read_timers(const std::filesystem::path& folder, RecordedRun& run) {
  run.timers_fired_s.resize(run.peers.size());
  if (!std::filesystem::exists(folder / "timers.csv")) return;
  CsvRows rows(folder, "timers.csv", {"peer", "at_s"});
  const double last_peer = static_cast<double>(run.peers.size()) - 1;
  for (std::vector<double> v; rows.next(v);) {
    const auto peer = static_cast<std::size_t>(rows.whole(v, 0, 0, last_peer));
    run.timers_fired_s[peer].push_back(rows.time(v, 1) + run.peers[peer].began_s);
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
  // Every key of either, flattened to "/table/key", so that one only CONFIG has counts too.
  const auto as_json = [](const ExperimentConfig& c) {
    Json j = resolved_config(c, topology::build_topology(c.topology), 0);
    for (const char* key : {"name", "output", "eval_interval_s"}) j["run"].erase(key);
    j.erase("sim");
    return j.flatten();
  };
  const Json recorded = as_json(run.config), given = as_json(other);
  std::vector<std::string> keys;
  for (const auto& [key, value] : recorded.items()) keys.push_back(key);
  for (const auto& [key, value] : given.items()) {
    if (!recorded.contains(key)) keys.push_back(key);
  }
  std::string differences;
  int count = 0;
  for (const std::string& key : keys) {
    const Json mine = recorded.value(key, Json()), theirs = given.value(key, Json());
    if (mine == theirs || ++count > 4) continue;
    std::string name = key.substr(1);
    std::replace(name.begin(), name.end(), '/', '.');
    differences +=
        "; " + name + " is " + mine.dump() + " in the record, " + theirs.dump() + " in CONFIG";
  }
  if (count > 0) {
    throw bad(run.folder, "the trace is of another config" + differences +
                              (count > 4 ? "; and " + std::to_string(count - 4) + " more" : ""));
  }
}

}  // namespace fastk::node::sim
