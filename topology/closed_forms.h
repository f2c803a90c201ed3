// Lambda of the families whose spectrum is known in closed form: their W is a polynomial in
// commuting shifts, so its eigenvalues are sums of cosines. What a large ring, path or torus
// needs: their gap shrinks as 1/n^2 (a ring of 100,000 peers: lambda = 1 - 1.3e-9), below what
// an iterative solver resolves. Every weight rule gives the regular ones the same W.
#pragma once

#include <optional>

#include "topology/topology.h"

namespace fastk::topology {

// Ring (n >= 3): W = (I + S + S^-1) / 3, eigenvalues 1/3 + 2/3 cos(2 pi k / n).
// Torus (rows, cols >= 3): W = (I + row and column shifts) / 5, eigenvalues
// (1 + 2 cos(2 pi a / rows) + 2 cos(2 pi b / cols)) / 5.
// Path (n >= 3, metropolis_hastings or max_degree: 1/3 on every edge): eigenvalues
// 1/3 + 2/3 cos(pi k / n). A torus with one row or column is a ring.
// Hypercube of dimension d >= 1: W = (I + A) / (d + 1), eigenvalues (1 + d - 2k) / (d + 1).
// Complete: W = J / n, lambda 0. nullopt for any other topology or a weights file.
std::optional<double> closed_form_lambda(const Topology& topology);

// The diameter of the families whose shape fixes it: ring floor(n / 2), path n - 1, torus
// floor(rows / 2) + floor(cols / 2), grid rows + cols - 2, hypercube its dimension, complete
// 1, star 2 (from 3 peers). A search from every peer takes minutes on a 100,000-peer ring.
std::optional<int> closed_form_diameter(const Topology& topology);

}  // namespace fastk::topology
