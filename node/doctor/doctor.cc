#include "node/doctor/doctor.h"

#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>

#include "node/config/cluster.h"
#include "node/doctor/agent.h"
#include "node/doctor/agent_session.h"
#include "node/doctor/host_check.h"
#include "node/doctor/host_speed.h"
#include "node/launch/launcher.h"
#include "node/metrics/output_files.h"
#include "node/transport/probe.h"
#include "topology/topology.h"

namespace fastk::node::doctor {
namespace {

// Where each peer runs and is reached, and the graph's edges between two hosts (both
// directions: each is its own TCP connection, and a firewall may block only one).
struct Placement {
  std::vector<std::string> host_of;  // per peer
  std::vector<std::string> connect;  // per peer: what its neighbours connect to
  std::vector<std::string> hosts;    // each once, in peer order
  std::vector<std::pair<int, int>> edges;
};

Placement place(const ExperimentConfig& config) {
  const topology::Topology topo = topology::build_topology(config.topology);
  const int n = topo.graph.size();
  Placement p;
  for (int i = 0; i < n; ++i) {
    p.host_of.push_back(peer_host(config.cluster, n, i));
    p.connect.push_back(peer_endpoints(config.cluster, n, i).connect);
    if (std::find(p.hosts.begin(), p.hosts.end(), p.host_of.back()) == p.hosts.end()) {
      p.hosts.push_back(p.host_of.back());
    }
  }
  for (const auto& e : topo.graph.edges()) {
    const int a = static_cast<int>(e.a), b = static_cast<int>(e.b);
    if (p.host_of[a] == p.host_of[b]) continue;
    p.edges.push_back({a, b});
    p.edges.push_back({b, a});
  }
  return p;
}

// The whole doctor run: agents up, their reports checked, the edges probed, the tables.
class Doctor {
 public:
  Doctor(const DoctorOptions& options, const ExperimentConfig& config, std::ostream& out)
      : options_(options), config_(config), out_(out), placement_(place(config)) {}

  int run() {
    out_ << "fastk doctor: " << placement_.host_of.size() << " peers on " << placement_.hosts.size()
         << " host(s), " << placement_.edges.size() << " directed edge(s) between hosts\n";
    start_agents();
    check_local_files();
    collect_reports();
    print_hosts();
    judge_hosts();
    probe_edges();
    print_edges();
    print_bounds();
    for (auto& a : agents_) a->finish();
    for (const auto& note : notes_) out_ << "\nnote: " << note << "\n";
    return print_problems();
  }

 private:
  struct Edge {
    int from = 0, to = 0;
    std::optional<nlohmann::json> probe;  // the agent's answer
    std::string skipped;                  // why it was not probed
  };

  std::string fastk_on(bool remote) const {
    return remote && !options_.remote_fastk.empty() ? options_.remote_fastk : self_;
  }

  void start_agents() {
    const std::vector<std::string> ssh = {"ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10",
                                          "-T"};
    const std::string cwd = std::filesystem::current_path().string();
    for (const auto& host : placement_.hosts) {
      const bool remote = !is_loopback(host);
      std::vector<std::string> argv = {fastk_on(remote), "doctor",
                                       std::filesystem::absolute(options_.config_path).string()};
      for (const auto& s : options_.overrides) argv.insert(argv.end(), {"--set", s});
      argv.insert(argv.end(), {"--agent", host});
      if (!options_.measure_gradient) argv.push_back("--no-gradient");
      if (remote) argv = ssh_command(ssh, host, cwd, argv);
      agents_.push_back(std::make_unique<AgentSession>(host, remote, fastk_on(remote), argv));
    }
  }

  // This machine's copies are the reference the hosts' files are compared with.
  void check_local_files() {
    for (const auto& f : local_files_) {
      if (!f.error.empty()) {
        problem("this machine (where fastk doctor runs) cannot read " + f.path + ": " + f.error +
                "; the hosts' copies are compared with its own");
      }
    }
  }

  void collect_reports() {
    const auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::seconds(options_.agent_timeout));
    for (auto& a : agents_) {
      if (auto j = a->next("report", timeout)) {
        try {
          a->report = host_report_from_json(*j);
        } catch (const std::exception& e) {
          problem(a->host() + ": its agent sent a malformed report (" + e.what() + ")");
        }
      }
      if (!a->report) problem(a->why_no_report());
    }
  }

