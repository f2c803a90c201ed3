// A short ZeroMQ exchange that tells whether a peer's port can be reached from another host
// and how fast: `fastk doctor` binds every peer's endpoint with a ProbeServer on the peer's
// host, and probes each edge of the graph from the sending peer's host with probe_endpoint.
// It uses TCP through ZeroMQ as the peers do, on their ports, so a firewall, a wrong address
// or a slow link shows here before a run.
//
// The exchange, on a DEALER connected to the server's ROUTER: a few "ping" messages each
// answered with "pong" (the round trip: their median), then `bytes` of "data" in 256 KiB
// messages and a "done" answered with the byte count the server received (the bandwidth: the
// bytes over the time until that answer, less one round trip).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fastk::node::transport {

class ProbeServer {
 public:
  // Binds every endpoint ("tcp://*:47000", "ipc:///tmp/x.sock"); one that cannot be bound is
  // reported in bind_errors() (with ZeroMQ's reason; an ipc:// path some process accepts
  // connections on counts as in use and is left alone) and the others still serve. Answers
  // on a thread of its own until destroyed.
  explicit ProbeServer(const std::vector<std::string>& endpoints);
  ~ProbeServer();
  ProbeServer(const ProbeServer&) = delete;
  ProbeServer& operator=(const ProbeServer&) = delete;

  // One entry per endpoint, in order: empty when it is bound, else why not.
  const std::vector<std::string>& bind_errors() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

struct ProbeResult {
  bool reached = false;     // the port answered the pings
  double round_trip_s = 0;  // median of the pings
  double bits_per_s = 0;    // 0 when no data was sent or the data failed
  std::string error;        // why it was not reached, or (reached) why the data failed
};

// Probes the ProbeServer at `endpoint` ("tcp://host:port"): waits up to `timeout` for the
// first answer and for each later one, then measures as described above with `bytes` of data
// (0: round trip only), allowing the data timeout + bytes at 1 Mbit/s. So it returns within
// 7 x timeout + bytes * 8 microseconds (probe_limit).
std::chrono::milliseconds probe_limit(std::int64_t bytes, std::chrono::milliseconds timeout);
ProbeResult probe_endpoint(const std::string& endpoint, std::int64_t bytes,
                           std::chrono::milliseconds timeout);

}  // namespace fastk::node::transport
