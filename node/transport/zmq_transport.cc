#include "node/transport/zmq_transport.h"

#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "node/os/private_folder.h"

namespace fastk::node::transport {
namespace {

// Payloads up to this size are copied into the ZeroMQ message (cheaper than sharing
// ownership); larger ones are sent from the caller's buffer when it has an owner to keep it
// alive (and copied when it has none).
constexpr std::size_t kCopyBelowBytes = 1024;

// ZeroMQ calls this (on its I/O thread) once it no longer needs a zero-copy payload.
void release_owner(void* /*data*/, void* hint) {
  delete static_cast<std::shared_ptr<const void>*>(hint);
}

zmq::message_t payload_message(const wire::SharedBytes& payload) {
  const std::span<const std::byte> bytes = payload.bytes;
  if (bytes.size() < kCopyBelowBytes || !payload.owner) {
    return zmq::message_t(bytes.data(), bytes.size());
  }
  // ZeroMQ's API takes a mutable pointer but only reads zero-copy data.
  return zmq::message_t(const_cast<std::byte*>(bytes.data()), bytes.size(), release_owner,
                        new std::shared_ptr<const void>(payload.owner));
}

std::span<const std::byte> bytes_of(const zmq::message_t& frame) {
  return {static_cast<const std::byte*>(frame.data()), frame.size()};
}

}  // namespace

bool ipc_path_in_use(const std::string& endpoint) {
  const std::string scheme = "ipc://";
  if (!endpoint.starts_with(scheme)) return false;
  const std::string path = endpoint.substr(scheme.size());
  sockaddr_un address{};
  if (path.size() >= sizeof(address.sun_path)) return false;  // ZeroMQ reports it
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  const os::UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM, 0));
  if (!fd.valid()) return false;
  return ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0;
}

void make_ipc_folder_private(const std::string& endpoint) {
  const std::string scheme = "ipc://";
  if (!endpoint.starts_with(scheme)) return;
  os::make_private_folder(std::filesystem::path(endpoint.substr(scheme.size())).parent_path());
}

ZmqTransport::ZmqTransport(wire::WirePeers peers, const std::string& bind_endpoint,
                           TransportOptions options)
    : peers_(std::move(peers)),
      options_(std::move(options)),
      rejections_(options_.log),
      receiver_(context_, zmq::socket_type::pull) {
  wake_fd_.reset(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!wake_fd_.valid()) {
    throw std::runtime_error(std::string("cannot create an eventfd: ") + std::strerror(errno));
  }
  receiver_.set(zmq::sockopt::linger, 0);
  receiver_.set(zmq::sockopt::rcvhwm, options_.receive_high_water_mark);
  receiver_.set(zmq::sockopt::maxmsgsize, options_.max_frame_bytes);
  if (options_.curve) {
    if (!zmq_has("curve")) {
      throw std::runtime_error(
          "this libzmq was built without CURVE (libsodium): links cannot "
          "be encrypted; install Debian's libzmq5, or set [security] "
          "curve = \"off\"");
    }
    receiver_.set(zmq::sockopt::curve_server, true);
    receiver_.set(zmq::sockopt::curve_secretkey, options_.curve->own.secret_key);
    receiver_.set(zmq::sockopt::zap_domain, "fastk");
    gate_ = std::make_unique<CurveGate>(context_, receiver_, *options_.curve);
  }
  if (ipc_path_in_use(bind_endpoint)) {
    throw std::runtime_error("cannot bind the receive socket to '" + bind_endpoint +
                             "': Address already in use");
  }
  try {
    receiver_.bind(bind_endpoint);
  } catch (const zmq::error_t& e) {
    throw std::runtime_error("cannot bind the receive socket to '" + bind_endpoint +
                             "': " + e.what());
  }
  endpoint_ = receiver_.get(zmq::sockopt::last_endpoint);
}

