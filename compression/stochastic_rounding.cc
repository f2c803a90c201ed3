// int8 and qsgd: both send one signed byte per value, a multiple of a step rounded up or down
// at random so that its mean is the value (Alistarh et al. 2017 for QSGD).
#include <algorithm>
#include <cmath>

#include "compression/compressors.h"
#include "learning/random.h"

namespace fastk::compression {
namespace {

// x (in steps) rounded down or up, up with probability x - floor(x): E[result] = x.
std::int8_t round_at_random(double x, double u, int largest) {
  const double rounded = std::floor(x + u);
  return static_cast<std::int8_t>(std::clamp(rounded, double(-largest), double(largest)));
}

}  // namespace

double uniform_at(std::uint64_t seed, std::uint64_t i) {
  // One mix of the seed and a Weyl step of the index: the index's multiple of an odd constant
  // makes neighbouring indices far apart before the mix.
  const std::uint64_t bits = learning::mix64(seed + i * 0x9E3779B97F4A7C15u);
  return static_cast<double>(bits >> 11) * 0x1p-53;
}

Compressed compress_int8(std::span<const float> v, std::uint32_t chunk, std::uint64_t seed) {
  Compressed c;
  c.kind = Kind::kInt8;
  c.length = static_cast<std::uint32_t>(v.size());
  c.parameter = chunk;
  c.codes.reserve(v.size());
  for (std::size_t begin = 0; begin < v.size(); begin += chunk) {
    const auto piece = v.subspan(begin, std::min<std::size_t>(chunk, v.size() - begin));
    float largest = 0;
    for (float x : piece) largest = std::max(largest, std::fabs(x));
    const float scale = largest / 127.0f;
    c.scales.push_back(scale);
    // One division per chunk: a value's steps are value * (1 / scale).
    const double per_step = scale > 0 ? 1.0 / static_cast<double>(scale) : 0.0;
    for (std::size_t i = 0; i < piece.size(); ++i) {
      const double steps = static_cast<double>(piece[i]) * per_step;
      c.codes.push_back(round_at_random(steps, uniform_at(seed, begin + i), 127));
    }
  }
  return c;
}

Compressed compress_qsgd(std::span<const float> v, std::uint32_t levels, std::uint64_t seed) {
  Compressed c;
  c.kind = Kind::kQsgd;
  c.length = static_cast<std::uint32_t>(v.size());
  c.parameter = levels;
  double squares = 0;
  for (float x : v) squares += static_cast<double>(x) * x;
  const auto norm = static_cast<float>(std::sqrt(squares));
  c.scales.push_back(norm);
  c.codes.reserve(v.size());
  const int s = static_cast<int>(levels);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const double steps = norm > 0 ? s * static_cast<double>(v[i]) / norm : 0.0;
    c.codes.push_back(round_at_random(steps, uniform_at(seed, i), s));
  }
  return c;
}

}  // namespace fastk::compression
