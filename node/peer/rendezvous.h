// Who of a peer's neighbours is there: the start-up handshake and the goodbye.
//
// Restart: a HELLO after a neighbour's models means it was restarted (came_back).
// Start-up: HELLO every 200 ms to each neighbour not heard from yet (HELLO or HELLO_ACK or
// anything else), until all have been heard; every HELLO is answered with HELLO_ACK for the
// whole run (a neighbour that restarts, or whose first HELLO crossed ours, hears back).
// Goodbye: after BYE to every neighbour, a peer keeps its sockets open until each neighbour
// has said BYE too or was silent for the peer timeout, so models still queued reach peers
// that are behind. Pure bookkeeping: the driver (peer_driver.h) does the I/O.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "node/wire/encoder.h"

namespace fastk::node::peer {

class Rendezvous {
 public:
  static constexpr double kHelloEvery_s = 0.2;

  // `quiet`: the neighbours among `neighbours` that send this peer nothing during the run
  // (on a time-varying or directed graph, the peers it only sends to); their silence counts
  // only from the goodbye.
  Rendezvous(int self, std::vector<int> neighbours, wire::HelloInfo run,
             const std::vector<int>& quiet = {});

  // Any message from `from` at `now_s`. Returns HELLO_ACK to send back for a HELLO.
  std::optional<wire::EncodedMessage> heard(int from, wire::MessageType type, double now_s,
                                            std::int64_t iteration);
  bool everyone_heard() const { return heard_count_ == neighbours_.size(); }
  // Whether this message shows that `from` was restarted: a HELLO after it had sent a model
  // or coded gradient. The HELLOs of its start-up, queued while this peer was not up yet,
  // come before any of its models, so a late starter is not taken for a restarted peer.
  bool came_back(int from, wire::MessageType type);
  // The neighbours to say HELLO to now (empty until kHelloEvery_s after the last round).
  std::vector<int> hellos_due(double now_s);
  double next_hello_s() const { return next_hello_s_; }
  wire::EncodedMessage hello(wire::MessageType type, std::int64_t iteration) const;
  // "did not hear from N neighbour(s) ...", listing each with `where(j)`.
  std::string missing(double timeout_s, const std::function<std::string(int)>& where) const;

  // Iterating starts: silence counts from now (nobody sends while all wait for the go).
  void started(double now_s);
  // This peer said BYE at `now_s`.
  void goodbye(double now_s) { goodbye_s_ = now_s; }
  // Goodbye: each neighbour said BYE or was silent for `timeout_s` (a quiet one: since the
  // goodbye).
  bool all_gone(double now_s, double timeout_s) const;
  bool said_bye(int neighbour) const;
  // After the goodbye, the departures `recorded` (per neighbour, its last: "bye" or "silent")
  // lacks: "bye" for a neighbour that said BYE since its last recorded departure, "silent" for
  // one never recorded that did not.
  std::vector<std::pair<int, std::string>> unrecorded_departures(
      const std::map<int, std::string>& recorded) const;
  const std::vector<int>& neighbours() const { return neighbours_; }

 private:
  struct Neighbour {
    bool heard = false;
    bool said_bye = false;
    double last_heard_s = 0;
    bool sent_models = false;  // since its last HELLO
    bool quiet = false;        // sends this peer nothing but HELLO and BYE
  };
  int self_;
  std::vector<int> neighbours_;
  wire::HelloInfo run_;
  std::map<int, Neighbour> state_;
  std::size_t heard_count_ = 0;
  double next_hello_s_ = 0;
  double goodbye_s_ = 0;
};

}  // namespace fastk::node::peer
