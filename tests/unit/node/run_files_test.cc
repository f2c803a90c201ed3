// The files a run leaves and reads back: calibration files (checked field by field), model
// snapshots and their index (what the evaluation may trust, and their deletion), and the
// atomic writes every output goes through.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "node/calibration/calibration.h"
#include "node/launch/run_outputs.h"
#include "node/launch/snapshots.h"
#include "node/metrics/csv_writer.h"
#include "node/metrics/iteration_csv.h"
#include "node/metrics/output_files.h"
#include "tests/support/temp_dir.h"

namespace fastk::node {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

calibration::Calibration measured() {
  calibration::Calibration c;
  c.host = "here";
  c.cpus = 2;
  c.model = "mlp";
  c.parameters = 101770;
  c.batch_size = 32;
  c.gradient_s = 190e-6;
  c.gradient_noise_s = 195e-6;
  c.message_s = 50e-6;
  c.reference_peers = 8;
  c.reference_iterations = 400;
  c.compression["int8"] = {420e-6, 95e-6};
  c.compression["top_k"] = {1.1e-3, 2e-6};
  return c;
}

// The error read_calibration gives for `text`, or "" if it accepted it.
std::string calibration_error(const std::filesystem::path& dir, const std::string& text) {
  const auto path = dir / "c.json";
  std::ofstream(path) << text;
  try {
    calibration::read_calibration(path);
    return "";
  } catch (const std::runtime_error& e) {
    return e.what();
  }
}

// The calibration's JSON with one field replaced by `value` (JSON text).
std::string with_field(const std::string& name, const std::string& value) {
  nlohmann::ordered_json j = calibration::to_json(measured());
  j[name] = nlohmann::json::parse(value);
  return j.dump();
}

TEST(CalibrationFile, ReadsBackWhatWasWritten) {
  const auto dir = testutil::fresh_test_dir();
  calibration::write_calibration(dir / "c.json", measured());
  const calibration::Calibration c = calibration::read_calibration(dir / "c.json");
  EXPECT_EQ(calibration::to_json(c), calibration::to_json(measured()));
}

TEST(CalibrationFile, ABadFieldIsNamed) {
  const auto dir = testutil::fresh_test_dir();
  EXPECT_THAT(calibration_error(dir, "[1, 2]"), HasSubstr("not a JSON object"));
  EXPECT_THAT(calibration_error(dir, "{\"cpus\": 2"), HasSubstr("not a JSON object"));
  EXPECT_THAT(calibration_error(dir, with_field("cpus", "2.5")),
              HasSubstr("field 'cpus' is missing or not a non-negative whole number"));
  EXPECT_THAT(calibration_error(dir, with_field("parameters", "-3")),
              HasSubstr("field 'parameters'"));
  EXPECT_THAT(calibration_error(dir, with_field("batch_size", "1e30")),
              HasSubstr("field 'batch_size'"));
  EXPECT_THAT(calibration_error(dir, with_field("model", "7")),
              HasSubstr("field 'model' is missing or not a string"));
  EXPECT_THAT(calibration_error(dir, with_field("message_s", "-1e-6")),
              HasSubstr("negative or not a number"));
  EXPECT_THAT(calibration_error(dir, with_field("gradient_s", "0")),
              HasSubstr("gradient_s must be > 0"));
  nlohmann::ordered_json missing = calibration::to_json(measured());
  missing.erase("latency_s");
  EXPECT_THAT(calibration_error(dir, missing.dump()), HasSubstr("field 'latency_s' is missing"));
  EXPECT_EQ(calibration_error(dir, calibration::to_json(measured()).dump()), "");
}

// The compression costs are optional (files of fastk before them have none); a run with a
// compressor the file has no costs for is refused, naming the kind.
TEST(CalibrationFile, CompressionCostsAreReadAndChargedByKind) {
  const auto dir = testutil::fresh_test_dir();
  EXPECT_THAT(calibration_error(dir, with_field("compression", "[1]")),
              HasSubstr("field 'compression' is not an object"));
  EXPECT_THAT(calibration_error(dir, with_field("compression", R"({"zip": {}})")),
              HasSubstr("unknown compressor \"zip\""));
  EXPECT_THAT(calibration_error(dir, with_field("compression", R"({"int8": {"compress_s": -1}})")),
              HasSubstr("no non-negative compress_s for int8"));
  nlohmann::ordered_json old = calibration::to_json(measured());
  old.erase("compression");
  EXPECT_EQ(calibration_error(dir, old.dump()), "");

  topology::TopologySpec ring;
  ring.kind = topology::TopologyKind::kRing;
  ring.peers = 4;
  const compression::CompressorSpec top_k{.kind = compression::Kind::kTopK};
  const auto costs = calibration::machine_costs(measured(), ring, ClusterConfig{}, {}, {}, top_k);
  EXPECT_EQ(costs.compress_s, 1.1e-3);
  EXPECT_EQ(costs.apply_difference_s, 2e-6);
  EXPECT_EQ(calibration::machine_costs(measured(), ring, ClusterConfig{}, {}, {}).compress_s, 0);
  try {
    calibration::machine_costs(measured(), ring, ClusterConfig{}, {}, {},
                               compression::CompressorSpec{.kind = compression::Kind::kQsgd});
    ADD_FAILURE() << "charged a compressor the calibration did not measure";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("no costs of compression kind qsgd"));
  }
}

