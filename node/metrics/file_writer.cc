#include "node/metrics/file_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace fastk::node::metrics {
namespace {

constexpr std::size_t kBufferBytes = 1 << 16;

}  // namespace

FileWriter::FileWriter(std::filesystem::path path, Mode mode)
    : path_(std::move(path)),
      written_(mode == Mode::kAtomic ? std::filesystem::path(path_.string() + ".tmp") : path_),
      mode_(mode) {
  fd_ = ::open(written_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) fail("creating " + written_.filename().string());
  buffer_.reserve(kBufferBytes);
}

FileWriter::~FileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (mode_ == Mode::kAtomic && !committed_) ::unlink(written_.c_str());
}

void FileWriter::fail(const std::string& doing) {
  const std::string reason = errno != 0 ? std::strerror(errno) : "unknown error";
  throw std::runtime_error("cannot write '" + path_.string() + "' (" + doing + "): " + reason);
}

void FileWriter::write(std::string_view bytes) {
  if (committed_) throw std::logic_error("FileWriter: write after commit");
  buffer_.append(bytes);
  if (buffer_.size() >= kBufferBytes) write_out();
}

void FileWriter::write_out() {
  std::size_t done = 0;
  while (done < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      fail("writing");
    }
    done += static_cast<std::size_t>(n);
  }
  buffer_.clear();
}

void FileWriter::sync() {
  write_out();
  if (::fsync(fd_) != 0) fail("syncing");
}

// Synced before the name points at it: after a crash the old file or the new one is there,
// never a prefix of the new one.
void FileWriter::commit(bool durable) {
  if (durable) {
    sync();
  } else {
    write_out();
  }
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("closing");
  if (mode_ == Mode::kAtomic && ::rename(written_.c_str(), path_.c_str()) != 0) {
    fail("renaming " + written_.filename().string() + " into place");
  }
  committed_ = true;
}

}  // namespace fastk::node::metrics
