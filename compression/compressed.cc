#include "compression/compressed.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "compression/half.h"

namespace fastk::compression {
namespace {

constexpr std::size_t kHeaderBytes = 8;  // u32 length, u32 parameter (docs/compression.md §3)

std::size_t chunks(std::uint32_t length, std::uint32_t chunk) {
  return chunk == 0 ? 0 : (static_cast<std::size_t>(length) + chunk - 1) / chunk;
}

bool finite_non_negative(const std::vector<float>& scales) {
  return std::all_of(scales.begin(), scales.end(),
                     [](float s) { return std::isfinite(s) && s >= 0; });
}

// Fields a kind does not use must be empty; `used` lists the ones it does.
bool only(const Compressed& c, bool scales, bool codes, bool halves, bool sparse) {
  return (scales || c.scales.empty()) && (codes || c.codes.empty()) &&
         (halves || c.halves.empty()) && (sparse || (c.indices.empty() && c.values.empty()));
}

std::optional<std::string> invalid_sparse(const Compressed& c) {
  if (!only(c, false, false, false, true) || c.parameter != 0) return "fields of another kind";
  if (c.indices.size() != c.values.size()) return "indices and values differ in number";
  if (c.indices.size() > c.length) return "more values than the vector has";
  for (std::size_t i = 0; i < c.indices.size(); ++i) {
    if (c.indices[i] >= c.length) return "an index beyond the vector";
    if (i > 0 && c.indices[i] <= c.indices[i - 1]) return "indices not strictly increasing";
  }
  if (!std::all_of(c.values.begin(), c.values.end(), [](float x) { return std::isfinite(x); })) {
    return "a non-finite value";
  }
  return std::nullopt;
}

}  // namespace

Kind parse_kind(const std::string& name) {
  for (Kind k : {Kind::kFloat16, Kind::kInt8, Kind::kQsgd, Kind::kTopK, Kind::kRandomK}) {
    if (to_string(k) == name) return k;
  }
  throw std::invalid_argument("unknown compressor \"" + name +
                              "\"; expected fp16, int8, qsgd, top_k or random_k");
}

std::string to_string(Kind kind) {
  switch (kind) {
    case Kind::kFloat16:
      return "fp16";
    case Kind::kInt8:
      return "int8";
    case Kind::kQsgd:
      return "qsgd";
    case Kind::kTopK:
      return "top_k";
    case Kind::kRandomK:
      return "random_k";
  }
  return "unknown";
}

std::size_t Compressed::payload_bytes() const {
  const bool sparse = kind == Kind::kTopK || kind == Kind::kRandomK;  // they send a count
  return kHeaderBytes + 4 * scales.size() + codes.size() + 2 * halves.size() + (sparse ? 4 : 0) +
         4 * indices.size() + 4 * values.size();
}

std::optional<std::string> invalid(const Compressed& c) {
  switch (c.kind) {
    case Kind::kFloat16:
      if (!only(c, false, false, true, false) || c.parameter != 0) return "fields of another kind";
      if (c.halves.size() != c.length) return "not one half per value";
      for (std::uint16_t h : c.halves) {
        if ((h & 0x7c00u) == 0x7c00u) return "an infinite or NaN half";
      }
      return std::nullopt;
    case Kind::kInt8:
      if (!only(c, true, true, false, false)) return "fields of another kind";
      if (c.parameter == 0) return "a chunk of 0 values";
      if (c.scales.size() != chunks(c.length, c.parameter)) return "not one scale per chunk";
      if (c.codes.size() != c.length) return "not one code per value";
      if (!finite_non_negative(c.scales)) return "a negative or non-finite scale";
      if (std::find(c.codes.begin(), c.codes.end(), std::int8_t{-128}) != c.codes.end()) {
        return "a code of -128 (codes are -127..127)";
      }
      return std::nullopt;
    case Kind::kQsgd:
      if (!only(c, true, true, false, false)) return "fields of another kind";
      if (c.parameter < 1 || c.parameter > 127) return "levels outside 1..127";
      if (c.scales.size() != 1) return "not one norm";
      if (c.codes.size() != c.length) return "not one code per value";
      if (!finite_non_negative(c.scales)) return "a negative or non-finite norm";
      for (std::int8_t code : c.codes) {
        if (std::abs(static_cast<int>(code)) > static_cast<int>(c.parameter)) {
          return "a code beyond the levels";
        }
      }
      return std::nullopt;
    case Kind::kTopK:
    case Kind::kRandomK:
      return invalid_sparse(c);
  }
  return "an unknown kind";
}

void add_decompressed(const Compressed& c, float weight, std::span<float> out) {
  switch (c.kind) {
    case Kind::kFloat16:
      for (std::size_t i = 0; i < out.size(); ++i) out[i] += weight * from_half(c.halves[i]);
      return;
    case Kind::kInt8:
      for (std::size_t begin = 0, chunk = 0; begin < out.size(); begin += c.parameter, ++chunk) {
        const float scale = c.scales[chunk];
        const std::size_t end = std::min<std::size_t>(out.size(), begin + c.parameter);
        for (std::size_t i = begin; i < end; ++i) {
          out[i] += weight * (scale * static_cast<float>(c.codes[i]));
        }
      }
      return;
    case Kind::kQsgd: {
      const float step = c.scales[0] / static_cast<float>(c.parameter);
      for (std::size_t i = 0; i < out.size(); ++i) {
        out[i] += weight * (step * static_cast<float>(c.codes[i]));
      }
      return;
    }
    case Kind::kTopK:
    case Kind::kRandomK:
      for (std::size_t i = 0; i < c.indices.size(); ++i) out[c.indices[i]] += weight * c.values[i];
      return;
  }
}

}  // namespace fastk::compression
