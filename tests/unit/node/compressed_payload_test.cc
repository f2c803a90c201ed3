// Payload kinds 5..9 (node/WIRE.md): every compressor's difference crosses the wire and comes
// back with the same bits, and a payload whose sizes do not match its length fields is
// rejected by the decoder before anything is allocated from them.
#include "node/wire/compressed_payload.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "compression/compressor.h"
#include "tests/support/wire_frames.h"

namespace fastk::node::wire {
namespace {

using compression::Compressed;
using compression::Kind;
using testing::decode_frames;
using testing::Frames;
using testing::reseal;
using testing::to_frames;

const HelloInfo kRun{0x42, 8};
const PeerId kNeighbours[] = {1, 7};
const WirePeers kPeers(0, kRun, kNeighbours);

constexpr Kind kKinds[] = {Kind::kFloat16, Kind::kInt8, Kind::kQsgd, Kind::kTopK, Kind::kRandomK};

Compressed compressed(Kind kind, std::size_t n = 301) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = 0.01f * static_cast<float>((i * 37) % 101) - 0.4f;
  compression::CompressorSpec spec;
  spec.kind = kind;
  spec.chunk = 64;
  spec.fraction = 0.1;
  return compression::compress(spec, v, 99);
}

DecodeResult decode(const Frames& frames) { return decode_frames(frames, kPeers); }

// Sets the header's length field to the payload frame's size and re-seals the checksum: an
// edit that gets past every check but the payload's own layout.
void refit(Frames& frames) {
  store_le<std::uint32_t>(&frames[0][kPayloadBytesOffset],
                          static_cast<std::uint32_t>(frames[1].size()));
  reseal(frames);
}

bool rejected_for_length(const Frames& frames) {
  const DecodeResult r = decode(frames);
  const auto* rejection = std::get_if<Rejection>(&r);
  return rejection && rejection->cause == WireError::kBadPayloadLength;
}

TEST(CompressedPayload, EveryKindCrossesTheWireBitForBit) {
  for (Kind kind : kKinds) {
    const Compressed sent = compressed(kind);
    const Frames frames = to_frames(encode_compressed_difference(1, 12, sent));
    // The sizes of node/WIRE.md's table: n = 301 values, chunks of 64, k = 31 kept.
    const std::map<Kind, std::size_t> documented = {{Kind::kFloat16, 8 + 2 * 301},
                                                    {Kind::kInt8, 8 + 4 * 5 + 301},
                                                    {Kind::kQsgd, 8 + 4 + 301},
                                                    {Kind::kTopK, 12 + 8 * 31},
                                                    {Kind::kRandomK, 12 + 8 * 31}};
    EXPECT_EQ(frames[1].size(), documented.at(kind)) << to_string(kind);
    EXPECT_EQ(sent.payload_bytes(), documented.at(kind)) << to_string(kind);
    const DecodeResult r = decode(frames);
    ASSERT_TRUE(std::holds_alternative<DecodedMessage>(r)) << to_string(kind);
    const DecodedMessage& m = std::get<DecodedMessage>(r);
    EXPECT_EQ(m.type, MessageType::kCompressedDifference);
    EXPECT_EQ(m.kind, payload_kind_of(kind));
    EXPECT_EQ(m.iteration, 12);
    const Compressed got = read_compressed_payload(m.kind, m.payload);
    EXPECT_EQ(compression::invalid(got), std::nullopt) << to_string(kind);
    EXPECT_EQ(got.kind, sent.kind);
    EXPECT_EQ(got.length, sent.length);
    EXPECT_EQ(got.parameter, sent.parameter);
    EXPECT_EQ(got.scales, sent.scales);
    EXPECT_EQ(got.codes, sent.codes);
    EXPECT_EQ(got.halves, sent.halves);
    EXPECT_EQ(got.indices, sent.indices);
    EXPECT_EQ(got.values, sent.values);
  }
}

// Each payload one byte shorter or longer, or with its length or count field changed, does
// not fit its kind: rejected whatever the rest says.
TEST(CompressedPayload, SizesThatDoNotMatchTheLengthFieldsAreRejected) {
  for (Kind kind : kKinds) {
    const Frames good = to_frames(encode_compressed_difference(1, 3, compressed(kind)));
    for (int change : {-1, 1, -8, 8}) {
      Frames f = good;
      f[1].resize(f[1].size() + static_cast<std::size_t>(change));
      refit(f);
      EXPECT_TRUE(rejected_for_length(f)) << to_string(kind) << " " << change;
    }
    for (std::uint32_t length : {0u, 300u, 302u, 0xFFFFFFFFu}) {
      Frames f = good;
      store_le<std::uint32_t>(f[1].data(), length);
      refit(f);
      // A sparse kind's length only bounds its count: 302 and 0xFFFFFFFF still fit.
      const bool sparse = kind == Kind::kTopK || kind == Kind::kRandomK;
      EXPECT_EQ(rejected_for_length(f), !sparse || length < 31) << to_string(kind) << " " << length;
    }
    Frames truncated = good;
    truncated[1].resize(kCompressedPrefixBytes - 1);
    refit(truncated);
    EXPECT_TRUE(rejected_for_length(truncated)) << to_string(kind);
  }
  // Parameters the layout cannot have: an int8 chunk of 0 (no chunk count), qsgd levels > 127,
  // a parameter on a kind that has none, a sparse count beyond the frame.
  Frames int8 = to_frames(encode_compressed_difference(1, 3, compressed(Kind::kInt8)));
  store_le<std::uint32_t>(int8[1].data() + 4, 0);
  refit(int8);
  EXPECT_TRUE(rejected_for_length(int8));
  Frames qsgd = to_frames(encode_compressed_difference(1, 3, compressed(Kind::kQsgd)));
  store_le<std::uint32_t>(qsgd[1].data() + 4, 128);
  refit(qsgd);
  EXPECT_TRUE(rejected_for_length(qsgd));
  Frames fp16 = to_frames(encode_compressed_difference(1, 3, compressed(Kind::kFloat16)));
  store_le<std::uint32_t>(fp16[1].data() + 4, 1);
  refit(fp16);
  EXPECT_TRUE(rejected_for_length(fp16));
  Frames top = to_frames(encode_compressed_difference(1, 3, compressed(Kind::kTopK)));
  store_le<std::uint32_t>(top[1].data() + kCompressedPrefixBytes, 0xFFFFFFFFu);
  refit(top);
  EXPECT_TRUE(rejected_for_length(top));
}

TEST(CompressedPayload, AKindOfAnotherTypeIsRejected) {
  const Frames good = to_frames(encode_compressed_difference(1, 3, compressed(Kind::kInt8)));
  for (int kind : {0, 1, 2, 3, 4, 10, 255}) {
    Frames f = good;
    f[0][kKindOffset] = static_cast<std::byte>(kind);
    reseal(f);
    const DecodeResult r = decode(f);
    ASSERT_TRUE(std::holds_alternative<Rejection>(r)) << kind;
    EXPECT_EQ(std::get<Rejection>(r).cause, WireError::kBadPayloadKind) << kind;
  }
  // The kind names the compressor: int8's bytes read as qsgd do not fit qsgd's layout.
  Frames as_qsgd = good;
  as_qsgd[0][kKindOffset] = static_cast<std::byte>(PayloadKind::kQsgd);
  reseal(as_qsgd);
  EXPECT_TRUE(rejected_for_length(as_qsgd));
}

TEST(CompressedPayload, AnInvalidDifferenceIsNotEncoded) {
  Compressed bad = compressed(Kind::kTopK);
  std::swap(bad.indices[0], bad.indices[1]);
  EXPECT_THROW(encode_compressed_difference(1, 3, bad), std::invalid_argument);
}

}  // namespace
}  // namespace fastk::node::wire
