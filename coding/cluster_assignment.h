// Dynamic roles in the manner of GC-DC (docs/coding.md §6.3-6.4): every iteration, spread the
// workers predicted to straggle over the clusters so that no cluster gets more of them than
// its code tolerates.
#pragma once

#include <span>
#include <vector>

namespace fastk::coding {

// Greedy assignment, heterogeneous variant of docs/coding.md §6.4.
// groups[g] = worker ids allowed to play position g (each group has at most `clusters`
// workers); predicted[w] = predicted straggle probability of worker w (0/1 for the basic
// algorithm). Groups go in decreasing order of expected stragglers (sum of predicted; ties:
// lower group index); inside a group workers go in decreasing predicted (ties: order in the
// group); each worker goes to the cluster not yet served by its group with the smallest
// accumulated load (ties: lower cluster index), and that load grows by its prediction.
// Returns cluster[w] for every w < predicted.size() (-1 for workers in no group).
// With 0/1 predictions the worst cluster gets exactly ceil(M / clusters) of the M predicted
// stragglers, the optimum, since a group adds at most one worker to each cluster.
// Throws std::invalid_argument on bad input (clusters < 1, a group larger than `clusters`,
// a worker id out of range, a worker in two groups, a prediction outside [0, 1]).
// Deterministic.
std::vector<int> assign_clusters(const std::vector<std::vector<int>>& groups, int clusters,
                                 std::span<const double> predicted);

}  // namespace fastk::coding
