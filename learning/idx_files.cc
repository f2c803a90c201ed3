// IDX files (the MNIST format): a big-endian header (magic 0x000008DD: unsigned bytes, D
// dimensions; then D sizes) followed by the data.
#include <fstream>

#include "learning/data_sources.h"

namespace fastk::learning {
namespace {

constexpr std::uint32_t kImagesMagic = 0x00000803;
constexpr std::uint32_t kLabelsMagic = 0x00000801;
constexpr int kMaxLabel = 9;
// A side longer than this is no image data set's: the int shape would overflow first.
constexpr std::uint32_t kMaxSide = 1u << 15;

std::uint32_t big_endian(std::span<const std::uint8_t> bytes, std::size_t at) {
  return std::uint32_t(bytes[at]) << 24 | std::uint32_t(bytes[at + 1]) << 16 |
         std::uint32_t(bytes[at + 2]) << 8 | std::uint32_t(bytes[at + 3]);
}

std::string hex(std::uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", value);
  return text;
}

// Checks the magic and the data length; returns the sizes of the header's dimensions.
std::vector<std::uint32_t> read_header(const std::string& path, std::span<const std::uint8_t> bytes,
                                       std::uint32_t magic, const char* kind) {
  const std::size_t dims = magic & 0xff;
  const std::size_t header = 4 + 4 * dims;
  if (bytes.size() < header) {
    throw DataError(path + ": file too short for an IDX " + kind + " header (" +
                    std::to_string(bytes.size()) + " bytes, need " + std::to_string(header) + ")");
  }
  const std::uint32_t got = big_endian(bytes, 0);
  if (got != magic) {
    throw DataError(path + ": bad magic number " + hex(got) + " (an IDX " + kind +
                    " file starts with " + hex(magic) + ")");
  }
  std::vector<std::uint32_t> sizes;
  std::uint64_t expected = 1;
  for (std::size_t d = 0; d < dims; ++d) {
    sizes.push_back(big_endian(bytes, 4 + 4 * d));
    // Sizes whose product passes 2^64 would wrap around to a small number that a short file
    // could match.
    if (__builtin_mul_overflow(expected, std::uint64_t{sizes.back()}, &expected)) {
      throw DataError(path + ": the IDX " + kind + " header's sizes multiply past 2^64 (" +
                      std::to_string(sizes[0]) + " x ...): not a real data set file");
    }
  }
  const std::uint64_t have = bytes.size() - header;
  if (have != expected) {
    throw DataError(path + ": header announces " + std::to_string(sizes[0]) + " " + kind + " (" +
                    std::to_string(expected) + " data bytes) but the file has " +
                    std::to_string(have) + " data bytes" +
                    (have < expected ? " (truncated file?)" : ""));
  }
  return sizes;
}

void write_bytes(const std::string& path, const std::vector<std::uint8_t>& header,
                 const std::vector<std::uint8_t>& data) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(header.data()), std::streamsize(header.size()));
  out.write(reinterpret_cast<const char*>(data.data()), std::streamsize(data.size()));
  if (!out) throw DataError(path + ": cannot write file");
}

void put_big_endian(std::vector<std::uint8_t>& out, std::uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(std::uint8_t(value >> shift));
}

}  // namespace

IdxPair parse_idx(ByteBuffer images, std::span<const std::uint8_t> labels,
                  const std::string& images_name, const std::string& labels_name) {
  IdxPair pair;
  pair.bytes = std::move(images);
  const auto image_sizes = read_header(images_name, pair.bytes.bytes(), kImagesMagic, "images");
  const auto label_sizes = read_header(labels_name, labels, kLabelsMagic, "labels");
  if (image_sizes[0] != label_sizes[0]) {
    throw DataError(images_name + " has " + std::to_string(image_sizes[0]) + " images but " +
                    labels_name + " has " + std::to_string(label_sizes[0]) + " labels");
  }
  if (image_sizes[0] == 0) throw DataError(images_name + ": no images");
  if (image_sizes[1] == 0 || image_sizes[2] == 0 || image_sizes[1] > kMaxSide ||
      image_sizes[2] > kMaxSide) {
    throw DataError(images_name + ": images of " + std::to_string(image_sizes[1]) + "x" +
                    std::to_string(image_sizes[2]) + " pixels (at least 1 and at most " +
                    std::to_string(kMaxSide) + " a side)");
  }
  pair.shape = {1, int(image_sizes[1]), int(image_sizes[2])};
  pair.classes = kMaxLabel + 1;
  pair.pixels = pair.bytes.bytes().subspan(16);
  pair.labels.reserve(label_sizes[0]);
  for (std::size_t i = 0; i < label_sizes[0]; ++i) {
    const std::uint8_t label = labels[8 + i];
    if (label > kMaxLabel) {
      throw DataError(labels_name + ": label " + std::to_string(label) + " of sample " +
                      std::to_string(i) + " is not a class in 0.." + std::to_string(kMaxLabel));
    }
    pair.labels.push_back(label);
  }
  return pair;
}

IdxPair read_idx_bytes(const std::string& images_path, const std::string& labels_path) {
  return parse_idx(read_file_bytes(images_path), read_file_bytes(labels_path).bytes(), images_path,
                   labels_path);
}

Dataset read_idx(const std::string& images_path, const std::string& labels_path,
                 const std::string& name) {
  IdxPair pair = read_idx_bytes(images_path, labels_path);
  Dataset data;
  data.name = name;
  data.classes = pair.classes;
  data.shape = pair.shape;
  data.dim = data.shape.dim();
  data.features.assign(pair.pixels.begin(), pair.pixels.end());
  data.labels = std::move(pair.labels);
  return data;
}

void write_idx(const std::string& images_path, const std::string& labels_path, int rows, int cols,
               const std::vector<std::uint8_t>& pixels, const std::vector<std::uint8_t>& labels) {
  if (pixels.size() != labels.size() * std::size_t(rows) * std::size_t(cols)) {
    throw DataError(images_path + ": " + std::to_string(pixels.size()) + " pixels do not make " +
                    std::to_string(labels.size()) + " images of " + std::to_string(rows) + "x" +
                    std::to_string(cols));
  }
  std::vector<std::uint8_t> header;
  put_big_endian(header, kImagesMagic);
  put_big_endian(header, std::uint32_t(labels.size()));
  put_big_endian(header, std::uint32_t(rows));
  put_big_endian(header, std::uint32_t(cols));
  write_bytes(images_path, header, pixels);
  header.clear();
  put_big_endian(header, kLabelsMagic);
  put_big_endian(header, std::uint32_t(labels.size()));
  write_bytes(labels_path, header, labels);
}

}  // namespace fastk::learning
