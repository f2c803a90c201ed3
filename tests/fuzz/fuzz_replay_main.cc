// Runs the wire fuzz target without a fuzzing engine (the libzmq pattern): replays every
// file of the committed corpus, then a deterministic batch of seeded mutations of valid
// messages, half of them with the checksum re-sealed so they reach the checks behind it.
// Fails if anything crashes (the test dies), if the corpus is missing, or if the batch did
// not reach every rejection cause and acceptance (the mutations would be too shallow).
//
//   wire_fuzz_replay CORPUS_DIR                 replay + mutations
//   wire_fuzz_replay --write-seeds CORPUS_DIR   (re)write the seed corpus files
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "node/wire/coded_payload.h"
#include "node/wire/model_slot_payload.h"
#include "tests/fuzz/corpus_replay.h"
#include "tests/fuzz/wire_fuzz.h"

namespace {

using namespace fastk::node::wire;
using fastk::testing::Frame;
using fastk::testing::Frames;
using fastk::testing::to_frames;

constexpr std::uint64_t kSeed = 20261122;
constexpr int kMutations = 20000;

struct Seed {
  std::string name;
  Frames frames;
};

// Peer 0 of a ring of 8 with s = 1 gets block {1, 7} from either neighbour (sender 1 or 7).
constexpr std::uint32_t kBlock[] = {1, 7};

Frames coded_gradient(PeerId sender, std::int64_t iteration) {
  static constexpr std::uint32_t kRole[] = {0, 2};
  static constexpr float kGradient[] = {0.25f, -4.0f, 1e-3f};
  return to_frames(encode_coded_gradient(sender, iteration, kBlock, kRole, 1.5, kGradient));
}

std::vector<Seed> seeds() {
  const HelloInfo run = fastk::testing::fuzz_peers().run();
  auto params = std::make_shared<std::vector<float>>(std::vector<float>{0.5f, -1.0f, 3.25f, 0});
  std::vector<Seed> s = {
      {"hello", to_frames(encode_hello(MessageType::kHello, 1, 0, run))},
      {"hello_ack", to_frames(encode_hello(MessageType::kHelloAck, 7, 0, run))},
      {"model", to_frames(encode_model(7, 12, params, *params))},
      {"bye", to_frames(encode_bye(1, 600))},
      {"coded_gradient", coded_gradient(1, 4)},
      {"shared_model", to_frames(encode_shared_model(1, 3, {2, 17, 4}, nullptr))},
      {"average_request",
       to_frames(encode_averaging(MessageType::kAverageRequest, 1, 9, params, *params))},
      {"average_reply",
       to_frames(encode_averaging(MessageType::kAverageReply, 7, 9, params, *params))},
      {"shared_average_request",
       to_frames(
           encode_shared_model(7, 9, {3, 5, 4}, nullptr, MessageType::kSharedAverageRequest))},
      {"shared_average_reply",
       to_frames(encode_shared_model(1, 9, {0, 2, 4}, nullptr, MessageType::kSharedAverageReply))},
      {"average_declined",
       to_frames(encode_averaging(MessageType::kAverageReply, 1, 9, nullptr, {}))},
  };
  Frames truncated = s[2].frames;
  truncated[0].resize(13);
  Frames corrupted = s[2].frames;
  corrupted[1][5] ^= std::byte{0x40};
  Frames version2 = s[3].frames;
  version2[0][kVersionOffset] = std::byte{2};
  Frames stranger = to_frames(encode_bye(4, 1));
  // A coded gradient whose covers count runs past the frame.
  Frames coded_overrun = coded_gradient(7, 5);
  store_le<std::uint32_t>(&coded_overrun[1][0], 40);
  fastk::testing::reseal(coded_overrun);
  s.push_back({"truncated_header", truncated});
  s.push_back({"bad_checksum", corrupted});
  s.push_back({"version_2", version2});
  s.push_back({"not_a_neighbour", stranger});
  s.push_back({"garbage", {Frame(40, std::byte{0xAB})}});
  s.push_back({"coded_ids_past_frame", coded_overrun});
  s.push_back({"coded_no_role", to_frames(encode_coded_gradient(7, 2, kBlock, {}, 0.5, {}))});
  return s;
}

int write_seeds(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  for (const Seed& seed : seeds()) {
    const auto bytes = fastk::testing::fuzz_input_from_frames(seed.frames);
    std::ofstream(dir / seed.name, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
  }
  std::printf("wrote %zu seeds to %s\n", seeds().size(), dir.c_str());
  return 0;
}

// One random edit of a message: flip bits, set a byte, cut or grow a frame, drop or add a
// frame, or overwrite a header field with an extreme value.
void mutate(Frames& frames, std::mt19937_64& rng) {
  auto pick = [&](std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
  };
  if (frames.empty()) frames.emplace_back();
  Frame& f = frames[pick(frames.size())];
  switch (pick(7)) {
    case 0:
      if (!f.empty()) f[pick(f.size())] ^= static_cast<std::byte>(1u << pick(8));
      break;
    case 1:
      if (!f.empty()) f[pick(f.size())] = static_cast<std::byte>(pick(256));
      break;
    case 2:
      f.resize(f.empty() ? 0 : pick(f.size()));
      break;
    case 3:
      f.resize(f.size() + 1 + pick(8), static_cast<std::byte>(pick(256)));
      break;
    case 4:
      if (frames.size() > 1 && pick(2)) {
        frames.pop_back();
      } else {
        frames.emplace_back(pick(16), std::byte{0});
      }
      break;
    case 5: {  // a header byte that the decoder looks at before the checksum
      static constexpr std::array<std::size_t, 4> kFields = {kVersionOffset, kTypeOffset,
                                                             kKindOffset, kReservedOffset};
      if (frames[0].size() > kReservedOffset) frames[0][kFields[pick(4)]] ^= std::byte{1};
      break;
    }
    default: {  // a u32 field (sender or length) set to something extreme
      const std::size_t at = pick(2) ? kSenderOffset : kPayloadBytesOffset;
      const std::uint32_t values[] = {0, 1, 8, 0xFFFFFFFF, 0x80000000, 3};
      if (frames[0].size() >= at + 4) store_le<std::uint32_t>(&frames[0][at], values[pick(6)]);
      break;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--write-seeds") return write_seeds(argv[2]);
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR | --write-seeds CORPUS_DIR\n", argv[0]);
    return 2;
  }
  const std::size_t replayed = fastk::testing::replay_corpus(argv[1]);
  if (replayed == 0) return 1;

  std::array<int, kWireErrorCount> rejected{};
  int accepted = 0;
  std::mt19937_64 rng(kSeed);
  const std::vector<Seed> all = seeds();
  const std::vector<Seed> valid(all.begin(), all.begin() + 6);  // the well-formed ones
  for (int i = 0; i < kMutations; ++i) {
    Frames frames = valid[i % valid.size()].frames;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) mutate(frames, rng);
    if (rng() % 2) fastk::testing::reseal(frames);
    const auto input = fastk::testing::fuzz_input_from_frames(frames);
    if (auto cause = fastk::testing::fuzz_wire_input(input)) {
      ++rejected[static_cast<std::size_t>(*cause)];
    } else {
      ++accepted;
    }
  }
  std::printf("replayed %zu corpus files; %d mutations: %d accepted\n", replayed, kMutations,
              accepted);
  bool every_cause = accepted > 0;
  for (std::size_t c = 0; c < kWireErrorCount; ++c) {
    std::printf("  %-24s %d\n", std::string(to_string(static_cast<WireError>(c))).c_str(),
                rejected[c]);
    every_cause = every_cause && rejected[c] > 0;
  }
  if (!every_cause) {
    std::fprintf(stderr, "the mutations did not reach every outcome: make them deeper\n");
    return 1;
  }
  return 0;
}
