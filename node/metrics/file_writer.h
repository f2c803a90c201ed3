// Bytes written to a file through a buffer, every failure an error naming the file and the
// reason the system gave (a full disk reads "No space left on device"), never a file that
// looks complete and is not.
//
// Atomic (results: summaries, models, merged CSVs): the bytes go to <path>.tmp, are synced
// and renamed into place by commit(); destroyed without commit() (an error, an exception on
// the way), the temporary is removed and an older file of that name stays as it was.
// Streamed (logs read while they grow: a peer's iterations.csv, a simulation's evaluation.csv):
// the bytes go to <path> itself, in 8 KiB blocks, and what was written stays when the writer
// goes; a reader judges them complete by summary.json, written after them. An atomic write
// refuses a path that is not a regular file (it would replace a device or a link).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace fastk::node::metrics {

class FileWriter {
 public:
  enum class Mode { kAtomic, kStreamed };
  // Creates (truncates) the file. Throws std::runtime_error naming it when it cannot.
  FileWriter(std::filesystem::path path, Mode mode);
  FileWriter(const FileWriter&) = delete;
  FileWriter& operator=(const FileWriter&) = delete;
  ~FileWriter();

  const std::filesystem::path& path() const { return path_; }
  Mode mode() const { return mode_; }
  // Buffered; throws when writing out a full buffer fails.
  void write(std::string_view bytes);
  // Writes out the buffer (for a reader of a streamed file; no sync).
  void flush();
  // Writes out the buffer and syncs the file to the disk.
  void sync();
  // sync() (or, without `durable`, only the write-out: a file that is only an intermediate,
  // where a system crash losing it costs nothing), then, atomic, renames the file into
  // place. Nothing may be written after it.
  void commit(bool durable = true);

 private:
  // `error`: the errno of the failed call, taken before anything could change it.
  [[noreturn]] void fail(int error, const char* doing);
  void write_out();

  std::filesystem::path path_;
  std::filesystem::path written_;  // the temporary (atomic) or the path itself
  Mode mode_;
  int fd_ = -1;
  std::string buffer_;
  bool committed_ = false;
};

}  // namespace fastk::node::metrics
