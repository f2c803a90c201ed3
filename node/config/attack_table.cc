// [attack]: peers that misbehave, to test the robust rules against (consensus/attack.h,
// docs/security.md "Attacks").
#include <set>

#include "node/config/tables.h"

namespace fastk::node {

void read_attack_table(TableReader& t, ConsensusConfig& config,
                       const topology::TopologySpec& topology) {
  if (!t.present()) return;
  consensus::AttackSpec attack;
  const auto ids = read_numbers<int>(t, "peers");
  std::set<int> seen;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const std::string where = t.path_of("peers") + "[" + std::to_string(i) + "]";
    if (ids[i] < 0 || (topology.peers > 0 && ids[i] >= topology.peers)) {
      t.errors().add(where, "peer " + std::to_string(ids[i]) + " is not a peer of the run (0 to " +
                                std::to_string(topology.peers - 1) + ")");
    } else if (!seen.insert(ids[i]).second) {
      t.errors().add(where, "peer " + std::to_string(ids[i]) + " is listed twice");
    }
    attack.peers.push_back(std::max(ids[i], 0));
  }
  if (ids.empty()) t.errors().add(t.path_of("peers"), "names no attacker: list at least one peer");
  if (topology.peers > 0 && static_cast<int>(seen.size()) >= topology.peers) {
    t.errors().add(t.path_of("peers"), "leaves no honest peer to evaluate");
  }
  std::string kind = "large";
  t.read("kind", kind);
  try {
    attack.kind = consensus::parse_attack_kind(kind);
  } catch (const std::invalid_argument& e) {
    t.errors().add(t.path_of("kind"), e.what());
  }
  t.read("scale", attack.scale, 0.0);
  // The forged values must stay finite floats: a non-finite model is refused by every
  // receiver before any rule sees it, which tests nothing but a stalled run.
  constexpr double kLargestScale = 1e30;
  if (attack.scale > kLargestScale) {
    t.errors().add(t.path_of("scale"),
                   "at most 1e30: a forged model must stay finite in float "
                   "(whose largest value is 3.4e38), or receivers drop it "
                   "unread and no rule is tested");
  }
  t.finish();
  config.protocol.attack = std::move(attack);
}

nlohmann::ordered_json attack_table_json(const ConsensusConfig& config) {
  const auto& attack = config.protocol.attack;
  if (!attack) return nlohmann::ordered_json::object();
  return {{"peers", attack->peers},
          {"kind", consensus::to_string(attack->kind)},
          {"scale", attack->scale}};
}

}  // namespace fastk::node
