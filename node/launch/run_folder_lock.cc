#include "node/launch/run_folder_lock.h"

#include <fcntl.h>
#include <sys/file.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace fastk::node {

RunFolderLock::RunFolderLock(const std::filesystem::path& run_dir) {
  std::filesystem::create_directories(run_dir);
  const auto file = run_dir / ".lock";
  fd_.reset(::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (!fd_.valid()) {
    throw std::runtime_error("cannot lock the run folder '" + run_dir.string() +
                             "': " + std::strerror(errno));
  }
  if (::flock(fd_.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      throw RunFolderInUse("the run folder '" + run_dir.string() +
                           "' is in use by another fastk run or report: wait for it, or "
                           "give this one another run.name (--set run.name=...) or --output");
    }
    throw std::runtime_error("cannot lock the run folder '" + run_dir.string() +
                             "': " + std::strerror(errno));
  }
}

}  // namespace fastk::node
