#include "consensus/comeback.h"

#include "consensus/peer_protocol.h"

namespace fastk::consensus {

std::optional<std::string> why_no_comeback(const ProtocolConfig& config, Comeback how) {
  if (config.push_sum) {
    return "a push-sum peer cannot come back (consensus.push_sum): the weight it held and the "
           "mass sent to it while it was down are lost, and the models would no longer average "
           "to the mean (docs/protocol.md §4.4)";
  }
  if (config.compression) {
    return "a peer of compressed gossip ([compression]) cannot come back: its neighbours' "
           "public estimates of it, and its of them, are built from every difference since the "
           "start";
  }
  if (config.coding.scheme != coding::Scheme::kNone) {
    return "a peer of a coded run ([coding]) cannot come back: its neighbours decode without "
           "it";
  }
  if (how == Comeback::kJoining && config.policy.kind == PolicyKind::kAdPsgd) {
    return "an ad_psgd peer without a checkpoint cannot come back: nobody sends it models to "
           "start from (set run.checkpoint_every or run.checkpoint_every_s, and let the peer "
           "write one before it fails)";
  }
  return std::nullopt;
}

}  // namespace fastk::consensus
