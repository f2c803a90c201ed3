#include "learning/random.h"

#include <cmath>
#include <numbers>
#include <stdexcept>

namespace fastk::learning {
namespace {

// The SplitMix64 generator's step: the output for x, and x moves on.
std::uint64_t splitmix64(std::uint64_t& x) {
  const std::uint64_t out = mix64(x);
  x += 0x9e3779b97f4a7c15ULL;
  return out;
}

std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

std::uint64_t mix64(std::uint64_t x) {
  std::uint64_t z = x + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Rng::Rng(std::uint64_t seed) {
  for (auto& s : s_) s = splitmix64(seed);
}

RngState Rng::state() const {
  RngState state;
  for (int i = 0; i < 4; ++i) state.s[i] = s_[i];
  state.has_spare = has_spare_;
  state.spare = spare_;
  return state;
}

void Rng::restore(const RngState& state) {
  if ((state.s[0] | state.s[1] | state.s[2] | state.s[3]) == 0) {
    throw std::invalid_argument("random generator state is all zero");
  }
  for (int i = 0; i < 4; ++i) s_[i] = state.s[i];
  has_spare_ = state.has_spare;
  spare_ = state.spare;
}

std::uint64_t Rng::next_u64() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() { return double(next_u64() >> 11) * 0x1.0p-53; }

// Rejects the lowest 2^64 mod bound values so that every remainder is equally likely.
std::uint64_t Rng::below(std::uint64_t bound) {
  const std::uint64_t threshold = (0 - bound) % bound;
  std::uint64_t r = next_u64();
  while (r < threshold) r = next_u64();
  return r % bound;
}

// Box-Muller; the second value of each pair is kept for the next call.
double Rng::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  double u = 0;
  while (u == 0) u = uniform();
  const double r = std::sqrt(-2.0 * std::log(u));
  const double angle = 2.0 * std::numbers::pi * uniform();
  spare_ = r * std::sin(angle);
  has_spare_ = true;
  return r * std::cos(angle);
}

// Marsaglia and Tsang (2000); shape < 1 via Gamma(shape + 1) * U^(1/shape).
double Rng::gamma(double shape) {
  if (shape < 1) {
    double u = 0;
    while (u == 0) u = uniform();
    return gamma(shape + 1) * std::pow(u, 1.0 / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  while (true) {
    double x, v;
    do {
      x = normal();
      v = 1.0 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = uniform();
    if (u < 1 - 0.0331 * x * x * x * x) return d * v;
    if (std::log(u) < 0.5 * x * x + d * (1 - v + std::log(v))) return d * v;
  }
}

}  // namespace fastk::learning
