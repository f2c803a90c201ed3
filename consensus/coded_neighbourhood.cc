#include "consensus/coded_neighbourhood.h"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>

#include "coding/cluster_assignment.h"
#include "coding/decoding.h"
#include "coding/share_code.h"
#include "third_party/eigen.h"

namespace fastk::consensus {
namespace {

constexpr std::size_t kComputeHistory = 64;
// A reported gradient time this many times the usual one counts as straggling.
constexpr double kStragglerRatio = 2.0;

bool same_block(std::span<const PeerId> a, const coding::Block& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

}  // namespace

CodedNeighbourhood::CodedNeighbourhood(PeerId self, const coding::NeighbourhoodCodeSpec& spec,
                                       const topology::TopologySchedule& schedule,
                                       std::vector<PeerId> neighbours)
    : self_(self), spec_(spec), neighbours_(std::move(neighbours)) {
  if (schedule.period() != 1) {
    throw std::invalid_argument(
        "coding needs a fixed neighbourhood; the topology changes every round (one peer "
        "exponential): use a static topology or coding.scheme = \"none\"");
  }
  if (spec_.stragglers < 0) throw std::invalid_argument("coding.stragglers must be >= 0");
  if (spec_.deadline_s < 0) throw std::invalid_argument("coding.deadline_s must be >= 0");
  const bool shares = coding::sends_shares(spec_.scheme);
  if (spec_.sub_blocks < 1) throw std::invalid_argument("coding.sub_blocks must be >= 1");
  if (shares && spec_.dynamic_roles) {
    throw std::invalid_argument("coding.dynamic_roles needs coding.scheme = \"frc\": a " +
                                coding::to_string(spec_.scheme) +
                                " share is tied to the sender's place in its block");
  }
  blocks_ = coding::code_blocks(spec_, self_, neighbours_);
  columns_ = neighbours_;
  columns_.insert(std::lower_bound(columns_.begin(), columns_.end(), self_), self_);
  for (PeerId q : neighbours_) {
    their_blocks_.push_back(coding::code_blocks(spec_, q, schedule.round(q, 0).receive_from));
    const coding::Block& block = coding::block_of(their_blocks_.back(), self_);
    const auto position = std::find(block.begin(), block.end(), self_) - block.begin();
    cover_for_.push_back(
        coding::member_partitions(spec_, block, static_cast<std::size_t>(position)));
    role_for_.push_back(coding::block_of(blocks_, q));
  }
  estimators_.resize(neighbours_.size());
  if (!shares) return;
  // One code per block size: every peer builds the same one from the same seeds.
  auto add_code = [&](std::size_t members) {
    if (share_codes_.count(members) == 0) {
      share_codes_.emplace(members, coding::make_share_code(spec_, static_cast<int>(members)));
    }
  };
  for (std::size_t b = 1; b < blocks_.size(); ++b) add_code(blocks_[b].size());
  for (std::size_t i = 0; i < neighbours_.size(); ++i) {
    add_code(coding::block_of(their_blocks_[i], self_).size());
  }
}

const coding::CommunicationEfficientCode& CodedNeighbourhood::share_code(
    std::size_t members) const {
  return *share_codes_.at(members);
}

int CodedNeighbourhood::neighbour_index(PeerId peer) const {
  const auto it = std::lower_bound(neighbours_.begin(), neighbours_.end(), peer);
  return it != neighbours_.end() && *it == peer ? static_cast<int>(it - neighbours_.begin()) : -1;
}

int CodedNeighbourhood::block_index(std::span<const PeerId> covers) const {
  for (std::size_t b = 1; b < blocks_.size(); ++b) {
    if (same_block(covers, blocks_[b])) return static_cast<int>(b);
  }
  return -1;
}

int CodedNeighbourhood::member_block(PeerId member) const {
  for (std::size_t b = 1; b < blocks_.size(); ++b) {
    if (std::binary_search(blocks_[b].begin(), blocks_[b].end(), member)) {
      return static_cast<int>(b);
    }
  }
  return -1;
}

int CodedNeighbourhood::share_block(PeerId from, std::span<const PeerId> covers) const {
  if (!coding::sends_shares(spec_.scheme)) return block_index(covers);
  const int b = member_block(from);
  if (b < 0) return -1;
  const coding::Block& block = blocks_[static_cast<std::size_t>(b)];
  const auto position = std::lower_bound(block.begin(), block.end(), from) - block.begin();
  const coding::Block held =
      coding::member_partitions(spec_, block, static_cast<std::size_t>(position));
  return same_block(covers, held) ? b : -1;
}

int CodedNeighbourhood::needed(int block) const {
  return coding::members_needed(spec_,
                                static_cast<int>(blocks_[static_cast<std::size_t>(block)].size()));
}

std::size_t CodedNeighbourhood::message_size(int block, std::size_t parameters) const {
  if (!coding::sends_shares(spec_.scheme)) return parameters;
  const auto m = static_cast<std::size_t>(
      share_code(blocks_[static_cast<std::size_t>(block)].size()).sub_blocks());
  return (parameters + m - 1) / m;
}

std::vector<PeerId> CodedNeighbourhood::begin_iteration() {
  covering_ = cover_for_;
  std::vector<PeerId> others;
  for (const auto& block : covering_) {
    for (PeerId r : block) {
      if (r != self_) others.push_back(r);
    }
  }
  std::sort(others.begin(), others.end());
  others.erase(std::unique(others.begin(), others.end()), others.end());
  std::vector<PeerId> all = {self_};
  all.insert(all.end(), others.begin(), others.end());
  return all;
}

void CodedNeighbourhood::encode(std::int64_t tag, const Params& params, std::span<const PeerId> to,
                                std::span<const PeerId> partitions,
                                std::span<const float> gradients, double compute_s,
                                Actions& out) const {
  if (!to.empty()) out.push_back(SendParams{{to.begin(), to.end()}, tag, params});
  for (PeerId q : to) {
    const auto i = static_cast<std::size_t>(neighbour_index(q));
    auto coded = std::make_shared<CodedGradient>();
    coded->covers = covering_[i];
    if (spec_.dynamic_roles) coded->role = role_for_[i];
    coded->compute_s = compute_s;
    coded->gradient = make_params(block_message(i, partitions, gradients));
    out.push_back(SendCoded{q, tag, std::move(coded)});
  }
}

std::vector<float> CodedNeighbourhood::block_message(std::size_t i,
                                                     std::span<const PeerId> partitions,
                                                     std::span<const float> gradients) const {
  const std::size_t p = gradients.size() / partitions.size();
  auto gradient_of = [&](PeerId r) {
    const auto at = std::find(partitions.begin(), partitions.end(), r) - partitions.begin();
    return gradients.subspan(static_cast<std::size_t>(at) * p, p);
  };
  if (!coding::sends_shares(spec_.scheme)) {
    std::vector<float> sum(p, 0.0f);
    for (PeerId r : covering_[i]) {
      const auto g = gradient_of(r);
      for (std::size_t v = 0; v < p; ++v) sum[v] += g[v];
    }
    return sum;
  }
  // The block code's partitions are the block's members in order; only the ones self holds
  // are read (the others stay empty).
  const coding::Block& block = coding::block_of(their_blocks_[i], self_);
  std::vector<Eigen::VectorXf> partials(block.size());
  for (PeerId r : covering_[i]) {
    const auto g = gradient_of(r);
    const auto at = std::find(block.begin(), block.end(), r) - block.begin();
    partials[static_cast<std::size_t>(at)] =
        Eigen::Map<const Eigen::VectorXf>(g.data(), static_cast<Eigen::Index>(p));
  }
  const auto position = std::find(block.begin(), block.end(), self_) - block.begin();
  const Eigen::VectorXf share =
      share_code(block.size()).encode(static_cast<int>(position), partials);
  return {share.data(), share.data() + share.size()};
}

bool CodedNeighbourhood::valid(PeerId from, const CodedGradient& coded,
                               std::size_t parameters) const {
  const int i = neighbour_index(from);
  const int block = share_block(from, coded.covers);
  if (i < 0 || !coded.gradient || block < 0) return false;
  if (coded.gradient->values().size() != message_size(block, parameters)) return false;
  if (coded.role.empty()) return true;
  if (!spec_.dynamic_roles) return false;
  // A role must be a block of the sender's neighbourhood other than its own {sender}.
  const auto& theirs = their_blocks_[static_cast<std::size_t>(i)];
  for (std::size_t b = 1; b < theirs.size(); ++b) {
    if (same_block(coded.role, theirs[b])) return true;
  }
  return false;
}

void CodedNeighbourhood::learn(PeerId from, const CodedGradient& coded) {
  const auto i = static_cast<std::size_t>(neighbour_index(from));
  if (!coded.role.empty()) cover_for_[i] = coded.role;
  if (spec_.dynamic_roles) {
    const double typical = typical_compute_s();
    estimators_[i].observe(typical > 0 && coded.compute_s > kStragglerRatio * typical);
  }
  recent_compute_s_.push_back(coded.compute_s);
  if (recent_compute_s_.size() > kComputeHistory) recent_compute_s_.pop_front();
}

void CodedNeighbourhood::observe_own_compute(double compute_s) {
  recent_compute_s_.push_back(compute_s);
  if (recent_compute_s_.size() > kComputeHistory) recent_compute_s_.pop_front();
}

double CodedNeighbourhood::typical_compute_s() const {
  if (recent_compute_s_.size() < 4) return 0;
  std::vector<double> sorted(recent_compute_s_.begin(), recent_compute_s_.end());
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2),
                   sorted.end());
  return sorted[sorted.size() / 2];
}

