#include "node/wire/rejection_counter.h"

#include <iostream>
#include <numeric>
#include <string>

namespace fastk::node::wire {

LogSink stderr_log_sink() {
  return [](std::string_view line) { std::cerr << line << '\n'; };
}

RejectionCounter::RejectionCounter(LogSink sink) : sink_(std::move(sink)) {}

void RejectionCounter::record(const Rejection& rejection) {
  std::uint64_t& count = counts_[static_cast<std::size_t>(rejection.cause)];
  if (count++ == 0 && sink_) {
    sink_("fastk: dropped a message: " + std::string(to_string(rejection.cause)) + " (" +
          rejection.detail + "); further messages with this problem are counted, not logged");
  }
}

std::uint64_t RejectionCounter::total() const {
  return std::accumulate(counts_.begin(), counts_.end(), std::uint64_t{0});
}

}  // namespace fastk::node::wire
