// Whether a peer of a run can come back after it failed (docs/protocol.md §6.4): the one rule
// that the protocol (resume_at, join), the config (checkpoints), `fastk node --resume`,
// `fastk run --restart-failed` and the peer runtime all ask, so they cannot disagree.
#pragma once

#include <optional>
#include <string>

namespace fastk::consensus {

struct ProtocolConfig;

enum class Comeback {
  kFromCheckpoint,  // x(k), the sampler and the optimizer state saved at iteration k
  kJoining,         // no checkpoint: from the plain average of the neighbours' models
};

// Why a peer of a run with `config` cannot come back `how`, in words that name the option at
// fault; nullopt when it can.
std::optional<std::string> why_no_comeback(const ProtocolConfig& config, Comeback how);

}  // namespace fastk::consensus
