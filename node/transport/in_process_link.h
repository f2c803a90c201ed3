// Links between the peers of one process: each peer has a mailbox, a send copies the message's
// bytes into the neighbour's mailbox (as a socket would), and receive() decodes them with the
// wire decoder, so a driver on an InProcessLink sees exactly what it would see on ZeroMQ,
// minus the sockets. For tests that run N peer drivers on N threads in milliseconds (in the
// manner of gloo's tests, which spawn N ranks in one process).
//
// Like ZeroMQ's high-water mark, a mailbox holds at most `capacity` messages from each sender;
// a send beyond that is refused (SendStatus::kDropped). cut() makes a peer vanish as if its
// process died: its messages stop arriving, and messages to it are lost once accepted, so
// that its senders' queues fill and then refuse, as they would for a dead ZeroMQ peer.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "node/transport/link.h"

namespace fastk::node::transport {

class InProcessNetwork {
 public:
  // Mailboxes for peers 0..peers-1. Throws std::invalid_argument for peers < 1 or capacity < 1.
  explicit InProcessNetwork(int peers, int capacity = 32);
  // From now on nothing `peer` sends arrives, and what others send it is lost.
  void cut(PeerId peer);

 private:
  friend class InProcessLink;
  struct Message {
    PeerId from = 0;
    std::vector<std::byte> header;
    wire::SharedBytes payload;
    bool has_payload_frame = false;
  };
  struct Mailbox {
    std::mutex mutex;
    std::condition_variable arrived;
    std::deque<Message> queue;
    std::map<PeerId, int> queued_from;  // messages of each sender in the queue
    bool woken = false;
  };
  Mailbox& mailbox(PeerId peer);
  bool is_cut(PeerId peer) const;

  int capacity_;
  std::vector<std::unique_ptr<Mailbox>> mailboxes_;
  mutable std::mutex cut_mutex_;
  std::vector<bool> cut_;
};

class InProcessLink final : public Link {
 public:
  // The link of `peers.self()`: it may send to `neighbours` (throws std::invalid_argument for
  // one outside the network).
  InProcessLink(InProcessNetwork& network, wire::WirePeers peers, std::vector<PeerId> neighbours,
                wire::LogSink log = wire::stderr_log_sink());

  SendStatus send(PeerId neighbour, const wire::EncodedMessage& message) override;
  std::optional<Received> receive(std::chrono::milliseconds timeout) override;
  void wake() override;
  const wire::RejectionCounter& rejections() const override { return rejections_; }
  SendCounters send_totals() const override { return totals_; }

 private:
  std::optional<Received> decode(InProcessNetwork::Message message);

  InProcessNetwork& network_;
  wire::WirePeers peers_;
  std::vector<PeerId> neighbours_;
  wire::RejectionCounter rejections_;
  SendCounters totals_;
};

}  // namespace fastk::node::transport
