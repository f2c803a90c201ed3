// What goes into the peer protocol: one type, one entry point (PeerProtocol::handle). Both
// runtimes translate what their transport delivered into a Message and hand it over, with
// the gradients, timers and comings-back of their own; nothing else reaches the protocol.
// A new kind of input is a new alternative here, and every std::visit over Input or Message
// (the protocol's dispatch, the simulator's link bytes) fails to compile until it says what
// the new kind means. The places that single out one kind (the simulator's I/O costs and a
// finished peer's inputs, the real peer's goodbye) name it with std::get_if and let others
// pass as before.
#pragma once

#include <cstdint>
#include <variant>
#include <vector>

#include "consensus/actions.h"
#include "consensus/gradient_stats.h"
#include "consensus/params.h"

namespace fastk::consensus {

// A neighbour's model with iteration tag `tag` (SendParams).
struct ModelArrived {
  PeerId from = 0;
  std::int64_t tag = 0;
  Params params;
};

// A coded gradient of a coded neighbourhood (SendCoded).
struct CodedGradientArrived {
  PeerId from = 0;
  std::int64_t tag = 0;
  CodedPart coded;
};

// A neighbour's compressed difference to its public estimate (SendCompressed).
struct DifferenceArrived {
  PeerId from = 0;
  std::int64_t tag = 0;
  CompressedPart difference;
};

// AD-PSGD's request or reply (SendAveraging); a reply without params declines.
struct AveragingArrived {
  PeerId from = 0;
  std::int64_t tag = 0;
  AveragingStep step = AveragingStep::kRequest;
  Params params;
};

// The neighbour said goodbye (BYE), behind every message it sent before; `tag` is its
// iteration then, which the protocol does not need.
struct NeighbourLeft {
  PeerId from = 0;
  std::int64_t tag = 0;
};

// What a neighbour sends, as the transport delivers it: each has a sender and a tag.
using Message = std::variant<ModelArrived, CodedGradientArrived, DifferenceArrived,
                             AveragingArrived, NeighbourLeft>;

// The neighbour came back (a restarted peer's HELLO, docs/protocol.md §6.4).
struct NeighbourBack {
  PeerId peer = 0;
};

// The gradient the last StartGradient asked for. The vector is the protocol's to keep.
struct GradientDone {
  std::vector<float> gradient;
  GradientStats stats;
};

// The losses the last StartValidation asked for, in its models' order (NaN or inf: a model
// whose loss is not finite).
struct ValidationDone {
  std::int64_t iteration = 0;
  std::vector<double> losses;
};

// An ArmTimer's time came (or any time: a timer only prompts a re-evaluation).
struct TimerFired {};

using Input = std::variant<ModelArrived, CodedGradientArrived, DifferenceArrived, AveragingArrived,
                           NeighbourLeft, NeighbourBack, GradientDone, ValidationDone, TimerFired>;

inline PeerId sender(const Message& message) {
  return std::visit([](const auto& m) { return m.from; }, message);
}
inline std::int64_t tag_of(const Message& message) {
  return std::visit([](const auto& m) { return m.tag; }, message);
}
inline Input as_input(Message message) {
  return std::visit([](auto&& m) -> Input { return std::move(m); }, std::move(message));
}

}  // namespace fastk::consensus
