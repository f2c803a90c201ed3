#include "node/measure/measure.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "compression/public_estimate.h"
#include "consensus/adaptive_policy.h"
#include "consensus/arrival_window.h"
#include "consensus/disagreement.h"
#include "consensus/mix_step.h"
#include "learning/sgd.h"
#include "node/transport/zmq_transport.h"
#include "node/wire/encoder.h"
#include "topology/topology.h"

namespace fastk::node::measure {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> values) {
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2),
                   values.end());
  return values[values.size() / 2];
}

// Median over `repeats` (after two warm-up calls) of the time `calls` calls of `f` take,
// divided by `calls`: for work too short to time one call at a time.
template <typename F>
double median_time_s(int repeats, int calls, F&& f) {
  std::vector<double> times;
  for (int r = -2; r < std::max(1, repeats); ++r) {
    const auto start = Clock::now();
    for (int c = 0; c < calls; ++c) f();
    if (r >= 0) times.push_back(seconds_since(start) / calls);
  }
  return median(times);
}

std::vector<float> random_vector(std::size_t size, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 0.1f);
  std::vector<float> v(size);
  for (float& x : v) x = normal(rng);
  return v;
}

// Least-squares line through (x, y): {intercept, slope}.
std::pair<double, double> fit_line(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sx += x[i], sy += y[i], sxx += x[i] * x[i], sxy += x[i] * y[i];
  }
  const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  return {(sy - slope * sx) / n, slope};
}

}  // namespace

GradientMeasurement measure_gradients(const ExperimentConfig& config, int repeats) {
  const int peers = topology::build_topology(config.topology).graph.size();
  training::PeerTrainer trainer(config.data, config.model, config.optimizer, peers, 0);
  const auto times = trainer.time_gradients(repeats);
  return {times.plain_s, times.with_noise_s, trainer.num_parameters(),
          trainer.time_loss_per_sample_s(config.consensus.protocol.validation_batch, repeats)};
}

namespace {

// The direction pass of the local step: (copy + direction) - copy, the copy keeping the
// momentum from growing without bound over the repeats.
double measure_direction_s(std::size_t parameters, int repeats, learning::OptimizerSpec optimizer,
                           std::mt19937& rng) {
  if (!learning::has_direction_state(optimizer)) optimizer.momentum = 0.9;
  learning::Sgd sgd(optimizer, parameters, 1);
  const std::vector<float> own = random_vector(parameters, rng);
  const std::vector<float> gradient = random_vector(parameters, rng);
  std::vector<float> scratch(parameters);
  const double copy_s = median_time_s(
      repeats, 1, [&] { std::copy(gradient.begin(), gradient.end(), scratch.begin()); });
  const double both_s = median_time_s(repeats, 1, [&] {
    std::copy(gradient.begin(), gradient.end(), scratch.begin());
    sgd.direction(own, scratch);
  });
  return std::max(0.0, both_s - copy_s);
}

}  // namespace

UpdateTimes measure_update(std::size_t parameters, int repeats,
                           const learning::OptimizerSpec& optimizer) {
  std::mt19937 rng(7);
  const std::vector<float> own = random_vector(parameters, rng);
  const std::vector<float> gradient = random_vector(parameters, rng);
  std::vector<std::vector<float>> neighbours;
  for (int j = 0; j < 4; ++j) neighbours.push_back(random_vector(parameters, rng));
  std::vector<float> next(parameters);
  std::vector<double> terms, update_s, disagreement_s;
  for (int t = 1; t <= 4; ++t) {
    std::vector<consensus::MixTerm> mix;
    std::vector<std::span<const float>> models;
    for (int j = 0; j < t; ++j) {
      mix.push_back({0.2f, neighbours[static_cast<std::size_t>(j)]});
      models.emplace_back(neighbours[static_cast<std::size_t>(j)]);
    }
    terms.push_back(t);
    update_s.push_back(median_time_s(
        repeats, 1, [&] { consensus::mix_and_step(next, 0.2f, own, mix, 0.05f, gradient); }));
    double sink = 0;
    disagreement_s.push_back(median_time_s(
        repeats, 1, [&] { sink += consensus::neighbourhood_disagreement(own, models); }));
    if (sink < 0) throw std::logic_error("a squared norm cannot be negative");
  }
  const auto [base, per_term] = fit_line(terms, update_s);
  const auto [d_base, d_per_term] = fit_line(terms, disagreement_s);
  const double direction_s = measure_direction_s(parameters, repeats, optimizer, rng);
  // A negative intercept from noise would make small updates free: clamp at 0.
  return {std::max(0.0, base), std::max(0.0, per_term),
          std::max(0.0, d_per_term + std::max(0.0, d_base) / 2.0), direction_s};
}

std::map<std::string, CompressionTimes> measure_compression(std::size_t parameters,
                                                            const compression::CompressorSpec& base,
                                                            int repeats) {
  std::mt19937 rng(11);
  const std::vector<float> start = random_vector(parameters, rng);
  const std::vector<float> step = random_vector(parameters, rng);
  std::map<std::string, CompressionTimes> costs;
  for (compression::Kind kind :
       {compression::Kind::kFloat16, compression::Kind::kInt8, compression::Kind::kQsgd,
        compression::Kind::kTopK, compression::Kind::kRandomK}) {
    compression::CompressorSpec spec = base;
    spec.kind = kind;
    compression::PublicEstimate owner(start), neighbour(start);
    // A model that moves every iteration, as in training: each difference is a fresh one.
    std::vector<float> x = start;
    std::uint64_t seed = 1;
    compression::Compressed q;
    const auto move = [&] {
      for (std::size_t i = 0; i < x.size(); ++i) x[i] += 0.01f * step[i];
    };
    const double moving_s = median_time_s(repeats, 1, move);  // not the peer's work: taken off
    const double compress_s = median_time_s(repeats, 1, [&] {
      move();
      q = owner.advance(spec, x, seed++);
    });
    // A peer checks a received difference (CompressedGossip::take), then applies it.
    const double apply_s = median_time_s(repeats, 1, [&] {
      if (compression::invalid(q))
        throw std::logic_error("a compressor made an invalid difference");
      neighbour.apply(q);
    });
    costs[compression::to_string(kind)] = {std::max(0.0, compress_s - moving_s), apply_s};
  }
  return costs;
}

