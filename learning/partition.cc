#include "learning/partition.h"

#include <algorithm>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "learning/random.h"

namespace fastk::learning {
namespace {

std::vector<std::vector<std::int64_t>> indices_by_class(std::span<const std::int32_t> labels,
                                                        int classes) {
  std::vector<std::vector<std::int64_t>> by_class(static_cast<std::size_t>(classes));
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] < 0 || labels[i] >= classes) {
      throw std::invalid_argument("partition: label " + std::to_string(labels[i]) + " of sample " +
                                  std::to_string(i) + " is not in [0, " + std::to_string(classes) +
                                  ")");
    }
    by_class[std::size_t(labels[i])].push_back(std::int64_t(i));
  }
  return by_class;
}

// Cuts `values` into pieces at the cumulative shares (which sum to 1) and appends piece p to
// out[owners[p]].
void split_by_shares(const std::vector<std::int64_t>& values, const std::vector<double>& shares,
                     const std::vector<int>& owners, std::vector<std::vector<std::int64_t>>& out) {
  double cumulative = 0;
  std::size_t begin = 0;
  for (std::size_t p = 0; p < shares.size(); ++p) {
    cumulative += shares[p];
    std::size_t end =
        p + 1 == shares.size()
            ? values.size()
            : std::min(values.size(), std::size_t(cumulative * double(values.size()) + 0.5));
    end = std::max(end, begin);
    auto& dest = out[std::size_t(owners[p])];
    dest.insert(dest.end(), values.begin() + std::ptrdiff_t(begin),
                values.begin() + std::ptrdiff_t(end));
    begin = end;
  }
}

}  // namespace

Partition make_partition(std::span<const std::int32_t> labels, int classes, int peers,
                         const PartitionSpec& spec, std::uint64_t seed) {
  if (peers < 1) throw std::invalid_argument("partition: need at least one peer");
  if (spec.kind != PartitionKind::kIid && classes < 1) {
    throw std::invalid_argument("partition '" + to_string(spec.kind) +
                                "' needs labelled data; use 'iid' for regression data");
  }
  Rng rng(seed);
  Partition partition;
  auto& out = partition.peer_indices;
  out.resize(std::size_t(peers));
  std::vector<int> all_peers(static_cast<std::size_t>(peers));
  std::iota(all_peers.begin(), all_peers.end(), 0);

  switch (spec.kind) {
    case PartitionKind::kIid: {
      std::vector<std::int64_t> order(labels.size());
      std::iota(order.begin(), order.end(), 0);
      rng.shuffle(std::span(order));
      split_by_shares(order, std::vector<double>(std::size_t(peers), 1.0 / peers), all_peers, out);
      break;
    }
    case PartitionKind::kShards: {
      const int c = spec.classes_per_peer;
      if (c < 1 || c > classes) {
        throw std::invalid_argument("partition 'shards': classes_per_peer must be in 1.." +
                                    std::to_string(classes) + ", got " + std::to_string(c));
      }
      std::vector<int> class_order(static_cast<std::size_t>(classes));
      std::iota(class_order.begin(), class_order.end(), 0);
      rng.shuffle(std::span(class_order));
      std::vector<std::vector<int>> holders(static_cast<std::size_t>(classes));
      for (int p = 0; p < peers; ++p) {
        for (int j = 0; j < c; ++j) {
          holders[std::size_t(class_order[std::size_t((p * c + j) % classes)])].push_back(p);
        }
      }
      auto by_class = indices_by_class(labels, classes);
      for (int k = 0; k < classes; ++k) {
        auto& members = by_class[std::size_t(k)];
        const auto& owners = holders[std::size_t(k)];
        if (owners.empty()) continue;
        rng.shuffle(std::span(members));
        split_by_shares(members, std::vector<double>(owners.size(), 1.0 / double(owners.size())),
                        owners, out);
      }
      break;
    }
    case PartitionKind::kDirichlet: {
      if (!(spec.alpha > 0)) {
        throw std::invalid_argument("partition 'dirichlet': alpha must be > 0");
      }
      auto by_class = indices_by_class(labels, classes);
      for (auto& members : by_class) {
        std::vector<double> shares(static_cast<std::size_t>(peers));
        double total = 0;
        for (double& s : shares) total += (s = rng.gamma(spec.alpha));
        for (double& s : shares) s = total > 0 ? s / total : 1.0 / peers;
        rng.shuffle(std::span(members));
        split_by_shares(members, shares, all_peers, out);
      }
      break;
    }
  }
  for (auto& indices : out) std::sort(indices.begin(), indices.end());
  return partition;
}

Partition make_partition(const Dataset& data, int peers, const PartitionSpec& spec,
                         std::uint64_t seed) {
  return make_partition(data.labels, data.classes, data.size(), peers, spec, seed);
}

Partition make_partition(std::span<const std::int32_t> labels, int classes, std::int64_t samples,
                         int peers, const PartitionSpec& spec, std::uint64_t seed) {
  if (classes > 0) return make_partition(labels, classes, peers, spec, seed);
  // Regression samples have no label: for the i.i.d. split they all count as one class.
  const std::vector<std::int32_t> one_class(static_cast<std::size_t>(samples), 0);
  return make_partition(one_class, 0, peers, spec, seed);
}

PartitionReport report_partition(const Partition& partition, std::span<const std::int32_t> labels,
                                 int classes) {
  PartitionReport report;
  report.classes = classes;
  for (const auto& indices : partition.peer_indices) {
    report.samples.push_back(std::int64_t(indices.size()));
    std::vector<std::int64_t> histogram(std::size_t(std::max(classes, 0)), 0);
    for (std::int64_t i : indices) {
      if (classes > 0) ++histogram[std::size_t(labels[std::size_t(i)])];
    }
    report.histogram.push_back(std::move(histogram));
  }
  return report;
}

std::string format_partition_report(const PartitionReport& report) {
  std::ostringstream out;
  for (std::size_t p = 0; p < report.samples.size(); ++p) {
    out << "peer " << p << ": " << report.samples[p] << " samples";
    if (report.classes > 0) {
      out << " |";
      for (int k = 0; k < report.classes; ++k) {
        out << ' ' << k << ':' << report.histogram[p][std::size_t(k)];
      }
    }
    out << '\n';
  }
  return out.str();
}

}  // namespace fastk::learning