// A LAN of unlike machines: `fastk doctor --hosts-json` times each host's gradient, `fastk
// calibrate --hosts` keeps them, and the simulator charges each peer its host's time.
TEST(CalibrationFile, HostGradientTimesScaleThePeersOnThoseHosts) {
  const auto dir = testutil::fresh_test_dir();
  const auto hosts = dir / "hosts.json";
  // The doctor ran on 10.0.0.11 and timed 380 us there, where calibrate measured 190 us
  // (measured()): what counts is each host's time over the launching machine's, 3x for .12.
  std::ofstream(hosts) << R"({"hosts": [{"host": "10.0.0.11", "gradient_s": 380e-6,
                                         "launching_machine": true},
                                        {"host": "10.0.0.12", "gradient_s": 1140e-6},
                                        {"host": "10.0.0.99", "gradient_s": 1e-3}]})";
  calibration::Calibration c = measured();
  ClusterConfig lan;
  lan.hosts = {"10.0.0.11", "10.0.0.12", "10.0.0.13"};  // two peers each; .13 not timed
  std::vector<std::string> warnings;
  c.host_gradient_s = calibration::host_gradients_for(calibration::read_host_gradients(hosts),
                                                      c.gradient_s, lan, warnings);
  EXPECT_DOUBLE_EQ(c.host_gradient_s.at("10.0.0.11"), c.gradient_s);  // as calibrated
  EXPECT_THAT(warnings, ElementsAre(HasSubstr("10.0.0.99 is no host of [cluster]"),
                                    HasSubstr("no gradient time of 10.0.0.13")));
  calibration::write_calibration(dir / "c.json", c);
  const calibration::Calibration back = calibration::read_calibration(dir / "c.json");
  EXPECT_EQ(back.host_gradient_s, c.host_gradient_s);

  topology::TopologySpec ring;
  ring.kind = topology::TopologyKind::kRing;
  ring.peers = 6;
  const auto costs = calibration::machine_costs(back, ring, lan, {}, {});
  ASSERT_EQ(costs.gradient_scale.size(), 6u);
  EXPECT_DOUBLE_EQ(costs.gradient_scale[0], 1.0);
  EXPECT_DOUBLE_EQ(costs.gradient_scale[1], 1.0);
  EXPECT_DOUBLE_EQ(costs.gradient_scale[2], 3.0);
  EXPECT_DOUBLE_EQ(costs.gradient_scale[3], 3.0);
  EXPECT_DOUBLE_EQ(costs.gradient_scale[4], 1.0);  // as the calibrated machine

  const auto error = [&](const std::string& text) {
    std::ofstream(hosts) << text;
    try {
      calibration::read_host_gradients(hosts);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_THAT(error("{}"), HasSubstr("no \"hosts\" list"));
  EXPECT_THAT(error("{\"hosts\": ["), HasSubstr("not JSON"));
  EXPECT_THAT(
      error(R"({"hosts": [{"host": "a", "gradient_s": 1}, {"host": "a", "gradient_s": 2}]})"),
      HasSubstr("host a is listed twice"));
  warnings.clear();
  std::ofstream(hosts) << R"({"hosts": [{"host": "10.0.0.12", "gradient_s": 570e-6}]})";
  calibration::host_gradients_for(calibration::read_host_gradients(hosts), 1.0, lan, warnings);
  EXPECT_THAT(warnings.back(), HasSubstr("the doctor did not time this machine"));
  EXPECT_THAT(error(R"({"hosts": [{"host": "a", "gradient_s": 0}]})"),
              HasSubstr("a positive \"gradient_s\""));
  EXPECT_THAT(error(R"({"hosts": []})"), HasSubstr("no host with a gradient time"));
  EXPECT_THAT(calibration_error(dir, with_field("host_gradient_s", R"({"a": -1})")),
              HasSubstr("host_gradient_s of a is not a positive number"));
}

TEST(Snapshots, TheIndexListsOnlyCompleteRowsAndRemovalTakesEverySnapshot) {
  const auto dir = testutil::fresh_test_dir();
  {
    SnapshotWriter writer(dir);
    const std::vector<float> model{1.0f, 2.0f, 3.0f};
    writer.write(10, 100, model);
    writer.write(11, 117, model);
  }
  EXPECT_EQ(read_snapshot_index(dir), (std::map<std::int64_t, std::int64_t>{{10, 100}, {11, 117}}));
  const auto read = metrics::read_model(snapshot_path(dir, 11), 3);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(*read, (std::vector<float>{1.0f, 2.0f, 3.0f}));
  EXPECT_FALSE(metrics::read_model(snapshot_path(dir, 11), 4).has_value());  // wrong size

  // A peer killed while writing: a half-written row and a model without its row.
  std::ofstream(dir / "snapshots.csv", std::ios::app) << "12,1";
  std::ofstream(snapshot_path(dir, 13)) << "x";
  std::ofstream(dir / "model-t14.f32.tmp") << "x";
  EXPECT_EQ(read_snapshot_index(dir).size(), 2u);
  metrics::write_model(dir / "model-final.f32", std::vector<float>{1.0f});

  EXPECT_EQ(remove_snapshots(dir), 2 * 12u + 1 + 1);
  std::vector<std::string> left;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    left.push_back(entry.path().filename().string());
  }
  EXPECT_EQ(left, std::vector<std::string>{"model-final.f32"});
}

