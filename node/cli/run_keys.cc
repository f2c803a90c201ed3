#include "node/cli/run_keys.h"

#include <cstdlib>
#include <iostream>
#include <memory>

#include "node/launch/child_process.h"
#include "node/transport/curve_keys.h"

namespace fastk::node {
namespace {

std::filesystem::path make_private_temporary_folder() {
  std::string pattern = (std::filesystem::temp_directory_path() / "fastk-keys-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) {
    throw std::runtime_error("cannot create a private folder for the run's keys in " +
                             std::filesystem::temp_directory_path().string());
  }
  return pattern;
}

// Runs every command at once and waits for all; returns the exit status of each.
std::vector<ExitStatus> run_all(const std::vector<std::vector<std::string>>& commands) {
  std::vector<std::unique_ptr<ChildProcess>> children;
  for (const auto& argv : commands) children.push_back(std::make_unique<ChildProcess>(argv));
  std::vector<ExitStatus> statuses;
  for (auto& child : children) {
    statuses.push_back(child->wait([](const std::string& line) { std::cerr << line << "\n"; }));
  }
  return statuses;
}

// scp takes ssh's -o options, but not its -T.
std::vector<std::string> scp_command(const std::vector<std::string>& ssh_options) {
  std::vector<std::string> scp = {"scp", "-q", "-r", "-p"};
  for (std::size_t i = 1; i < ssh_options.size(); ++i) {
    if (ssh_options[i] == "-o" && i + 1 < ssh_options.size()) {
      scp.push_back("-o");
      scp.push_back(ssh_options[++i]);
    }
  }
  return scp;
}

}  // namespace

RunKeys::RunKeys(int peer_count, std::vector<PeerLaunch>& peers,
                 const std::vector<std::string>& ssh_options)
    : folder_(make_private_temporary_folder()), ssh_options_(ssh_options) {
  try {
    transport::write_key_folder(folder_ / "all", peer_count);
    std::map<std::string, std::vector<int>> peers_of_host;
    for (const auto& p : peers)
      if (!p.host.empty()) peers_of_host[p.host].push_back(p.peer);
    std::vector<std::vector<std::string>> copies;
    for (const auto& [host, ids] : peers_of_host) {
      // Its own path on the host (and not this machine's), whether or not the host shares
      // this machine's file system.
      const auto staged = folder_ / ("host-" + std::to_string(remote_.size()));
      transport::copy_keys_for(folder_ / "all", staged, ids);
      remote_[host] = staged.string() + "-on-host";
      auto scp = scp_command(ssh_options_);
      scp.push_back(staged.string());
      scp.push_back(host + ":" + remote_[host]);
      copies.push_back(std::move(scp));
    }
    const auto statuses = run_all(copies);
    auto host = peers_of_host.begin();
    for (const auto& status : statuses) {
      if (!status.ok()) {
        throw std::runtime_error("copying the run's keys to " + host->first + " failed (" +
                                 status.describe() + ")");
      }
      ++host;
    }
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove_all(folder_, ignored);
    throw;
  }
  for (auto& p : peers) {
    p.argv.push_back("--keys");
    p.argv.push_back(p.host.empty() ? (folder_ / "all").string() : remote_.at(p.host));
  }
}

void RunKeys::leave_on(const std::vector<std::string>& hosts) {
  for (const auto& host : hosts) {
    const auto it = remote_.find(host);
    if (it == remote_.end()) continue;
    std::cerr << "fastk run: the run's keys stay on " << host << " in " << it->second
              << " (unreachable now; remove that folder there)\n";
    remote_.erase(it);
  }
}

// Keys of an ended run open nothing (the next launch makes new ones); removed all the same.
RunKeys::~RunKeys() {
  std::vector<std::vector<std::string>> removals;
  for (const auto& [host, path] : remote_) {
    auto ssh = ssh_options_;
    ssh.insert(ssh.end(), {host, "rm", "-rf", "--", path});
    removals.push_back(std::move(ssh));
  }
  try {
    run_all(removals);
  } catch (const std::exception& e) {
    std::cerr << "fastk run: removing the run's keys from the hosts: " << e.what() << "\n";
  }
  std::error_code ignored;
  std::filesystem::remove_all(folder_, ignored);
}

}  // namespace fastk::node
