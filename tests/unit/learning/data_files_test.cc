// IDX and CIFAR-10 readers on files the tests write in the official formats, and the messages
// for missing, truncated, corrupt and mismatched files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "learning/data_sources.h"

namespace fastk::learning {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

class DataFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("fastk_data_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  void write(const std::string& name, const std::vector<std::uint8_t>& bytes) const {
    std::ofstream out(path(name), std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  }
  std::vector<std::uint8_t> read(const std::string& name) const {
    std::ifstream in(path(name), std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  void gzip(const std::string& name, const std::vector<std::uint8_t>& bytes) const {
    gzFile f = gzopen(path(name).c_str(), "wb");
    gzwrite(f, bytes.data(), unsigned(bytes.size()));
    gzclose(f);
  }
  // Three 2x3 images with labels 7, 0, 9.
  void write_small_idx() const {
    std::vector<std::uint8_t> pixels(18);
    for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = std::uint8_t(i * 10);
    write_idx(path("images"), path("labels"), 2, 3, pixels, {7, 0, 9});
  }
  std::string idx_error() const {
    try {
      read_idx(path("images"), path("labels"), "t");
    } catch (const DataError& e) {
      return e.what();
    }
    return "no error";
  }

  std::filesystem::path dir_;
};

// The files a data set is read from (what fastk doctor checksums on every host): the .gz
// where both exist, in reading order; none for generated data, even with a folder given.
TEST_F(DataFiles, DataFilesListsWhatTheLoaderReads) {
  for (const char* name : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                           "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"}) {
    write(name, {1});
  }
  write("train-images-idx3-ubyte.gz", {1});
  DataSpec spec;
  spec.kind = DatasetKind::kMnist;
  spec.dir = dir_.string();
  EXPECT_EQ(
      data_files(spec),
      (std::vector<std::string>{path("train-images-idx3-ubyte.gz"), path("train-labels-idx1-ubyte"),
                                path("t10k-images-idx3-ubyte"), path("t10k-labels-idx1-ubyte")}));
  std::filesystem::remove(path("t10k-labels-idx1-ubyte"));
  try {
    data_files(spec);
    ADD_FAILURE() << "a missing file was not reported";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), HasSubstr(path("t10k-labels-idx1-ubyte")));
  }
  spec.kind = DatasetKind::kGaussianMixture;
  EXPECT_TRUE(data_files(spec).empty());
}

TEST_F(DataFiles, IdxRoundTrip) {
  write_small_idx();
  Dataset d = read_idx(path("images"), path("labels"), "small");
  EXPECT_EQ(d.size(), 3);
  EXPECT_EQ(d.dim, 6);
  EXPECT_EQ(d.shape.height, 2);
  EXPECT_EQ(d.shape.width, 3);
  EXPECT_EQ(d.classes, 10);
  EXPECT_EQ(d.labels, (std::vector<std::int32_t>{7, 0, 9}));
  EXPECT_FLOAT_EQ(d.row(1)[2], 80.0f);
}

TEST_F(DataFiles, IdxReadsGzipFiles) {
  write_small_idx();
  gzip("images.gz", read("images"));
  gzip("labels.gz", read("labels"));
  Dataset d = read_idx(path("images.gz"), path("labels.gz"), "small");
  EXPECT_EQ(d.size(), 3);
  EXPECT_FLOAT_EQ(d.row(2)[5], 170.0f);
}

TEST_F(DataFiles, MissingFileIsNamed) {
  write_small_idx();
  std::filesystem::remove(path("labels"));
  EXPECT_THAT(idx_error(), AllOf(HasSubstr(path("labels")), HasSubstr("cannot open")));
}

TEST_F(DataFiles, WrongMagicIsReported) {
  write_small_idx();
  std::vector<std::uint8_t> bytes = read("images");
  bytes[3] = 0x01;  // a labels magic in the images file
  write("images", bytes);
  EXPECT_THAT(idx_error(),
              AllOf(HasSubstr(path("images")), HasSubstr("bad magic number 0x00000801"),
                    HasSubstr("0x00000803")));
}

