// Decoding of wire messages (node/WIRE.md). decode() reads bytes that came from the network:
// it checks every length before reading, never throws, asserts or aborts, and says why it
// rejected a message (the cause is counted by RejectionCounter, the message dropped).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "node/wire/format.h"

namespace fastk::node::wire {

// Why a message was rejected, in the order the decoder checks.
enum class WireError : std::uint8_t {
  kBadFrameCount,       // not 1 or 2 frames, or not the count the payload kind needs
  kBadHeader,           // header frame too short / too long, reserved byte set, iteration < 0
  kBadMagic,            // not "FKWR": not a fastk peer
  kUnsupportedVersion,  // a fastk peer speaking another version of the format
  kUnknownMessageType,
  kBadPayloadKind,    // unknown kind, or not the kind the message type carries
  kBadPayloadLength,  // length field != payload frame size, or wrong size for the kind
  kBadChecksum,
  kUnknownSender,     // sender id >= peer count
  kNotNeighbour,      // a peer of this run that is not allowed to send to us
  kWrongRun,          // HELLO with another run id or peer count
  kNotAuthenticated,  // over an authenticated link, a header naming another sender than its key's
};
inline constexpr std::size_t kWireErrorCount = 12;
std::string_view to_string(WireError cause);

struct Rejection {
  WireError cause;
  std::string detail;  // what exactly was wrong, for the log
};

// Who may send to this peer and which run it belongs to: what the decoder accepts beyond the
// format itself.
class WirePeers {
 public:
  // `senders` are the peers allowed to send to `self`: its contacts (PeerProtocol::contacts,
  // who it receives from or sends to in any round; both send it HELLO and BYE).
  // Throws std::invalid_argument if a sender is >= run.peer_count or equals self.
  WirePeers(PeerId self, HelloInfo run, std::span<const PeerId> senders);

  PeerId self() const { return self_; }
  const HelloInfo& run() const { return run_; }
  bool is_sender(PeerId peer) const { return peer < may_send_.size() && may_send_[peer]; }

 private:
  PeerId self_;
  HelloInfo run_;
  std::vector<bool> may_send_;  // indexed by peer id
};

struct DecodedMessage {
  MessageType type;
  PeerId sender;
  std::int64_t iteration;
  HelloInfo hello;                        // HELLO and HELLO_ACK only
  std::span<const std::byte> payload;     // a view into the payload frame (floats for MODEL)
  PayloadKind kind = PayloadKind::kNone;  // the payload's (which compressor, for 5..9)
};

using DecodeResult = std::variant<DecodedMessage, Rejection>;

// `authenticated_sender`: over a link whose sender proved its key (CURVE), the peer that key
// belongs to; the header must name that peer. A value no peer has (>= the peer count) says
// the connection proved no key: every frame is rejected. Empty over unauthenticated links.
[[nodiscard]] DecodeResult decode(std::span<const std::span<const std::byte>> frames,
                                  const WirePeers& peers,
                                  std::optional<PeerId> authenticated_sender = std::nullopt);

}  // namespace fastk::node::wire
