// What the adaptive policy's estimates cost, per model, against the plain gradient they ride
// on (docs/protocol.md §5.5): the gradient with its noise estimate (S, G), the disagreement
// pass over the models of a ring update (every `disagreement_every` = 10 iterations, so a
// tenth of it per iteration) and the decision itself (with its relax time). Timings are
// interleaved (plain, with noise, plain, ...) and their medians taken, on one thread, at
// batch 32. "overhead" charges the noise estimate on every gradient, as if
// gradient_stats_every were 1; "on average" with the default (every 4th gradient), what a run
// pays per iteration, which must stay at most 5%.
//
//   build/benchmarks/adaptive_overhead [--rounds 400]
//
// Prints one row per model and "overhead on average <= 5%: yes/no", and exits with 1 on "no". A
// plain program, not a Google Benchmark: the figure is a ratio of two interleaved series, which
// Google Benchmark's repetitions do not pair up.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "benchmarks/random_images.h"
#include "consensus/adaptive_policy.h"
#include "consensus/disagreement.h"
#include "learning/model.h"
#include "learning/random.h"

namespace {

using namespace fastk;
using Clock = std::chrono::steady_clock;

constexpr int kBatch = 32;
const int kDisagreementEvery = consensus::PolicySpec{}.disagreement_every;     // the default
const int kGradientStatsEvery = consensus::PolicySpec{}.gradient_stats_every;  // the default

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

template <typename F>
double seconds(F&& f) {
  const auto start = Clock::now();
  f();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Row {
  std::string model;
  double plain_s, noise_s, disagreement_s, decision_s;
  double overhead(int stats_every = 1) const {
    return ((noise_s - plain_s) / stats_every + disagreement_s / kDisagreementEvery + decision_s) /
           plain_s;
  }
};

Row measure(const char* name, learning::ModelSpec spec, learning::SampleShape shape, int rounds) {
  const learning::Dataset data = bench::random_images(shape, 4 * kBatch);
  auto model = learning::make_model(spec, data);
  const std::size_t p = model->num_parameters();
  std::vector<float> params(p), grad(p);
  model->initialize(params, 1);
  std::vector<std::int64_t> rows(data.size());
  std::iota(rows.begin(), rows.end(), 0);
  // Two neighbours' models, as on a ring.
  std::vector<float> a(params), b(params);
  for (std::size_t i = 0; i < p; ++i) a[i] += 0.01f, b[i] -= 0.02f;
  const std::vector<std::span<const float>> neighbours{a, b};
  learning::GradientNoise noise;
  double sink = 0;
  std::vector<double> plain, with_noise, disagreement;
  for (int r = -5; r < rounds; ++r) {
    const learning::BatchView view{&data,
                                   std::span(rows).subspan(std::size_t(r & 3) * kBatch, kBatch)};
    const auto time_plain = [&] {
      return seconds([&] { sink += model->loss_and_gradient(params, view, grad); });
    };
    const auto time_noise = [&] {
      return seconds(
          [&] { sink += model->loss_and_gradient(params, view, grad, &noise) + noise.variance; });
    };
    // In turns, each first every other round: the second runs on warmer caches.
    double t0 = 0, t1 = 0;
    if (r % 2 == 0) {
      t0 = time_plain();
      t1 = time_noise();
    } else {
      t1 = time_noise();
      t0 = time_plain();
    }
    const double t2 =
        seconds([&] { sink += consensus::neighbourhood_disagreement(params, neighbours); });
    if (r >= 0) plain.push_back(t0), with_noise.push_back(t1), disagreement.push_back(t2);
  }
  // The decision on a full arrival window of two neighbours.
  consensus::PolicySpec policy_spec;
  policy_spec.kind = consensus::PolicyKind::kAdaptive;
  consensus::AdaptivePolicy policy(policy_spec);
  consensus::ArrivalWindow window(policy_spec.window);
  const std::vector<topology::PeerId> ids{1, 2};
  for (int k = 0; k <= policy_spec.window; ++k) {
    window.begin(k, k, ids, {false, false});
    window.message(1, k, k + 0.1);
    window.message(2, k, k + 0.3);
    window.gradient_done(k, k + 0.2);
  }
  for (int g = 0; g < policy_spec.gradient_window; ++g) policy.observe_gradient({1, 0.5, true});
  consensus::PolicyInput input{policy_spec.window + 1, 2, 1, 30.0, 0.05, &window};
  std::vector<double> decision;
  for (int r = 0; r < 50; ++r) {
    decision.push_back(seconds([&] {
                         for (int c = 0; c < 100; ++c) {
                           sink += policy.decide(input).awaited;
                           sink += policy.relax_at(30.0, 30.2).value_or(0.0);
                         }
                       }) /
                       100);
  }
  if (sink == 12345.678) std::puts("");  // keeps the work from being optimised away
  return {name, median(plain), median(with_noise), median(disagreement), median(decision)};
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 400;
  for (int i = 1; i + 1 < argc; ++i) {
    // At least 16, so that the CIFAR CNN (rounds / 16) is timed at least once.
    if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::max(16, std::atoi(argv[i + 1]));
  }
  using learning::ModelKind;
  std::vector<Row> rows;
  rows.push_back(measure("logistic regression", {.kind = ModelKind::kLogisticRegression},
                         {1, 28, 28}, rounds));
  rows.push_back(
      measure("MLP 784-128-10", {.kind = ModelKind::kMlp, .hidden = {128}}, {1, 28, 28}, rounds));
  rows.push_back(measure("LeNet-5", {.kind = ModelKind::kLenet}, {1, 28, 28}, rounds / 4));
  rows.push_back(measure("CIFAR CNN", {.kind = ModelKind::kCifarCnn}, {3, 32, 32}, rounds / 16));
  std::printf("%-20s %12s %12s %14s %10s %9s %11s\n", "model", "gradient_us", "+noise_us",
              "disagree_us/10", "decide_us", "overhead", "on average");
  bool all_under = true;
  for (const Row& r : rows) {
    std::printf("%-20s %12.1f %12.1f %14.2f %10.2f %8.1f%% %10.1f%%\n", r.model.c_str(),
                1e6 * r.plain_s, 1e6 * r.noise_s, 1e6 * r.disagreement_s / kDisagreementEvery,
                1e6 * r.decision_s, 100 * r.overhead(), 100 * r.overhead(kGradientStatsEvery));
    all_under = all_under && r.overhead(kGradientStatsEvery) <= 0.05;
  }
  std::printf("overhead on average <= 5%% for every model: %s\n", all_under ? "yes" : "no");
  return all_under ? 0 : 1;
}
