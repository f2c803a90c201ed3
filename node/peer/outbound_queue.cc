#include "node/peer/outbound_queue.h"

#include <algorithm>
#include <iostream>

namespace fastk::node::peer {

void OutboundQueue::drop_backlog(int to, std::deque<Item>& queue) {
  std::size_t queued = 0, bytes = 0;
  for (const Item& item : queue) {
    if (item.what != Outbound::kCompressedDifference) continue;
    ++queued;
    bytes += item.message.payload.bytes.size();
  }
  if (bytes < kMaxQueuedDifferenceBytes) return;
  if (backlog_dropped_.insert(to).second) {
    std::cerr << "peer " << to << " took none of the last " << queued << " compressed differences ("
              << (bytes >> 20) << " MiB) sent to it: they are dropped, and it will part from "
              << "this peer when the next one reaches it" << std::endl;
  }
  dropped_differences_ += queued;
  std::erase_if(queue,
                [](const Item& item) { return item.what == Outbound::kCompressedDifference; });
}

void OutboundQueue::send(int to, Outbound what, const wire::EncodedMessage& message) {
  auto& queue = pending_[to];
  if (what == Outbound::kCompressedDifference && !queue.empty()) drop_backlog(to, queue);
  if (queue.empty() &&
      link_.send(static_cast<wire::PeerId>(to), message) == transport::SendStatus::kQueued) {
    return;
  }
  const std::size_t kept = what == Outbound::kModel ? models_kept_ : 1;
  const bool every_one = what == Outbound::kControl || what == Outbound::kAveraging ||
                         what == Outbound::kCompressedDifference;
  if (!every_one && kept > 0) {
    const auto count = std::count_if(queue.begin(), queue.end(),
                                     [&](const Item& item) { return item.what == what; });
    if (static_cast<std::size_t>(count) >= kept) {
      queue.erase(std::find_if(queue.begin(), queue.end(),
                               [&](const Item& item) { return item.what == what; }));
      ++superseded_;
    }
  }
  queue.push_back({what, message});
}

void OutboundQueue::flush() {
  for (auto& [to, queue] : pending_) {
    while (!queue.empty() && link_.send(static_cast<wire::PeerId>(to), queue.front().message) ==
                                 transport::SendStatus::kQueued) {
      queue.pop_front();
    }
  }
}

bool OutboundQueue::pending() const {
  return std::any_of(pending_.begin(), pending_.end(),
                     [](const auto& entry) { return !entry.second.empty(); });
}

}  // namespace fastk::node::peer
