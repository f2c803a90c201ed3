// [data] augment as a Model decorator: training batches reach the wrapped model augmented
// (augmentation.h), evaluation and prediction unchanged. Any model, hand-written or loaded,
// gets the same augmentation, and the runtimes need not know about it: they make their
// model through with_augmentation and compute gradients as before.
#pragma once

#include <memory>

#include "learning/model.h"

namespace fastk::learning {

// `model` itself when spec.augment is none; otherwise a Model whose loss_and_gradient copies
// the batch's rows, augmented, into its own scratch set (kept between calls, so steady-state
// calls do not allocate) and calls `model` on that. Its draws depend on spec.seed, each
// sample's source_row and the batch's source rows (augmentation.h), so clones, threads and
// runtimes agree. Throws std::invalid_argument when `shape` is not an image (height or
// width 1).
std::unique_ptr<Model> with_augmentation(std::unique_ptr<Model> model, const DataSpec& spec,
                                         const SampleShape& shape);

}  // namespace fastk::learning