// Every socket was given linger 0. The receive socket closes first: its handshake monitor
// writes into the gate's socket with a blocking send, so the gate must outlive it. ZeroMQ
// leaves an ipc:// socket file behind when the socket closes; the path was ours while bound,
// so remove it.
ZmqTransport::~ZmqTransport() {
  if (gate_) zmq_socket_monitor(receiver_.handle(), nullptr, 0);
  receiver_.close();
  const std::string scheme = "ipc://";
  if (endpoint_.starts_with(scheme)) ::unlink(endpoint_.substr(scheme.size()).c_str());
}

void ZmqTransport::connect(PeerId neighbour, const std::string& endpoint) {
  if (neighbours_.count(neighbour)) {
    throw std::invalid_argument("transport: neighbour " + std::to_string(neighbour) +
                                " is already connected");
  }
  zmq::socket_t socket(context_, zmq::socket_type::push);
  socket.set(zmq::sockopt::linger, 0);
  socket.set(zmq::sockopt::sndhwm, options_.send_high_water_mark);
  if (options_.curve) {
    const auto key = options_.curve->peers.find(neighbour);
    if (key == options_.curve->peers.end()) {
      throw std::invalid_argument("transport: no public key for neighbour " +
                                  std::to_string(neighbour));
    }
    socket.set(zmq::sockopt::curve_serverkey, key->second);
    socket.set(zmq::sockopt::curve_publickey, options_.curve->own.public_key);
    socket.set(zmq::sockopt::curve_secretkey, options_.curve->own.secret_key);
  }
  // Not ZMQ_IMMEDIATE: messages to a neighbour that has not started yet wait in its queue
  // (up to the high-water mark), so HELLOs sent before it binds still reach it.
  try {
    socket.connect(endpoint);
  } catch (const zmq::error_t& e) {
    throw std::runtime_error("cannot connect to neighbour " + std::to_string(neighbour) + " at '" +
                             endpoint + "': " + e.what());
  }
  neighbours_.emplace(neighbour, Neighbour{std::move(socket), {}});
}

SendStatus ZmqTransport::send(PeerId neighbour, const wire::EncodedMessage& message) {
  auto it = neighbours_.find(neighbour);
  if (it == neighbours_.end()) {
    throw std::invalid_argument("transport: send to peer " + std::to_string(neighbour) +
                                ", which was never connected");
  }
  Neighbour& n = it->second;
  const auto more = message.has_payload_frame ? zmq::send_flags::sndmore : zmq::send_flags::none;
  zmq::message_t header(message.header.data(), message.header.size());
  if (!n.socket.send(header, more | zmq::send_flags::dontwait)) {
    ++n.counters.dropped;
    return SendStatus::kDropped;
  }
  if (message.has_payload_frame) {
    // ZeroMQ accepts the remaining parts of a message whose first part it took (the
    // high-water mark counts whole messages), so this cannot fail with EAGAIN.
    zmq::message_t payload = payload_message(message.payload);
    (void)n.socket.send(payload, zmq::send_flags::dontwait);
  }
  ++n.counters.queued;
  n.counters.bytes_queued += message.header.size() + message.payload.bytes.size();
  return SendStatus::kQueued;
}

// Adds 1 to the eventfd's counter; wake-ups not yet seen collapse into one.
void ZmqTransport::wake() {
  const std::uint64_t one = 1;
  (void)!::write(wake_fd_.get(), &one,
                 sizeof one);  // EAGAIN only at a counter of 2^64 - 2: awake anyway
}

std::optional<Received> ZmqTransport::receive(std::chrono::milliseconds timeout) {
  try {
    serve_gate_when_due();
    if (auto got = read_one()) return got;
    zmq::pollitem_t items[] = {
        {receiver_.handle(), 0, ZMQ_POLLIN, 0}, {nullptr, wake_fd_.get(), ZMQ_POLLIN, 0}, {}, {}};
    const int watched = gate_ ? 4 : 2;
    if (gate_) items[2] = gate_->zap_item(), items[3] = gate_->monitor_item();
    if (zmq::poll(items, watched, timeout) == 0) return std::nullopt;
    if (gate_ && ((items[2].revents | items[3].revents) & ZMQ_POLLIN)) {
      gate_->serve();
      next_gate_serve_ = std::chrono::steady_clock::now() + kGateServeInterval;
      return read_one();
    }
    if (items[1].revents & ZMQ_POLLIN) {
      std::uint64_t count = 0;
      (void)!::read(wake_fd_.get(), &count, sizeof count);  // resets the counter
      ++wakeups_;
      return std::nullopt;
    }
    return read_one();
  } catch (const zmq::error_t& e) {
    if (e.num() == EINTR) return std::nullopt;  // a signal: let the caller look at it
    throw;
  }
}

