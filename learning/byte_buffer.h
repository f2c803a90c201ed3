// Read-only bytes of a data file: owned (a vector), or a read-only mapping of a file.
//
// Why mappings: every peer of a machine reads the same data set. Reading it copies the whole
// file into fresh pages of each process (zeroed, then filled), which was most of a peer's
// start-up; a mapping of the decompressed-file cache's entry shares the page cache's one copy
// and touches only the pages the peer reads (its shard's rows). Only files that are never
// changed in place are mapped: cache entries are published by rename(2) and never rewritten,
// so a mapping always sees the whole entry it validated (a file truncated under a mapping
// would raise SIGBUS on access).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace fastk::learning {

class ByteBuffer {
 public:
  ByteBuffer() = default;
  ByteBuffer(std::vector<std::uint8_t> owned);  // NOLINT: a vector of bytes is a buffer
  // The `length` bytes at `offset` of the open file `fd` (which may be closed afterwards),
  // mapped read-only; nullopt when the file cannot be mapped (the caller reads it instead).
  static std::optional<ByteBuffer> map(int fd, std::size_t offset, std::size_t length);

  ByteBuffer(ByteBuffer&& other) noexcept;
  ByteBuffer& operator=(ByteBuffer&& other) noexcept;
  ByteBuffer(const ByteBuffer&) = delete;
  ByteBuffer& operator=(const ByteBuffer&) = delete;
  ~ByteBuffer();

  std::span<const std::uint8_t> bytes() const { return view_; }
  const std::uint8_t* data() const { return view_.data(); }
  std::size_t size() const { return view_.size(); }
  bool mapped() const { return mapping_ != nullptr; }
  std::vector<std::uint8_t> to_vector() const { return {view_.begin(), view_.end()}; }

 private:
  void release() noexcept;

  std::vector<std::uint8_t> owned_;  // its heap buffer stays put when the vector moves
  void* mapping_ = nullptr;
  std::size_t mapping_length_ = 0;
  std::span<const std::uint8_t> view_;
};

}  // namespace fastk::learning
