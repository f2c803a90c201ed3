// CIFAR-10 binary batches: fixed-size records <1 x label><3072 x pixel>, the pixels being
// the red, green and blue 32x32 planes in turn (already CHW).
#include "learning/data_sources.h"

namespace fastk::learning {
namespace {

constexpr int kSide = 32;
constexpr int kChannels = 3;
constexpr std::size_t kPixels = kChannels * kSide * kSide;
constexpr std::size_t kRecord = 1 + kPixels;
constexpr int kClasses = 10;

}  // namespace

void append_cifar10(Dataset& data, std::span<const std::uint8_t> bytes, const std::string& name) {
  if (bytes.empty()) throw DataError(name + ": empty file (no CIFAR-10 records)");
  if (bytes.size() % kRecord != 0) {
    throw DataError(name + ": " + std::to_string(bytes.size()) +
                    " bytes is not a whole number of CIFAR-10 records of " +
                    std::to_string(kRecord) +
                    " bytes (truncated file? scripts/get-cifar10.sh downloads and checks the "
                    "official files)");
  }
  const std::size_t records = bytes.size() / kRecord;
  data.features.reserve(data.features.size() + records * kPixels);
  for (std::size_t r = 0; r < records; ++r) {
    const std::uint8_t* record = bytes.data() + r * kRecord;
    if (record[0] >= kClasses) {
      throw DataError(name + ": record " + std::to_string(r) + " has label " +
                      std::to_string(record[0]) + ", not a class in 0..9");
    }
    data.labels.push_back(record[0]);
    data.features.insert(data.features.end(), record + 1, record + kRecord);
  }
}

Dataset read_cifar10(const std::vector<std::string>& paths, const std::string& name) {
  Dataset data;
  data.name = name;
  data.classes = kClasses;
  data.shape = {kChannels, kSide, kSide};
  data.dim = data.shape.dim();
  for (const std::string& path : paths) append_cifar10(data, read_file_bytes(path).bytes(), path);
  return data;
}

}  // namespace fastk::learning
