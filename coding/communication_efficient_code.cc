#include "coding/communication_efficient_code.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "coding/arrivals.h"
#include "coding/subsets.h"

namespace fastk::coding {

CommunicationEfficientCode::CommunicationEfficientCode(Eigen::MatrixXd coefficients, int partitions,
                                                       int sub_blocks, int stragglers)
    : coefficients_(std::move(coefficients)),
      partitions_(partitions),
      sub_blocks_(sub_blocks),
      stragglers_(stragglers) {
  if (partitions < 1 || sub_blocks < 1 || coefficients_.rows() < 1 ||
      coefficients_.cols() != Eigen::Index(partitions) * sub_blocks) {
    throw std::invalid_argument(
        "communication-efficient code needs an n x (k m) coefficient matrix with n, k, m >= 1");
  }
  if (!coefficients_.allFinite()) {
    throw std::invalid_argument("communication-efficient code has a non-finite coefficient");
  }
}

std::vector<int> CommunicationEfficientCode::support(int member) const {
  check_member(member, members(), name());
  std::vector<int> held;
  for (int j = 0; j < partitions_; ++j) {
    if ((coefficients_.row(member).segment(j * sub_blocks_, sub_blocks_).array() != 0.0).any()) {
      held.push_back(j);
    }
  }
  return held;
}

int CommunicationEfficientCode::computation_load() const {
  std::size_t load = 0;
  for (int i = 0; i < members(); ++i) load = std::max(load, support(i).size());
  return static_cast<int>(load);
}

SubBlockDecoding CommunicationEfficientCode::decode(std::span<const int> arrived) const {
  check_arrivals(arrived, members(), name());
  const Eigen::MatrixXd rows = select_rows(coefficients_, arrived);
  SubBlockDecoding result;
  result.decodable = true;
  for (int u = 0; u < sub_blocks_; ++u) {
    // Target: weight 1 on g_j^(u) for every partition j, 0 on the other sub-blocks.
    Eigen::VectorXd target = Eigen::VectorXd::Zero(coefficients_.cols());
    for (int j = 0; j < partitions_; ++j) target(j * sub_blocks_ + u) = 1.0;
    result.sub_blocks.push_back(decode_least_squares_to(rows, target));
    result.decodable = result.decodable && result.sub_blocks.back().decodable;
  }
  return result;
}

int CommunicationEfficientCode::message_length(int gradient_length) const {
  return (gradient_length + sub_blocks_ - 1) / sub_blocks_;
}

Eigen::VectorXf CommunicationEfficientCode::encode(
    int member, const std::vector<Eigen::VectorXf>& partials) const {
  if (static_cast<int>(partials.size()) != partitions_) {
    throw std::invalid_argument("encoding for " + name() + " needs " + std::to_string(partitions_) +
                                " partial gradients, got " + std::to_string(partials.size()));
  }
  const std::vector<int> held = support(member);
  if (held.empty()) return Eigen::VectorXf();
  const int length = static_cast<int>(partials[held.front()].size());
  const int piece = message_length(length);
  Eigen::VectorXf message = Eigen::VectorXf::Zero(piece);
  for (int j : held) {
    if (partials[j].size() != length) {
      throw std::invalid_argument("partial gradient of partition " + std::to_string(j) +
                                  " has length " + std::to_string(partials[j].size()) +
                                  ", expected " + std::to_string(length));
    }
    for (int u = 0; u < sub_blocks_; ++u) {
      const int begin = std::min(u * piece, length);
      const int size = std::min(piece, length - begin);
      const auto weight = static_cast<float>(coefficients_(member, j * sub_blocks_ + u));
      message.head(size) += weight * partials[j].segment(begin, size);
    }
  }
  return message;
}

Eigen::VectorXf CommunicationEfficientCode::combine(const SubBlockDecoding& decoding,
                                                    const std::vector<Eigen::VectorXf>& messages,
                                                    int gradient_length) const {
  if (static_cast<int>(decoding.sub_blocks.size()) != sub_blocks_) {
    throw std::invalid_argument("combining needs one decoding per sub-block of " + name());
  }
  const int piece = message_length(gradient_length);
  Eigen::VectorXf sum = Eigen::VectorXf::Zero(gradient_length);
  for (int u = 0; u < sub_blocks_; ++u) {
    const std::vector<double>& a = decoding.sub_blocks[u].coefficients;
    if (a.size() != messages.size()) {
      throw std::invalid_argument("combining " + std::to_string(messages.size()) +
                                  " messages with " + std::to_string(a.size()) +
                                  " coefficients; they must match one to one");
    }
    const int begin = std::min(u * piece, gradient_length);
    const int size = std::min(piece, gradient_length - begin);
    for (std::size_t r = 0; r < messages.size(); ++r) {
      if (messages[r].size() != piece) {
        throw std::invalid_argument("message " + std::to_string(r) + " has length " +
                                    std::to_string(messages[r].size()) + ", expected " +
                                    std::to_string(piece));
      }
      sum.segment(begin, size) += static_cast<float>(a[r]) * messages[r].head(size);
    }
  }
  return sum;
}

}  // namespace fastk::coding
