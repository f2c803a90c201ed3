// Approximate code from a symmetric balanced incomplete block design (Kadhe et al., docs/coding.md
// §5.3): members are blocks, partitions are points, member i holds the w points of block i.
// Any two blocks share exactly lambda points, so B_S B_S^T = (w - lambda) I + lambda J for
// every arrival set S: the optimal decoder is a constant and the error depends only on |S|,
// which leaves an adversarial straggler no better choice than a random one.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "coding/gradient_code.h"

namespace fastk::coding {

class BlockDesignCode : public GradientCode {
 public:
  // blocks[i] = the points of block i, points 0..v-1 with v = blocks.size(). Throws
  // std::invalid_argument (naming the blocks or points) unless the blocks have one size w,
  // list distinct points in range, and every pair of points lies in the same number lambda >= 1
  // of blocks.
  explicit BlockDesignCode(const std::vector<std::vector<int>>& blocks);
  // The Fano plane (7 points, blocks of 3, lambda = 1): lines {i, i+1, i+3} mod 7.
  static BlockDesignCode fano_plane();
  // The cyclic design of a difference set D mod v: block i = {d + i mod v : d in D}. A planar
  // difference set gives a projective plane: {0, 1, 3} mod 7 (Fano), {0, 1, 3, 9} mod 13,
  // {0, 1, 4, 14, 16} mod 21. Throws std::invalid_argument as the constructor does when D is not
  // a difference set (some difference occurs more often than another).
  static BlockDesignCode from_difference_set(int v, const std::vector<int>& differences);

  std::string name() const override;
  int stragglers_tolerated() const override { return 0; }
  bool approximate() const override { return true; }
  // The optimal (least-squares) decoder in closed form: a_i = w / (w - lambda + lambda |S|),
  // non-negative, no solve. err(S) = v - w^2 |S| / (w - lambda + lambda |S|).
  Decoding decode(std::span<const int> arrived) const override;

  int block_size() const { return w_; }
  int pair_multiplicity() const { return lambda_; }

 private:
  struct Design {
    Eigen::MatrixXd incidence;
    int w = 0;
    int lambda = 0;
  };
  static Design check_design(const std::vector<std::vector<int>>& blocks);
  explicit BlockDesignCode(Design design);

  int w_;
  int lambda_;
};

}  // namespace fastk::coding
