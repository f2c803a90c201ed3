// The compressors of compressed gossip ([compression] in a config; docs/compression.md §2):
// what each keeps of a vector, and what it promises.
//   fp16      round to nearest half; relative error <= 2^-11 in half's normal range, values
//             beyond +-65504 clamped. Deterministic.
//   int8      per chunk of `chunk` values: scale = max |v| / 127, each value rounded up or down
//             to a multiple of the scale at random: unbiased, error < scale per value.
//   qsgd      `levels` levels of |v_i| / ||v||, rounded at random (Alistarh et al. 2017):
//             unbiased, error < ||v|| / levels per value.
//   top_k     the k = ceil(fraction * n) largest |v_i| (ties: lower index): a contraction,
//             ||v - C(v)||^2 <= (1 - k/n) ||v||^2. Deterministic.
//   random_k  k indices drawn without replacement: E ||v - C(v)||^2 = (1 - k/n) ||v||^2. Not
//             rescaled (CHOCO wants a contraction, not an unbiased estimate).
// Random choices are a pure function of `seed`, so both runtimes draw the same bits.
#pragma once

#include <cstdint>
#include <span>

#include "compression/compressed.h"

namespace fastk::compression {

struct CompressorSpec {
  Kind kind = Kind::kInt8;
  std::uint32_t chunk = 256;  // int8
  std::uint32_t levels = 16;  // qsgd, 1..127
  double fraction = 0.01;     // top_k, random_k: share of values kept, (0, 1]
};

// Throws std::invalid_argument for a parameter out of range, naming it.
void check(const CompressorSpec& spec);

Compressed compress(const CompressorSpec& spec, std::span<const float> v, std::uint64_t seed);

}  // namespace fastk::compression
