// Communication-efficient gradient codes (Ye & Abbe; Kadhe et al., docs/coding.md §4): every
// partial gradient g_j is cut into m sub-vectors g_j^(u) and member i sends the single short
// vector y_i = sum_{j,u} C[i, j, u] g_j^(u) of length ceil(l/m). The aggregator recovers the
// m sub-sums sum_j g_j^(u) separately, so links carry 1/m of a gradient per message at the
// price of s + m partitions of computation. Decoding inverts an MDS-like matrix, so these
// codes cancel terms and suffer from parameter disagreement in gossip (docs/coding.md §7.2).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "coding/decoding.h"
#include "third_party/eigen.h"

namespace fastk::coding {

// One decoding per sub-block u: coefficients over the arrived messages whose combination is
// sum_j g_j^(u). decodable when every sub-block is.
struct SubBlockDecoding {
  bool decodable = false;
  std::vector<Decoding> sub_blocks;
};

class CommunicationEfficientCode {
 public:
  virtual ~CommunicationEfficientCode() = default;
  virtual std::string name() const = 0;

  int members() const { return static_cast<int>(coefficients_.rows()); }
  int partitions() const { return partitions_; }
  int sub_blocks() const { return sub_blocks_; }
  int stragglers_tolerated() const { return stragglers_; }
  // C as an n x (k m) matrix, column j * m + u holding the weight of g_j^(u).
  const Eigen::MatrixXd& coefficients() const { return coefficients_; }
  // Partitions member i must hold (any non-zero weight on one of their sub-vectors).
  std::vector<int> support(int member) const;
  int computation_load() const;
  // Least-squares decoding of each sub-sum from the arrived members (arrival order).
  SubBlockDecoding decode(std::span<const int> arrived) const;

  // ceil(l / m): the message length for gradients of length l.
  int message_length(int gradient_length) const;
  // y_i from the partial gradients (one per partition, all of length l; only the member's own
  // partitions are read). Sub-vector u is g_j[u L, (u+1) L), zero-padded to L = ceil(l/m).
  Eigen::VectorXf encode(int member, const std::vector<Eigen::VectorXf>& partials) const;
  // Reassembles the full sum of length `gradient_length` from the arrived messages.
  Eigen::VectorXf combine(const SubBlockDecoding& decoding,
                          const std::vector<Eigen::VectorXf>& messages, int gradient_length) const;

 protected:
  // Throws std::invalid_argument for a non-finite matrix or a column count other than k m.
  CommunicationEfficientCode(Eigen::MatrixXd coefficients, int partitions, int sub_blocks,
                             int stragglers);

 private:
  Eigen::MatrixXd coefficients_;
  int partitions_;
  int sub_blocks_;
  int stragglers_;
};

}  // namespace fastk::coding
