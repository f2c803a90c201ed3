// Attacks to test the robust rules against ([attack], docs/security.md "Attacks"): which
// peers misbehave and how. A forging attacker (every kind but label_flip) runs the protocol's
// timing like an honest peer (it waits for its neighbours as its policy says, so its pace is
// an honest one) but trains by local SGD alone, mixing nothing in, and sends a forged model in
// place of its own; label_flip is an honest peer trained on poisoned data.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "topology/graph.h"

namespace fastk::consensus {

using topology::PeerId;

enum class AttackKind {
  kLarge,     // every value = scale (1000 unless given): a model far from any honest one,
              // as the forged frame of 1e30s was (a scaled honest model would not do: an MLP
              // scaled up classifies as before)
  kSignFlip,  // -scale * x (scale 1 unless given)
  kAlie,      // "a little is enough": per coordinate, the mean of the neighbours' models
              // an honest peer would have mixed in the last update, minus z times their
              // standard deviation (z = scale, or from the neighbourhood's size unless given)
  kNoise,     // x plus gaussian noise of standard deviation scale (1 unless given)
  kLabelFlip  // honest protocol; every training label y becomes classes - 1 - y
};

// "large", "sign_flip", "alie", "noise", "label_flip"; throws std::invalid_argument naming
// them otherwise.
AttackKind parse_attack_kind(const std::string& name);
std::string to_string(AttackKind kind);

struct AttackSpec {
  std::vector<PeerId> peers;  // the attackers
  AttackKind kind = AttackKind::kLarge;
  double scale = 0;  // 0: the kind's default (above)

  bool attacker(PeerId peer) const {
    return std::find(peers.begin(), peers.end(), peer) != peers.end();
  }
  // Whether the attackers send forged models (all kinds but label_flip).
  bool forges() const { return kind != AttackKind::kLabelFlip; }
};

// ALIE's z for an attacker with `neighbours` neighbours, one of them (itself) faulty in a
// closed neighbourhood of n = neighbours + 1 (Baruah, Baruch and Goldberg, "A little is
// enough", 2019): s = floor(n / 2 + 1) - 1 models must look honest, z = Phi^-1((n - s) / n).
double alie_z(int neighbours);

}  // namespace fastk::consensus