  // One row per host; the problems found in its report.
  void print_hosts() {
    out_ << "\nhost              ssh    fastk build  kernels    gradient_ms  config+data files     "
            "ports\n";
    for (auto& a : agents_) {
      char row[256];
      const char* login = a->remote() ? (a->report ? "ok" : "FAIL") : "local";
      if (!a->report) {
        std::snprintf(row, sizeof row, "%-17s %-6s (no report)\n", a->host().c_str(), login);
        out_ << row;
        continue;
      }
      const HostReport& r = *a->report;
      const bool same_build = r.binary_crc32c == own_crc_ && r.version == kVersion;
      if (!same_build) {
        problem(a->host() + " runs another fastk build (" + r.version + ", checksum " +
                hex(r.binary_crc32c) + "; here " + hex(own_crc_) +
                "): copy this build there, or point --remote-fastk at it");
      }
      const int bad_files = check_files_of(a->host(), r.files);
      const int bad_ports = check_ports_of(a->host(), r.ports);
      std::snprintf(row, sizeof row, "%-17s %-6s %-12s %-10s %-12s %-21s %s\n", a->host().c_str(),
                    login, same_build ? "same" : "DIFFERENT",
                    r.isa.kernels.substr(0, r.isa.kernels.find(' ')).c_str(),
                    gradient_cell(r.gradient).c_str(),
                    bad_files ? (std::to_string(bad_files) + " missing/different").c_str()
                              : (std::to_string(r.files.size()) + " same").c_str(),
                    bad_ports ? (std::to_string(bad_ports) + " taken").c_str()
                              : (std::to_string(r.ports.size()) + " free").c_str());
      out_ << row;
    }
  }

  static std::string gradient_cell(const GradientCheck& g) {
    if (!g.failure.empty()) return "CRASH";
    if (!g.measured) return "-";
    char text[32];
    std::snprintf(text, sizeof text, "%.3f", 1000 * g.plain_s);
    return text;
  }

  // Crashes and stragglers by hardware (host_speed.h), and the hosts' figures for
  // --hosts-json.
  void judge_hosts() {
    for (const auto& a : agents_) {
      if (a->report) {
        speeds_.push_back({a->host(), a->report->gradient, a->report->isa, !a->remote()});
      }
    }
    const SpeedFindings findings = judge_speeds(speeds_);
    for (const auto& p : findings.problems) problem(p);
    notes_ = findings.notes;
    slowest_ = findings.slowest;
    if (!options_.hosts_json.empty()) {
      metrics::write_json_file(options_.hosts_json, hosts_json(speeds_));
      out_ << "\nper-host gradient times: " << options_.hosts_json.string()
           << " (fastk calibrate CONFIG --hosts " << options_.hosts_json.string() << ")\n";
    }
  }

  int check_files_of(const std::string& host, const std::vector<FileCheck>& files) {
    int bad = 0;
    for (const FileCheck& there : files) {
      const auto same_path = std::find_if(local_files_.begin(), local_files_.end(),
                                          [&](const FileCheck& f) { return f.path == there.path; });
      const FileCheck* here =
          same_path != local_files_.end() && same_path->error.empty() ? &*same_path : nullptr;
      if (there.path == kDataFiles) {
        ++bad;
        problem(host + " cannot read the data set: " + there.error + "; copy this machine's " +
                "data files there (" + local_data_files() + ")");
      } else if (!there.error.empty()) {
        ++bad;
        problem(host + " lacks " + there.path + " (" + there.error + "): copy it there (scp " +
                there.path + " " + host + ":" + there.path + "), or fix the path");
      } else if (here && (here->size != there.size || here->crc32c != there.crc32c)) {
        ++bad;
        problem(there.path + " on " + host + " differs from this machine's (" +
                std::to_string(there.size) + " bytes, checksum " + hex(there.crc32c) + "; here " +
                std::to_string(here->size) + " bytes, " + hex(here->crc32c) +
                "): copy this machine's file there");
      }
    }
    return bad;
  }

  std::string local_data_files() const {
    std::string list;
    for (std::size_t i = 1; i < local_files_.size(); ++i) {
      list += (i > 1 ? ", " : "") + local_files_[i].path;
    }
    return list.empty() ? "none here either" : list;
  }

