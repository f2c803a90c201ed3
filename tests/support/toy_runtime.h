// Test doubles for driving PeerProtocols through VirtualNetwork: delays given by lambdas and
// a least-squares model whose mini-batches are a fixed function of (peer, iteration), so a
// centralized SGD run over the same samples can be computed by hand.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <utility>
#include <vector>

#include "simulation/virtual_network.h"
#include "topology/topology.h"

namespace fastk::consensus {
// A gradient for GradientDone, from whatever a test holds.
inline std::vector<float> as_vector(std::span<const float> gradient) {
  return {gradient.begin(), gradient.end()};
}
inline std::vector<float> as_vector(std::initializer_list<float> gradient) { return gradient; }

// The protocol's tests run peers in the simulator's engine.
using simulation::GradientSource;
using simulation::MachineCosts;
using simulation::VirtualNetwork;
}  // namespace fastk::consensus

namespace fastk::consensus::testing {

class LambdaDelays final : public DelaySource {
 public:
  std::function<double(PeerId, std::int64_t)> compute = [](PeerId, std::int64_t) { return 1.0; };
  std::function<double(PeerId, PeerId, std::int64_t)> link = [](PeerId, PeerId, std::int64_t) {
    return 0.1;
  };
  double compute_time_s(PeerId peer, std::int64_t k) override { return compute(peer, k); }
  double link_delay_s(PeerId from, PeerId to, std::int64_t k) override { return link(from, to, k); }
};

// Peer 0 ten times slower than the rest, every compute time jittered by a factor in
// [0.5, 1.5), drawn once per (peer, iteration) from `seed`: a persistent straggler among
// uneven peers, for the tests of what backup policies skip.
class SlowPeerDelays final : public DelaySource {
 public:
  explicit SlowPeerDelays(std::uint64_t seed) : rng_(seed) {}
  std::function<double(PeerId, PeerId, std::int64_t)> link = [](PeerId, PeerId, std::int64_t) {
    return 0.1;
  };
  double compute_time_s(PeerId peer, std::int64_t k) override {
    auto [it, added] = drawn_.try_emplace({peer, k}, 0.0);
    if (added) it->second = (peer == 0 ? 10.0 : 1.0) * jitter_(rng_);
    return it->second;
  }
  double link_delay_s(PeerId from, PeerId to, std::int64_t k) override { return link(from, to, k); }

 private:
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> jitter_{0.5, 1.5};
  std::map<std::pair<PeerId, std::int64_t>, double> drawn_;
};

// f(x) = (1/2) mean_r (a_r . x - b_r)^2 with rows a_r[c] = sin(r + 2c), b_r = cos(3r).
class LeastSquares final : public GradientSource {
 public:
  LeastSquares(int dim, int rows, int batch, int peers)
      : dim_(dim), rows_(rows), batch_(batch), peers_(peers) {}

  // Rows used by `peer` at iteration k: disjoint across peers within an iteration.
  std::vector<int> batch_rows(PeerId peer, std::int64_t k) const {
    std::vector<int> rows;
    for (int t = 0; t < batch_; ++t) {
      rows.push_back(static_cast<int>((k * peers_ * batch_ + peer * batch_ + t) % rows_));
    }
    return rows;
  }
  std::vector<double> gradient(std::span<const float> x, const std::vector<int>& rows) const {
    std::vector<double> g(static_cast<std::size_t>(dim_), 0.0);
    for (int r : rows) {
      double residual = -std::cos(3.0 * r);
      for (int c = 0; c < dim_; ++c)
        residual += std::sin(r + 2.0 * c) * x[static_cast<std::size_t>(c)];
      for (int c = 0; c < dim_; ++c)
        g[static_cast<std::size_t>(c)] += residual * std::sin(r + 2.0 * c);
    }
    for (auto& v : g) v /= static_cast<double>(rows.size());
    return g;
  }
  // Coded requests (partitions listed): one gradient per partition r over batch_rows(r, k),
  // concatenated in request order, so every holder of r computes the same gradient at the
  // same parameters.
  void begin(PeerId peer, const StartGradient& request) override {
    const std::int64_t k = request.iteration;
    std::vector<float>& out = pending_[{peer, k}];
    out.clear();
    const std::vector<PeerId> own = {peer};
    for (PeerId r : request.partitions.empty() ? own : request.partitions) {
      const auto g = gradient(request.params->values(), batch_rows(r, k));
      out.insert(out.end(), g.begin(), g.end());
    }
    ++begun;
  }
  // f over peer's batch of iteration k, for each model (NaN: not finite).
  std::vector<double> losses(PeerId peer, const StartValidation& request) override {
    std::vector<double> out;
    for (const Params& params : request.models) {
      double sum = 0;
      for (int r : batch_rows(peer, request.iteration)) {
        double residual = -std::cos(3.0 * r);
        for (int c = 0; c < dim_; ++c) {
          residual += std::sin(r + 2.0 * c) * params->values()[static_cast<std::size_t>(c)];
        }
        sum += 0.5 * residual * residual;
      }
      out.push_back(sum / batch_);
    }
    return out;
  }
  GradientResult collect(PeerId peer, std::int64_t k) override {
    auto it = pending_.find({peer, k});
    GradientResult result{std::move(it->second), {}};
    pending_.erase(it);
    return result;
  }
  int begun = 0;

 private:
  int dim_, rows_, batch_, peers_;
  std::map<std::pair<PeerId, std::int64_t>, std::vector<float>> pending_;
};

inline std::vector<std::unique_ptr<PeerProtocol>> make_peers(
    const std::shared_ptr<const topology::TopologySchedule>& schedule, const ProtocolConfig& config,
    const std::vector<float>& initial) {
  std::vector<std::unique_ptr<PeerProtocol>> peers;
  for (int i = 0; i < schedule->size(); ++i) {
    peers.push_back(std::make_unique<PeerProtocol>(i, schedule, config, make_params(initial)));
  }
  return peers;
}

// Every iteration record of a run of `schedule`'s peers from (0.5, -0.5) on least squares
// (2 values, 40 rows, batch 2) in the simulator's engine, under `config` and `delays`.
// Expects every peer to finish.
inline std::vector<IterationRecord> run_records(
    const std::shared_ptr<const topology::TopologySchedule>& schedule, const ProtocolConfig& config,
    DelaySource& delays) {
  LeastSquares model(2, 40, 2, schedule->size());
  VirtualNetwork net(make_peers(schedule, config, {0.5f, -0.5f}), delays, model);
  std::vector<IterationRecord> records;
  net.on_record = [&](const IterationRecord& r) { records.push_back(r); };
  net.start();
  net.run();
  EXPECT_TRUE(net.all_finished());
  return records;
}

inline topology::Topology make_topology(topology::TopologyKind kind, int peers) {
  topology::TopologySpec spec;
  spec.kind = kind;
  spec.peers = peers;
  return topology::build_topology(spec);
}

}  // namespace fastk::consensus::testing
