// Training-time augmentation of images ([data] augment = "crop_flip"): what one sample
// becomes, and the draw that decides it. A draw is a pure function of (seed, the batch, the
// sample), not of a generator's state, so whichever thread, model instance or runtime
// computes a batch's gradient augments it the same way: the simulator and real peers stay
// bit-equal, and a coded partition's gradient is the same on every peer that stores it.
#pragma once

#include <cstdint>
#include <span>

#include "learning/dataset.h"

namespace fastk::learning {

// Pixels of zeros added on each side before the crop (He et al.'s CIFAR-10 setting). The
// padding is zero in the features as the model sees them, after normalisation: black under
// "scale", the channel's mean under "per_channel" (He et al. pad after subtracting the mean).
constexpr int kCropPadding = 4;

// Where the crop window lies in the padded image (0 .. 2 * kCropPadding each), and whether
// the crop is then mirrored left to right.
struct CropFlip {
  int dy = kCropPadding;
  int dx = kCropPadding;
  bool flip = false;
};

// A hash of a batch's sample ids in their order. Two batches of the same samples in another
// order differ; the same batch drawn again (the same epoch position) gets the same draws.
std::uint64_t batch_key(std::span<const std::int64_t> sample_ids);

// The crop and flip of sample `sample_id` (its index in the training set) in the batch
// `batch_key`, under `seed`: offsets uniform in 0..8, flip with probability 1/2.
CropFlip draw_crop_flip(std::uint64_t seed, std::uint64_t batch_key, std::int64_t sample_id);

// `in` (one CHW sample of `shape`) padded, cropped and flipped into `out` (the same size):
// out[c][y][x] = in[c][y + dy - pad][x' + dx - pad], x' = flip ? width - 1 - x : x, and 0
// where that falls outside the image. Any height and width work; the caller refuses
// non-images (height or width 1).
void crop_flip(std::span<const float> in, const SampleShape& shape, const CropFlip& draw,
               std::span<float> out);

}  // namespace fastk::learning
