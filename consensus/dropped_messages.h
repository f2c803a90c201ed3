// Why the protocol dropped a neighbour's message, counted per cause. The wire decoder
// (node/wire/decoder.h) rejects frames that are not well-formed; these are well-formed
// messages whose content this peer cannot use. Both runtimes drop by the same rules, so a
// run's counts mean the same whether it was simulated or real.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace fastk::consensus {

enum class DropCause : std::uint8_t {
  kNotNeighbour,   // the sender is not a neighbour of any round
  kTagOutOfRange,  // negative, or at or past the run's last iteration (no peer gets there)
  kWrongSize,      // a model of another size than this peer's
  kNonFinite,      // a NaN or infinite value: mixing it would poison the model for good
  kNotInTheCode,   // a coded gradient that does not fit this neighbourhood's code
  kNotAsked,       // AD-PSGD: a request to an active peer, or a reply to no open request
  kBadDifference,  // compressed gossip: malformed, or not the next one of its sender
};
inline constexpr std::size_t kDropCauseCount = 7;
std::string_view to_string(DropCause cause);

class DropCounts {
 public:
  void add(DropCause cause) { ++counts_[static_cast<std::size_t>(cause)]; }
  std::int64_t count(DropCause cause) const { return counts_[static_cast<std::size_t>(cause)]; }
  std::int64_t total() const;

 private:
  std::array<std::int64_t, kDropCauseCount> counts_{};
};

// True when no value is NaN or infinite. Reads the exponent bits, so the loop vectorises
// (a float comparison with an early exit would not).
bool all_finite(std::span<const float> values);

}  // namespace fastk::consensus
