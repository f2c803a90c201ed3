#include "node/transport/in_process_link.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace fastk::node::transport {

InProcessNetwork::InProcessNetwork(int peers, int capacity)
    : capacity_(capacity), cut_(static_cast<std::size_t>(std::max(peers, 0)), false) {
  if (peers < 1) throw std::invalid_argument("InProcessNetwork: needs at least one peer");
  if (capacity < 1) throw std::invalid_argument("InProcessNetwork: capacity must be >= 1");
  for (int i = 0; i < peers; ++i) mailboxes_.push_back(std::make_unique<Mailbox>());
}

void InProcessNetwork::cut(PeerId peer) {
  {
    std::lock_guard lock(cut_mutex_);
    cut_.at(peer) = true;
  }
  Mailbox& box = mailbox(peer);
  std::lock_guard lock(box.mutex);
  box.queue.clear();  // what it had not taken yet; what others send it from now on is lost
}

InProcessNetwork::Mailbox& InProcessNetwork::mailbox(PeerId peer) { return *mailboxes_.at(peer); }

bool InProcessNetwork::is_cut(PeerId peer) const {
  std::lock_guard lock(cut_mutex_);
  return cut_.at(peer);
}

InProcessLink::InProcessLink(InProcessNetwork& network, wire::WirePeers peers,
                             std::vector<PeerId> neighbours, wire::LogSink log)
    : network_(network),
      peers_(std::move(peers)),
      neighbours_(std::move(neighbours)),
      rejections_(std::move(log)) {
  for (PeerId j : neighbours_) {
    if (j >= network_.mailboxes_.size()) {
      throw std::invalid_argument("InProcessLink: peer " + std::to_string(j) +
                                  " is not in the network");
    }
  }
  (void)network_.mailbox(peers_.self());  // throws for a self outside the network
}

SendStatus InProcessLink::send(PeerId neighbour, const wire::EncodedMessage& message) {
  if (std::find(neighbours_.begin(), neighbours_.end(), neighbour) == neighbours_.end()) {
    throw std::invalid_argument("InProcessLink: send to peer " + std::to_string(neighbour) +
                                ", which is not a neighbour");
  }
  const PeerId self = peers_.self();
  InProcessNetwork::Mailbox& box = network_.mailbox(neighbour);
  {
    std::lock_guard lock(box.mutex);
    int& queued = box.queued_from[self];
    if (queued >= network_.capacity_) {
      ++totals_.dropped;
      return SendStatus::kDropped;
    }
    ++queued;  // to a cut peer too: nobody takes it, so its queue fills as a dead one's would
    if (!network_.is_cut(self) && !network_.is_cut(neighbour)) {
      // A copy, as a socket makes: the sender may reuse its buffer once the send returns.
      const auto& bytes = message.payload.bytes;
      auto copy = std::make_shared<std::vector<std::byte>>(bytes.begin(), bytes.end());
      const std::span<const std::byte> view(*copy);
      box.queue.push_back({self,
                           {message.header.begin(), message.header.end()},
                           {std::move(copy), view},
                           message.has_payload_frame});
    }
  }
  box.arrived.notify_one();
  ++totals_.queued;
  totals_.bytes_queued += message.header.size() + message.payload.bytes.size();
  return SendStatus::kQueued;
}

std::optional<Received> InProcessLink::receive(std::chrono::milliseconds timeout) {
  InProcessNetwork::Mailbox& box = network_.mailbox(peers_.self());
  InProcessNetwork::Message message;
  {
    std::unique_lock lock(box.mutex);
    // As ZmqTransport: a waiting message first, then a wake-up, then the wait.
    if (box.queue.empty()) {
      box.arrived.wait_for(lock, timeout, [&] { return box.woken || !box.queue.empty(); });
    }
    if (box.queue.empty()) {
      box.woken = false;
      return std::nullopt;
    }
    message = std::move(box.queue.front());
    box.queue.pop_front();
    --box.queued_from[message.from];
  }
  return decode(std::move(message));
}

void InProcessLink::wake() {
  InProcessNetwork::Mailbox& box = network_.mailbox(peers_.self());
  {
    std::lock_guard lock(box.mutex);
    box.woken = true;
  }
  box.arrived.notify_one();
}

std::optional<Received> InProcessLink::decode(InProcessNetwork::Message message) {
  const std::span<const std::byte> frames[2] = {message.header, message.payload.bytes};
  const std::size_t count = message.has_payload_frame ? 2 : 1;
  wire::DecodeResult result = wire::decode(std::span(frames, count), peers_);
  if (auto* rejection = std::get_if<wire::Rejection>(&result)) {
    rejections_.record(*rejection);
    return Received(std::move(*rejection));
  }
  return Received(std::in_place_type<ReceivedMessage>, std::get<wire::DecodedMessage>(result),
                  std::move(message.payload));
}

}  // namespace fastk::node::transport
