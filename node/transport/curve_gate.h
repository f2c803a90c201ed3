// Who may connect to a peer's receive socket when its links use CURVE (docs/security.md).
//
// ZeroMQ's CURVE handshake proves that a connecting sender holds the secret key of the
// public key it presents, but accepts any key unless a ZAP handler (ZeroMQ's authentication
// protocol, RFC 27) says otherwise. The gate is that handler: it accepts exactly the public
// keys of the peers allowed to send here, and names the connection with the peer id the key
// belongs to (the "User-Id" every frame of that connection then carries, which the decoder
// checks against the header's sender). It also watches the receive socket's handshake
// failures, so that refused connections (no encryption, an unknown key) are counted.
//
// Threading: like the transport, the gate belongs to the thread that calls serve(). ZeroMQ
// holds a connecting sender's handshake until serve() answers, so the transport calls it
// every time it receives.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "node/transport/curve_keys.h"

namespace fastk::node::transport {

class CurveGate {
 public:
  // Binds the context's ZAP endpoint (one gate per context) and starts watching `receiver`,
  // which must be set up as a CURVE server before it binds.
  CurveGate(zmq::context_t& context, zmq::socket_t& receiver, const CurveKeys& keys);
  CurveGate(const CurveGate&) = delete;
  CurveGate& operator=(const CurveGate&) = delete;

  // Answers every pending authentication request and counts every handshake failure
  // reported so far. Never blocks.
  void serve();
  // Poll items for serve()'s two sockets, for the transport's wait.
  zmq::pollitem_t zap_item() { return {zap_.handle(), 0, ZMQ_POLLIN, 0}; }
  zmq::pollitem_t monitor_item() { return {monitor_.handle(), 0, ZMQ_POLLIN, 0}; }

  // Connection attempts refused, by cause: "unknown key" (a CURVE sender whose key is not a
  // neighbour's), "bad handshake" (no encryption, or a handshake broken off).
  const std::map<std::string, std::uint64_t>& refused() const { return refused_; }

 private:
  void answer(const std::vector<zmq::message_t>& request);
  void note_failure(const std::vector<zmq::message_t>& event);

  zmq::socket_t zap_;
  zmq::socket_t monitor_;
  std::map<std::string, wire::PeerId> peer_of_key_;  // binary 32-byte key -> peer
  std::map<std::string, std::uint64_t> refused_;
};

}  // namespace fastk::node::transport