// Reads one whole multipart message if one is waiting, and decodes it. Keeps at most the
// two frames the format has; extra frames are drained and make the message a bad one.
std::optional<Received> ZmqTransport::read_one() {
  zmq::message_t frames[2];
  std::size_t count = 0;
  zmq::message_t extra;
  bool more = true;
  while (more) {
    zmq::message_t& into = count < 2 ? frames[count] : extra;
    // ZeroMQ delivers the parts of a message together: once the first is here, waiting for
    // the rest cannot block.
    const auto flags = count == 0 ? zmq::recv_flags::dontwait : zmq::recv_flags::none;
    if (!receiver_.recv(into, flags)) return std::nullopt;
    more = into.more();
    ++count;
  }
  std::span<const std::byte> views[2] = {bytes_of(frames[0]), bytes_of(frames[1])};
  wire::DecodeResult result =
      count > 2 ? wire::DecodeResult(wire::Rejection{wire::WireError::kBadFrameCount,
                                                     std::to_string(count) + " frames"})
                : wire::decode(std::span(views, count), peers_, authenticated_sender(frames[0]));
  if (auto* rejection = std::get_if<wire::Rejection>(&result)) {
    rejections_.record(*rejection);
    return Received(std::move(*rejection));
  }
  // On the heap, so that the bytes of a small frame (kept inside zmq::message_t) stay put.
  auto payload = std::make_shared<zmq::message_t>(std::move(frames[1]));
  const std::span<const std::byte> bytes = bytes_of(*payload);
  return Received(std::in_place_type<ReceivedMessage>, std::get<wire::DecodedMessage>(result),
                  wire::SharedBytes{std::move(payload), bytes});
}

// Each look at the gate's sockets costs a system call per socket (ZeroMQ checks its command
// mailbox), which on every receive() cost 8% of a run's training phase; a wait that finds
// nothing else to do serves it at once anyway. So while messages keep coming, a neighbour's
// handshake waits at most this long.
void ZmqTransport::serve_gate_when_due() {
  if (!gate_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now < next_gate_serve_) return;
  gate_->serve();
  next_gate_serve_ = now + kGateServeInterval;
}

// The gate names every CURVE connection with its peer id (curve_gate.h). A frame without
// that name cannot have come through the gate: it is given an id no peer has, so the
// decoder rejects it whatever its header says.
std::optional<PeerId> ZmqTransport::authenticated_sender(zmq::message_t& header) const {
  if (!gate_) return std::nullopt;
  const char* user = zmq_msg_gets(header.handle(), "User-Id");
  const PeerId nobody = peers_.run().peer_count;
  if (!user || !*user) return nobody;
  char* end = nullptr;
  const unsigned long id = std::strtoul(user, &end, 10);
  return *end == '\0' && id < nobody ? static_cast<PeerId>(id) : nobody;
}

std::map<std::string, std::uint64_t> ZmqTransport::refused_connections() const {
  return gate_ ? gate_->refused() : std::map<std::string, std::uint64_t>{};
}

SendCounters ZmqTransport::send_counters(PeerId neighbour) const {
  auto it = neighbours_.find(neighbour);
  return it == neighbours_.end() ? SendCounters{} : it->second.counters;
}

SendCounters ZmqTransport::send_totals() const {
  SendCounters total;
  for (const auto& [id, n] : neighbours_) {
    total.queued += n.counters.queued;
    total.dropped += n.counters.dropped;
    total.bytes_queued += n.counters.bytes_queued;
  }
  return total;
}

}  // namespace fastk::node::transport
