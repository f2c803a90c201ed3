// Counts rejected messages per cause and logs the first of each cause, so a peer flooded with
// garbage reports the problem once instead of once per frame.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string_view>

#include "node/wire/decoder.h"

namespace fastk::node::wire {

// Where log lines go; tests inject one to see them.
using LogSink = std::function<void(std::string_view line)>;
LogSink stderr_log_sink();

class RejectionCounter {
 public:
  explicit RejectionCounter(LogSink sink = stderr_log_sink());

  void record(const Rejection& rejection);
  std::uint64_t count(WireError cause) const { return counts_[static_cast<std::size_t>(cause)]; }
  std::uint64_t total() const;

 private:
  std::array<std::uint64_t, kWireErrorCount> counts_{};
  LogSink sink_;
};

}  // namespace fastk::node::wire