// n x rows x cols = 2^31 x 2^31 x 4 wraps to 0 in 64 bits: an empty file must not match it.
TEST_F(DataFiles, HeaderSizesThatOverflowAreReported) {
  write_small_idx();
  write("images", {0, 0, 8, 3, 0x80, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 4});
  EXPECT_THAT(idx_error(), AllOf(HasSubstr(path("images")), HasSubstr("multiply past 2^64")));
}

TEST_F(DataFiles, AFolderGivenAsADataFileIsNamed) {
  write_small_idx();
  std::filesystem::remove(path("images"));
  std::filesystem::create_directory(path("images"));
  EXPECT_THAT(idx_error(), AllOf(HasSubstr(path("images")), HasSubstr("is a folder")));
}

TEST_F(DataFiles, TruncatedImagesAreReported) {
  write_small_idx();
  std::vector<std::uint8_t> bytes = read("images");
  bytes.resize(bytes.size() - 4);
  write("images", bytes);
  EXPECT_THAT(idx_error(), AllOf(HasSubstr(path("images")), HasSubstr("18 data bytes"),
                                 HasSubstr("14 data bytes"), HasSubstr("truncated")));
}

TEST_F(DataFiles, ShortHeaderIsReported) {
  write_small_idx();
  write("images", {0, 0, 8, 3, 0, 0});
  EXPECT_THAT(idx_error(), AllOf(HasSubstr(path("images")), HasSubstr("too short")));
}

TEST_F(DataFiles, ImageAndLabelCountMismatchIsReported) {
  write_small_idx();
  write_idx(path("other_images"), path("labels"), 2, 3, std::vector<std::uint8_t>(12), {1, 2});
  EXPECT_THAT(idx_error(), AllOf(HasSubstr("3 images"), HasSubstr("2 labels")));
}

TEST_F(DataFiles, OutOfRangeLabelIsReported) {
  write_idx(path("images"), path("labels"), 1, 1, {1, 2}, {3, 12});
  EXPECT_THAT(idx_error(), AllOf(HasSubstr(path("labels")), HasSubstr("label 12 of sample 1")));
}

TEST_F(DataFiles, CorruptGzipIsReported) {
  write_small_idx();
  gzip("images.gz", read("images"));
  std::vector<std::uint8_t> bytes = read("images.gz");
  for (std::size_t i = 12; i < bytes.size(); ++i) bytes[i] ^= 0x5a;  // keep the gzip header
  write("images", bytes);
  EXPECT_THAT(idx_error(), AllOf(HasSubstr(path("images")), HasSubstr("corrupt gzip")));
}

TEST_F(DataFiles, TruncatedGzipIsReported) {
  write_small_idx();
  gzip("images.gz", read("images"));
  std::vector<std::uint8_t> bytes = read("images.gz");
  bytes.resize(bytes.size() / 2);
  write("images", bytes);
  EXPECT_THAT(idx_error(), AllOf(HasSubstr(path("images")), HasSubstr("corrupt gzip")));
}

// Bytes after a valid gzip member are not data of the file: zlib's gzread skipped them, so a
// damaged file read as a whole one. A second member is part of the file (RFC 1952).
TEST_F(DataFiles, GzipWithTrailingBytesIsReportedAndConcatenatedMembersAreRead) {
  write_small_idx();
  const std::vector<std::uint8_t> images = read("images");
  gzip("images.gz", images);
  std::vector<std::uint8_t> bytes = read("images.gz");
  const std::vector<std::uint8_t> one_member = bytes;
  bytes.insert(bytes.end(), {'j', 'u', 'n', 'k'});
  write("images", bytes);
  EXPECT_THAT(idx_error(), AllOf(HasSubstr(path("images")),
                                 HasSubstr("4 bytes after the end of the gzip data")));
  // The same contents cut in two members.
  const std::vector<std::uint8_t> head(images.begin(), images.begin() + 10);
  const std::vector<std::uint8_t> tail(images.begin() + 10, images.end());
  gzip("head.gz", head);
  gzip("tail.gz", tail);
  std::vector<std::uint8_t> two = read("head.gz");
  const std::vector<std::uint8_t> second = read("tail.gz");
  two.insert(two.end(), second.begin(), second.end());
  EXPECT_EQ(gunzip_bytes(two, "two"), images);
  EXPECT_EQ(gunzip_bytes(one_member, "one"), images);
  EXPECT_THROW(gunzip_bytes(images, "plain"), DataError);
}