  int check_ports_of(const std::string& host, const std::vector<PortCheck>& ports) {
    int bad = 0;
    for (const auto& p : ports) {
      if (p.error.empty()) continue;
      ++bad;
      problem("peer " + std::to_string(p.peer) + " on " + host + " cannot listen on " + p.endpoint +
              " (" + p.error + "): another program or run holds it; stop it, or " +
              "move every peer with [cluster] base_port");
    }
    return bad;
  }

  const AgentSession* agent_of(const std::string& host) const {
    for (const auto& a : agents_)
      if (a->host() == host) return a.get();
    return nullptr;
  }
  AgentSession* agent_of(const std::string& host) {
    return const_cast<AgentSession*>(std::as_const(*this).agent_of(host));
  }

  bool port_held(int peer) const {
    const AgentSession* a = agent_of(placement_.host_of[peer]);
    if (!a || !a->report) return false;
    for (const auto& p : a->report->ports)
      if (p.peer == peer) return p.error.empty();
    return false;
  }

  void probe_edges() {
    for (const auto& [from, to] : placement_.edges) {
      Edge e{.from = from, .to = to, .probe = std::nullopt, .skipped = {}};
      AgentSession* prober = agent_of(placement_.host_of[from]);
      if (!prober || !prober->report) {
        e.skipped = "no agent on " + placement_.host_of[from];
      } else if (const AgentSession* receiver = agent_of(placement_.host_of[to]);
                 !receiver || !receiver->report) {
        e.skipped = "no agent on " + placement_.host_of[to];
      } else if (!port_held(to)) {
        e.skipped = "peer " + std::to_string(to) + "'s port is taken";
      } else {
        e.probe = probe(*prober, placement_.connect[to]);
        if (!e.probe) e.skipped = "the agent on " + placement_.host_of[from] + " stopped";
      }
      if (e.probe && !e.probe->value("reached", false)) report_unreachable(e);
      if (e.probe && e.probe->value("reached", false) &&
          !e.probe->value("error", std::string()).empty()) {
        report_slow(e);
      }
      edges_.push_back(std::move(e));
    }
  }

  std::optional<nlohmann::json> probe(AgentSession& prober, const std::string& endpoint) {
    const auto timeout = options_.probe_timeout.count();
    if (!prober.request("probe " + endpoint + " " + std::to_string(options_.probe_bytes) + " " +
                        std::to_string(timeout))) {
      return std::nullopt;
    }
    // The agent's own limit and a margin; an answer to an earlier request (one the wait
    // gave up on) is skipped.
    const auto wait = transport::probe_limit(options_.probe_bytes, options_.probe_timeout) +
                      std::chrono::seconds(5);
    while (auto answer = prober.next("probe", wait)) {
      if (answer->value("endpoint", std::string()) == endpoint) return answer;
    }
    return std::nullopt;
  }

  void report_unreachable(const Edge& e) {
    const auto where = parse_tcp_endpoint(placement_.connect[e.to]);
    const std::string port = where ? std::to_string(where->port) : placement_.connect[e.to];
    problem("edge " + std::to_string(e.from) + " -> " + std::to_string(e.to) + ": " +
            placement_.host_of[e.from] + " cannot reach peer " + std::to_string(e.to) + " at " +
            placement_.connect[e.to] + " (" + e.probe->value("error", std::string()) +
            "): a firewall on " + placement_.host_of[e.to] +
            " or between the hosts blocks it, or the address is wrong; allow TCP port " + port +
            " from " + placement_.host_of[e.from]);
  }

  void report_slow(const Edge& e) {
    problem("edge " + std::to_string(e.from) + " -> " + std::to_string(e.to) + ": " +
            placement_.host_of[e.from] + " reaches peer " + std::to_string(e.to) + " at " +
            placement_.connect[e.to] + " but " + e.probe->value("error", std::string()) +
            ": check the link between " + placement_.host_of[e.from] + " and " +
            placement_.host_of[e.to] + " (cables, duplex, a shaper)");
  }

