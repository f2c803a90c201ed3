// Shared helpers of the coding/ tests: random partial gradients, the exact sum they encode,
// and the float32 end-to-end error of encoding, decoding and combining them.
#pragma once

#include <Eigen/Dense>
#include <random>
#include <span>
#include <vector>

#include "coding/gradient_code.h"
#include "coding/messages.h"

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

}  // namespace fastk::coding::testing
