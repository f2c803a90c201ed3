// Loading the train and test sets a DataSpec describes: file readers for IDX (MNIST,
// Fashion-MNIST; raw or gzip) and CIFAR-10 binary batches, synthetic generators, and
// normalisation. Every file problem throws DataError naming the file and the problem.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "learning/byte_buffer.h"
#include "learning/dataset.h"
#include "learning/specs.h"

namespace fastk::learning {

class DataError : public std::runtime_error {
 public:
  explicit DataError(const std::string& message) : std::runtime_error(message) {}
};

// The files the data set of `spec` is read from, in reading order ("<name>.gz" where
// present, else "<name>"): IDX train images, train labels, test images, test labels; CIFAR-10's
// five training batches and its test batch; none for generated data. Throws DataError naming
// the folder or file that is missing.
std::vector<std::string> data_files(const DataSpec& spec);

// Loads (and normalises) the data set of `spec`.
TrainTest load_data(const DataSpec& spec);

// An IDX image/label pair as validated bytes: the pixels stay unsigned bytes.
struct IdxPair {
  ByteBuffer bytes;                      // the whole image file (mapped where it can be)
  std::span<const std::uint8_t> pixels;  // n x rows x cols, inside `bytes`
  SampleShape shape;
  int classes = 0;
  std::vector<std::int32_t> labels;
};
IdxPair read_idx_bytes(const std::string& images_path, const std::string& labels_path);
// The same checks on contents already read (`*_name` names them in errors): what
// read_idx_bytes does after reading, and what the data-file fuzz target drives.
IdxPair parse_idx(ByteBuffer images, std::span<const std::uint8_t> labels,
                  const std::string& images_name, const std::string& labels_name);

// IDX image file (magic 0x00000803, n x rows x cols unsigned bytes) and label file (magic
// 0x00000801, n unsigned bytes), raw or gzip (detected from the content). Pixels become floats
// in [0, 255]. Labels must be < 10.
Dataset read_idx(const std::string& images_path, const std::string& labels_path,
                 const std::string& name);
// Writes an IDX pair (raw, uncompressed): the converter's output and the tests' fixtures.
void write_idx(const std::string& images_path, const std::string& labels_path, int rows, int cols,
               const std::vector<std::uint8_t>& pixels, const std::vector<std::uint8_t>& labels);

// CIFAR-10 binary batches: records of 1 label byte + 3072 pixel bytes (R, G, B planes of
// 32x32). Pixels become floats in [0, 255]; several files are concatenated.
Dataset read_cifar10(const std::vector<std::string>& paths, const std::string& name);
// One batch file's contents (named `name` in errors) appended to `data`.
void append_cifar10(Dataset& data, std::span<const std::uint8_t> bytes, const std::string& name);

// Whole file contents, gunzipped when the file starts with the gzip magic (then mapped from
// the decompressed-file cache where it holds them).
ByteBuffer read_file_bytes(const std::string& path);
// The contents of gzip data (one member or several concatenated); throws DataError naming
// `name` for corrupt or truncated data, or for bytes after the last member.
std::vector<std::uint8_t> gunzip_bytes(std::span<const std::uint8_t> gz, const std::string& name);

// Synthetic classification: `classes` Gaussian clusters in `dim` dimensions with unit
// variance, means drawn at scale `separation`; and least squares y = <w*, x> + b* + noise.
// Train and test are drawn from the same distribution.
TrainTest make_gaussian_mixture(std::int64_t train_samples, std::int64_t test_samples, int dim,
                                int classes, double separation, std::uint64_t seed);
TrainTest make_least_squares(std::int64_t train_samples, std::int64_t test_samples, int dim,
                             double noise, std::uint64_t seed);

// Pixels / 255, on both sets.
void scale_pixels(TrainTest& data);
// Subtracts the train set's mean feature value and divides by its standard deviation (one
// scalar each, so images keep their structure), on both sets.
void standardize(TrainTest& data);
// The same per channel of the samples' CHW layout: each channel's mean and standard
// deviation over the training set, applied to both sets (data.normalization = per_channel).
void standardize_channels(TrainTest& data);

}  // namespace fastk::learning
