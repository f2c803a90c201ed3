// Graph families used in decentralized-training experiments. Random families take a seed
// and are reproducible for it (on the same standard library). Impossible parameters throw
// std::invalid_argument saying which parameter to change.
#pragma once

#include <cstdint>

#include "topology/graph.h"

namespace fastk::topology {

Graph ring(int peers);            // i ~ i+1 mod n (n = 2: one edge)
Graph path(int peers);            // i ~ i+1
Graph torus(int rows, int cols);  // 2-D grid with wrap-around, peer = r * cols + c
Graph grid(int rows, int cols);   // 2-D grid without wrap-around
Graph complete(int peers);
Graph star(int peers);           // peer 0 is the hub
Graph hypercube(int dimension);  // 2^dimension peers, i ~ i xor 2^k
Graph exponential(int peers);    // static exponential graph: i ~ i +- 2^k mod n
Graph random_regular(int peers, int degree, std::uint64_t seed);
Graph erdos_renyi(int peers, double probability,
                  std::uint64_t seed);  // G(n, p), connected or throws
// Watts-Strogatz: ring lattice with `nearest` neighbours (even), each lattice edge rewired
// with probability `rewire`.
Graph watts_strogatz(int peers, int nearest, double rewire, std::uint64_t seed);

}  // namespace fastk::topology
