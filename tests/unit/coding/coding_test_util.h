// Shared helpers of the coding/ tests: random partial gradients, the exact sum they encode,
// and the float32 end-to-end error of encoding, decoding and combining them.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "coding/gradient_code.h"
#include "coding/messages.h"
#include "third_party/eigen.h"

namespace fastk::coding::testing {

inline std::vector<Eigen::VectorXf> random_partials(int partitions, int length,
                                                    std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Eigen::VectorXf> partials(partitions, Eigen::VectorXf(length));
  for (auto& g : partials) {
    for (int t = 0; t < length; ++t) g(t) = float(double(rng() >> 11) * 0x1.0p-53 * 2.0 - 1.0);
  }
  return partials;
}

// Sum of all partial gradients, accumulated in double.
inline Eigen::VectorXd exact_sum(const std::vector<Eigen::VectorXf>& partials) {
  Eigen::VectorXd sum = Eigen::VectorXd::Zero(partials.front().size());
  for (const auto& g : partials) sum += g.cast<double>();
  return sum;
}

// Encodes every arrived member's message in float, decodes with the code's decoder, combines
// in float and returns ||decoded - sum|| / ||sum||.
inline double end_to_end_relative_error(const GradientCode& code, std::span<const int> arrived,
                                        const std::vector<Eigen::VectorXf>& partials) {
  std::vector<Eigen::VectorXf> messages;
  for (int member : arrived) messages.push_back(encode_message(code, member, partials));
  const Eigen::VectorXf decoded = combine_messages(code.decode(arrived), messages);
  const Eigen::VectorXd sum = exact_sum(partials);
  return (decoded.cast<double>() - sum).norm() / sum.norm();
}

// Uniform in [0, 1) from the top 53 bits: the same sequence with every standard library.
inline double uniform(std::mt19937_64& rng) { return double(rng() >> 11) * 0x1.0p-53; }

// The members that beat the deadline when member i straggles independently with straggle[i].
inline std::vector<int> draw_arrivals(std::span<const double> straggle, std::mt19937_64& rng) {
  std::vector<int> arrived;
  for (std::size_t i = 0; i < straggle.size(); ++i) {
    if (uniform(rng) >= straggle[i]) arrived.push_back(int(i));
  }
  return arrived;
}

// Sample mean and its standard error, for "within 3 standard errors" checks.
struct MeanEstimate {
  double sum = 0, sum_squares = 0;
  int count = 0;
  void add(double x) {
    sum += x;
    sum_squares += x * x;
    ++count;
  }
  double mean() const { return sum / count; }
  double variance() const { return (sum_squares - sum * sum / count) / (count - 1); }
  double standard_error() const { return std::sqrt(variance() / count); }
};

// Runs f and checks that it throws std::invalid_argument mentioning `fragment`.
template <typename F>
void expect_invalid_argument(F&& f, const std::string& fragment) {
  try {
    f();
    ADD_FAILURE() << "expected std::invalid_argument mentioning '" << fragment << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

}  // namespace fastk::coding::testing
