// What a peer's driver needs from the network between it and its neighbours (a link): send a
// wire message to a neighbour, take the next message that came in (good or rejected), be
// woken from another thread, and count. ZmqTransport (zmq_transport.h) is the real link;
// InProcessLink (in_process_link.h) joins the drivers of one process, for tests that run a
// whole neighbourhood in milliseconds. Both pass every message through the wire decoder.
//
// Threading: a link belongs to the one thread that calls send() and receive() (the peer's I/O
// thread); wake() may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "node/wire/decoder.h"
#include "node/wire/encoder.h"
#include "node/wire/rejection_counter.h"

namespace fastk::node::transport {

using wire::PeerId;

enum class [[nodiscard]] SendStatus{
    kQueued,   // handed to the link; delivered unless the neighbour dies
    kDropped,  // the neighbour's queue is full (dead, not yet started, or slow): counted
};

struct SendCounters {
  std::uint64_t queued = 0;
  std::uint64_t dropped = 0;
  std::uint64_t bytes_queued = 0;  // header + payload bytes of queued messages
};

// A message that passed the decoder. Owns its payload, so parameters() and payload() stay
// valid as long as the object (or a move of it) lives.
class ReceivedMessage {
 public:
  // `payload` holds the bytes `decoded.payload` points into (empty without a payload frame).
  ReceivedMessage(const wire::DecodedMessage& decoded, wire::SharedBytes payload);

  wire::MessageType type() const { return type_; }
  PeerId sender() const { return sender_; }
  std::int64_t iteration() const { return iteration_; }
  const wire::HelloInfo& hello() const { return hello_; }  // HELLO / HELLO_ACK
  // MODEL, AVERAGE_REQUEST, AVERAGE_REPLY (float32 payloads): the values, read in place when
  // the payload is float-aligned, else from an aligned copy. Empty for other types.
  std::span<const float> parameters() const;
  std::span<const std::byte> payload() const { return payload_.bytes; }
  // Which of the payload kinds the message type allows it carries (the compressor, for a
  // COMPRESSED_DIFFERENCE).
  wire::PayloadKind kind() const { return kind_; }

 private:
  wire::MessageType type_;
  PeerId sender_;
  std::int64_t iteration_;
  wire::HelloInfo hello_;
  wire::PayloadKind kind_;
  wire::SharedBytes payload_;
  std::vector<float> aligned_copy_;  // float32 payloads that are not float-aligned
};

// What receive() got: a good message, or a rejected one (already counted and logged).
using Received = std::variant<ReceivedMessage, wire::Rejection>;

class Link {
 public:
  virtual ~Link() = default;

  // Never blocks. Throws std::invalid_argument for a peer that is not a neighbour.
  virtual SendStatus send(PeerId neighbour, const wire::EncodedMessage& message) = 0;
  // Waits up to `timeout` for one message. Empty on timeout, on wake(), or when a signal
  // interrupted the wait (so the caller's loop can run its timers and check for shutdown).
  virtual std::optional<Received> receive(std::chrono::milliseconds timeout) = 0;
  // Any thread, never blocks: the receive() waiting now returns empty at once, or else the
  // next one does. Wake-ups not yet seen collapse into one.
  virtual void wake() = 0;

  virtual const wire::RejectionCounter& rejections() const = 0;
  // Connection attempts refused before any frame, by cause (only links that authenticate
  // their senders refuse any).
  virtual std::map<std::string, std::uint64_t> refused_connections() const { return {}; }
  virtual SendCounters send_totals() const = 0;
};

}  // namespace fastk::node::transport
