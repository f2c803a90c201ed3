// Model parameters as immutable, shared flat float buffers. A peer's model is sent to
// several neighbours and kept in their mailboxes without being copied: every holder shares
// one buffer. Runtimes provide their own buffer type (the ZeroMQ runtime wraps a received
// message frame) by deriving from ParamBuffer; the protocol only reads values().
#pragma once

#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace fastk::consensus {

class ParamBuffer {
 public:
  virtual ~ParamBuffer() = default;
  virtual std::span<const float> values() const = 0;
};

using Params = std::shared_ptr<const ParamBuffer>;

// The buffer the protocol itself produces after each update.
class VectorParams final : public ParamBuffer {
 public:
  explicit VectorParams(std::vector<float> values) : values_(std::move(values)) {}
  std::span<const float> values() const override { return values_; }
  // Only for the owner that recycles the buffer once nobody else holds it.
  std::span<float> mutable_values() { return values_; }

 private:
  std::vector<float> values_;
};

inline Params make_params(std::vector<float> values) {
  return std::make_shared<const VectorParams>(std::move(values));
}

}  // namespace fastk::consensus
