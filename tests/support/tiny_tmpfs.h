// A tmpfs of a few KiB mounted on a test's folder, to see what a command does when the disk
// fills up half-way through its outputs. Mounting needs root (CAP_SYS_ADMIN): elsewhere
// `skip_reason()` says why there is none, for GTEST_SKIP.
#pragma once

#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

namespace fastk::testing {

class TinyTmpfs {
 public:
  TinyTmpfs(const std::filesystem::path& dir, std::size_t bytes) : dir_(dir) {
    std::filesystem::create_directories(dir_);
    if (::geteuid() != 0) {
      skip_reason_ = "mounting a tmpfs needs root";
      return;
    }
    const std::string options = "size=" + std::to_string(bytes);
    if (::mount("tmpfs", dir_.c_str(), "tmpfs", 0, options.c_str()) != 0) {
      skip_reason_ = "cannot mount a tmpfs on " + dir_.string() + ": " + std::strerror(errno) +
                     " (a container without CAP_SYS_ADMIN?)";
      return;
    }
    mounted_ = true;
  }
  TinyTmpfs(const TinyTmpfs&) = delete;
  TinyTmpfs& operator=(const TinyTmpfs&) = delete;
  ~TinyTmpfs() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  // Empty when mounted.
  const std::string& skip_reason() const { return skip_reason_; }

 private:
  std::filesystem::path dir_;
  bool mounted_ = false;
  std::string skip_reason_;
};

}  // namespace fastk::testing
