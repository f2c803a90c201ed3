// The iterative spectra (Lanczos, Arnoldi) and the closed forms used above the dense limit
// agree with the dense eigensolve to 1e-9 on graphs where both run.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "topology/closed_forms.h"
#include "topology/directed.h"
#include "topology/families.h"
#include "topology/mixing.h"
#include "topology/spectral.h"
#include "topology/topology.h"

namespace fastk::topology {
namespace {

constexpr double kAgreement = 1e-9;

double dense_lambda(const MixingMatrix& w) { return dense_spectrum(dense(w)).lambda; }

struct Case {
  std::string name;
  Graph graph;
  WeightRule rule;
};

TEST(IterativeSpectrum, AgreesWithTheDenseSolverOnUndirectedGraphs) {
  const std::vector<Case> cases = {
      {"random_regular 600 d4", random_regular(600, 4, 1), WeightRule::kMetropolisHastings},
      {"random_regular 1000 d6", random_regular(1000, 6, 3), WeightRule::kMaxDegree},
      {"erdos_renyi 500 uniform", erdos_renyi(500, 0.02, 2), WeightRule::kUniform},
      {"star 300 uniform", star(300), WeightRule::kUniform},
      {"watts_strogatz 800", watts_strogatz(800, 6, 0.1, 4), WeightRule::kMetropolisHastings},
      {"exponential 1000", exponential(1000), WeightRule::kMetropolisHastings},
      {"grid 20x25", grid(20, 25), WeightRule::kMetropolisHastings},
      {"complete 64", complete(64), WeightRule::kMetropolisHastings},
  };
  for (const Case& c : cases) {
    const MixingMatrix w = mixing_matrix(c.graph, c.rule);
    const Spectrum s = spectrum(w, 0);
    EXPECT_FALSE(s.complete) << c.name;
    EXPECT_EQ(s.method, "lanczos") << c.name;  // all of these are symmetric or reversible
    EXPECT_NEAR(s.lambda, dense_lambda(w), kAgreement) << c.name;
    EXPECT_NEAR(s.eigenvalues[0].real(), 1.0, 1e-12) << c.name;
  }
}

// Push-sum weights on a directed graph: column-stochastic, not reversible: Arnoldi on W itself.
TEST(IterativeSpectrum, AgreesOnADirectedGraph) {
  std::vector<Edge> arcs;
  const int n = 400;
  for (int i = 0; i < n; ++i) {
    arcs.push_back({i, (i + 1) % n});
    arcs.push_back({i, (i * 7 + 3) % n == i ? (i + 2) % n : (i * 7 + 3) % n});
  }
  std::erase_if(arcs, [](const Edge& e) { return e.a == e.b; });
  std::sort(arcs.begin(), arcs.end(),
            [](auto x, auto y) { return std::pair(x.a, x.b) < std::pair(y.a, y.b); });
  arcs.erase(std::unique(arcs.begin(), arcs.end()), arcs.end());
  const DirectedSchedule schedule(n, arcs);
  const MixingMatrix w = schedule.matrix(0);
  const Spectrum s = spectrum(w, 0);
  EXPECT_EQ(s.method, "arnoldi");
  EXPECT_NEAR(s.lambda, dense_lambda(w), kAgreement);
}

// One period of the one-peer exponential schedule, without forming the (dense) product.
TEST(IterativeSpectrum, PeriodProductAgreesAndPowersOfTwoAverageExactly) {
  for (int n : {300, 500}) {
    const OnePeerExponentialSchedule schedule(n);
    std::vector<MixingMatrix> rounds;
    Eigen::MatrixXd product = Eigen::MatrixXd::Identity(n, n);
    for (int k = 0; k < schedule.period(); ++k) {
      rounds.push_back(schedule.matrix(k));
      product = dense(rounds.back()) * product;
    }
    EXPECT_NEAR(product_spectrum(rounds).lambda, dense_spectrum(product).lambda, kAgreement)
        << n << " peers";
  }
  const OnePeerExponentialSchedule exact(4096);
  std::vector<MixingMatrix> rounds;
  for (int k = 0; k < exact.period(); ++k) rounds.push_back(exact.matrix(k));
  EXPECT_EQ(product_spectrum(rounds).lambda, 0.0);
}

Topology build(TopologyKind kind, int peers, int rows = 0, int cols = 0) {
  TopologySpec spec;
  spec.kind = kind;
  spec.peers = peers;
  spec.rows = rows;
  spec.cols = cols;
  return build_topology(spec);
}

TEST(ClosedForms, LambdaAgreesWithTheDenseSolver) {
  const std::vector<Topology> cases = {
      build(TopologyKind::kRing, 3),
      build(TopologyKind::kRing, 7),
      build(TopologyKind::kRing, 100),
      build(TopologyKind::kRing, 1001),
      build(TopologyKind::kTorus, 9, 3, 3),
      build(TopologyKind::kTorus, 35, 5, 7),
      build(TopologyKind::kTorus, 600, 20, 30),
      build(TopologyKind::kTorus, 64, 4, 16),
      build(TopologyKind::kHypercube, 2),
      build(TopologyKind::kHypercube, 64),
      build(TopologyKind::kComplete, 40),
      build(TopologyKind::kPath, 3),
      build(TopologyKind::kPath, 8),
      build(TopologyKind::kPath, 501),
      build(TopologyKind::kTorus, 7, 1, 7),
      build(TopologyKind::kTorus, 11, 11, 1),
  };
  for (const Topology& t : cases) {
    const auto lambda = closed_form_lambda(t);
    ASSERT_TRUE(lambda.has_value()) << to_string(t.spec.kind) << " " << t.graph.size();
    EXPECT_NEAR(*lambda, dense_lambda(t.weights), kAgreement)
        << to_string(t.spec.kind) << " " << t.graph.size();
  }
  // A torus with 2 rows is not 4-regular, a weights file is anything: no closed form.
  EXPECT_FALSE(closed_form_lambda(build(TopologyKind::kTorus, 20, 2, 10)).has_value());
  EXPECT_FALSE(closed_form_lambda(build(TopologyKind::kRandomRegular, 20)).has_value());
  TopologySpec uniform_path;
  uniform_path.kind = TopologyKind::kPath;
  uniform_path.peers = 10;
  uniform_path.weights = WeightRule::kUniform;  // ends weigh their neighbour 1/2
  EXPECT_FALSE(closed_form_lambda(build_topology(uniform_path)).has_value());
}

// A gap too small to resolve without a closed form (a long path read as an edge list: 1.5e-6)
// is refused, saying why, rather than reported from a residual as large as the gap. A gap a
// few times the tolerance is solved again to a thousandth of it.
TEST(IterativeSpectrum, ASmallGapIsSolvedAgainOrRefused) {
  const MixingMatrix tiny = mixing_matrix(path(1500), WeightRule::kMetropolisHastings);
  try {
    spectrum(tiny, 0);
    ADD_FAILURE() << "a 1500-peer path was solved iteratively";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(std::string(e.what()), ::testing::HasSubstr("gap is too small to resolve"));
  }
  const MixingMatrix small = mixing_matrix(path(60), WeightRule::kMetropolisHastings);
  const double dense = dense_lambda(small);
  EXPECT_LT(1.0 - dense, 1e-3);  // below 1e3 tolerances: solved again
  EXPECT_NEAR(spectrum(small, 0).lambda, dense, 1e-3 * (1.0 - dense));
}

TEST(ClosedForms, DiameterAgreesWithBreadthFirstSearch) {
  const std::vector<Topology> cases = {
      build(TopologyKind::kRing, 2),         build(TopologyKind::kRing, 9),
      build(TopologyKind::kRing, 10),        build(TopologyKind::kPath, 7),
      build(TopologyKind::kTorus, 35, 5, 7), build(TopologyKind::kTorus, 20, 2, 10),
      build(TopologyKind::kGrid, 12, 3, 4),  build(TopologyKind::kHypercube, 32),
      build(TopologyKind::kComplete, 6),     build(TopologyKind::kStar, 9),
      build(TopologyKind::kStar, 1),
  };
  for (const Topology& t : cases) {
    const auto d = closed_form_diameter(t);
    ASSERT_TRUE(d.has_value()) << to_string(t.spec.kind) << " " << t.graph.size();
    EXPECT_EQ(*d, t.graph.diameter()) << to_string(t.spec.kind) << " " << t.graph.size();
  }
}

// iFUB with a budget: exact with enough searches, honest bounds without.
TEST(Diameter, BoundsBracketTheDiameterAndMeetWithEnoughSearches) {
  const Graph g = watts_strogatz(300, 4, 0.05, 2);
  int brute = 0;
  for (PeerId i = 0; i < g.size(); ++i) {
    const auto d = g.distances_from(i);
    brute = std::max(brute, *std::max_element(d.begin(), d.end()));
  }
  EXPECT_EQ(g.diameter(), brute);
  EXPECT_TRUE(g.diameter_bounds(g.size() + 1).exact());
  const DiameterBounds few = ring(200).diameter_bounds(5);
  EXPECT_LE(few.lower, 100);
  EXPECT_GE(few.upper, 100);
  EXPECT_FALSE(few.exact());
}

}  // namespace
}  // namespace fastk::topology
