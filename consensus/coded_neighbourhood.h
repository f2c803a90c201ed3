// One peer's side of gradient coding in its closed neighbourhood (coding/neighbourhood_code.h;
// docs/coding.md §7): fractional repetition (frc), or a share scheme: the communication-efficient
// grouped MDS code (mds), the cyclic repetition code (crc) or the cyclic MDS code (cyclic_mds).
// As an encoder it knows which block of each neighbour's neighbourhood it is in and turns its
// per-partition gradients into one message per neighbour (the block's sum under frc; under a
// share scheme its block code's share, coding/share_code.h); as a decoder it combines its own
// gradient with the coded gradients that arrived, through coding's least-squares decoder, never
// trusting a sum that does not decode. With dynamic roles it also predicts which neighbours will
// straggle (a two-state Markov estimate per neighbour, docs/coding.md §6.2) and re-assigns its
// neighbours to blocks so that predicted stragglers are spread (GC-DC greedy, docs/coding.md §6.4
// and §7.5).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "coding/communication_efficient_code.h"
#include "coding/markov_estimator.h"
#include "coding/neighbourhood_code.h"
#include "consensus/actions.h"
#include "topology/schedule.h"

namespace fastk::consensus {

class CodedNeighbourhood {
 public:
  // `neighbours`: the peer's neighbours, sorted. Throws std::invalid_argument for a
  // time-varying schedule (codes need fixed neighbourhoods) or a bad spec.
  CodedNeighbourhood(PeerId self, const coding::NeighbourhoodCodeSpec& spec,
                     const topology::TopologySchedule& schedule, std::vector<PeerId> neighbours);

  const coding::NeighbourhoodCodeSpec& spec() const { return spec_; }
  // Blocks of the own neighbourhood; block 0 is {self}.
  const std::vector<coding::Block>& blocks() const { return blocks_; }
  // Index (>= 1) of the block equal to `covers`, or -1.
  int block_index(std::span<const PeerId> covers) const;
  // Index (>= 1) of the block containing neighbour `member`, or -1.
  int member_block(PeerId member) const;
  // The block a coded part from `from` covering `covers` counts for, or -1 when it fits none:
  // under frc the block equal to `covers` (any member may cover any block with dynamic
  // roles); under a share scheme the sender's block, if `covers` is what the sender holds
  // there (coding::member_partitions).
  int share_block(PeerId from, std::span<const PeerId> covers) const;
  // Coded parts of block b (>= 1) that cover it (coding::members_needed).
  int needed(int block) const;
  // Floats in a coded part for block b (>= 1) and a model of `parameters`: all of them under
  // frc, crc and cyclic_mds with sub_blocks 1, ceil(parameters / m) when the block code cuts
  // its messages into m sub-blocks.
  std::size_t message_size(int block, std::size_t parameters) const;

  // Partitions to compute this iteration: the own one first, then those covered for
  // neighbours. Fixes the covers encode() uses: a role arriving meanwhile waits for the next.
  std::vector<PeerId> begin_iteration();
  // The model to every neighbour in `to`, then to each the sum of the partitions it is
  // covered for.
  void encode(std::int64_t tag, const Params& params, std::span<const PeerId> to,
              std::span<const PeerId> partitions, std::span<const float> gradients,
              double compute_s, Actions& out) const;

  // Whether a received coded part fits: from a neighbour, the model's size, covering a
  // block of the own neighbourhood, and any role a block of the sender's (only with
  // dynamic roles). False: malformed, drop it.
  bool valid(PeerId from, const CodedGradient& coded, std::size_t parameters) const;
  // Learns from a valid coded part newer than any before from `from`: its role, and its
  // compute time for the straggler estimates.
  void learn(PeerId from, const CodedGradient& coded);
  void observe_own_compute(double compute_s);

  // A usable coded part from a neighbour, and the iteration it was computed for.
  struct Share {
    PeerId from = 0;
    std::int64_t tag = 0;
    const CodedGradient* coded = nullptr;
  };
  // Which blocks `shares` cover (block 0, the own gradient, always): any needed(b) shares of
  // the block (one under frc).
  std::vector<bool> covered(std::span<const Share> shares) const;

  struct Decoded {
    bool decodable = false;
    int members = 0;        // rows combined, own included
    double residual = 0;    // max_j |alpha_j - 1|
    double partitions = 0;  // sum_j alpha_j: partitions the decoded sum covers
  };
  // gradient = mean partition gradient of the neighbourhood from the own gradient and the
  // shares (one per neighbour); uncovered blocks are dropped. A share scheme's block is decoded
  // from the shares of the newest iteration that has enough of them, if any does: its
  // decoder's coefficients cancel, so gradients of different iterations amplify their
  // difference.
  Decoded decode(std::span<const float> own, std::span<const Share> shares,
                 std::span<float> gradient) const;

  // Dynamic roles: re-assign neighbours to blocks for the next iteration when the predicted
  // stragglers bunch in a block. Predictions come from the compute times neighbours report,
  // not from lateness: a neighbour late because it waits for its own neighbourhood is not
  // a straggler (treating it as one made roles churn and lost time in simulation).
  void plan_roles();
  // The usual compute time (median of recent ones, own and reported), 0 if unknown.
  double typical_compute_s() const;

 private:
  int neighbour_index(PeerId peer) const;
  // The code of a share scheme's block of `members` (one per size, built up front).
  const coding::CommunicationEfficientCode& share_code(std::size_t members) const;
  // What self sends neighbour i: the plain sum of what it covers (frc) or its share.
  std::vector<float> block_message(std::size_t i, std::span<const PeerId> partitions,
                                   std::span<const float> gradients) const;
  // Share schemes: the shares of block b that decode it (see decode), or none when too few
  // arrived.
  std::vector<const Share*> decoding_shares(std::size_t block, std::span<const Share> shares) const;
  Decoded decode_frc(std::span<const float> own, std::span<const Share> shares,
                     std::span<float> gradient) const;
  Decoded decode_shares(std::span<const float> own, std::span<const Share> shares,
                        std::span<float> gradient) const;

  PeerId self_;
  coding::NeighbourhoodCodeSpec spec_;
  std::vector<PeerId> neighbours_;
  std::vector<coding::Block> blocks_;
  std::vector<PeerId> columns_;                           // partitions of N[self], sorted
  std::vector<std::vector<coding::Block>> their_blocks_;  // blocks of N[neighbour]
  std::vector<coding::Block> cover_for_;                  // what self covers for each neighbour
  std::vector<coding::Block> covering_;                   // cover_for_ of this iteration
  std::vector<coding::Block> role_for_;                   // what each neighbour should send
  std::vector<coding::MarkovStragglerEstimator> estimators_;
  std::deque<double> recent_compute_s_;
  // Share schemes: the block codes, by block size.
  std::map<std::size_t, std::shared_ptr<const coding::CommunicationEfficientCode>> share_codes_;
};

}  // namespace fastk::consensus
