#include "node/transport/curve_gate.h"

#include <cstring>
#include <stdexcept>

namespace fastk::node::transport {
namespace {

constexpr const char* kZapEndpoint = "inproc://zeromq.zap.01";  // fixed by RFC 27
constexpr const char* kMonitorEndpoint = "inproc://fastk-receiver-handshakes";

std::string text_of(const zmq::message_t& frame) {
  return {static_cast<const char*>(frame.data()), frame.size()};
}

// All parts of one message if one is waiting; empty otherwise.
std::vector<zmq::message_t> take_message(zmq::socket_t& socket) {
  std::vector<zmq::message_t> parts;
  bool more = true;
  while (more) {
    zmq::message_t part;
    const auto flags = parts.empty() ? zmq::recv_flags::dontwait : zmq::recv_flags::none;
    if (!socket.recv(part, flags)) return {};
    more = part.more();
    parts.push_back(std::move(part));
  }
  return parts;
}

}  // namespace

CurveGate::CurveGate(zmq::context_t& context, zmq::socket_t& receiver, const CurveKeys& keys)
    : zap_(context, zmq::socket_type::rep), monitor_(context, zmq::socket_type::pair) {
  for (const auto& [peer, z85] : keys.peers) {
    std::string binary(32, '\0');
    if (!zmq_z85_decode(reinterpret_cast<std::uint8_t*>(binary.data()), z85.c_str())) {
      throw std::invalid_argument("peer " + std::to_string(peer) + "'s public key is not Z85");
    }
    peer_of_key_[binary] = peer;
  }
  zap_.set(zmq::sockopt::linger, 0);
  zap_.bind(kZapEndpoint);
  constexpr int kFailures = ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                            ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;
  if (zmq_socket_monitor(receiver.handle(), kMonitorEndpoint, kFailures) != 0) {
    throw std::runtime_error(std::string("cannot watch the receive socket: ") +
                             zmq_strerror(zmq_errno()));
  }
  monitor_.set(zmq::sockopt::linger, 0);
  monitor_.connect(kMonitorEndpoint);
}

void CurveGate::serve() {
  while (true) {
    const auto request = take_message(zap_);
    if (request.empty()) break;
    answer(request);
  }
  while (true) {
    const auto event = take_message(monitor_);
    if (event.empty()) break;
    note_failure(event);
  }
}

// A request is version, request id, domain, address, routing id, mechanism, then the
// mechanism's credentials (CURVE: the client's 32-byte public key).
void CurveGate::answer(const std::vector<zmq::message_t>& request) {
  std::string status = "400", reason = "not a CURVE request", user;
  if (request.size() == 7 && text_of(request[0]) == "1.0" && text_of(request[5]) == "CURVE") {
    const auto it = peer_of_key_.find(text_of(request[6]));
    if (it != peer_of_key_.end()) {
      status = "200", reason = "OK", user = std::to_string(it->second);
    } else {
      reason = "not the key of a peer allowed to send here";
    }
  }
  const std::string request_id = request.size() > 1 ? text_of(request[1]) : "";
  const std::string reply[] = {"1.0", request_id, status, reason, user, ""};
  for (std::size_t i = 0; i < std::size(reply); ++i) {
    const auto more = i + 1 < std::size(reply) ? zmq::send_flags::sndmore : zmq::send_flags::none;
    (void)zap_.send(zmq::buffer(reply[i]), more);
  }
}

// A monitor event: a 6-byte frame (u16 event, u32 value) and the endpoint.
void CurveGate::note_failure(const std::vector<zmq::message_t>& event) {
  if (event.empty() || event[0].size() < 2) return;
  std::uint16_t id = 0;
  std::memcpy(&id, event[0].data(), sizeof id);
  // A plain (unencrypted) sender shows as a protocol error or, when it hangs up first, as a
  // failure without detail: one cause for both.
  ++refused_[id == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH ? "unknown key" : "bad handshake"];
}

}  // namespace fastk::node::transport
