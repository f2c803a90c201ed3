#include "coding/cluster_assignment.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace fastk::coding {
namespace {

void check_input(const std::vector<std::vector<int>>& groups, int clusters,
                 std::span<const double> predicted) {
  if (clusters < 1) {
    throw std::invalid_argument("cluster assignment needs at least one cluster, got " +
                                std::to_string(clusters));
  }
  for (std::size_t w = 0; w < predicted.size(); ++w) {
    if (!(predicted[w] >= 0.0 && predicted[w] <= 1.0)) {
      throw std::invalid_argument("predicted straggle probability of worker " + std::to_string(w) +
                                  " is " + std::to_string(predicted[w]) +
                                  "; it must lie in [0, 1]");
    }
  }
  std::vector<int> group_of(predicted.size(), -1);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].size() > static_cast<std::size_t>(clusters)) {
      throw std::invalid_argument("group " + std::to_string(g) + " has " +
                                  std::to_string(groups[g].size()) +
                                  " workers but there are only " + std::to_string(clusters) +
                                  " clusters; a group may put at most one worker in each cluster");
    }
    for (int w : groups[g]) {
      if (w < 0 || static_cast<std::size_t>(w) >= predicted.size()) {
        throw std::invalid_argument(
            "group " + std::to_string(g) + " names worker " + std::to_string(w) + ", outside [0, " +
            std::to_string(predicted.size()) + ") (one prediction per worker)");
      }
      if (group_of[w] != -1) {
        throw std::invalid_argument("worker " + std::to_string(w) + " is in group " +
                                    std::to_string(group_of[w]) + " and in group " +
                                    std::to_string(g) + "; a worker plays one position");
      }
      group_of[w] = static_cast<int>(g);
    }
  }
}

}  // namespace

std::vector<int> assign_clusters(const std::vector<std::vector<int>>& groups, int clusters,
                                 std::span<const double> predicted) {
  check_input(groups, clusters, predicted);

  std::vector<double> expected(groups.size(), 0.0);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (int w : groups[g]) expected[g] += predicted[w];
  }
  // Groups with many expected stragglers first, while every cluster still has room for them.
  std::vector<std::size_t> group_order(groups.size());
  std::iota(group_order.begin(), group_order.end(), 0);
  std::stable_sort(group_order.begin(), group_order.end(),
                   [&](std::size_t a, std::size_t b) { return expected[a] > expected[b]; });

  std::vector<int> cluster_of(predicted.size(), -1);
  std::vector<double> load(clusters, 0.0);
  for (std::size_t g : group_order) {
    std::vector<int> workers = groups[g];
    std::stable_sort(workers.begin(), workers.end(),
                     [&](int a, int b) { return predicted[a] > predicted[b]; });
    std::vector<bool> served(clusters, false);
    for (int w : workers) {
      int best = -1;
      for (int c = 0; c < clusters; ++c) {
        if (!served[c] && (best == -1 || load[c] < load[best])) best = c;
      }
      served[best] = true;
      load[best] += predicted[w];
      cluster_of[w] = best;
    }
  }
  return cluster_of;
}

}  // namespace fastk::coding
