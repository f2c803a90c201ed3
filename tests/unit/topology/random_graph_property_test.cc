// Property checks over many seeded random graphs: every generated graph is a valid,
// connected communication graph and its Metropolis weights are symmetric, non-negative,
// doubly stochastic, with lambda < 1; generation is reproducible for a seed.
#include <gtest/gtest.h>

#include <functional>

#include "topology/families.h"
#include "topology/mixing.h"
#include "topology/spectral.h"

namespace fastk::topology {
namespace {

struct Family {
  const char* name;
  std::function<Graph(std::uint64_t seed)> make;
};

void check_properties(const Graph& g, const std::string& what) {
  ASSERT_GE(g.size(), 1);
  EXPECT_EQ(connected_components(g.size(), g.edges()).size(), 1u) << what;
  for (WeightRule rule : {WeightRule::kMetropolisHastings, WeightRule::kMaxDegree}) {
    MixingMatrix w = mixing_matrix(g, rule);
    MixingCheck c = check_mixing(w, g);
    EXPECT_TRUE(c.usable()) << what;
    EXPECT_TRUE(c.symmetric) << what;
    EXPECT_TRUE(c.column_stochastic) << what;
    EXPECT_TRUE(c.nonnegative) << what;
    EXPECT_LT(spectrum(w).lambda, 1.0 - 1e-9) << what;
  }
}

TEST(RandomGraphProperties, HoldForManySeeds) {
  const std::vector<Family> families = {
      {"random_regular(16,3)", [](auto s) { return random_regular(16, 3, s); }},
      {"random_regular(31,4)", [](auto s) { return random_regular(31, 4, s); }},
      {"random_regular(40,6)", [](auto s) { return random_regular(40, 6, s); }},
      {"erdos_renyi(24,0.3)", [](auto s) { return erdos_renyi(24, 0.3, s); }},
      {"watts_strogatz(30,4,0.2)", [](auto s) { return watts_strogatz(30, 4, 0.2, s); }},
      {"watts_strogatz(30,6,1.0)", [](auto s) { return watts_strogatz(30, 6, 1.0, s); }},
  };
  for (const auto& f : families) {
    int distinct = 0;
    for (std::uint64_t seed = 1; seed <= 40; ++seed) {
      std::string what = std::string(f.name) + " seed " + std::to_string(seed);
      Graph g = f.make(seed);
      check_properties(g, what);
      EXPECT_EQ(g.edges(), f.make(seed).edges()) << what << " is not reproducible";
      if (g.edges() != f.make(seed + 1000).edges()) ++distinct;
    }
    EXPECT_GE(distinct, 35) << f.name << ": seeds barely change the graph";
  }
}

TEST(RandomGraphProperties, RandomRegularDegreesAreExact) {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    Graph g = random_regular(20, 5 - static_cast<int>(seed % 2), seed);
    for (int i = 0; i < g.size(); ++i) EXPECT_EQ(g.degree(i), 5 - static_cast<int>(seed % 2));
  }
}

}  // namespace
}  // namespace fastk::topology
