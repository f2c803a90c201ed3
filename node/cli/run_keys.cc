#include "node/cli/run_keys.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>

#include "node/launch/child_process.h"
#include "node/transport/curve_keys.h"

namespace fastk::node {
namespace {

std::filesystem::path make_private_temporary_folder() {
  std::string pattern = (std::filesystem::temp_directory_path() / "fastk-keys-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) {
    throw std::runtime_error("cannot create a private folder for the run's keys in " +
                             std::filesystem::temp_directory_path().string() + ": " +
                             std::strerror(errno));
  }
  return pattern;
}

struct Finished {
  ExitStatus status;
  std::vector<std::string> lines;  // what it printed (stdout and stderr)
};

// Runs every command at once and waits for all.
std::vector<Finished> run_all(const std::vector<std::vector<std::string>>& commands) {
  std::vector<std::unique_ptr<ChildProcess>> children;
  for (const auto& argv : commands) children.push_back(std::make_unique<ChildProcess>(argv));
  std::vector<Finished> done;
  for (auto& child : children) {
    Finished f;
    f.status = child->wait([&f](const std::string& line) { f.lines.push_back(line); });
    done.push_back(std::move(f));
  }
  return done;
}

// scp takes ssh's -o options, but not its -T.
std::vector<std::string> scp_command(const std::vector<std::string>& ssh_options) {
  std::vector<std::string> scp = {"scp", "-q", "-p"};
  for (std::size_t i = 1; i < ssh_options.size(); ++i) {
    if (ssh_options[i] == "-o" && i + 1 < ssh_options.size()) {
      scp.push_back("-o");
      scp.push_back(ssh_options[++i]);
    }
  }
  return scp;
}

std::string last_line(const Finished& f) { return f.lines.empty() ? "" : f.lines.back(); }

// The folder `mktemp -d /tmp/fastk-keys-XXXXXX` made, from its "fastk-keys=PATH" line; empty
// unless it is exactly such a path (it goes into an `rm -rf` later).
std::string made_folder(const Finished& f) {
  static const std::regex kPath("fastk-keys=(/tmp/fastk-keys-[A-Za-z0-9]{6})");
  std::smatch match;
  for (const auto& line : f.lines) {
    if (std::regex_match(line, match, kPath)) return match[1];
  }
  return "";
}

// ssh's options with a short connection time-out: removing keys from a host that has gone
// away must not hold up the end of the run.
std::vector<std::string> quick_ssh(std::vector<std::string> ssh) {
  for (auto& option : ssh) {
    if (option.starts_with("ConnectTimeout=")) option = "ConnectTimeout=3";
  }
  return ssh;
}

// Removes each host's folder (ssh, all at once, 3 s to connect); names the hosts where that
// failed. Never throws.
void remove_from_hosts(const std::map<std::string, std::string>& remote,
                       const std::vector<std::string>& ssh_options) noexcept {
  try {
    std::vector<std::vector<std::string>> removals;
    std::vector<std::string> hosts;
    for (const auto& [host, path] : remote) {
      auto ssh = quick_ssh(ssh_options);
      ssh.insert(ssh.end(), {host, "rm", "-rf", "--", path});
      removals.push_back(std::move(ssh));
      hosts.push_back(host);
    }
    const auto removed = run_all(removals);
    for (std::size_t h = 0; h < removed.size(); ++h) {
      if (!removed[h].status.ok()) {
        std::cerr << "fastk run: the run's keys stay on " << hosts[h] << " in "
                  << remote.at(hosts[h])
                  << " (removing them failed: " << removed[h].status.describe() << ")\n";
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "fastk run: removing the run's keys from the hosts: " << e.what() << "\n";
  }
}

// A process's start time (field 22 of /proc/PID/stat, in clock ticks since boot): with the
// pid, it names one process, so a reused pid is not taken for the launcher that made a
// folder. nullopt when there is no such process.
std::optional<std::uint64_t> start_time(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto name_end = stat.rfind(')');  // the command name may hold spaces and ')'
  if (name_end == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(name_end + 2));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 22) return std::strtoull(field.c_str(), nullptr, 10);
  }
  return std::nullopt;
}

// <folder>/owner: "PID START" of the launch that made it, then "HOST PATH" per host copy.
constexpr const char* kOwnerFile = "owner";

// The launch that made `folder` is gone: its launcher was killed before it could remove its
// keys (a folder without an owner file is not one of ours, or is still being made).
bool made_by_a_dead_launch(const std::filesystem::path& folder,
                           std::map<std::string, std::string>& remote) {
  std::ifstream in(folder / kOwnerFile);
  long pid = 0;
  std::uint64_t started = 0;
  if (!(in >> pid >> started) || pid <= 0 || started == 0) return false;
  if (start_time(pid) == started) return false;  // still running
  static const std::regex kPath("/tmp/fastk-keys-[A-Za-z0-9]{6}");
  for (std::string host, path; in >> host >> path;) {
    if (std::regex_match(path, kPath)) remote[host] = path;  // it goes into rm -rf
  }
  return true;
}

}  // namespace

void RunKeys::remove_stale(const std::vector<std::string>& ssh_options) noexcept {
  try {
    std::error_code error;
    const auto uid = ::getuid();
    for (const auto& entry :
         std::filesystem::directory_iterator(std::filesystem::temp_directory_path(), error)) {
      const std::string name = entry.path().filename().string();
      struct stat info {};
      if (!name.starts_with("fastk-keys-") || name.size() != 17 ||
          ::lstat(entry.path().c_str(), &info) != 0 || !S_ISDIR(info.st_mode) ||
          info.st_uid != uid) {
        continue;
      }
      std::map<std::string, std::string> remote;
      if (!made_by_a_dead_launch(entry.path(), remote)) continue;
      remove_from_hosts(remote, ssh_options);
      std::filesystem::remove_all(entry.path(), error);
      std::cerr << "fastk run: removed the keys a killed launch left in " << entry.path().string()
                << (remote.empty() ? std::string()
                                   : " and on " + std::to_string(remote.size()) + " host(s)")
                << "\n";
    }
  } catch (const std::exception& e) {  // a clean-up: never the reason a run does not start
    std::cerr << "fastk run: looking for keys killed launches left: " << e.what() << "\n";
  }
}

void RunKeys::write_owner() const {
  // Without its start time a pid could be a later process's: no owner file, and a killed
  // launch's keys then stay rather than a live one's going.
  const auto started = start_time(::getpid());
  if (!started) return;
  std::ofstream out(folder_ / kOwnerFile, std::ios::trunc);
  out << ::getpid() << ' ' << *started << '\n';
  for (const auto& [host, path] : remote_) out << host << ' ' << path << '\n';
  if (!out.flush()) {
    throw std::runtime_error("cannot write " + (folder_ / kOwnerFile).string());
  }
}

RunKeys::RunKeys(int peer_count, std::vector<PeerLaunch>& peers,
                 const std::vector<std::string>& ssh_options)
    : folder_(make_private_temporary_folder()), ssh_options_(ssh_options) {
  try {
    write_owner();
    transport::write_key_folder(folder_ / "all", peer_count);
    copy_to_hosts(peers);
    write_owner();  // with the hosts' folders
  } catch (...) {
    remove_everywhere();
    throw;
  }
  for (auto& p : peers) {
    const std::string keys = p.host.empty() ? (folder_ / "all").string() : remote_.at(p.host);
    for (auto* argv : {&p.argv, &p.restart_argv}) {
      if (argv->empty()) continue;  // no restart command: the peer is not restarted
      argv->push_back("--keys");
      argv->push_back(keys);
    }
  }
}

// Each host makes a private folder of its own (mktemp -d, mode 0700, under its own temporary
// folder), then gets public-keys and its own peers' secret files there, all hosts at once.
void RunKeys::copy_to_hosts(const std::vector<PeerLaunch>& peers) {
  std::map<std::string, std::vector<int>> peers_of_host;
  for (const auto& p : peers)
    if (!p.host.empty()) peers_of_host[p.host].push_back(p.peer);
  std::vector<std::vector<std::string>> makes;
  for (const auto& [host, ids] : peers_of_host) {
    auto ssh = ssh_options_;
    // sh -c: the login shell may not be a POSIX one. The marker tells the path from anything
    // else the session prints.
    ssh.insert(ssh.end(), {host,
                           "sh -c 'umask 077 && printf \"fastk-keys=%s\\n\" "
                           "\"$(mktemp -d /tmp/fastk-keys-XXXXXX)\"'"});
    makes.push_back(std::move(ssh));
  }
  const auto made = run_all(makes);
  // Every folder that was made is recorded before a failure is thrown: all are removed.
  std::string failures;
  auto host = peers_of_host.begin();
  for (const auto& m : made) {
    const std::string path = made_folder(m);
    if (m.status.ok() && !path.empty()) {
      remote_[host->first] = path;
    } else {
      failures += "\n  " + host->first + " (" + m.status.describe() + "): " + last_line(m);
    }
    ++host;
  }
  if (!failures.empty()) {
    throw std::runtime_error("cannot make a folder for the run's keys on:" + failures);
  }
  std::vector<std::vector<std::string>> copies;
  std::vector<std::string> hosts;
  for (const auto& [name, ids] : peers_of_host) {
    const auto staged = folder_ / ("host-" + std::to_string(hosts.size()));
    transport::copy_keys_for(folder_ / "all", staged, ids);
    auto scp = scp_command(ssh_options_);
    for (const auto& file : std::filesystem::directory_iterator(staged)) {
      scp.push_back(file.path().string());
    }
    scp.push_back(name + ":" + remote_[name] + "/");
    copies.push_back(std::move(scp));
    hosts.push_back(name);
  }
  const auto copied = run_all(copies);
  for (std::size_t h = 0; h < copied.size(); ++h) {
    if (!copied[h].status.ok()) {
      throw std::runtime_error("copying the run's keys to " + hosts[h] + " failed (" +
                               copied[h].status.describe() + "): " + last_line(copied[h]));
    }
  }
}

// Keys of an ended run open nothing (the next launch makes new ones); removed all the same.
void RunKeys::remove_everywhere() noexcept {
  remove_from_hosts(remote_, ssh_options_);
  remote_.clear();
  std::error_code ignored;
  std::filesystem::remove_all(folder_, ignored);
}

RunKeys::~RunKeys() { remove_everywhere(); }

}  // namespace fastk::node
