// A peer's checkpoint file (node/peer/checkpoint.h): what is written is read back whole, and a
// file that is missing, cut, damaged or another run's is told apart and named.
#include "node/peer/checkpoint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <limits>

#include "tests/support/temp_dir.h"

namespace fastk::node::peer {
namespace {

using ::testing::HasSubstr;

Checkpoint sample() {
  Checkpoint c;
  c.peer = 3;
  c.config = 0x1234'5678'9abc'def0ULL;
  c.run = 77;
  c.iteration = 4200;
  c.model = {0.5f, -1.25f, 3e-8f, 7.0f};
  learning::BatchSampler own(std::vector<std::int64_t>{4, 8, 15, 16, 23, 42}, 2, 11);
  own.next();
  c.samplers[-1] = own.state();
  learning::BatchSampler stored(std::vector<std::int64_t>{1, 2, 3}, 1, 5);
  c.samplers[2] = stored.state();
  return c;
}

std::string bytes_of(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

TEST(Checkpoint, WhatIsWrittenIsReadBack) {
  const auto dir = testutil::fresh_test_dir("fastk_ckpt");
  const auto path = checkpoint_path(dir);
  const Checkpoint c = sample();
  write_checkpoint(path, c);
  const auto back = read_checkpoint(path, {3, c.config, c.run, 4});
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->iteration, 4200);
  EXPECT_EQ(back->model, c.model);
  ASSERT_EQ(back->samplers.size(), 2u);
  for (const auto& [partition, state] : c.samplers) {
    const auto& got = back->samplers.at(partition);
    EXPECT_EQ(got.order, state.order);
    EXPECT_EQ(got.position, state.position);
    EXPECT_EQ(got.batches, state.batches);
    EXPECT_EQ(got.drawn, state.drawn);
    for (int w = 0; w < 4; ++w) EXPECT_EQ(got.rng.s[w], state.rng.s[w]);
  }
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".tmp")) << "renamed into place";
}

TEST(Checkpoint, NoFileIsNoCheckpoint) {
  const auto dir = testutil::fresh_test_dir("fastk_ckpt");
  EXPECT_FALSE(read_checkpoint(checkpoint_path(dir), {0, 1, 1, 4}).has_value());
}

TEST(Checkpoint, AnotherPeersConfigsOrModelsCheckpointIsRefusedByName) {
  const auto dir = testutil::fresh_test_dir("fastk_ckpt");
  const auto path = checkpoint_path(dir);
  const Checkpoint c = sample();
  write_checkpoint(path, c);
  const auto refusal = [&](int peer, std::uint64_t config, std::size_t parameters,
                           std::uint64_t run = 77) {
    try {
      read_checkpoint(path, {peer, config, run, parameters});
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_THAT(refusal(2, c.config, 4), HasSubstr("peer 3's"));
  EXPECT_THAT(refusal(3, c.config + 1, 4), HasSubstr("another config"));
  EXPECT_THAT(refusal(3, c.config, 5), HasSubstr("4 values"));
  EXPECT_THAT(refusal(3, c.config, 5), HasSubstr(path.string()));
  EXPECT_THAT(refusal(3, c.config, 4, 78), HasSubstr("another launch of this config"));
  Checkpoint nan = c;
  nan.model[2] = std::numeric_limits<float>::quiet_NaN();
  write_checkpoint(path, nan);
  EXPECT_THAT(refusal(3, c.config, 4), HasSubstr("NaN or infinite"));
  std::filesystem::remove(path);
  std::filesystem::create_symlink("/dev/zero", path);
  EXPECT_THAT(refusal(3, c.config, 4), HasSubstr("not a regular file"));
}

// Every cut and every flipped byte is caught by the checksum (or the header checks), never
// loaded half.
TEST(Checkpoint, ACutOrDamagedFileIsRefused) {
  const auto dir = testutil::fresh_test_dir("fastk_ckpt");
  const auto path = checkpoint_path(dir);
  const Checkpoint c = sample();
  write_checkpoint(path, c);
  const std::string whole = bytes_of(path);
  for (std::size_t cut = 0; cut < whole.size(); cut += 7) {
    write_bytes(path, whole.substr(0, cut));
    EXPECT_THROW(read_checkpoint(path, {3, c.config, c.run, 4}), std::runtime_error)
        << "cut at " << cut;
  }
  for (std::size_t at = 0; at < whole.size(); ++at) {
    std::string damaged = whole;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x10);
    write_bytes(path, damaged);
    EXPECT_THROW(read_checkpoint(path, {3, c.config, c.run, 4}), std::runtime_error)
        << "byte " << at;
  }
  write_bytes(path, whole + "x");
  EXPECT_THROW(read_checkpoint(path, {3, c.config, c.run, 4}), std::runtime_error);
}

TEST(CheckpointSchedule, EveryNIterationsOrEverySoManySeconds) {
  const CheckpointSchedule off(0, 0);
  EXPECT_FALSE(off.enabled());
  CheckpointSchedule by_iterations(100, 0);
  by_iterations.start(0);
  EXPECT_TRUE(by_iterations.due(200, 0.1));
  EXPECT_FALSE(by_iterations.due(201, 1e6));
  CheckpointSchedule by_time(0, 5);
  by_time.start(10);
  EXPECT_FALSE(by_time.due(7, 14.9));
  EXPECT_TRUE(by_time.due(8, 15.0));
  by_time.saved(15.0);
  EXPECT_FALSE(by_time.due(9, 19.0));
}

}  // namespace
}  // namespace fastk::node::peer