// CIFAR-10 records: label byte, then the R, G and B 32x32 planes.
std::vector<std::uint8_t> cifar_records(const std::vector<std::uint8_t>& labels) {
  std::vector<std::uint8_t> bytes;
  for (std::size_t r = 0; r < labels.size(); ++r) {
    bytes.push_back(labels[r]);
    for (int i = 0; i < 3072; ++i) bytes.push_back(std::uint8_t((i / 1024) * 100 + r));
  }
  return bytes;
}

TEST_F(DataFiles, CifarBatchesAreConcatenatedInChannelMajorLayout) {
  write("data_batch_1.bin", cifar_records({3, 9}));
  write("data_batch_2.bin", cifar_records({0}));
  Dataset d = read_cifar10({path("data_batch_1.bin"), path("data_batch_2.bin")}, "c");
  EXPECT_EQ(d.size(), 3);
  EXPECT_EQ(d.dim, 3072);
  EXPECT_EQ(d.shape.channels, 3);
  EXPECT_EQ(d.labels, (std::vector<std::int32_t>{3, 9, 0}));
  EXPECT_FLOAT_EQ(d.row(1)[0], 1.0f);              // red plane of record 1
  EXPECT_FLOAT_EQ(d.row(1)[1024 + 5], 101.0f);     // green plane
  EXPECT_FLOAT_EQ(d.row(2)[2048 + 1023], 200.0f);  // blue plane of the second file's record
}

std::string cifar_error(const std::string& file) {
  try {
    read_cifar10({file}, "c");
  } catch (const DataError& e) {
    return e.what();
  }
  return "no error";
}

TEST_F(DataFiles, TruncatedCifarBatchIsReported) {
  std::vector<std::uint8_t> bytes = cifar_records({1, 2});
  bytes.pop_back();
  write("batch.bin", bytes);
  EXPECT_THAT(cifar_error(path("batch.bin")),
              AllOf(HasSubstr(path("batch.bin")), HasSubstr("6145 bytes"), HasSubstr("3073")));
}

TEST_F(DataFiles, CifarBadLabelAndEmptyFileAreReported) {
  write("batch.bin", cifar_records({1, 10}));
  EXPECT_THAT(cifar_error(path("batch.bin")), HasSubstr("record 1 has label 10"));
  write("empty.bin", {});
  EXPECT_THAT(cifar_error(path("empty.bin")),
              AllOf(HasSubstr(path("empty.bin")), HasSubstr("empty")));
}

TEST_F(DataFiles, LoadDataFindsGzipOrRawAndScalesPixels) {
  std::vector<std::uint8_t> pixels = {0, 255, 51, 102};
  write_idx(path("train-images-idx3-ubyte"), path("train-labels-idx1-ubyte"), 1, 2, pixels, {1, 2});
  write_idx(path("t10k-images-idx3-ubyte"), path("t10k-labels-idx1-ubyte"), 1, 2, pixels, {3, 4});
  gzip("train-images-idx3-ubyte.gz", read("train-images-idx3-ubyte"));
  std::filesystem::remove(path("train-images-idx3-ubyte"));
  DataSpec spec{.kind = DatasetKind::kMnist, .dir = dir_.string()};
  TrainTest data = load_data(spec);
  EXPECT_EQ(data.train.size(), 2);
  EXPECT_EQ(data.test.labels, (std::vector<std::int32_t>{3, 4}));
  EXPECT_FLOAT_EQ(data.train.features[1], 1.0f);
  EXPECT_FLOAT_EQ(data.test.features[2], 0.2f);
}

// One CIFAR-10 record of `label` whose R, G and B planes are each one value.
std::vector<std::uint8_t> flat_cifar_record(std::uint8_t label, std::uint8_t r, std::uint8_t g,
                                            std::uint8_t b) {
  std::vector<std::uint8_t> bytes{label};
  for (std::uint8_t value : {r, g, b}) bytes.insert(bytes.end(), 1024, value);
  return bytes;
}

