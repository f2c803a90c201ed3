#include "node/metrics/file_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace fastk::node::metrics {
namespace {

// Results are written in large blocks; logs in small ones, so a reader sees them grow.
std::size_t buffer_bytes(FileWriter::Mode mode) {
  return mode == FileWriter::Mode::kAtomic ? std::size_t{1} << 16 : std::size_t{1} << 13;
}

}  // namespace

FileWriter::FileWriter(std::filesystem::path path, Mode mode)
    : path_(std::move(path)),
      written_(mode == Mode::kAtomic ? std::filesystem::path(path_.string() + ".tmp") : path_),
      mode_(mode) {
  // The rename of an atomic write replaces whatever has the name: only ever a regular file
  // (a device or a link given as an output would be replaced by a file).
  struct stat st {};
  if (mode_ == Mode::kAtomic && ::lstat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    throw std::runtime_error("cannot write '" + path_.string() +
                             "': not a regular file (results are written as new files, which "
                             "would replace it)");
  }
  if (mode_ == Mode::kAtomic) ::unlink(written_.c_str());  // a stale temporary of a killed run
  const int exclusive = mode_ == Mode::kAtomic ? O_EXCL | O_NOFOLLOW : O_TRUNC;
  fd_ = ::open(written_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | exclusive, 0666);
  if (fd_ < 0) fail(errno, "creating");
  buffer_.reserve(buffer_bytes(mode_));
}

// A streamed file keeps what was written even when its writer gives up on the way (a peer
// that fails still leaves its rows); an atomic one leaves nothing.
FileWriter::~FileWriter() {
  if (fd_ >= 0 && mode_ == Mode::kStreamed) {
    try {
      write_out();
    } catch (const std::runtime_error&) {  // reported by whoever failed first
    }
  }
  if (fd_ >= 0) ::close(fd_);
  if (mode_ == Mode::kAtomic && !committed_) ::unlink(written_.c_str());
}

void FileWriter::fail(int error, const char* doing) {
  throw std::runtime_error("cannot write '" + path_.string() + "' (" + doing +
                           "): " + (error != 0 ? std::strerror(error) : "unknown error"));
}

void FileWriter::write(std::string_view bytes) {
  if (committed_) throw std::logic_error("FileWriter: write after commit");
  buffer_.append(bytes);
  if (buffer_.size() >= buffer_bytes(mode_)) write_out();
}

void FileWriter::write_out() {
  if (fd_ < 0) throw std::logic_error("FileWriter: write after commit");
  std::size_t done = 0;
  while (done < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n == 0 ? EIO : errno;
      buffer_.erase(0, done);  // what is written stays written
      fail(error, "writing");
    }
    done += static_cast<std::size_t>(n);
  }
  buffer_.clear();
}

void FileWriter::flush() { write_out(); }

void FileWriter::sync() {
  write_out();
  if (::fsync(fd_) != 0) fail(errno, "syncing");
}

// Synced before the name points at it: after a crash the old file or the new one is there,
// never a prefix of the new one.
void FileWriter::commit(bool durable) {
  if (committed_) throw std::logic_error("FileWriter: committed twice");
  if (durable) {
    sync();
  } else {
    write_out();
  }
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail(errno, "closing");
  if (mode_ == Mode::kAtomic && ::rename(written_.c_str(), path_.c_str()) != 0) {
    fail(errno, "renaming the temporary file into place");
  }
  committed_ = true;
}

}  // namespace fastk::node::metrics
