#include "coding/messages.h"

#include <stdexcept>
#include <string>

namespace fastk::coding {

Eigen::VectorXf encode_message(const GradientCode& code, int member,
                               const std::vector<Eigen::VectorXf>& partials) {
  if (static_cast<int>(partials.size()) != code.partitions()) {
    throw std::invalid_argument(
        "encoding for " + code.name() + " needs " + std::to_string(code.partitions()) +
        " partial gradients (one per partition), got " + std::to_string(partials.size()));
  }
  const std::vector<int> held = code.support(member);
  if (held.empty()) return Eigen::VectorXf();
  Eigen::VectorXf message = Eigen::VectorXf::Zero(partials[held.front()].size());
  for (int j : held) {
    if (partials[j].size() != message.size()) {
      throw std::invalid_argument("partial gradient of partition " + std::to_string(j) +
                                  " has length " + std::to_string(partials[j].size()) +
                                  ", expected " + std::to_string(message.size()));
    }
    message += static_cast<float>(code.encoding()(member, j)) * partials[j];
  }
  return message;
}

Eigen::VectorXf combine_messages(const Decoding& decoding,
                                 const std::vector<Eigen::VectorXf>& messages) {
  if (messages.size() != decoding.coefficients.size()) {
    throw std::invalid_argument("combining " + std::to_string(messages.size()) + " messages with " +
                                std::to_string(decoding.coefficients.size()) +
                                " decoding coefficients; they must match one to one");
  }
  if (messages.empty()) return Eigen::VectorXf();
  Eigen::VectorXf sum = Eigen::VectorXf::Zero(messages.front().size());
  for (std::size_t r = 0; r < messages.size(); ++r) {
    if (messages[r].size() != sum.size()) {
      throw std::invalid_argument("message " + std::to_string(r) + " has length " +
                                  std::to_string(messages[r].size()) + ", expected " +
                                  std::to_string(sum.size()));
    }
    // Zero coefficients (late duplicates of a covered FRC group) cost nothing.
    if (decoding.coefficients[r] != 0.0) {
      sum += static_cast<float>(decoding.coefficients[r]) * messages[r];
    }
  }
  return sum;
}

}  // namespace fastk::coding
