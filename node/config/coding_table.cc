// [coding]: gradient coding inside every neighbourhood (coding/neighbourhood_code.h).
#include <string>

#include "coding/neighbourhood_code.h"
#include "coding/subsets.h"
#include "consensus/backup_policy.h"
#include "node/config/tables.h"

namespace fastk::node {

namespace {

// What the share schemes leave no room for (consensus/coded_neighbourhood.cc and
// coding/share_code.cc refuse the same).
void check_shares(TableReader& t, const ConsensusConfig& config) {
  const coding::NeighbourhoodCodeSpec& spec = config.protocol.coding;
  const std::string scheme = "coding.scheme = \"" + coding::to_string(spec.scheme) + "\"";
  if (config.protocol.staleness > 0) {
    t.errors().add("coding.scheme",
                   scheme +
                       " decodes a block from shares of one iteration; "
                       "consensus.staleness lets older ones count: set it to 0 or use \"frc\"");
  }
  if (spec.dynamic_roles) {
    t.errors().add("coding.dynamic_roles", "dynamic roles need coding.scheme = \"frc\": a " +
                                               coding::to_string(spec.scheme) +
                                               " share is tied to its sender's place in the block");
  }
  const int size = coding::block_size(spec);
  if (spec.scheme == coding::Scheme::kMds &&
      coding::binomial(size, coding::members_needed(spec, size)) > coding::kMaxMdsSubsets) {
    t.errors().add("coding.sub_blocks",
                   "a block of stragglers + sub_blocks = " + std::to_string(size) +
                       " members has more ways to pick " + std::to_string(spec.sub_blocks) +
                       " of them than a code can be chosen from (at most " +
                       std::to_string(coding::kMaxMdsSubsets) + "): lower one of the two");
  }
}

}  // namespace

void read_coding_table(TableReader& t, ConsensusConfig& config,
                       const topology::TopologySpec& topology) {
  coding::NeighbourhoodCodeSpec& spec = config.protocol.coding;
  t.read_choice<coding::Scheme>("scheme", spec.scheme, coding::parse_scheme);
  t.read("stragglers", spec.stragglers, 0, 1'000);
  t.read("sub_blocks", spec.sub_blocks, 1, 16);
  t.read("deadline_s", spec.deadline_s, 0.0);
  t.read("rescale", spec.rescale);
  t.read("split_batch", spec.split_batch);
  t.read("dynamic_roles", spec.dynamic_roles);
  t.finish();
  if (!coding::cuts_messages(spec.scheme) && t.has("sub_blocks")) {
    t.errors().add("coding.sub_blocks",
                   "only coding.scheme = \"mds\" or \"cyclic_mds\" cuts messages into sub-blocks");
  }
  if (spec.scheme == coding::Scheme::kNone) {
    if (spec.dynamic_roles || spec.deadline_s > 0) {
      t.errors().add("coding.scheme",
                     "coding.dynamic_roles and coding.deadline_s only apply to a coded run: set "
                     "coding.scheme = \"frc\" or remove them");
    }
    return;
  }
  if (coding::sends_shares(spec.scheme)) check_shares(t, config);
  if (config.protocol.push_sum) {
    t.errors().add("coding.scheme",
                   "push-sum and coding exclude each other: remove consensus.push_sum or the "
                   "code");
  }
  if (config.protocol.keep_connected) {
    t.errors().add("coding.scheme",
                   "a coded neighbourhood waits until its gradient decodes, not for the "
                   "spanning tree of consensus.keep_connected: remove one of the two");
  }
  if (topology.kind == topology::TopologyKind::kOnePeerExponential) {
    t.errors().add("coding.scheme",
                   "coding needs fixed neighbourhoods; topology.kind = \"one_peer_exponential\" "
                   "changes them every round: use a static topology or coding.scheme = \"none\"");
  }
  // The coded wait rule (until the neighbourhood decodes) takes the policy's place; a policy
  // that would be silently ignored is an error.
  if (!consensus::make_policy(config.protocol.policy)->allows_coding()) {
    t.errors().add("coding.scheme",
                   "a coded neighbourhood waits until its gradient decodes, which replaces the "
                   "backup policy: set consensus.policy = \"full\" (the default) or "
                   "coding.scheme = \"none\"");
  }
  if (config.protocol.order != consensus::UpdateOrder::kCombineThenAdapt) {
    t.errors().add("coding.scheme",
                   "coding needs consensus.order = \"combine_then_adapt\": the step uses the "
                   "decoded neighbourhood gradient, known only after the models were sent");
  }
}

nlohmann::ordered_json coding_table_json(const ConsensusConfig& config) {
  const coding::NeighbourhoodCodeSpec& c = config.protocol.coding;
  return {{"scheme", coding::to_string(c.scheme)},
          {"stragglers", c.stragglers},
          {"sub_blocks", c.sub_blocks},
          {"deadline_s", c.deadline_s},
          {"rescale", c.rescale},
          {"split_batch", c.split_batch},
          {"dynamic_roles", c.dynamic_roles}};
}

}  // namespace fastk::node
