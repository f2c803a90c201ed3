// One launch per run folder at a time: a second `fastk run` of the same run.name (and
// output), or a `fastk report` on a folder a launch still writes, would empty or rewrite the
// live run's files. The lock is an flock on <run folder>/.lock, held while the object lives;
// the kernel drops it when the process ends, however it ends, so a killed launcher leaves no
// stale lock.
#pragma once

#include <filesystem>
#include <stdexcept>

#include "node/os/unique_fd.h"

namespace fastk::node {

// Thrown when another process holds the folder's lock.
class RunFolderInUse : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class RunFolderLock {
 public:
  // Creates the folder if needed and locks it. Throws RunFolderInUse naming the folder when
  // another process holds it, std::runtime_error when the lock file cannot be made.
  explicit RunFolderLock(const std::filesystem::path& run_dir);

 private:
  os::UniqueFd fd_;
};

}  // namespace fastk::node