std::vector<const CodedNeighbourhood::Share*> CodedNeighbourhood::decoding_shares(
    std::size_t block, std::span<const Share> shares) const {
  const int enough = needed(static_cast<int>(block));
  std::vector<const Share*> all;
  std::map<std::int64_t, std::vector<const Share*>, std::greater<>> by_tag;  // newest first
  for (const Share& share : shares) {
    if (member_block(share.from) != static_cast<int>(block)) continue;
    all.push_back(&share);
    by_tag[share.tag].push_back(&share);
  }
  for (auto& [tag, those] : by_tag) {
    if (static_cast<int>(those.size()) >= enough) return those;
  }
  // Members at different iterations (some ahead): their shares still decode the block, with
  // the error of the gradients' change between those iterations; dropping the block would
  // lose it whole, and waiting would not help (a member ahead never sends an older share).
  return static_cast<int>(all.size()) >= enough ? all : std::vector<const Share*>{};
}

std::vector<bool> CodedNeighbourhood::covered(std::span<const Share> shares) const {
  std::vector<int> count(blocks_.size(), 0);
  for (const Share& share : shares)
    ++count[static_cast<std::size_t>(share_block(share.from, share.coded->covers))];
  std::vector<bool> result(blocks_.size(), true);  // block 0: the own gradient
  for (std::size_t b = 1; b < blocks_.size(); ++b) {
    result[b] = count[b] >= needed(static_cast<int>(b));
  }
  return result;
}