// A peer that comes back (fastk node --resume) adds to its earlier process's index, past a
// row the kill cut.
TEST(Snapshots, AResumedWriterAddsToTheEarlierIndex) {
  const auto dir = testutil::fresh_test_dir();
  const std::vector<float> model{1.0f};
  SnapshotWriter(dir).write(3, 30, model);
  std::ofstream(dir / "snapshots.csv", std::ios::app) << "4,4";  // cut by the kill
  SnapshotWriter(dir, /*resume=*/true).write(6, 55, model);
  EXPECT_EQ(read_snapshot_index(dir), (std::map<std::int64_t, std::int64_t>{{3, 30}, {6, 55}}));
  SnapshotWriter(dir).write(7, 1, model);  // not resuming: a fresh index
  EXPECT_EQ(read_snapshot_index(dir), (std::map<std::int64_t, std::int64_t>{{7, 1}}));
}

// A resumed peer's iterations.csv keeps the earlier rows before the first new one's
// iteration (those after were undone by the restart), and is left alone until that row.
TEST(IterationCsv, AResumedFileKeepsTheEarlierRowsBeforeTheFirstNewIteration) {
  const auto dir = testutil::fresh_test_dir();
  const auto path = (dir / "iterations.csv").string();
  const auto record = [](std::int64_t k) {
    consensus::IterationRecord r;
    r.peer = 1;
    r.iteration = k;
    return r;
  };
  {
    metrics::IterationCsv first(path);
    for (std::int64_t k = 0; k < 8; ++k) first.write(record(k), 0.5);
  }
  std::ofstream(path, std::ios::app) << "1,8,2";  // the row the kill cut
  const auto iterations = [&] {
    std::vector<std::int64_t> out;
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line)) out.push_back(std::stoll(line.substr(line.find(',') + 1)));
    return out;
  };
  {
    metrics::IterationCsv resumed(path, /*resume=*/true);
    EXPECT_EQ(iterations().size(), 9u) << "untouched until the first new row";
    resumed.write(record(5), 0.25);
    resumed.write(record(6), 0.25);
  }
  EXPECT_EQ(iterations(), (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6}));
}

