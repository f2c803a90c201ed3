// How many neighbours a peer waits for at each iteration (docs/protocol.md §5). All policies sit
// behind BackupPolicy; the protocol asks decide() when an iteration begins and relax_at()
// when its own gradient is done. Each policy's rule and parameters:
//
//   full      m = d (wait for every neighbour: D-PSGD). No parameters.
//   static    m = max(d - b, min(m_min, d)): b backup workers, capped so that at least m_min
//             neighbours are awaited. Parameter: backups (b).
//   half      m = max(ceil(d / 2), min(m_min, d)): the faster half of the neighbours, whatever
//             the peer's degree (static's b means a different share on each degree). No
//             parameters.
//   deadline  DBW-D: wait for everyone until the own gradient is done (plus slack), then go
//             with every fresh neighbour, at least m_min. The deadline is
//             t(k) + (1 + slack) * tau(k). Parameter: slack (kappa, default 0).
//   adaptive  DBW-C: m = argmax over [min(m_min, d), d] of P(m) / T(m) (ties: larger m), with
//               P(m) = eta (1 - L eta / 2) G - (L eta^2 / 2) S / (m+1) - (eta L^2 / 2) nu2 / (m+1)
//               T(m) = ArrivalWindow::expected_iteration_time(m)   (last `window` iterations)
//             G, S: gradient norm and mini-batch variance estimates (GradientStats), averaged
//             over the last `gradient_window` iterations; nu2: neighbourhood disagreement
//             (q/(q-1)) ||x_i - z||^2, z the plain mean of the q models combined last time,
//             smoothed by an EMA with weight `disagreement_ema` on the old value. The first
//             `warmup` iterations (or while no timing or gradient statistics exist) use
//             m = d. When P(m) <= 0 for every m, the m with the smallest T(m) (ties: the
//             larger). Once the own gradient is done the wait is re-judged: the peer
//             goes with m_min from the first elapsed e at which the window's m-th
//             arrivals later than e average at least P(m)/P(m_min) times e (relax_at).
//             Parameters: window (20), gradient_window (5), warmup (3), smoothness (L, 1),
//             disagreement_ema (0.5), disagreement_every (10), gradient_stats_every (4):
//             G and S are measured on every gradient_stats_every-th gradient only.
//   ad_psgd   not a backup policy but the asynchronous alternative to one (AD-PSGD, Lian et al.
//             2018; docs/protocol.md §4.5): no peer waits for its neighbours' models; each
//             active peer averages with one passive neighbour per iteration
//             (pairwise_averaging.h). A policy here so that one config and one sweep compare
//             it with the others. No parameters.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "consensus/arrival_window.h"
#include "consensus/gradient_stats.h"

namespace fastk::consensus {

enum class PolicyKind { kFull, kStatic, kDeadline, kAdaptive, kHalf, kAdPsgd };
// A policy's config name (simple_policies.cc has the table); throws std::invalid_argument
// listing the known names otherwise.
PolicyKind parse_policy_kind(const std::string& name);
std::string to_string(PolicyKind kind);

struct PolicySpec {
  PolicyKind kind = PolicyKind::kFull;
  int backups = 0;                // static: b
  double slack = 0;               // deadline: kappa
  int window = 20;                // adaptive: iterations of arrival times (W)
  int gradient_window = 5;        // adaptive: iterations of gradient statistics (W_g)
  int warmup = 3;                 // adaptive: first iterations at m = d
  double smoothness = 1.0;        // adaptive: L
  double disagreement_ema = 0.5;  // adaptive: beta (weight of the previous value)
  int disagreement_every = 10;    // adaptive: nu2 measured every this many iterations
  int gradient_stats_every = 4;   // adaptive: G and S measured every this many gradients
};

constexpr double kNotEstimated = std::numeric_limits<double>::quiet_NaN();

// What a decision was based on; NaN where a policy does not estimate a value.
struct EstimatorValues {
  double gradient_norm2 = kNotEstimated;     // G
  double gradient_variance = kNotEstimated;  // S
  double disagreement = kNotEstimated;       // nu2
  double expected_time_s = kNotEstimated;    // T(m) of the chosen m
  double progress_rate = kNotEstimated;      // P(m) / T(m) of the chosen m
};

struct PolicyInput {
  std::int64_t iteration = 0;
  int neighbours = 0;  // d: neighbours this round that can still be awaited
  int m_min = 1;       // already capped at d
  double now_s = 0;
  double learning_rate = 0;
  const ArrivalWindow* arrivals = nullptr;
};

struct Decision {
  int awaited = 0;  // m
  EstimatorValues estimates;
};

class BackupPolicy {
 public:
  virtual ~BackupPolicy() = default;
  virtual PolicyKind kind() const = 0;
  virtual Decision decide(const PolicyInput& input) = 0;
  // From this time on the peer goes with m_min fresh neighbours instead of the decided m.
  virtual std::optional<double> relax_at(double /*start_s*/, double /*gradient_done_s*/) const {
    return std::nullopt;
  }
  // Observations the adaptive rule learns from; others ignore them.
  virtual void observe_gradient(const GradientStats& /*stats*/) {}
  // Whether the gradient of iteration k should also yield GradientStats (a few percent more
  // compute, learning/gradient_noise.h).
  virtual bool wants_gradient_stats(std::int64_t /*k*/) const { return false; }

  // Traits the runtimes and the config ask instead of comparing kinds, so that a new policy
  // is one class and its entries in make_policy and parse_policy_kind.
  // Mixes each neighbour's model of iteration k itself, not its newest fresh one: D-PSGD,
  // whose updates are then the same bits in every runtime (docs/protocol.md §4.2).
  virtual bool mixes_exact_iteration() const { return false; }
  // Can leave the waiting to a coded neighbourhood ([coding]), which waits until the
  // neighbourhood's gradient decodes: only a policy that itself waits for everyone.
  virtual bool allows_coding() const { return false; }
  // Its decision takes measurable time, which `fastk calibrate` measures and the simulator
  // charges per update.
  virtual bool costly_decision() const { return false; }
  // Replaces waiting for neighbours by AD-PSGD's pairwise averages (pairwise_averaging.h).
  virtual bool pairwise_averaging() const { return false; }
  virtual bool wants_disagreement() const { return false; }
  virtual void observe_disagreement(double /*nu2*/) {}
};

// Throws std::invalid_argument naming the bad parameter.
std::unique_ptr<BackupPolicy> make_policy(const PolicySpec& spec);

}  // namespace fastk::consensus
