// Steps more than one mixing variant takes, written once: waiting for the backup policy's
// number of fresh neighbours, the weighted mix over the used subset, and the local step of
// adapt-then-combine.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "consensus/iteration_core.h"
#include "consensus/mix_step.h"
#include "consensus/mixing_variant.h"

namespace fastk::consensus {

// How many of this peer's models a runtime keeps queued for a slow neighbour when every
// model need not arrive (PeerProtocol::models_kept_queued): a policy that mixes each
// neighbour's iteration-k model itself (full) needs tag k delivered, not replaced by k + 1:
// with staleness 0 it is at most one iteration ahead of a live neighbour, so 2 suffice. With
// staleness s the oldest-fresh model a receiver mixes depends on timing anyway; it keeps
// s + 2, at most 8, so that a neighbour that is gone does not pile up models. Others need
// only the newest (one mailbox slot).
std::size_t exact_queue(const IterationCore& core);

// The backup policy's rule (docs/protocol.md §3): update once decision().awaited fresh
// neighbours are in (relaxed to m_min from relax_at on, never more than can still deliver),
// and with keep_connected every spanning-tree neighbour; else arm the timers that end the
// wait. Parted neighbours are neither mixed nor counted.
std::optional<UpdatePlan> await_backups(IterationCore& core, double now_s, Actions& out);

// The policy's observations once the gradient is done: its statistics, and when to relax.
void observe_gradient(IterationCore& core, const GradientStats& stats, double now_s);

// The used neighbours' models (core.mixed) as terms with the subset row's weights, recorded
// in `record` (used, used_tags, used_weights, self_weight); returns the terms.
std::vector<MixTerm> weighted_terms(const IterationCore& core, const std::vector<int>& used,
                                    IterationRecord& record);

// The adaptive policy's disagreement nu2 between `own` and the used neighbours' `models`,
// every disagreement_every iterations.
bool disagreement_due(const IterationCore& core, const std::vector<int>& used);

// Adapt-then-combine's half step y = x - lr * scale * g (g the direction: with momentum or
// weight decay, computed in `scratch`), into a new buffer.
Params adapt(IterationCore& core, std::span<const float> gradient, std::vector<float>& scratch,
             float scale = 1.0f);

}  // namespace fastk::consensus