CodedNeighbourhood::Decoded CodedNeighbourhood::decode(std::span<const float> own,
                                                       std::span<const Share> shares,
                                                       std::span<float> gradient) const {
  return coding::sends_shares(spec_.scheme) ? decode_shares(own, shares, gradient)
                                            : decode_frc(own, shares, gradient);
}

CodedNeighbourhood::Decoded CodedNeighbourhood::decode_frc(std::span<const float> own,
                                                           std::span<const Share> shares,
                                                           std::span<float> gradient) const {
  std::vector<const CodedGradient*> arrived;
  for (const Share& share : shares) arrived.push_back(share.coded);
  // One row per combined vector, one column per partition of N[self]: B_S of docs/coding.md §1.2.
  Eigen::MatrixXd b_s = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(arrived.size() + 1),
                                              static_cast<Eigen::Index>(columns_.size()));
  auto column = [&](PeerId r) {
    return static_cast<Eigen::Index>(std::lower_bound(columns_.begin(), columns_.end(), r) -
                                     columns_.begin());
  };
  b_s(0, column(self_)) = 1;
  for (std::size_t a = 0; a < arrived.size(); ++a) {
    for (PeerId r : arrived[a]->covers) b_s(static_cast<Eigen::Index>(a + 1), column(r)) = 1;
  }
  const coding::Decoding decoding = coding::decode_least_squares(b_s);
  Decoded result;
  result.decodable = decoding.decodable;
  result.residual = decoding.residual;
  for (double alpha : decoding.alpha) result.partitions += alpha;
  // Rescaled: the mean over the partitions actually covered (unbiased when blocks were
  // dropped at the deadline); otherwise over the whole neighbourhood.
  const double divisor =
      spec_.rescale ? std::max(result.partitions, 1.0) : static_cast<double>(columns_.size());
  auto add = [&](double coefficient, std::span<const float> values) {
    if (coefficient == 0) return;
    ++result.members;
    const auto c = static_cast<float>(coefficient / divisor);
    for (std::size_t v = 0; v < gradient.size(); ++v) gradient[v] += c * values[v];
  };
  std::fill(gradient.begin(), gradient.end(), 0.0f);
  add(decoding.coefficients[0], own);
  for (std::size_t a = 0; a < arrived.size(); ++a) {
    add(decoding.coefficients[a + 1], arrived[a]->gradient->values());
  }
  return result;
}

