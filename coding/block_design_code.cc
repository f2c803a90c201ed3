#include "coding/block_design_code.h"

#include <stdexcept>
#include <string>

namespace fastk::coding {

BlockDesignCode::Design BlockDesignCode::check_design(const std::vector<std::vector<int>>& blocks) {
  const int v = static_cast<int>(blocks.size());
  if (v < 2) throw std::invalid_argument("a block design needs at least two blocks");
  Design design;
  design.incidence = Eigen::MatrixXd::Zero(v, v);
  design.w = static_cast<int>(blocks[0].size());
  for (int i = 0; i < v; ++i) {
    if (static_cast<int>(blocks[i].size()) != design.w) {
      throw std::invalid_argument("block " + std::to_string(i) + " has " +
                                  std::to_string(blocks[i].size()) + " points, block 0 has " +
                                  std::to_string(design.w) + "; all blocks need the same size");
    }
    for (int p : blocks[i]) {
      if (p < 0 || p >= v) {
        throw std::invalid_argument("block " + std::to_string(i) + " names point " +
                                    std::to_string(p) + ", outside [0, " + std::to_string(v) +
                                    ") (a symmetric design has as many points as blocks)");
      }
      if (design.incidence(i, p) != 0.0) {
        throw std::invalid_argument("block " + std::to_string(i) + " lists point " +
                                    std::to_string(p) + " twice");
      }
      design.incidence(i, p) = 1.0;
    }
  }
  // Pair multiplicities are the off-diagonal entries of B^T B.
  const Eigen::MatrixXd pairs = design.incidence.transpose() * design.incidence;
  design.lambda = static_cast<int>(pairs(0, 1));
  for (int p = 0; p < v; ++p) {
    for (int q = p + 1; q < v; ++q) {
      if (static_cast<int>(pairs(p, q)) != design.lambda) {
        throw std::invalid_argument(
            "points " + std::to_string(p) + " and " + std::to_string(q) + " share " +
            std::to_string(int(pairs(p, q))) + " blocks but points 0 and 1 share " +
            std::to_string(design.lambda) + "; a balanced design needs one count for all pairs");
      }
    }
  }
  if (design.lambda < 1) {
    throw std::invalid_argument("block design has pairs of points in no common block");
  }
  return design;
}

BlockDesignCode::BlockDesignCode(const std::vector<std::vector<int>>& blocks)
    : BlockDesignCode(check_design(blocks)) {}

BlockDesignCode::BlockDesignCode(Design design)
    : GradientCode(std::move(design.incidence)), w_(design.w), lambda_(design.lambda) {}

BlockDesignCode BlockDesignCode::fano_plane() { return from_difference_set(7, {0, 1, 3}); }

BlockDesignCode BlockDesignCode::from_difference_set(int v, const std::vector<int>& differences) {
  if (v < 2) throw std::invalid_argument("a difference set needs a modulus of at least 2");
  std::vector<std::vector<int>> blocks(v);
  for (int i = 0; i < v; ++i) {
    for (int d : differences) {
      if (d < 0 || d >= v) {
        throw std::invalid_argument("difference set element " + std::to_string(d) +
                                    " is outside [0, " + std::to_string(v) + ")");
      }
      blocks[i].push_back((d + i) % v);
    }
  }
  return BlockDesignCode(blocks);
}

std::string BlockDesignCode::name() const {
  return "bibd(v=" + std::to_string(members()) + ",w=" + std::to_string(w_) +
         ",lambda=" + std::to_string(lambda_) + ")";
}

Decoding BlockDesignCode::decode(std::span<const int> arrived) const {
  const double size = static_cast<double>(arrived.size());
  const double a = arrived.empty() ? 0.0 : w_ / (w_ - lambda_ + lambda_ * size);
  return evaluate_decoding(arrived_rows(arrived), std::vector<double>(arrived.size(), a),
                           tolerance());
}

}  // namespace fastk::coding
