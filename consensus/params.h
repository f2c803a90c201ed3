// Model parameters as immutable, shared flat float buffers. A peer's model is sent to
// several neighbours and kept in their mailboxes without being copied: every holder shares
// one buffer. Runtimes provide their own buffer type (the ZeroMQ runtime wraps a received
// message frame, a neighbour's shared-memory slot) by deriving from ParamBuffer; the
// protocol only reads values(). The buffers the protocol writes its own next model into
// are MutableParamBuffers, recycled by the protocol or supplied by the runtime (a
// BufferSource), so a runtime can have the model computed straight into memory its
// neighbours read.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace fastk::consensus {

class ParamBuffer {
 public:
  ParamBuffer() = default;
  ParamBuffer(const ParamBuffer&) = delete;
  ParamBuffer& operator=(const ParamBuffer&) = delete;
  virtual ~ParamBuffer() = default;
  virtual std::span<const float> values() const = 0;
  // Whether every value is finite (what a receiver checks before using a model), scanned once
  // per content and remembered: in the simulator every neighbour shares the sender's buffer,
  // and scanning it once per receiver was 9% of a 20,000-peer simulation.
  bool all_finite() const;

 protected:
  // The values are being rewritten (MutableParamBuffer::mutable_values): forget the verdict.
  void forget_finite() const { finite_.store(kUnknown, std::memory_order_relaxed); }

 private:
  static constexpr std::int8_t kUnknown = -1;
  mutable std::atomic<std::int8_t> finite_{kUnknown};
};

using Params = std::shared_ptr<const ParamBuffer>;

// A buffer the protocol writes a model into before sharing it read-only.
class MutableParamBuffer : public ParamBuffer {
 public:
  // Only for the owner, while nobody else holds the buffer.
  std::span<float> mutable_values() {
    forget_finite();
    return writable_values();
  }

 protected:
  virtual std::span<float> writable_values() = 0;
};

// Gives the protocol a buffer of the model's size that nobody else holds, or nullptr to
// let the protocol use one of its own.
using BufferSource = std::function<std::shared_ptr<MutableParamBuffer>()>;

// The buffer the protocol itself produces after each update.
class VectorParams final : public MutableParamBuffer {
 public:
  explicit VectorParams(std::vector<float> values) : values_(std::move(values)) {}
  std::span<const float> values() const override { return values_; }

 private:
  std::span<float> writable_values() override { return values_; }
  std::vector<float> values_;
};

inline Params make_params(std::vector<float> values) {
  return std::make_shared<const VectorParams>(std::move(values));
}

}  // namespace fastk::consensus
