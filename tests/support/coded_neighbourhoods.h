// Shared pieces of the coded-neighbourhood protocol tests (frc, mds, crc, cyclic_mds): the
// model they start from, a share of a given shape, and the check that one step at equal speeds
// used exactly the neighbourhood's mean gradient.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tests/support/toy_runtime.h"

namespace fastk::consensus::testing {

// dim coordinates, no two neighbours equal: a gradient error shows in every one.
inline std::vector<float> spread_model(int dim) {
  std::vector<float> x(static_cast<std::size_t>(dim));
  for (int c = 0; c < dim; ++c)
    x[static_cast<std::size_t>(c)] = 0.1f * static_cast<float>(c % 7) - 0.3f;
  return x;
}

// A coded part naming `covers`, `floats` values of 0.5: the shape of a share, for the checks
// a receiver makes before decoding.
inline CodedPart coded_share(std::vector<PeerId> covers, std::size_t floats) {
  auto c = std::make_shared<CodedGradient>();
  c->covers = std::move(covers);
  c->gradient = make_params(std::vector<float>(floats, 0.5f));
  return c;
}

// Starts `peer` at time 0 and returns the partitions its first gradient request lists (empty
// if it asked for none); `out` is left empty for what comes next.
inline std::vector<PeerId> start_and_list_partitions(PeerProtocol& peer, Actions& out) {
  peer.start(0, out);
  std::vector<PeerId> partitions;
  for (const Action& a : out) {
    if (const auto* s = std::get_if<StartGradient>(&a)) partitions = s->partitions;
  }
  out.clear();
  return partitions;
}

// One iteration of every peer under `config` (its iterations = 1) from spread_model(dim), all
// at the same speed: each peer's model must then be x0 - lr * (mean over N[p] of the
// partition gradients at x0), to 1e-5, and every record decodable with a residual below
// `max_residual`.
inline void expect_one_step_with_the_neighbourhood_mean(const topology::Topology& topo,
                                                        const ProtocolConfig& config, int dim,
                                                        double max_residual,
                                                        const std::string& what) {
  const int peers = topo.graph.size();
  const std::vector<float> x0 = spread_model(dim);
  LambdaDelays delays;
  LeastSquares model(dim, 200, 2, peers);
  VirtualNetwork net(make_peers(topo.schedule, config, x0), delays, model);
  std::vector<IterationRecord> records;
  net.on_record = [&](const IterationRecord& r) { records.push_back(r); };
  net.start();
  net.run();
  ASSERT_TRUE(net.all_finished()) << what;
  ASSERT_EQ(records.size(), static_cast<std::size_t>(peers)) << what;
  const double lr = config.optimizer.lr;
  for (PeerId p = 0; p < peers; ++p) {
    std::vector<double> sum(x0.size(), 0.0);
    std::vector<PeerId> members = {p};
    for (PeerId q : topo.graph.neighbors(p)) members.push_back(q);
    for (PeerId r : members) {
      const auto g = model.gradient(x0, model.batch_rows(r, 0));
      for (std::size_t v = 0; v < x0.size(); ++v) sum[v] += g[v];
    }
    const auto x1 = net.peer(p).model()->values();
    for (std::size_t v = 0; v < x0.size(); ++v) {
      EXPECT_NEAR(x1[v], x0[v] - lr * sum[v] / static_cast<double>(members.size()), 1e-5)
          << what << " peer " << p;
    }
  }
  for (const auto& r : records) {
    EXPECT_TRUE(r.decodable) << what << " peer " << r.peer;
    EXPECT_LT(r.decode_residual, max_residual) << what;
  }
}

}  // namespace fastk::consensus::testing
