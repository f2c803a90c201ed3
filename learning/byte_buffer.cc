#include "learning/byte_buffer.h"

#include <sys/mman.h>

#include <utility>

namespace fastk::learning {

ByteBuffer::ByteBuffer(std::vector<std::uint8_t> owned) : owned_(std::move(owned)), view_(owned_) {}

std::optional<ByteBuffer> ByteBuffer::map(int fd, std::size_t offset, std::size_t length) {
  const std::size_t mapped = offset + length;
  if (mapped == 0) return ByteBuffer();  // mmap refuses an empty range
  void* at = ::mmap(nullptr, mapped, PROT_READ, MAP_SHARED, fd, 0);
  if (at == MAP_FAILED) return std::nullopt;
  ByteBuffer buffer;
  buffer.mapping_ = at;
  buffer.mapping_length_ = mapped;
  buffer.view_ = {static_cast<const std::uint8_t*>(at) + offset, length};
  return buffer;
}

ByteBuffer::ByteBuffer(ByteBuffer&& other) noexcept
    : owned_(std::move(other.owned_)),
      mapping_(std::exchange(other.mapping_, nullptr)),
      mapping_length_(std::exchange(other.mapping_length_, 0)),
      view_(std::exchange(other.view_, {})) {}

ByteBuffer& ByteBuffer::operator=(ByteBuffer&& other) noexcept {
  if (this != &other) {
    release();
    owned_ = std::move(other.owned_);
    mapping_ = std::exchange(other.mapping_, nullptr);
    mapping_length_ = std::exchange(other.mapping_length_, 0);
    view_ = std::exchange(other.view_, {});
  }
  return *this;
}

ByteBuffer::~ByteBuffer() { release(); }

void ByteBuffer::release() noexcept {
  if (mapping_) ::munmap(mapping_, mapping_length_);
  mapping_ = nullptr;
  mapping_length_ = 0;
  owned_.clear();
  view_ = {};
}

}  // namespace fastk::learning
