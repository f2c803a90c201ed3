// A small, portable random number generator (xoshiro256** seeded by splitmix64) with the
// draws learning/ needs. The standard distributions are implementation-defined, so data
// generation, partitions and initialisations would differ between standard libraries;
// these do not.
#pragma once

#include <cstdint>
#include <span>

namespace fastk::learning {

// SplitMix64's output for state x: x + 0x9e3779b97f4a7c15, then its finaliser. Consecutive or
// otherwise related inputs give unrelated outputs, so a hash of (seed, peer, iteration) built
// from it is a portable, stateless draw (straggler delays, ad_psgd partners, sampling seeds).
std::uint64_t mix64(std::uint64_t x);

// Everything an Rng's future draws depend on (a checkpoint saves it).
struct RngState {
  std::uint64_t s[4] = {};
  bool has_spare = false;
  double spare = 0;
};

class Rng {
 public:
  explicit Rng(std::uint64_t seed);
  RngState state() const;
  // Throws std::invalid_argument for the all-zero state (xoshiro would draw only zeros).
  void restore(const RngState& state);
  std::uint64_t next_u64();
  double uniform();                          // [0, 1)
  std::uint64_t below(std::uint64_t bound);  // [0, bound), bound >= 1
  double normal();                           // standard normal
  double gamma(double shape);                // Gamma(shape, 1), shape > 0
  template <typename T>
  void shuffle(std::span<T> values) {
    for (std::size_t i = values.size(); i > 1; --i) {
      std::size_t j = below(i);
      T t = values[i - 1];
      values[i - 1] = values[j];
      values[j] = t;
    }
  }

 private:
  std::uint64_t s_[4];
  bool has_spare_ = false;
  double spare_ = 0;
};

}  // namespace fastk::learning
