#include "node/wire/checksum.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#include <wmmintrin.h>
#endif

namespace fastk::node::wire {
namespace {

constexpr std::uint32_t kPolynomial = 0x82F63B78;  // CRC-32C, bit-reflected

// tables[0] advances the CRC by one byte; tables[s] by one byte followed by s zero bytes,
// so eight bytes are folded in with eight independent lookups.
constexpr std::array<std::array<std::uint32_t, 256>, 8> make_tables() {
  std::array<std::array<std::uint32_t, 256>, 8> tables{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int bit = 0; bit < 8; ++bit) c = (c >> 1) ^ (kPolynomial & (0u - (c & 1u)));
    tables[0][i] = c;
  }
  for (std::size_t s = 1; s < 8; ++s) {
    for (std::size_t i = 0; i < 256; ++i) {
      tables[s][i] = (tables[s - 1][i] >> 8) ^ tables[0][tables[s - 1][i] & 0xFF];
    }
  }
  return tables;
}
constexpr auto kTables = make_tables();

#if defined(__x86_64__)
// x^n mod P in the reflected representation (bit 31 holds x^0), by n multiplications by x.
constexpr std::uint32_t x_pow_mod(std::size_t n) {
  std::uint32_t v = 0x80000000u;
  for (std::size_t i = 0; i < n; ++i) v = (v >> 1) ^ (kPolynomial & (0u - (v & 1u)));
  return v;
}

// The crc32 instruction has a latency of three cycles but can start one per cycle, so a
// single dependent chain uses a third of it. Long inputs are cut into blocks of three
// stripes of kStripe bytes whose CRCs run interleaved; the stripes are then joined with
// the linearity of the (non-inverted) CRC state: after data A then B,
//   state = state_after_A * x^(8 |B|) + crc_from_zero(B)   (mod P).
template <std::size_t kStripe>
struct Stripes {
  // Multiplying by x^(8 kStripe - 33), then by x^33 in the reduction (see shift()), moves a
  // state past one stripe.
  static constexpr std::uint32_t kShift = x_pow_mod(8 * kStripe - 33);
};

// state * x^(8 kStripe) mod P. The carry-less product of two reflected 32-bit polynomials,
// read as reflected 64-bit data, is x * a * b; crc32 of that from state 0 multiplies it by
// x^32 and reduces mod P: x^33 * a * b in all.
template <std::size_t kStripe>
__attribute__((target("sse4.2,pclmul"))) std::uint64_t shift(std::uint64_t state) {
  const __m128i product = _mm_clmulepi64_si128(_mm_cvtsi64_si128(static_cast<long long>(state)),
                                               _mm_cvtsi32_si128(Stripes<kStripe>::kShift), 0);
  return _mm_crc32_u64(0, static_cast<std::uint64_t>(_mm_cvtsi128_si64(product)));
}

__attribute__((target("sse4.2"))) std::uint64_t words_crc(std::uint64_t state, const std::byte* p,
                                                          std::size_t words) {
  for (std::size_t i = 0; i < words; ++i) {
    std::uint64_t word;
    std::memcpy(&word, p + 8 * i, 8);
    state = _mm_crc32_u64(state, word);
  }
  return state;
}

// Folds in as many whole blocks of three kStripe-byte stripes as `n` holds.
template <std::size_t kStripe>
__attribute__((target("sse4.2,pclmul"))) std::uint64_t three_stripes(std::uint64_t state,
                                                                     const std::byte*& p,
                                                                     std::size_t& n) {
  static_assert(kStripe % 8 == 0 && kStripe >= 8);
  for (; n >= 3 * kStripe; p += 3 * kStripe, n -= 3 * kStripe) {
    std::uint64_t a = state, b = 0, c = 0;
    for (std::size_t i = 0; i < kStripe; i += 8) {
      std::uint64_t wa, wb, wc;
      std::memcpy(&wa, p + i, 8);
      std::memcpy(&wb, p + kStripe + i, 8);
      std::memcpy(&wc, p + 2 * kStripe + i, 8);
      a = _mm_crc32_u64(a, wa);
      b = _mm_crc32_u64(b, wb);
      c = _mm_crc32_u64(c, wc);
    }
    state = shift<kStripe>(shift<kStripe>(a) ^ b) ^ c;
  }
  return state;
}

__attribute__((target("sse4.2,pclmul"))) std::uint32_t crc32c_sse42(
    std::uint32_t crc, std::span<const std::byte> bytes) {
  const std::byte* p = bytes.data();
  std::size_t n = bytes.size();
  std::uint64_t state = ~crc;
  state = three_stripes<4096>(state, p, n);
  state = three_stripes<256>(state, p, n);
  state = words_crc(state, p, n / 8);
  p += n / 8 * 8;
  n %= 8;
  auto c32 = static_cast<std::uint32_t>(state);
  for (; n > 0; ++p, --n) c32 = _mm_crc32_u8(c32, std::to_integer<std::uint8_t>(*p));
  return ~c32;
}

bool cpu_has_crc32_and_clmul() {
  static const bool has = __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("pclmul");
  return has;
}
#endif

}  // namespace

std::uint32_t crc32c_extend_portable(std::uint32_t crc, std::span<const std::byte> bytes) {
  const std::byte* p = bytes.data();
  std::size_t n = bytes.size();
  crc = ~crc;
  for (; n >= 8; p += 8, n -= 8) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);  // little-endian host (format.h checks)
    word ^= crc;
    crc = kTables[7][word & 0xFF] ^ kTables[6][(word >> 8) & 0xFF] ^
          kTables[5][(word >> 16) & 0xFF] ^ kTables[4][(word >> 24) & 0xFF] ^
          kTables[3][(word >> 32) & 0xFF] ^ kTables[2][(word >> 40) & 0xFF] ^
          kTables[1][(word >> 48) & 0xFF] ^ kTables[0][word >> 56];
  }
  for (; n > 0; ++p, --n)
    crc = (crc >> 8) ^ kTables[0][(crc ^ std::to_integer<std::uint8_t>(*p)) & 0xFF];
  return ~crc;
}

std::uint32_t crc32c_extend(std::uint32_t crc, std::span<const std::byte> bytes) {
#if defined(__x86_64__)
  if (cpu_has_crc32_and_clmul()) return crc32c_sse42(crc, bytes);
#endif
  return crc32c_extend_portable(crc, bytes);
}

}  // namespace fastk::node::wire