TEST(OutputFiles, AFileThatCannotBeWrittenIsAnErrorNamingIt) {
  const auto dir = testutil::fresh_test_dir();
  const std::vector<float> model{1.0f};
  EXPECT_THAT([&] { metrics::write_model(dir / "missing-folder" / "m.f32", model); },
              ::testing::ThrowsMessage<std::runtime_error>(HasSubstr("missing-folder/m.f32")));
  // /dev/full accepts the open and fails every write, as a full disk does: the CSV writer
  // buffers its rows and must report the failure when they are flushed.
  if (std::filesystem::is_character_file("/dev/full")) {
    metrics::CsvWriter csv("/dev/full", {"a", "b"}, metrics::FileWriter::Mode::kStreamed);
    for (int i = 0; i < 10; ++i) {
      csv << i << 0.5;
      csv.end_row();
    }
    EXPECT_THAT([&] { csv.flush(); }, ::testing::ThrowsMessage<std::runtime_error>(HasSubstr(
                                          "'/dev/full' (writing): No space left on device")));
  }
  // Atomic: an error before commit leaves neither the file nor its temporary.
  {
    metrics::CsvWriter unfinished((dir / "r.csv").string(), {"a"});
    unfinished << 1;
    unfinished.end_row();
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "r.csv"));
  EXPECT_FALSE(std::filesystem::exists(dir / "r.csv.tmp"));
  // A result is never written over something that is not a regular file.
  std::filesystem::create_directory_symlink(dir, dir / "link.json");
  EXPECT_THAT([&] { metrics::write_json_file(dir / "link.json", nlohmann::ordered_json{}); },
              ::testing::ThrowsMessage<std::runtime_error>(HasSubstr("not a regular file")));
  EXPECT_TRUE(std::filesystem::is_symlink(dir / "link.json"));
  metrics::write_json_file(dir / "s.json", nlohmann::ordered_json{{"ok", true}});
  EXPECT_FALSE(std::filesystem::exists(dir / "s.json.tmp"));
  std::ifstream in(dir / "s.json");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "{\n  \"ok\": true\n}\n");
}

// A peer killed while writing an atomic file leaves <file>.tmp: the launcher removes those,
// and nothing else, once the peers have exited (a peer that never started has no folder).
TEST(RunOutputs, TheTemporariesKilledPeersLeftAreRemovedAndNothingElse) {
  const auto dir = testutil::fresh_test_dir();
  const auto peer = dir / "peers" / "peer-0";
  std::filesystem::create_directories(peer);
  std::ofstream(peer / "launch.json.tmp") << "{";
  std::ofstream(peer / "summary.json") << "{}";
  std::ofstream(peer / "iterations.csv") << "iteration\n";
  EXPECT_EQ(remove_peer_temporaries(dir, 2), 1);
  EXPECT_FALSE(std::filesystem::exists(peer / "launch.json.tmp"));
  EXPECT_TRUE(std::filesystem::exists(peer / "summary.json"));
  EXPECT_TRUE(std::filesystem::exists(peer / "iterations.csv"));
}

}  // namespace
}  // namespace fastk::node
