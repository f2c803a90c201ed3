// Graph (expander) approximate code (Glasgow & Wootters, docs/coding.md §5.4): data blocks are the
// vertices of a graph and each member is an edge, holding its two endpoint blocks (load 2).
// Under optimal decoding each surviving component recovers its blocks exactly when it is not
// bipartite; bipartite components are off by the imbalance of their sides; isolated vertices
// are lost. Good expanders keep the surviving components large and non-bipartite.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "coding/gradient_code.h"

namespace fastk::coding {

class GraphCode : public GradientCode {
 public:
  // Member i holds blocks edges[i].first and edges[i].second (distinct, in [0, vertices)).
  // Decoding is the default least-squares (optimal) decoder. Throws std::invalid_argument
  // for a self-loop or an endpoint out of range.
  GraphCode(int vertices, const std::vector<std::pair<int, int>>& edges);

  std::string name() const override;
  int stragglers_tolerated() const override { return 0; }
  bool approximate() const override { return true; }
};

}  // namespace fastk::coding