  void print_edges() {
    if (edges_.empty()) return;
    out_
        << "\nedge      from host -> to peer's endpoint                 reached  rtt_ms   Mbit/s\n";
    for (const auto& e : edges_) {
      char row[256];
      const std::string name = std::to_string(e.from) + " -> " + std::to_string(e.to);
      const std::string path = placement_.host_of[e.from] + " -> " + placement_.connect[e.to];
      if (!e.probe) {
        std::snprintf(row, sizeof row, "%-9s %-41s not probed: %s\n", name.c_str(), path.c_str(),
                      e.skipped.c_str());
      } else if (!e.probe->value("reached", false)) {
        std::snprintf(row, sizeof row, "%-9s %-41s NO\n", name.c_str(), path.c_str());
      } else if (!e.probe->value("error", std::string()).empty()) {
        std::snprintf(row, sizeof row, "%-9s %-41s yes     %7.3f     SLOW\n", name.c_str(),
                      path.c_str(), 1000 * (*e.probe)["round_trip_s"].get<double>());
      } else {
        std::snprintf(row, sizeof row, "%-9s %-41s yes     %7.3f %8.1f\n", name.c_str(),
                      path.c_str(), 1000 * (*e.probe)["round_trip_s"].get<double>(),
                      (*e.probe)["bits_per_s"].get<double>() / 1e6);
      }
      out_ << row;
    }
  }

  // Per host: the bytes its peers send across its link in one iteration (one model per
  // neighbour on another host), over the slowest bandwidth measured from it.
  void print_bounds() {
    if (!slowest_ || placement_.edges.empty()) return;
    const double model_bytes = 4.0 * static_cast<double>(slowest_->gradient.parameters);
    std::map<std::string, double> bytes, slowest_bps;
    for (const auto& e : edges_) {
      const std::string& host = placement_.host_of[e.from];
      bytes[host] += model_bytes;
      if (e.probe && e.probe->value("reached", false)) {
        const double bps = (*e.probe)["bits_per_s"].get<double>();
        slowest_bps[host] = slowest_bps.contains(host) ? std::min(slowest_bps[host], bps) : bps;
      }
    }
    double floor_s = 0;
    std::string bound_host;
    for (const auto& [host, b] : bytes) {
      if (!slowest_bps.contains(host) || slowest_bps[host] <= 0) continue;
      const double s = 8 * b / slowest_bps[host];
      if (s > floor_s) floor_s = s, bound_host = host;
    }
    if (bound_host.empty()) return;
    char line[512];
    std::snprintf(line, sizeof line,
                  "\none iteration: a gradient takes %.2f ms on the slowest host (%s); the "
                  "communication floor is %.2f ms (%s sends %.0f kB across its link at %.1f "
                  "Mbit/s): the run is bound by %s\n",
                  1000 * slowest_->gradient.plain_s, slowest_->host.c_str(), 1000 * floor_s,
                  bound_host.c_str(), bytes[bound_host] / 1000, slowest_bps[bound_host] / 1e6,
                  floor_s > slowest_->gradient.plain_s ? "communication" : "computation");
    out_ << line;
  }

  int print_problems() {
    if (problems_.empty()) {
      out_ << "\nno problems found: the run can start\n";
      return 0;
    }
    out_ << "\n" << problems_.size() << " problem(s):\n";
    for (const auto& p : problems_) out_ << "  - " << p << "\n";
    return 1;
  }

  void problem(std::string text) { problems_.push_back(std::move(text)); }
  static std::string hex(std::uint32_t value) {
    char text[16];
    std::snprintf(text, sizeof text, "%08x", value);
    return text;
  }

  const DoctorOptions& options_;
  const ExperimentConfig& config_;
  std::ostream& out_;
  Placement placement_;
  const std::string self_ = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::uint32_t own_crc_ = own_binary_crc32c();
  const std::vector<FileCheck> local_files_ = check_files(options_.config_path, config_);
  std::vector<std::unique_ptr<AgentSession>> agents_;
  std::vector<Edge> edges_;
  std::vector<std::string> problems_;
  std::vector<std::string> notes_;
  std::vector<HostSpeed> speeds_;
  std::optional<HostSpeed> slowest_;
};

}  // namespace

int run_doctor(const DoctorOptions& options, const ExperimentConfig& config, std::ostream& out) {
  signal(SIGPIPE, SIG_IGN);  // an agent that ended is a finding, not the doctor's death
  return Doctor(options, config, out).run();
}

}  // namespace fastk::node::doctor
