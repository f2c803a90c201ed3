// [churn]: peers leaving and coming back on a schedule (docs/simulation.md §9). One row format
// for the config's `events` and for a `file`: "TIME_S,PEER,EVENT", EVENT "leave" or "join".
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "consensus/comeback.h"
#include "node/config/tables.h"

namespace fastk::node {
namespace {

// The most rows a churn file may have: far more than any run's peers leave, and a bound on
// what a wrong file (a data set given by mistake) costs before it is refused.
constexpr std::int64_t kMaxChurnRows = 1'000'000;

std::optional<ChurnEvent> parse_row(const std::string& row, std::string& why) {
  std::stringstream in(row);
  std::string time, peer, event, extra;
  if (!std::getline(in, time, ',') || !std::getline(in, peer, ',') ||
      !std::getline(in, event, ',') || std::getline(in, extra, ',')) {
    why = "'" + row + "' is not TIME_S,PEER,EVENT";
    return std::nullopt;
  }
  ChurnEvent e;
  char* end = nullptr;
  e.at_s = std::strtod(time.c_str(), &end);
  if (time.empty() || *end != '\0' || !std::isfinite(e.at_s) || e.at_s < 0) {
    why = "time '" + time + "' is not a number of seconds >= 0";
    return std::nullopt;
  }
  const long id = std::strtol(peer.c_str(), &end, 10);
  if (peer.empty() || *end != '\0' || id < 0 || id > topology::kMaxPeers) {
    why = "peer '" + peer + "' is not a peer id";
    return std::nullopt;
  }
  e.peer = static_cast<int>(id);
  if (event == "leave") {
    e.kind = ChurnEvent::Kind::kLeave;
  } else if (event == "join") {
    e.kind = ChurnEvent::Kind::kJoin;
  } else {
    why = "event '" + event + "' is not leave or join";
    return std::nullopt;
  }
  return e;
}

void read_file(TableReader& t, const std::filesystem::path& path, std::vector<ChurnEvent>& out) {
  std::ifstream in(path);
  if (!in) {
    t.errors().add(t.path_of("file"), "cannot read '" + path.string() + "'");
    return;
  }
  std::string line;
  const auto next_line = [&] {
    if (!std::getline(in, line)) return false;
    if (!line.empty() && line.back() == '\r') line.pop_back();  // a file written on Windows
    return true;
  };
  if (!next_line() || line != "time_s,peer,event") {
    t.errors().add(t.path_of("file"),
                   "'" + path.string() + "' does not begin with the header time_s,peer,event");
    return;
  }
  for (std::int64_t n = 2; next_line(); ++n) {
    if (n > kMaxChurnRows) {
      t.errors().add(t.path_of("file"), path.string() + ": more than 1000000 rows");
      return;
    }
    if (line.empty()) continue;
    std::string why;
    if (auto e = parse_row(line, why)) {
      out.push_back(*e);
    } else {
      t.errors().add(t.path_of("file"), path.string() + " line " + std::to_string(n) + ": " + why);
    }
  }
}

// Each peer's events alternate, leave first, at times that grow.
void check_schedule(TableReader& t, const std::vector<ChurnEvent>& schedule, int peers) {
  std::map<int, const ChurnEvent*> last;
  for (const ChurnEvent& e : schedule) {
    const std::string who = "peer " + std::to_string(e.peer);
    if (peers > 0 && e.peer >= peers) {
      t.errors().add(t.path_of("events"),
                     who + " is not a peer of the run (0 to " + std::to_string(peers - 1) + ")");
      return;
    }
    const ChurnEvent* before = last[e.peer];
    const bool leaving = e.kind == ChurnEvent::Kind::kLeave;
    if (!before && !leaving) {
      t.errors().add(t.path_of("events"), who + " joins at " + std::to_string(e.at_s) +
                                              " s without having left (every peer starts)");
    } else if (before && before->kind == e.kind) {
      t.errors().add(t.path_of("events"),
                     who + (leaving ? " leaves" : " joins") + " twice in a row");
    } else if (before && before->at_s >= e.at_s) {
      t.errors().add(t.path_of("events"), who + "'s events at " + std::to_string(before->at_s) +
                                              " s and " + std::to_string(e.at_s) +
                                              " s: a peer's events must come at later times");
    }
    last[e.peer] = &e;
  }
}

}  // namespace

void read_churn_table(TableReader& t, ExperimentConfig& config,
                      const std::filesystem::path& base_dir) {
  ChurnConfig& churn = config.churn;
  if (!t.present()) return;
  read_string_list(t, "events", churn.events);
  t.read("file", churn.file);
  for (std::size_t i = 0; i < churn.events.size(); ++i) {
    std::string why;
    if (auto e = parse_row(churn.events[i], why)) {
      churn.schedule.push_back(*e);
    } else {
      t.errors().add(t.path_of("events") + "[" + std::to_string(i) + "]", why);
    }
  }
  if (!churn.file.empty()) {
    const std::filesystem::path path = std::filesystem::path(churn.file).is_absolute()
                                           ? std::filesystem::path(churn.file)
                                           : base_dir / churn.file;
    churn.file = path.string();
    read_file(t, path, churn.schedule);
  }
  std::stable_sort(churn.schedule.begin(), churn.schedule.end(),
                   [](const ChurnEvent& a, const ChurnEvent& b) { return a.at_s < b.at_s; });
  check_schedule(t, churn.schedule, config.topology.peers);
  const bool joins = std::any_of(churn.schedule.begin(), churn.schedule.end(),
                                 [](const auto& e) { return e.kind == ChurnEvent::Kind::kJoin; });
  if (joins) {
    if (const auto why =
            consensus::why_no_comeback(config.consensus.protocol, consensus::Comeback::kJoining)) {
      t.errors().add(t.path_of("events"), "a peer cannot come back in this run: " + *why);
    }
  }
  t.finish();
}

nlohmann::ordered_json churn_table_json(const ChurnConfig& churn) {
  return {{"events", churn.events}, {"file", churn.file}};
}

}  // namespace fastk::node