// Each block on its own: the shares of one iteration that decode it (decoding_shares), combined
// by the block's code into the block's sum (docs/coding.md §7.6, §7.7). A block without enough of
// them is dropped, and counts as residual 1 (its partitions' weight is 0, as for frc).
CodedNeighbourhood::Decoded CodedNeighbourhood::decode_shares(std::span<const float> own,
                                                              std::span<const Share> shares,
                                                              std::span<float> gradient) const {
  Decoded result;
  result.decodable = true;
  result.members = 1;
  result.partitions = 1;
  const auto length = static_cast<Eigen::Index>(gradient.size());
  Eigen::VectorXf sum = Eigen::Map<const Eigen::VectorXf>(own.data(), length);
  for (std::size_t b = 1; b < blocks_.size(); ++b) {
    const coding::Block& block = blocks_[b];
    const std::vector<const Share*> used = decoding_shares(b, shares);
    if (used.empty()) {
      result.decodable = false;
      result.residual = 1.0;
      continue;
    }
    std::vector<int> positions;
    std::vector<Eigen::VectorXf> values;
    for (const Share* share : used) {
      positions.push_back(
          static_cast<int>(std::find(block.begin(), block.end(), share->from) - block.begin()));
      const auto& v = share->coded->gradient->values();
      values.emplace_back(
          Eigen::Map<const Eigen::VectorXf>(v.data(), static_cast<Eigen::Index>(v.size())));
    }
    const coding::CommunicationEfficientCode& code = share_code(block.size());
    const coding::SubBlockDecoding decoding = code.decode(positions);
    if (!decoding.decodable) {  // any needed(b) shares decode the block: only round-off fails
      result.decodable = false;
      result.residual = 1.0;
      continue;
    }
    for (const auto& sub : decoding.sub_blocks) {
      result.residual = std::max(result.residual, sub.residual);
    }
    sum += code.combine(decoding, values, static_cast<int>(length));
    result.members += static_cast<int>(used.size());
    result.partitions += static_cast<double>(block.size());
  }
  const double divisor = spec_.rescale ? result.partitions : static_cast<double>(columns_.size());
  const auto scale = static_cast<float>(1.0 / divisor);
  for (Eigen::Index v = 0; v < length; ++v) gradient[static_cast<std::size_t>(v)] = scale * sum(v);
  return result;
}

void CodedNeighbourhood::plan_roles() {
  if (!spec_.dynamic_roles || blocks_.size() < 3) return;  // one block: nothing to spread
  // 0/1 predictions (docs/coding.md §6.4, §7.5): small differences between estimates
  // must not reshuffle roles, since every change leaves blocks uncovered until all members
  // have heard of it.
  std::vector<double> predicted(neighbours_.size());
  for (std::size_t i = 0; i < neighbours_.size(); ++i) {
    predicted[i] = estimators_[i].predict() > 0.5 ? 1.0 : 0.0;
  }
  auto worst_block = [&](const std::vector<coding::Block>& roles) {
    std::vector<double> load(blocks_.size(), 0.0);
    for (std::size_t i = 0; i < neighbours_.size(); ++i) {
      load[static_cast<std::size_t>(block_index(roles[i]))] += predicted[i];
    }
    return *std::max_element(load.begin(), load.end());
  };
  std::vector<std::vector<int>> positions;
  for (const auto& position : coding::role_positions(blocks_)) {
    std::vector<int> workers;
    for (PeerId q : position) workers.push_back(neighbour_index(q));
    positions.push_back(std::move(workers));
  }
  const std::vector<int> cluster =
      coding::assign_clusters(positions, static_cast<int>(blocks_.size()) - 1, predicted);
  std::vector<coding::Block> proposed(neighbours_.size());
  for (std::size_t i = 0; i < neighbours_.size(); ++i) {
    proposed[i] = blocks_[static_cast<std::size_t>(cluster[i]) + 1];
  }
  if (worst_block(proposed) < worst_block(role_for_)) role_for_ = std::move(proposed);
}

}  // namespace fastk::consensus
