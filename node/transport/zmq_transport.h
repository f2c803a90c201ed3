// The ZeroMQ transport of one peer: one PULL socket bound at the peer's endpoint receives
// from every neighbour; one PUSH socket per neighbour, connected to that neighbour's endpoint,
// sends. Messages are wire frames (node/WIRE.md): a header frame and at most one payload
// frame, the payload sent straight from the caller's buffer.
//
// Why PUSH/PULL: traffic is one-way (a peer never answers on the connection it received
// on; HELLO_ACK goes out on the peer's own PUSH socket), so the identity frames and routing
// of DEALER/ROUTER would add bytes and code for nothing, and the sender id is in the
// checksummed header anyway. One PUSH per neighbour (instead of one socket connected to
// all) keeps a high-water mark, a queue and drop counts per neighbour, so a dead or slow
// neighbour fills only its own queue and never delays the others.
//
// Threading: a ZmqTransport and its sockets belong to the one thread that calls its
// methods (the peer's I/O thread). Nothing here blocks longer than receive()'s timeout.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>
#include <zmq.hpp>

#include "node/os/unique_fd.h"
#include "node/transport/curve_gate.h"
#include "node/transport/curve_keys.h"
#include "node/transport/link.h"

namespace fastk::node::transport {

using wire::PeerId;

struct TransportOptions {
  // Messages queued per neighbour before send() drops (a multipart message counts once).
  // ZeroMQ learns that queued messages left only in batches of half the mark, so count on
  // about half of it: 16 models in flight to a neighbour, plus the receiver's own queue and
  // the kernel's socket buffers. A queue full of MLP models holds 32 x 407 KB = 13 MB, the
  // cost of a neighbour that died (its queue is kept until the transport closes).
  int send_high_water_mark = 32;
  int receive_high_water_mark = 32;  // per connected neighbour
  // Larger frames close the offending connection inside ZeroMQ (bounds memory on garbage).
  std::int64_t max_frame_bytes = std::int64_t{1} << 30;
  wire::LogSink log = wire::stderr_log_sink();  // bad-message reports, once per cause
  // Encrypted, authenticated links (docs/security.md): the receive socket accepts only the
  // keys of the peers in `curve->peers` and each send socket proves this peer's own key.
  // Without keys, links are plain (anyone who reaches the endpoint can send).
  std::optional<CurveKeys> curve;
};

// ZeroMQ binding an ipc:// path removes whatever file is there, so a second peer on the
// same path would silently take over the first one's socket. Binding a TCP port that is in
// use fails instead; this gives ipc:// the same behaviour: true when some process still
// accepts connections on the path (a stale file left by a killed peer does not count).
// False for other endpoints.
bool ipc_path_in_use(const std::string& endpoint);

// For an ipc:// endpoint: makes the socket's folder one only this user can enter (mode 0700;
// os/private_folder.h), so other users cannot connect whatever the socket file's mode. Throws
// std::runtime_error when the folder exists and others could enter it. Nothing for others.
void make_ipc_folder_private(const std::string& endpoint);

class ZmqTransport final : public Link {
 public:
  // Binds the receive socket at `bind_endpoint` ("tcp://127.0.0.1:*" picks a free port, or
  // an "ipc://path" Unix-domain socket). Throws std::runtime_error naming the endpoint when
  // it cannot bind, also when another process listens on the ipc:// path.
  ZmqTransport(wire::WirePeers peers, const std::string& bind_endpoint,
               TransportOptions options = {});
  ZmqTransport(const ZmqTransport&) = delete;
  ZmqTransport& operator=(const ZmqTransport&) = delete;
  ~ZmqTransport();  // closes with linger 0: messages not yet sent are discarded

  // The endpoint actually bound (with the chosen port), for neighbours to connect to.
  const std::string& endpoint() const { return endpoint_; }

  // Opens the send socket to `neighbour`. Connecting succeeds even when the neighbour is not
  // running yet; ZeroMQ keeps reconnecting. Throws std::invalid_argument for a repeated
  // neighbour, or one without a public key when links use CURVE, or std::runtime_error for
  // an endpoint ZeroMQ cannot parse.
  void connect(PeerId neighbour, const std::string& endpoint);

  // Link (link.h). send() throws std::invalid_argument if `neighbour` was never connected.
  SendStatus send(PeerId neighbour, const wire::EncodedMessage& message) override;
  std::optional<Received> receive(std::chrono::milliseconds timeout) override;
  // Writes an eventfd that receive() polls beside the socket: one write(2) per wake-up, where
  // an inproc ZeroMQ socket cost a message and command processing on both sides.
  void wake() override;
  std::uint64_t wakeups() const { return wakeups_; }  // receive() calls cut short by wake()

  const wire::RejectionCounter& rejections() const override { return rejections_; }
  std::map<std::string, std::uint64_t> refused_connections() const override;
  SendCounters send_counters(PeerId neighbour) const;
  SendCounters send_totals() const override;

 private:
  struct Neighbour {
    zmq::socket_t socket;
    SendCounters counters;
  };
  std::optional<Received> read_one();
  void serve_gate_when_due();
  // Over CURVE: the peer whose key the connection of `header` proved.
  std::optional<PeerId> authenticated_sender(zmq::message_t& header) const;

  zmq::context_t context_{1};
  wire::WirePeers peers_;
  TransportOptions options_;
  wire::RejectionCounter rejections_;
  zmq::socket_t receiver_;
  std::unique_ptr<CurveGate> gate_;  // with CURVE only
  static constexpr std::chrono::milliseconds kGateServeInterval{10};
  std::chrono::steady_clock::time_point next_gate_serve_{};
  os::UniqueFd wake_fd_;  // eventfd written by wake()
  std::uint64_t wakeups_ = 0;
  std::string endpoint_;
  std::map<PeerId, Neighbour> neighbours_;
};

}  // namespace fastk::node::transport
