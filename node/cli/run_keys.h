// The CURVE keys of one `fastk run` launch (docs/security.md): fresh for every launch, in a
// private folder of this machine (0700, under the system's temporary folder); each LAN host
// gets a copy holding only its own peers' secret keys, in a private folder it makes itself.
// Everything is removed when the object goes (fastk run resets it once the peers' outputs
// are fetched), here and on every host that answers ssh within 3 s, also when a copy fails;
// a host that does not is named with the folder left there. A launcher killed before it could
// remove them leaves an owner file behind, by which the next launch removes them.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "node/launch/launcher.h"

namespace fastk::node {

class RunKeys {
 public:
  // Makes keys for `peer_count` peers and copies them to the hosts of `peers` with ssh and
  // scp (`ssh_options`: the ssh command with its options, BatchMode and time-outs). Adds
  // --keys to every peer's argv. Throws std::runtime_error naming the host when a copy
  // fails (after removing what was made).
  RunKeys(int peer_count, std::vector<PeerLaunch>& peers,
          const std::vector<std::string>& ssh_options);
  RunKeys(const RunKeys&) = delete;
  RunKeys& operator=(const RunKeys&) = delete;
  ~RunKeys();

  // Removes the key folders (here, and over ssh on the hosts they list) that launches of
  // this user left when their launcher was killed: those whose owner file names a process
  // that is gone. A live launch's folder is never touched.
  static void remove_stale(const std::vector<std::string>& ssh_options) noexcept;

 private:
  void write_owner() const;
  void copy_to_hosts(const std::vector<PeerLaunch>& peers);
  void remove_everywhere() noexcept;

  std::filesystem::path folder_;               // this machine's copy, every key
  std::map<std::string, std::string> remote_;  // host -> its copy's path there
  std::vector<std::string> ssh_options_;
};

}  // namespace fastk::node
