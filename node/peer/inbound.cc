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

std::optional<Inbound> to_inbound(transport::ReceivedMessage message, SharedModelReader& shared) {
  Inbound in;
  in.from = static_cast<int>(message.sender());
  in.tag = message.iteration();
  switch (message.type()) {
    case wire::MessageType::kHello:
    case wire::MessageType::kHelloAck:
      return std::nullopt;
    case wire::MessageType::kModel:
      in.params = std::make_shared<const FrameParams>(std::move(message));
      break;
    case wire::MessageType::kSharedModel:
      in.params = shared.take(in.from, message.type(), message.payload());
      if (!in.params) return std::nullopt;
      break;
    case wire::MessageType::kCodedGradient:
      in.coded = coded_part(wire::read_coded_payload(message.payload()));
      break;
    case wire::MessageType::kCompressedDifference:
      in.compressed = std::make_shared<const compression::Compressed>(
          wire::read_compressed_payload(message.kind(), message.payload()));
      break;
    case wire::MessageType::kAverageRequest:
    case wire::MessageType::kAverageReply:
      in.averaging = averaging_step(message.type());
      // An empty reply declines: no values, no params.
      if (!message.parameters().empty()) {
        in.params = std::make_shared<const FrameParams>(std::move(message));
      }
      break;
    case wire::MessageType::kSharedAverageRequest:
    case wire::MessageType::kSharedAverageReply:
      in.averaging = averaging_step(message.type());
      in.params = shared.take(in.from, message.type(), message.payload());
      if (!in.params) return std::nullopt;
      break;
    case wire::MessageType::kBye:
      in.bye = true;  // behind the models it sent before (a held-back link keeps its order)
      break;
  }
  return in;
}

}  // namespace fastk::node::peer
