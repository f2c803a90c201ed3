#include "node/transport/probe.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>
#include <utility>
#include <zmq.hpp>

#include "node/transport/zmq_transport.h"

namespace fastk::node::transport {
namespace {

using Clock = std::chrono::steady_clock;
constexpr char kPing = 'p', kData = 'd', kDone = 'e', kPong = 'o';
constexpr std::size_t kChunk = 256 * 1024;
constexpr int kPings = 5;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

struct ProbeServer::State {
  zmq::context_t context;
  std::vector<zmq::socket_t> sockets;  // the bound ones
  std::vector<std::string> errors;
  std::atomic<bool> stop{false};
  std::thread thread;
  std::map<std::string, std::int64_t> received;  // data bytes per prober since its last done

  void serve() {
    std::vector<zmq::pollitem_t> items;
    for (auto& s : sockets) items.push_back({s.handle(), 0, ZMQ_POLLIN, 0});
    while (!stop) {
      if (zmq::poll(items, std::chrono::milliseconds(100)) == 0) continue;
      for (std::size_t i = 0; i < items.size(); ++i) {
        if (items[i].revents & ZMQ_POLLIN) answer(sockets[i]);
      }
    }
  }

  // One message: [prober id, body]. Anything else (a stray connection's garbage) is dropped.
  void answer(zmq::socket_t& socket) {
    zmq::message_t id, body;
    if (!socket.recv(id, zmq::recv_flags::dontwait) || !id.more()) return;
    if (!socket.recv(body, zmq::recv_flags::dontwait) || body.more() || body.size() == 0) return;
    const char kind = *static_cast<const char*>(body.data());
    std::string reply;
    if (kind == kPing) {
      reply = std::string(1, kPong);
    } else if (kind == kData) {
      received[id.to_string()] += static_cast<std::int64_t>(body.size());
      return;
    } else if (kind == kDone) {
      reply = std::to_string(std::exchange(received[id.to_string()], 0));
    } else {
      return;
    }
    (void)socket.send(id, zmq::send_flags::sndmore | zmq::send_flags::dontwait);
    (void)socket.send(zmq::buffer(reply), zmq::send_flags::dontwait);
  }
};

ProbeServer::ProbeServer(const std::vector<std::string>& endpoints)
    : state_(std::make_unique<State>()) {
  for (const auto& endpoint : endpoints) {
    if (ipc_path_in_use(endpoint)) {  // binding would take over a live peer's socket
      state_->errors.emplace_back("Address already in use");
      continue;
    }
    zmq::socket_t socket(state_->context, zmq::socket_type::router);
    socket.set(zmq::sockopt::linger, 0);
    socket.set(zmq::sockopt::maxmsgsize, static_cast<std::int64_t>(2 * kChunk));
    try {
      socket.bind(endpoint);
      state_->sockets.push_back(std::move(socket));
      state_->errors.emplace_back();
    } catch (const zmq::error_t& e) {
      state_->errors.emplace_back(e.what());
    }
  }
  state_->thread = std::thread([s = state_.get()] { s->serve(); });
}

ProbeServer::~ProbeServer() {
  state_->stop = true;
  state_->thread.join();
}

const std::vector<std::string>& ProbeServer::bind_errors() const { return state_->errors; }

namespace {

// Waits up to `timeout` for one message on `socket`.
bool receive(zmq::socket_t& socket, zmq::message_t& message, std::chrono::milliseconds timeout) {
  zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
  if (zmq::poll(&item, 1, timeout) == 0) return false;
  return socket.recv(message, zmq::recv_flags::dontwait).has_value();
}

bool ping(zmq::socket_t& socket, std::chrono::milliseconds timeout) {
  if (!socket.send(zmq::buffer(std::string(1, kPing)), zmq::send_flags::none)) return false;
  zmq::message_t answer;
  return receive(socket, answer, timeout) && answer.to_string() == std::string(1, kPong);
}

}  // namespace

std::chrono::milliseconds probe_limit(std::int64_t bytes, std::chrono::milliseconds timeout) {
  return (2 + kPings) * timeout + std::chrono::milliseconds(bytes * 8 / 1000);
}

ProbeResult probe_endpoint(const std::string& endpoint, std::int64_t bytes,
                           std::chrono::milliseconds timeout) {
  ProbeResult result;
  zmq::context_t context;
  zmq::socket_t socket(context, zmq::socket_type::dealer);
  socket.set(zmq::sockopt::linger, 0);
  // A send that cannot leave (the queue full on a stalled link) gives up instead of blocking.
  socket.set(zmq::sockopt::sndtimeo, static_cast<int>(timeout.count()));
  try {
    socket.connect(endpoint);
  } catch (const zmq::error_t& e) {
    result.error = std::string("cannot connect: ") + e.what();
    return result;
  }
  if (!ping(socket, timeout)) {
    result.error = "no answer within " + std::to_string(timeout.count()) + " ms";
    return result;
  }
  std::vector<double> trips;
  for (int i = 0; i < kPings; ++i) {
    const auto start = Clock::now();
    if (!ping(socket, timeout)) {
      result.error = "stopped answering";
      return result;
    }
    trips.push_back(seconds_since(start));
  }
  std::nth_element(trips.begin(), trips.begin() + kPings / 2, trips.end());
  result.round_trip_s = trips[kPings / 2];
  result.reached = true;
  if (bytes <= 0) return result;

  // The port answered; what follows measures the link, and a failure says it is slow or
  // stalled, not unreachable.
  std::string chunk(kChunk, kData);
  const auto start = Clock::now();
  for (std::int64_t sent = 0; sent < bytes; sent += static_cast<std::int64_t>(chunk.size())) {
    if (!socket.send(zmq::buffer(chunk), zmq::send_flags::none)) {
      result.error = "the data stalled after " + std::to_string(sent) + " bytes";
      return result;
    }
  }
  zmq::message_t answer;
  // The data at 1 Mbit/s would take bytes * 8 microseconds: wait that long at most.
  const auto data_timeout = timeout + std::chrono::milliseconds(bytes * 8 / 1000);
  if (!socket.send(zmq::buffer(std::string(1, kDone)), zmq::send_flags::none) ||
      !receive(socket, answer, data_timeout)) {
    result.error = "the data was not acknowledged in time (link slower than 1 Mbit/s, or cut)";
    return result;
  }
  const std::string count = answer.to_string();
  if (count.empty() || count.find_first_not_of("0123456789") != std::string::npos) {
    result.error = "the server's answer is not a byte count: another program on this port?";
    return result;
  }
  const double elapsed = std::max(seconds_since(start) - result.round_trip_s, 1e-6);
  result.bits_per_s = 8.0 * std::stod(count) / elapsed;
  return result;
}

}  // namespace fastk::node::transport
