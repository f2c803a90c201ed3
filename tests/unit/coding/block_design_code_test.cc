// BIBD code on the Fano plane (docs/coding.md §5.3; properties 14 and 21).
#include "coding/block_design_code.h"

#include <gtest/gtest.h>

#include "coding/subsets.h"
#include "tests/unit/coding/coding_test_util.h"

namespace fastk::coding {
namespace {

TEST(CodingBlockDesignTest, FanoErrorDependsOnlyOnTheNumberOfArrivals) {
  const BlockDesignCode fano = BlockDesignCode::fano_plane();
  ASSERT_EQ(fano.members(), 7);
  EXPECT_EQ(fano.block_size(), 3);
  EXPECT_EQ(fano.pair_multiplicity(), 1);
  EXPECT_EQ(fano.computation_load(), 3);
  EXPECT_TRUE(fano.approximate());
  struct Expected {
    int size;
    double error;
  };
  for (const Expected e :
       {Expected{7, 0.0}, Expected{6, 0.25}, Expected{5, 4.0 / 7.0}, Expected{4, 1.0}}) {
    int subsets = 0;
    for_each_subset(7, e.size, [&](std::span<const int> s) {
      ++subsets;
      const Decoding d = fano.decode(s);
      EXPECT_NEAR(d.error, e.error, 1e-12) << "|S| = " << e.size;
      for (double a : d.coefficients) EXPECT_NEAR(a, 3.0 / (2.0 + e.size), 1e-15);
      // The constant is the optimal decoder: least squares finds the same coefficients.
      const Decoding optimal = decode_least_squares(select_rows(fano.encoding(), s));
      for (double a : optimal.coefficients) EXPECT_NEAR(a, 3.0 / (2.0 + e.size), 1e-12);
      EXPECT_NEAR(optimal.error, e.error, 1e-12);
    });
    EXPECT_EQ(subsets, int(binomial(7, e.size)));
  }
}

TEST(CodingBlockDesignTest, NonNegativeDecoderDoesNotAmplify) {
  // kappa(S) = mean alpha for a non-negative code and decoder: 54/56 = 0.964 at |S| = 6.
  const BlockDesignCode fano = BlockDesignCode::fano_plane();
  for_each_subset(7, 6, [&](std::span<const int> s) {
    const Decoding d = fano.decode(s);
    double mean_alpha = 0;
    for (double a : d.alpha) mean_alpha += a / 7.0;
    EXPECT_NEAR(d.amplification, mean_alpha, 1e-12);
    EXPECT_NEAR(d.amplification, 0.964, 0.0005);
  });
}

TEST(CodingBlockDesignTest, RejectsDesignsThatAreNotBalanced) {
  using testing::expect_invalid_argument;
  expect_invalid_argument([] { BlockDesignCode({{0, 1}, {1, 2}, {2}}); }, "block 2 has 1 points");
  expect_invalid_argument([] { BlockDesignCode({{0, 1}, {1, 3}, {2, 0}}); }, "names point 3");
  expect_invalid_argument([] { BlockDesignCode({{0, 0}, {1, 2}, {2, 0}}); }, "lists point 0 twice");
  // Four blocks on four points, pairs covered unevenly.
  expect_invalid_argument(
      [] {
        BlockDesignCode({{0, 1}, {1, 2}, {2, 3}, {3, 0}});
      },
      "share 0 blocks");
}

}  // namespace
}  // namespace fastk::coding
