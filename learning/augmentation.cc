#include "learning/augmentation.h"

#include <algorithm>

#include "learning/random.h"

namespace fastk::learning {

std::uint64_t batch_key(std::span<const std::int64_t> sample_ids) {
  std::uint64_t h = mix64(sample_ids.size());
  for (std::int64_t id : sample_ids) h = mix64(h ^ std::uint64_t(id));
  return h;
}

CropFlip draw_crop_flip(std::uint64_t seed, std::uint64_t batch_key, std::int64_t sample_id) {
  // A salt keeps these draws unrelated to the other seeded streams made from data.seed.
  constexpr std::uint64_t kSalt = 0xa5c3'7f1e'2b9d'4c61ULL;
  const std::uint64_t h = mix64(mix64(mix64(seed ^ kSalt) ^ batch_key) ^ std::uint64_t(sample_id));
  constexpr std::uint64_t kOffsets = 2 * kCropPadding + 1;
  return {.dy = int(h % kOffsets), .dx = int((h >> 16) % kOffsets), .flip = ((h >> 32) & 1) != 0};
}

void crop_flip(std::span<const float> in, const SampleShape& shape, const CropFlip& draw,
               std::span<float> out) {
  const int h = shape.height, w = shape.width;
  for (int c = 0; c < shape.channels; ++c) {
    const float* from = in.data() + std::size_t(c) * std::size_t(h * w);
    float* to = out.data() + std::size_t(c) * std::size_t(h * w);
    for (int y = 0; y < h; ++y) {
      const int sy = y + draw.dy - kCropPadding;
      float* row = to + std::size_t(y * w);
      if (sy < 0 || sy >= h) {
        std::fill(row, row + w, 0.0f);
        continue;
      }
      for (int x = 0; x < w; ++x) {
        const int sx = (draw.flip ? w - 1 - x : x) + draw.dx - kCropPadding;
        row[x] = sx < 0 || sx >= w ? 0.0f : from[sy * w + sx];
      }
    }
  }
}

}  // namespace fastk::learning