// per_channel: each channel's own mean and standard deviation, over the training set only,
// applied to the test set too. Training pixels (R, G, B) are (0, 10, 255) and (2, 30, 255):
// means 1, 20, 255 and standard deviations 1, 10, 0 (in 1/255 units; a constant channel
// keeps a divisor of 1). The test pixel (4, 40, 0) becomes (3, 2, -1).
TEST_F(DataFiles, PerChannelNormalisationUsesEachChannelsTrainingStatistics) {
  std::vector<std::uint8_t> train = flat_cifar_record(1, 0, 10, 255);
  const std::vector<std::uint8_t> second = flat_cifar_record(2, 2, 30, 255);
  train.insert(train.end(), second.begin(), second.end());
  for (int i = 1; i <= 5; ++i) write("data_batch_" + std::to_string(i) + ".bin", train);
  write("test_batch.bin", flat_cifar_record(3, 4, 40, 0));
  DataSpec spec{.kind = DatasetKind::kCifar10,
                .dir = dir_.string(),
                .normalization = Normalization::kPerChannel};
  const TrainTest data = load_data(spec);
  ASSERT_EQ(data.train.size(), 10);
  for (int c = 0; c < 3; ++c) {
    const float low = c == 2 ? 0.0f : -1.0f;  // the constant channel is only centred
    EXPECT_NEAR(data.train.features[std::size_t(c * 1024 + 5)], low, 1e-5) << c;
    EXPECT_NEAR(data.train.features[std::size_t(3072 + c * 1024 + 7)], -low, 1e-5) << c;
  }
  EXPECT_NEAR(data.test.features[5], 3.0f, 1e-4);
  EXPECT_NEAR(data.test.features[1024 + 5], 2.0f, 1e-4);
  EXPECT_NEAR(data.test.features[2048 + 5], -1.0f, 1e-5);
  // One scalar over all channels (standardize) gives other numbers: the channels matter.
  spec.normalization = Normalization::kStandardize;
  EXPECT_GT(std::abs(load_data(spec).test.features[5] - 3.0f), 0.1f);
}

// A missing CIFAR-10 folder names the folder and the script that downloads it.
TEST_F(DataFiles, AMissingCifarFolderNamesItAndTheDownloadScript) {
  const std::string missing = path("nowhere");
  try {
    load_data({.kind = DatasetKind::kCifar10, .dir = missing});
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("folder " + missing + " does not exist"),
                                HasSubstr("scripts/get-cifar10.sh " + missing)));
  }
}

TEST_F(DataFiles, LoadDataNamesTheMissingFilesAndTheHelp) {
  DataSpec spec{.kind = DatasetKind::kCifar10, .dir = dir_.string()};
  try {
    load_data(spec);
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr(path("data_batch_1.bin")), HasSubstr("README"),
                                HasSubstr("scripts/get-cifar10.sh")));
  }
}

TEST(SyntheticData, GaussianMixtureIsReproducibleAndShaped) {
  TrainTest a = make_gaussian_mixture(50, 20, 3, 4, 3.0, 7);
  TrainTest b = make_gaussian_mixture(50, 20, 3, 4, 3.0, 7);
  TrainTest c = make_gaussian_mixture(50, 20, 3, 4, 3.0, 8);
  EXPECT_EQ(a.train.size(), 50);
  EXPECT_EQ(a.test.size(), 20);
  EXPECT_EQ(a.train.features, b.train.features);
  EXPECT_NE(a.train.features, c.train.features);
  for (auto label : a.train.labels) EXPECT_LT(label, 4);
}

TEST(SyntheticData, StandardizeUsesTrainStatistics) {
  TrainTest d = make_least_squares(400, 10, 3, 0.1, 1);
  for (float& x : d.train.features) x = 5 + 2 * x;
  standardize(d);
  double sum = 0, squares = 0;
  for (float x : d.train.features) sum += x, squares += x * x;
  const double n = double(d.train.features.size());
  EXPECT_NEAR(sum / n, 0.0, 1e-5);
  EXPECT_NEAR(squares / n, 1.0, 1e-4);
}

}  // namespace
}  // namespace fastk::learning
