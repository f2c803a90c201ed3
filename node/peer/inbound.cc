#include "node/peer/inbound.h"

#include "node/wire/coded_payload.h"
#include "node/wire/compressed_payload.h"

namespace fastk::node::peer {
namespace {

// A received float32 payload (MODEL, AVERAGE_*) as protocol parameters, read in place (no
// copy).
class FrameParams final : public consensus::ParamBuffer {
 public:
  explicit FrameParams(transport::ReceivedMessage message) : message_(std::move(message)) {}
  std::span<const float> values() const override { return message_.parameters(); }

 private:
  transport::ReceivedMessage message_;
};

// A received CODED_GRADIENT as the protocol's coded part.
consensus::CodedPart coded_part(wire::CodedPayload payload) {
  auto coded = std::make_shared<consensus::CodedGradient>();
  coded->covers.assign(payload.covers.begin(), payload.covers.end());
  coded->role.assign(payload.role.begin(), payload.role.end());
  coded->compute_s = payload.compute_s;
  coded->gradient = consensus::make_params(std::move(payload.gradient));
  return coded;
}

consensus::AveragingStep averaging_step(wire::MessageType type) {
  const bool request = type == wire::MessageType::kAverageRequest ||
                       type == wire::MessageType::kSharedAverageRequest;
  return request ? consensus::AveragingStep::kRequest : consensus::AveragingStep::kReply;
}

}  // namespace

std::optional<consensus::Message> to_message(transport::ReceivedMessage message,
                                             SharedModelReader& shared) {
  const int from = static_cast<int>(message.sender());
  const std::int64_t tag = message.iteration();
  switch (message.type()) {
    case wire::MessageType::kHello:
    case wire::MessageType::kHelloAck:
      return std::nullopt;
    case wire::MessageType::kModel:
      return consensus::ModelArrived{from, tag,
                                     std::make_shared<const FrameParams>(std::move(message))};
    case wire::MessageType::kSharedModel: {
      auto params = shared.take(from, message.type(), message.payload());
      if (!params) return std::nullopt;
      return consensus::ModelArrived{from, tag, std::move(params)};
    }
    case wire::MessageType::kCodedGradient:
      return consensus::CodedGradientArrived{
          from, tag, coded_part(wire::read_coded_payload(message.payload()))};
    case wire::MessageType::kCompressedDifference:
      return consensus::DifferenceArrived{
          from, tag,
          std::make_shared<const compression::Compressed>(
              wire::read_compressed_payload(message.kind(), message.payload()))};
    case wire::MessageType::kAverageRequest:
    case wire::MessageType::kAverageReply: {
      const auto step = averaging_step(message.type());
      // An empty reply declines: no values, no params.
      consensus::Params params;
      if (!message.parameters().empty()) {
        params = std::make_shared<const FrameParams>(std::move(message));
      }
      return consensus::AveragingArrived{from, tag, step, std::move(params)};
    }
    case wire::MessageType::kSharedAverageRequest:
    case wire::MessageType::kSharedAverageReply: {
      auto params = shared.take(from, message.type(), message.payload());
      if (!params) return std::nullopt;
      return consensus::AveragingArrived{from, tag, averaging_step(message.type()),
                                         std::move(params)};
    }
    case wire::MessageType::kBye:
      // Behind the models it sent before (a held-back link keeps its order).
      return consensus::NeighbourLeft{from, tag};
  }
  return std::nullopt;
}

}  // namespace fastk::node::peer
