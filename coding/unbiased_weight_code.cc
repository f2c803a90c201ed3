#include "coding/unbiased_weight_code.h"

#include <stdexcept>
#include <string>

namespace fastk::coding {
namespace {

// holders[j] = members holding partition j; validates the placement.
std::vector<std::vector<int>> holders_of(const std::vector<std::vector<int>>& holdings,
                                         int partitions) {
  if (partitions < 1) {
    throw std::invalid_argument("an unbiased weight code needs at least one partition, got " +
                                std::to_string(partitions));
  }
  std::vector<std::vector<int>> holders(partitions);
  for (std::size_t i = 0; i < holdings.size(); ++i) {
    for (int j : holdings[i]) {
      if (j < 0 || j >= partitions) {
        throw std::invalid_argument("member " + std::to_string(i) + " holds partition " +
                                    std::to_string(j) + ", outside [0, " +
                                    std::to_string(partitions) + ")");
      }
      if (!holders[j].empty() && holders[j].back() == static_cast<int>(i)) {
        throw std::invalid_argument("member " + std::to_string(i) + " lists partition " +
                                    std::to_string(j) + " twice");
      }
      holders[j].push_back(static_cast<int>(i));
    }
  }
  for (int j = 0; j < partitions; ++j) {
    if (holders[j].empty()) {
      throw std::invalid_argument("partition " + std::to_string(j) +
                                  " has no holder; every partition needs at least one");
    }
  }
  return holders;
}

void check_probability(double p, std::size_t member) {
  if (!(p >= 0.0 && p <= 1.0)) {
    throw std::invalid_argument("straggle probability of member " + std::to_string(member) +
                                " is " + std::to_string(p) + "; it must lie in [0, 1]");
  }
}

}  // namespace

UnbiasedWeightCode::UnbiasedWeightCode(Eigen::MatrixXd weights, std::string name)
    : GradientCode(std::move(weights)), name_(std::move(name)) {}

UnbiasedWeightCode UnbiasedWeightCode::heterogeneous(const std::vector<std::vector<int>>& holdings,
                                                     int partitions,
                                                     std::span<const double> straggle) {
  if (straggle.size() != holdings.size()) {
    throw std::invalid_argument("heterogeneous weights need one straggle probability per member: " +
                                std::to_string(holdings.size()) + " members, " +
                                std::to_string(straggle.size()) + " probabilities");
  }
  for (std::size_t i = 0; i < straggle.size(); ++i) check_probability(straggle[i], i);
  const auto holders = holders_of(holdings, partitions);

  Eigen::MatrixXd c = Eigen::MatrixXd::Zero(Eigen::Index(holdings.size()), partitions);
  for (int j = 0; j < partitions; ++j) {
    // A holder that never straggles carries the partition alone: zero variance.
    int reliable = 0;
    for (int i : holders[j]) reliable += straggle[i] == 0.0 ? 1 : 0;
    if (reliable > 0) {
      for (int i : holders[j]) c(i, j) = straggle[i] == 0.0 ? 1.0 / reliable : 0.0;
      continue;
    }
    double precision = 0;  // sum of (1 - p)/p: the inverse of the optimal variance
    for (int i : holders[j]) precision += (1.0 - straggle[i]) / straggle[i];
    if (precision == 0.0) {
      throw std::invalid_argument("every holder of partition " + std::to_string(j) +
                                  " always straggles (p = 1); no weights can make it unbiased");
    }
    for (int i : holders[j]) c(i, j) = (1.0 / straggle[i]) / precision;
  }
  return UnbiasedWeightCode(std::move(c),
                            "heterogeneous_weights(n=" + std::to_string(holdings.size()) +
                                ",k=" + std::to_string(partitions) + ")");
}

UnbiasedWeightCode UnbiasedWeightCode::stochastic(const std::vector<std::vector<int>>& holdings,
                                                  int partitions, double straggle) {
  if (!(straggle >= 0.0 && straggle < 1.0)) {
    throw std::invalid_argument(
        "stochastic gradient coding needs a straggle probability in "
        "[0, 1), got " +
        std::to_string(straggle));
  }
  const auto holders = holders_of(holdings, partitions);
  Eigen::MatrixXd c = Eigen::MatrixXd::Zero(Eigen::Index(holdings.size()), partitions);
  for (int j = 0; j < partitions; ++j) {
    const double d = static_cast<double>(holders[j].size());
    for (int i : holders[j]) c(i, j) = 1.0 / (d * (1.0 - straggle));
  }
  return UnbiasedWeightCode(std::move(c), "sgc(n=" + std::to_string(holdings.size()) +
                                              ",k=" + std::to_string(partitions) +
                                              ",p=" + std::to_string(straggle) + ")");
}

Decoding UnbiasedWeightCode::decode(std::span<const int> arrived) const {
  return evaluate_decoding(arrived_rows(arrived), std::vector<double>(arrived.size(), 1.0),
                           tolerance());
}

double UnbiasedWeightCode::partition_variance(int partition,
                                              std::span<const double> straggle) const {
  if (partition < 0 || partition >= partitions()) {
    throw std::invalid_argument("partition " + std::to_string(partition) + " is outside [0, " +
                                std::to_string(partitions()) + ")");
  }
  if (static_cast<int>(straggle.size()) != members()) {
    throw std::invalid_argument("variance needs one straggle probability per member");
  }
  double variance = 0;
  for (int i = 0; i < members(); ++i) {
    const double c = encoding()(i, partition);
    variance += straggle[i] * (1.0 - straggle[i]) * c * c;
  }
  return variance;
}

}  // namespace fastk::coding