double measure_adaptive_decision(int neighbours, int repeats) {
  consensus::PolicySpec spec;
  spec.kind = consensus::PolicyKind::kAdaptive;
  consensus::AdaptivePolicy policy(spec);
  consensus::ArrivalWindow window(spec.window);
  std::vector<topology::PeerId> ids(static_cast<std::size_t>(neighbours));
  for (int j = 0; j < neighbours; ++j) ids[static_cast<std::size_t>(j)] = j + 1;
  const std::vector<bool> none(ids.size(), false);
  double t = 0;
  for (int k = 0; k <= spec.window; ++k, t += 1) {
    window.begin(k, t, ids, none);
    for (int j = 0; j < neighbours; ++j) window.message(j + 1, k, t + 0.1 * (j + 1));
    window.gradient_done(k, t + 0.5);
  }
  for (int g = 0; g < spec.gradient_window; ++g) policy.observe_gradient({1.0, 0.5, true});
  policy.observe_disagreement(0.1);
  consensus::PolicyInput input;
  input.iteration = spec.window + 1;
  input.neighbours = neighbours;
  input.m_min = 1;
  input.now_s = t;
  input.learning_rate = 0.05;
  input.arrivals = &window;
  int sink = 0;
  const double s = median_time_s(repeats, 100, [&] {
    sink += policy.decide(input).awaited;
    sink += policy.relax_at(input.now_s, input.now_s + 0.001) ? 1 : 0;  // paid per iteration too
  });
  if (sink < 0) throw std::logic_error("a decision is never negative");
  return s;
}

double measure_message_round_trip_s(const std::string& local_transport, bool curve,
                                    std::size_t parameters, int repeats) {
  // Two peers of a private run (ids 0 and 1), endpoints unique to this process.
  const wire::HelloInfo run{0x5ca1ab1eULL + static_cast<std::uint64_t>(getpid()), 2};
  const bool tcp = local_transport == "tcp";
  const auto endpoint = [&](int peer) {
    return tcp ? std::string("tcp://127.0.0.1:*")
               : "ipc:///tmp/fastk-calibrate-" + std::to_string(getpid()) + "-" +
                     std::to_string(peer) + ".sock";
  };
  const std::vector<wire::PeerId> from_1{1}, from_0{0};
  transport::TransportOptions options_a, options_b;
  if (curve) {  // keys of this measurement only, as `fastk run` makes per launch
    const transport::CurveKeyPair key_a = transport::make_key_pair();
    const transport::CurveKeyPair key_b = transport::make_key_pair();
    options_a.curve = transport::CurveKeys{key_a, {{1, key_b.public_key}}};
    options_b.curve = transport::CurveKeys{key_b, {{0, key_a.public_key}}};
  }
  transport::ZmqTransport a(wire::WirePeers(0, run, from_1), endpoint(0), options_a);
  transport::ZmqTransport b(wire::WirePeers(1, run, from_0), endpoint(1), options_b);
  a.connect(1, b.endpoint());
  b.connect(0, a.endpoint());
  // "shm" sends a reference of a few dozen bytes; the others the whole model.
  const std::vector<float> payload(local_transport == "shm" ? 14 : parameters, 0.5f);
  const int rounds = std::max(1, repeats) + 20;
  // One side answers every message; a receive that times out (5 s) means the transports
  // cannot reach each other on this machine.
  const auto receive_one = [](transport::ZmqTransport& t) {
    for (int tries = 0; tries < 100; ++tries) {
      auto got = t.receive(std::chrono::milliseconds(50));
      if (got && std::holds_alternative<transport::ReceivedMessage>(*got)) return true;
    }
    return false;
  };
  const auto send_one = [&](transport::ZmqTransport& t, wire::PeerId self, wire::PeerId to, int k) {
    while (t.send(to, wire::encode_model(self, k, nullptr, payload)) !=
           transport::SendStatus::kQueued) {
      std::this_thread::yield();
    }
  };
  std::atomic<bool> echo_failed{false};
  std::thread echo([&] {
    for (int k = 0; k < rounds; ++k) {
      if (!receive_one(b)) {
        echo_failed = true;
        return;
      }
      send_one(b, 1, 0, k);
    }
  });
  std::vector<double> times;
  bool answered = true;
  for (int k = 0; k < rounds && answered; ++k) {
    const auto start = Clock::now();
    send_one(a, 0, 1, k);
    answered = receive_one(a);
    if (k >= 20) times.push_back(seconds_since(start));  // the first ones connect
  }
  echo.join();
  if (!answered || echo_failed || times.empty()) {
    throw std::runtime_error("calibration: two " + local_transport +
                             " transports on this machine got no answer from each other "
                             "within 5 s (message round trip)");
  }
  return median(times) / 2;
}

}  // namespace fastk::node::measure
