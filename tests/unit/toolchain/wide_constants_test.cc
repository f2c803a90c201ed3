// The compiler stores wide vector constants whole. Debian 12's GCC 12.2, with AVX-512 enabled
// (-march=native on an AVX-512 CPU), stores a 256- or 512-bit constant whose high 64-bit words
// are zero as a broadcast of its lowest word: {1, 1, 1, 0} became {1, 1, 1, 1} and made a gradient
// code test fail on such machines. cmake/FastkFlags.cmake works around it; these tests, built
// with the project's flags, fail if the workaround is lost. On CPUs without AVX-512 the faulty
// instruction sequence is never chosen, so they pass there for the right reason too.
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace fastk {
namespace {

// A local constant copied element by element: the vectoriser makes it one wide constant store,
// the code GCC 12 got wrong. noinline keeps the store from being folded into the check.
template <typename T, int... Values>
__attribute__((noinline)) void store_constant(T* out) {
  const T value[] = {T(Values)...};
  for (std::size_t i = 0; i < sizeof...(Values); ++i) out[i] = value[i];
}

// Stores {Values...} and compares it element by element with the same values unpacked one at
// a time, so the expectation is never itself a wide constant.
template <typename T, int... Values>
void expect_stored_whole(const char* what) {
  constexpr std::size_t n = sizeof...(Values);
  const int want[] = {Values...};
  std::array<T, n> got{};
  store_constant<T, Values...>(got.data());
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_EQ(got[i], T(want[i])) << what << " x" << n << ", element " << i;
  }
}

TEST(ToolchainTest, WideConstantsKeepTheirZeroHighWords) {
  expect_stored_whole<double, 3, 3, 3, 0>("double");  // 256 bits, the last word zero
  expect_stored_whole<double, 3, 3, 0, 0>("double");
  expect_stored_whole<double, 3, 3, 3, 3, 3, 3, 3, 0>("double");  // 512 bits
  expect_stored_whole<double, 3, 3, 3, 3, 0, 0, 0, 0>("double");
  expect_stored_whole<std::int64_t, 3, 3, 3, 0>("int64");
  expect_stored_whole<float, 3, 3, 3, 3, 3, 3, 0, 0>("float");  // a zero word of two floats
  expect_stored_whole<std::int32_t, 3, 3, 3, 3, 0, 0, 0, 0>("int32");
  expect_stored_whole<std::int16_t, 3, 3, 3, 3, 3, 3, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0>("int16");
}

__attribute__((noinline)) std::vector<double> one_one_one_zero() { return {1, 1, 1, 0}; }

TEST(ToolchainTest, InitializerListOfDoublesKeepsItsLastZero) {
  // The form in which the miscompilation was first seen (a test's expected decoding).
  const std::vector<double> v = one_one_one_zero();
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0], 1.0);
  EXPECT_EQ(v[1], 1.0);
  EXPECT_EQ(v[2], 1.0);
  EXPECT_EQ(v[3], 0.0);
}

}  // namespace
}  // namespace fastk
