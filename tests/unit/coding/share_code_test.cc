// The block codes of the share schemes (coding/share_code.h; docs/coding.md §7.6-7.7): every
// arrival set the scheme promises to decode rebuilds the block's gradient sum from the
// members' messages, messages have the scheme's length, and what is not a share scheme, or
// too many arrival sets to choose a code from, is refused.
#include "coding/share_code.h"

#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "coding/subsets.h"

namespace fastk::coding {
namespace {

NeighbourhoodCodeSpec spec_of(Scheme scheme, int stragglers, int sub_blocks) {
  NeighbourhoodCodeSpec spec;
  spec.scheme = scheme;
  spec.stragglers = stragglers;
  spec.sub_blocks = sub_blocks;
  return spec;
}

TEST(CodingShareCode, EveryPromisedArrivalSetRebuildsTheSum) {
  struct Case {
    Scheme scheme;
    int members, stragglers, sub_blocks, message_floats;
  };
  constexpr int kLength = 7;
  for (const Case& c :
       {Case{Scheme::kMds, 4, 2, 2, 4}, Case{Scheme::kCyclicRepetition, 4, 1, 1, 7},
        Case{Scheme::kCyclicRepetition, 6, 2, 1, 7}, Case{Scheme::kCyclicMds, 4, 1, 1, 7},
        Case{Scheme::kCyclicMds, 4, 1, 2, 4}, Case{Scheme::kCyclicMds, 6, 2, 3, 3}}) {
    const NeighbourhoodCodeSpec spec = spec_of(c.scheme, c.stragglers, c.sub_blocks);
    const auto code = make_share_code(spec, c.members);
    const std::string what = code->name();
    ASSERT_EQ(code->members(), c.members) << what;
    EXPECT_EQ(code->message_length(kLength), c.message_floats) << what;
    std::mt19937_64 bits(7);
    std::normal_distribution<float> normal;
    std::vector<Eigen::VectorXf> partials(static_cast<std::size_t>(c.members));
    Eigen::VectorXf sum = Eigen::VectorXf::Zero(kLength);
    for (auto& g : partials) {
      g.resize(kLength);
      for (int v = 0; v < kLength; ++v) g(v) = normal(bits);
      sum += g;
    }
    const int arrivals = members_needed(spec, c.members);
    for_each_subset(c.members, arrivals, [&](std::span<const int> arrived) {
      std::vector<Eigen::VectorXf> messages;
      for (int i : arrived) messages.push_back(code->encode(i, partials));
      const SubBlockDecoding decoding = code->decode(arrived);
      ASSERT_TRUE(decoding.decodable) << what;
      const Eigen::VectorXf rebuilt = code->combine(decoding, messages, kLength);
      EXPECT_LT((rebuilt - sum).cwiseAbs().maxCoeff(), 1e-4) << what;
    });
    // One arrival fewer is never enough.
    for_each_subset(c.members, arrivals - 1, [&](std::span<const int> arrived) {
      EXPECT_FALSE(code->decode(arrived).decodable) << what;
    });
  }
}

TEST(CodingShareCode, RefusesWhatIsNoShareScheme) {
  EXPECT_THROW(make_share_code(spec_of(Scheme::kFrc, 1, 2), 4), std::invalid_argument);
  EXPECT_THROW(make_share_code(spec_of(Scheme::kNone, 1, 2), 4), std::invalid_argument);
  // 20 neighbours losing any 5: C(20, 15) = 15504 arrival sets to decode for every seed.
  try {
    make_share_code(spec_of(Scheme::kCyclicMds, 5, 1), 20);
    FAIL() << "no limit on the arrival sets";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("15504 ways to lose 5"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fastk::coding
