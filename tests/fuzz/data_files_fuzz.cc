// Fuzz target for the data-set readers: gzip, IDX (MNIST, Fashion-MNIST) and CIFAR-10 bytes
// are either read, meeting the readers' promises, or refused with a DataError; never a crash
// or another exception. The first byte picks the reader:
//   0: gunzip_bytes(rest)
//   1: parse_idx(images, labels): bytes 1-2 (little-endian) say how much of the rest is the
//      image file; the remainder is the label file
//   2: append_cifar10(rest)
#include <cstdio>
#include <cstdlib>
#include <span>
#include <vector>

#include "learning/data_sources.h"

namespace {

using fastk::learning::DataError;

[[noreturn]] void broken(const char* promise) {
  std::fprintf(stderr, "broken promise: %s\n", promise);
  std::abort();
}

void read_idx(std::span<const std::uint8_t> input) {
  if (input.size() < 2) return;
  const std::size_t split = std::min<std::size_t>(input[0] | input[1] << 8, input.size() - 2);
  const auto rest = input.subspan(2);
  std::vector<std::uint8_t> images(rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(split));
  const std::vector<std::uint8_t> labels(rest.begin() + static_cast<std::ptrdiff_t>(split),
                                         rest.end());
  const auto pair = fastk::learning::parse_idx(std::move(images), labels, "images", "labels");
  const auto pixels_per_image = static_cast<std::size_t>(pair.shape.dim());
  if (pair.labels.empty() || pair.pixels.size() != pair.labels.size() * pixels_per_image) {
    broken("an IDX pair has labels.size() images of rows x cols pixels");
  }
  for (const auto label : pair.labels)
    if (label < 0 || label >= pair.classes) broken("IDX labels are classes");
}

void read_cifar(std::span<const std::uint8_t> input) {
  fastk::learning::Dataset data;
  fastk::learning::append_cifar10(data, input, "batch");
  if (data.labels.empty() || data.features.size() != data.labels.size() * 3072) {
    broken("CIFAR-10 records are 3072 pixels and a label each");
  }
  for (const auto label : data.labels)
    if (label < 0 || label > 9) broken("CIFAR-10 labels are classes");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::span<const std::uint8_t> rest(data + 1, size - 1);
  try {
    switch (data[0] % 3) {
      case 0:
        fastk::learning::gunzip_bytes(rest, "data.gz");
        break;
      case 1:
        read_idx(rest);
        break;
      default:
        read_cifar(rest);
        break;
    }
  } catch (const DataError&) {
    // The expected outcome of bad input.
  } catch (const std::exception& e) {
    std::fprintf(stderr, "a reader threw something other than DataError: %s\n", e.what());
    std::abort();
  }
  return 0;
}
