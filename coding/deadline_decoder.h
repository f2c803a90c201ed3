// ErasureHead-style deadline decoding over a fractional repetition code (docs/coding.md
// §5.5, §7.5): when the aggregator must step before every group is covered, it sums one
// message per covered group and drops the rest, a biased but bounded error instead of waiting.
#pragma once

#include <cstddef>
#include <span>

#include "coding/decoding.h"
#include "coding/fractional_repetition_code.h"

namespace fastk::coding {

// First responder per covered group; uncovered groups are dropped (alpha = 0 there). With
// `rescale`, the coefficients are multiplied by #groups/#covered: with groups of equal size
// sum_j alpha_j = k whenever a group is covered, so under exchangeable stragglers
// E[alpha_j] = P(some group covered), i.e. unbiased up to the chance that nothing arrived.
// Reports decodable when every group is covered (then it is the exact FRC decoding).
Decoding decode_at_deadline(const FractionalRepetitionCode& code, std::span<const int> arrived,
                            bool rescale);

// The ErasureHead stopping rule without the clock: stop once every group is covered or
// `collect` members have answered (the runtime adds the deadline itself).
bool erasure_head_can_stop(const FractionalRepetitionCode& code, std::span<const int> arrived,
                           std::size_t collect);

}  // namespace fastk::coding
