// Coded messages on the float vectors the models and the wire use: a member encodes its
// partial gradients into one message, the aggregator combines arrived messages with the
// decoder's (double) coefficients, on Eigen vectors: the codes' end-to-end tests use them.
// The protocol's coded neighbourhoods (consensus/coded_neighbourhood.cc) combine in place on
// the runtime's buffers instead, with coefficients from the same decode_least_squares.
#pragma once

#include <vector>

#include "coding/decoding.h"
#include "coding/gradient_code.h"
#include "third_party/eigen.h"

namespace fastk::coding {

// f_i = sum_j B_ij g_j over member i's support. partials[j] is partition j's gradient; only
// the member's own partitions are read (others may be empty). Throws std::invalid_argument
// when partials has not one entry per partition or the held gradients differ in length.
Eigen::VectorXf encode_message(const GradientCode& code, int member,
                               const std::vector<Eigen::VectorXf>& partials);

// sum_r a_r m_r over the arrived messages, in arrival order (the decoding's coefficients).
// Throws std::invalid_argument when the counts or the lengths differ.
Eigen::VectorXf combine_messages(const Decoding& decoding,
                                 const std::vector<Eigen::VectorXf>& messages);

}  // namespace fastk::coding
