#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string>

#include "node/wire/coded_payload.h"
#include "node/wire/model_slot_payload.h"
#include "node/wire/rejection_counter.h"
#include "tests/support/wire_frames.h"

namespace fastk::node::wire {
namespace {

using testing::decode_frames;
using testing::Frames;
using ::testing::HasSubstr;
using testing::reseal;
using testing::to_frames;

const HelloInfo kRun{0x1234'5678'9abc'def0, 8};
// Peer 0 of a ring of 8 hears from peers 1 and 7.
const PeerId kNeighbours[] = {1, 7};
const WirePeers kPeers(0, kRun, kNeighbours);

DecodedMessage ok(const DecodeResult& r) {
  if (auto* rej = std::get_if<Rejection>(&r)) {
    ADD_FAILURE() << "rejected: " << to_string(rej->cause) << " (" << rej->detail << ")";
    return {};
  }
  return std::get<DecodedMessage>(r);
}

WireError cause_of(const Frames& frames) {
  DecodeResult r = decode_frames(frames, kPeers);
  EXPECT_TRUE(std::holds_alternative<Rejection>(r)) << "accepted a bad message";
  return std::holds_alternative<Rejection>(r) ? std::get<Rejection>(r).cause
                                              : WireError::kBadFrameCount;
}

Frames model_frames(PeerId sender = 1, std::int64_t k = 3) {
  static const auto params = std::make_shared<std::vector<float>>(std::vector<float>{1, 2, 3});
  return to_frames(encode_model(sender, k, params, *params));
}

std::span<const std::byte> bytes_of(std::string_view text) {
  return std::as_bytes(std::span(text));
}

TEST(Checksum, IsCrc32cWithItsPublishedCheckValues) {
  EXPECT_EQ(crc32c_extend(0, bytes_of("123456789")), 0xE3069283u);
  const std::vector<std::byte> zeros(32, std::byte{0}), ones(32, std::byte{0xFF});
  EXPECT_EQ(crc32c_extend(0, zeros), 0x8A9136AAu);  // RFC 3720, B.4
  EXPECT_EQ(crc32c_extend(0, ones), 0x62A8AB43u);
  EXPECT_EQ(crc32c_extend(0, {}), 0u);
}

TEST(Checksum, FastAndPortableAgreeAndExtend) {
  std::vector<std::byte> data(1000);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::byte>(i * 131 + 7);
  for (std::size_t length : {0, 1, 7, 8, 9, 63, 1000}) {
    const auto part = std::span(data).first(length);
    EXPECT_EQ(crc32c_extend(0, part), crc32c_extend_portable(0, part)) << length;
    for (std::size_t cut : {std::size_t{0}, length / 3, length}) {
      EXPECT_EQ(crc32c_extend(crc32c_extend(0, part.first(cut)), part.subspan(cut)),
                crc32c_extend(0, part))
          << length << " cut at " << cut;
    }
  }
}

// Long inputs run as interleaved stripes (blocks of 3 x 4096 and 3 x 256 bytes) joined by
// carry-less multiplication: lengths around the block sizes, odd offsets and a non-zero
// starting CRC must give exactly the portable table version's values.
TEST(Checksum, StripedFastPathAgreesWithPortableAroundBlockSizes) {
  std::vector<std::byte> data(3 * 4096 * 3 + 1000);
  std::uint64_t x = 0x9E3779B97F4A7C15u;
  for (auto& b : data) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    b = static_cast<std::byte>(x);
  }
  for (std::size_t length : {767, 768, 769, 1543, 12287, 12288, 12289, 13063, 24576, 37000}) {
    for (std::size_t offset : {0, 1, 5}) {
      const auto part = std::span(data).subspan(offset, length);
      for (std::uint32_t start : {0u, 0xDEADBEEFu}) {
        EXPECT_EQ(crc32c_extend(start, part), crc32c_extend_portable(start, part))
            << length << " bytes at offset " << offset << " from " << start;
      }
    }
  }
  const std::vector<std::byte> zeros(3 * 4096, std::byte{0});
  EXPECT_EQ(crc32c_extend(0, zeros), crc32c_extend_portable(0, zeros));
}

TEST(Wire, ByeHeaderIsTheDocumentedLittleEndianLayout) {
  Frames f = to_frames(encode_bye(7, 0x0102030405));
  ASSERT_EQ(f.size(), 1u);
  ASSERT_EQ(f[0].size(), 28u);
  const std::vector<int> expected_prefix = {'F', 'K', 'W', 'R', 1, 4, 0, 0,   // magic ver type kind
                                            7,   0,   0,   0,                 // sender
                                            0,   0,   0,   0,                 // payload length
                                            5,   4,   3,   2,   1, 0, 0, 0};  // iteration
  for (std::size_t i = 0; i < expected_prefix.size(); ++i) {
    EXPECT_EQ(std::to_integer<int>(f[0][i]), expected_prefix[i]) << "byte " << i;
  }
  EXPECT_EQ(load_le<std::uint32_t>(&f[0][24]), crc32c_extend(0, std::span(f[0]).first(24)));
}

TEST(Wire, ModelRoundTripIsBitIdentical) {
  auto params = std::make_shared<std::vector<float>>(std::vector<float>{
      0.0f, -0.0f, 1.5f, std::numeric_limits<float>::denorm_min(),
      std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(), -3e38f});
  EncodedMessage m = encode_model(7, 42, params, *params);
  EXPECT_EQ(m.payload.bytes.data(), reinterpret_cast<const std::byte*>(params->data()))
      << "the encoder must not copy the parameters";
  Frames f = to_frames(m);
  const DecodedMessage d = ok(decode_frames(f, kPeers));
  EXPECT_EQ(d.type, MessageType::kModel);
  EXPECT_EQ(d.sender, 7u);
  EXPECT_EQ(d.iteration, 42);
  ASSERT_EQ(d.payload.size(), params->size() * sizeof(float));
  EXPECT_EQ(std::memcmp(d.payload.data(), params->data(), d.payload.size()), 0);
}

TEST(Wire, HelloAckAndByeRoundTrip) {
  for (MessageType type : {MessageType::kHello, MessageType::kHelloAck}) {
    Frames f = to_frames(encode_hello(type, 1, 0, kRun));
    const DecodedMessage d = ok(decode_frames(f, kPeers));
    EXPECT_EQ(d.type, type);
    EXPECT_EQ(d.hello, kRun);
  }
  const DecodedMessage bye = ok(decode_frames(to_frames(encode_bye(7, 99)), kPeers));
  EXPECT_EQ(bye.type, MessageType::kBye);
  EXPECT_EQ(bye.iteration, 99);
  auto none = std::make_shared<std::vector<float>>();
  EXPECT_TRUE(
      ok(decode_frames(to_frames(encode_model(1, 0, none, *none)), kPeers)).payload.empty());
}

// ad_psgd's request and reply carry float32 values like a model, uncopied; a reply without
// values (declined) has an empty payload frame.
TEST(Wire, AveragingRequestAndReplyRoundTrip) {
  auto values = std::make_shared<std::vector<float>>(std::vector<float>{0.5f, -0.0f, 7e-39f});
  for (MessageType type : {MessageType::kAverageRequest, MessageType::kAverageReply}) {
    EncodedMessage m = encode_averaging(type, 1, 17, values, *values);
    EXPECT_EQ(m.payload.bytes.data(), reinterpret_cast<const std::byte*>(values->data()));
    const Frames frames = to_frames(m);  // the decoded message views them
    const DecodedMessage d = ok(decode_frames(frames, kPeers));
    EXPECT_EQ(d.type, type);
    EXPECT_EQ(d.iteration, 17);
    ASSERT_EQ(d.payload.size(), values->size() * sizeof(float));
    EXPECT_EQ(std::memcmp(d.payload.data(), values->data(), d.payload.size()), 0);
  }
  const Frames declined =
      to_frames(encode_averaging(MessageType::kAverageReply, 7, 3, nullptr, {}));
  ASSERT_EQ(declined.size(), 2u);
  EXPECT_TRUE(ok(decode_frames(declined, kPeers)).payload.empty());
  Frames odd = declined;
  odd[1].resize(3);  // not a whole float
  store_le<std::uint32_t>(&odd[0][kPayloadBytesOffset], 3);
  reseal(odd);
  EXPECT_EQ(cause_of(odd), WireError::kBadPayloadLength);
  EXPECT_THROW(encode_averaging(MessageType::kModel, 1, 0, nullptr, {}), std::invalid_argument);
}

TEST(Wire, EncoderRefusesMisuse) {
  EXPECT_THROW(encode_bye(1, -1), std::invalid_argument);
  EXPECT_THROW(encode_hello(MessageType::kModel, 1, 0, kRun), std::invalid_argument);
  EXPECT_THROW(WirePeers(0, kRun, std::vector<PeerId>{8}), std::invalid_argument);
  EXPECT_THROW(WirePeers(0, kRun, std::vector<PeerId>{0}), std::invalid_argument);
}

TEST(WireRejects, WrongFrameCounts) {
  EXPECT_EQ(cause_of({}), WireError::kBadFrameCount);
  Frames three = model_frames();
  three.push_back({});
  EXPECT_EQ(cause_of(three), WireError::kBadFrameCount);
  Frames header_only = model_frames();
  header_only.pop_back();
  EXPECT_EQ(cause_of(header_only), WireError::kBadFrameCount);
  Frames bye_with_payload = to_frames(encode_bye(1, 0));
  bye_with_payload.push_back({});
  EXPECT_EQ(cause_of(bye_with_payload), WireError::kBadFrameCount);
}

TEST(WireRejects, BadHeaders) {
  EXPECT_EQ(cause_of({testing::Frame(3, std::byte{'F'})}), WireError::kBadHeader);
  Frames truncated = model_frames();
  truncated[0].resize(20);
  EXPECT_EQ(cause_of(truncated), WireError::kBadHeader);
  Frames longer = model_frames();
  longer[0].push_back(std::byte{0});
  EXPECT_EQ(cause_of(longer), WireError::kBadHeader);
  Frames reserved = model_frames();
  reserved[0][kReservedOffset] = std::byte{1};
  reseal(reserved);
  EXPECT_EQ(cause_of(reserved), WireError::kBadHeader);
  Frames negative = model_frames();
  store_le<std::int64_t>(&negative[0][kIterationOffset], -5);
  reseal(negative);
  EXPECT_EQ(cause_of(negative), WireError::kBadHeader);
}

// The message-type table (format.h) is the only list: the types of version 1 are bytes 1..11,
// each with its own name, and every other byte is rejected by the same table.
TEST(Wire, TheMessageTypeTableNamesExactlyTheTypesOfVersionOne) {
  std::set<std::string_view> names;
  for (int raw = 0; raw < 256; ++raw) {
    const auto type = static_cast<MessageType>(raw);
    const bool known = raw >= 1 && raw <= 11;
    EXPECT_EQ(known_type(static_cast<std::uint8_t>(raw)), known) << raw;
    EXPECT_EQ(to_string(type) != "unknown", known) << raw;
    if (known) {
      EXPECT_TRUE(names.insert(to_string(type)).second) << "two types named " << to_string(type);
    }
  }
  EXPECT_EQ(payload_kind_of(MessageType::kSharedModel), PayloadKind::kModelSlot);
  EXPECT_EQ(payload_kind_of(MessageType::kAverageRequest), PayloadKind::kFloat32);
  EXPECT_EQ(payload_kind_of(MessageType::kAverageReply), PayloadKind::kFloat32);
  EXPECT_EQ(payload_kind_of(MessageType::kSharedAverageRequest), PayloadKind::kModelSlot);
  EXPECT_EQ(payload_kind_of(MessageType::kSharedAverageReply), PayloadKind::kModelSlot);
  EXPECT_EQ(payload_kind_of(MessageType::kBye), PayloadKind::kNone);
  // COMPRESSED_DIFFERENCE carries the compressed kinds 5..9 and nothing else; no other type
  // carries them.
  for (int kind = 0; kind < 256; ++kind) {
    EXPECT_EQ(carries(MessageType::kCompressedDifference, static_cast<std::uint8_t>(kind)),
              kind >= 5 && kind <= 9)
        << kind;
    EXPECT_EQ(carries(MessageType::kModel, static_cast<std::uint8_t>(kind)), kind == 2) << kind;
  }
}

TEST(WireRejects, MagicVersionTypeAndKind) {
  Frames magic = model_frames();
  magic[0][0] = std::byte{'G'};
  EXPECT_EQ(cause_of(magic), WireError::kBadMagic);
  Frames version = model_frames();
  version[0][kVersionOffset] = std::byte{2};
  version[0].resize(40);  // a later version may have another header size: version wins
  EXPECT_EQ(cause_of(version), WireError::kUnsupportedVersion);
  for (int type : {0, 12, 255}) {  // 5 to 11 are CODED_GRADIENT to COMPRESSED_DIFFERENCE
    Frames f = model_frames();
    f[0][kTypeOffset] = static_cast<std::byte>(type);
    EXPECT_EQ(cause_of(f), WireError::kUnknownMessageType) << type;
  }
  for (int kind : {0, 1, 3, 6, 200}) {  // MODEL carries float32 (2) only
    Frames f = model_frames();
    f[0][kKindOffset] = static_cast<std::byte>(kind);
    EXPECT_EQ(cause_of(f), WireError::kBadPayloadKind) << kind;
  }
}

TEST(WireRejects, PayloadLengths) {
  Frames field = model_frames();
  store_le<std::uint32_t>(&field[0][kPayloadBytesOffset], 16);
  EXPECT_EQ(cause_of(field), WireError::kBadPayloadLength);
  Frames ragged = model_frames();
  ragged[1].pop_back();  // 11 bytes: not whole floats
  store_le<std::uint32_t>(&ragged[0][kPayloadBytesOffset], 11);
  reseal(ragged);
  EXPECT_EQ(cause_of(ragged), WireError::kBadPayloadLength);
  Frames hello = to_frames(encode_hello(MessageType::kHello, 1, 0, kRun));
  hello[1].push_back(std::byte{0});
  store_le<std::uint32_t>(&hello[0][kPayloadBytesOffset], 13);
  reseal(hello);
  EXPECT_EQ(cause_of(hello), WireError::kBadPayloadLength);
}

TEST(WireRejects, CorruptionAnywhereFailsTheChecksum) {
  Frames clean = model_frames();
  for (std::size_t frame = 0; frame < clean.size(); ++frame) {
    for (std::size_t byte = 0; byte < clean[frame].size(); ++byte) {
      const bool structural =
          byte < kSenderOffset || (byte >= kPayloadBytesOffset && byte < kIterationOffset);
      if (frame == 0 && structural) continue;               // checked before the CRC
      if (frame == 0 && byte >= kChecksumOffset) continue;  // the CRC itself
      Frames f = clean;
      f[frame][byte] ^= std::byte{0x10};
      EXPECT_EQ(cause_of(f), WireError::kBadChecksum) << "frame " << frame << " byte " << byte;
    }
  }
  Frames crc = clean;
  crc[0][kChecksumOffset] ^= std::byte{1};
  EXPECT_EQ(cause_of(crc), WireError::kBadChecksum);
}

TEST(WireRejects, SendersOutsideTheRunOrNeighbourhood) {
  EXPECT_EQ(cause_of(model_frames(8)), WireError::kUnknownSender);
  EXPECT_EQ(cause_of(model_frames(0xFFFFFFFF)), WireError::kUnknownSender);
  EXPECT_EQ(cause_of(model_frames(3)), WireError::kNotNeighbour);
  EXPECT_EQ(cause_of(model_frames(0)), WireError::kNotNeighbour);  // itself
}

TEST(WireRejects, HelloFromAnotherRun) {
  EXPECT_EQ(cause_of(to_frames(encode_hello(MessageType::kHello, 1, 0, {kRun.run_id + 1, 8}))),
            WireError::kWrongRun);
  EXPECT_EQ(cause_of(to_frames(encode_hello(MessageType::kHelloAck, 7, 0, {kRun.run_id, 9}))),
            WireError::kWrongRun);
}

// Over a CURVE link the header's sender must be the peer whose key the connection proved; a
// connection that proved no key (an id no peer has) gets nothing through.
TEST(WireRejects, ASenderOtherThanTheConnectionsKey) {
  ok(decode_frames(model_frames(1), kPeers, PeerId{1}));
  const auto as_other = decode_frames(model_frames(1), kPeers, PeerId{7});
  ASSERT_TRUE(std::holds_alternative<Rejection>(as_other));
  EXPECT_EQ(std::get<Rejection>(as_other).cause, WireError::kNotAuthenticated);
  EXPECT_THAT(std::get<Rejection>(as_other).detail, HasSubstr("peer 7's key names peer 1"));
  for (const Frames& frames : {model_frames(1), model_frames(7), to_frames(encode_bye(1, 2))}) {
    const auto no_key = decode_frames(frames, kPeers, PeerId{kRun.peer_count});
    ASSERT_TRUE(std::holds_alternative<Rejection>(no_key));
    EXPECT_EQ(std::get<Rejection>(no_key).cause, WireError::kNotAuthenticated);
    EXPECT_THAT(std::get<Rejection>(no_key).detail, HasSubstr("no proven key"));
  }
}

// CODED_GRADIENT (type 5, payload kind 3; node/WIRE.md): u32 covers count, u32 role count,
// f64 compute_s, the ids, then float32 gradient to the end of the frame.
Frames coded_frames() {
  const std::uint32_t covers[] = {1, 7};
  const std::uint32_t role[] = {0, 2, 5};
  const float gradient[] = {1.5f, -0.0f, std::numeric_limits<float>::denorm_min(), -2e30f};
  return to_frames(encode_coded_gradient(1, 9, covers, role, 0.25, gradient));
}

// Message `f` with `payload` as its payload frame, length field and checksum updated.
Frames replace_payload(Frames f, std::vector<std::byte> payload) {
  f[1] = std::move(payload);
  store_le<std::uint32_t>(&f[0][kPayloadBytesOffset], static_cast<std::uint32_t>(f[1].size()));
  reseal(f);
  return f;
}

Frames with_payload(std::vector<std::byte> payload) {
  return replace_payload(coded_frames(), std::move(payload));
}

std::vector<std::byte> coded_payload(std::uint32_t covers, std::uint32_t role, double compute_s,
                                     std::size_t rest_bytes) {
  std::vector<std::byte> p(16 + rest_bytes, std::byte{0});
  store_le<std::uint32_t>(&p[0], covers);
  store_le<std::uint32_t>(&p[4], role);
  std::uint64_t bits = 0;
  std::memcpy(&bits, &compute_s, sizeof bits);
  store_le<std::uint64_t>(&p[8], bits);
  return p;
}

TEST(WireCoded, RoundTripKeepsIdsComputeTimeAndGradientBits) {
  const Frames f = coded_frames();
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(std::to_integer<int>(f[0][kTypeOffset]), 5);
  EXPECT_EQ(std::to_integer<int>(f[0][kKindOffset]), 3);
  // The documented layout, byte by byte: 2 covers, 3 roles, 0.25, ids, floats.
  ASSERT_EQ(f[1].size(), 16u + 5 * 4 + 4 * 4);
  EXPECT_EQ(load_le<std::uint32_t>(&f[1][0]), 2u);
  EXPECT_EQ(load_le<std::uint32_t>(&f[1][4]), 3u);
  EXPECT_EQ(load_le<std::uint64_t>(&f[1][8]), 0x3FD0000000000000u);  // 0.25 as IEEE-754
  EXPECT_EQ(load_le<std::uint32_t>(&f[1][16]), 1u);
  EXPECT_EQ(load_le<std::uint32_t>(&f[1][20]), 7u);
  EXPECT_EQ(load_le<std::uint32_t>(&f[1][32]), 5u);
  EXPECT_EQ(load_le<std::uint32_t>(&f[1][36]), 0x3FC00000u);  // 1.5f

  const DecodedMessage d = ok(decode_frames(f, kPeers));
  EXPECT_EQ(d.type, MessageType::kCodedGradient);
  EXPECT_EQ(d.sender, 1u);
  EXPECT_EQ(d.iteration, 9);
  const CodedPayload c = read_coded_payload(d.payload);
  EXPECT_EQ(c.covers, (std::vector<std::uint32_t>{1, 7}));
  EXPECT_EQ(c.role, (std::vector<std::uint32_t>{0, 2, 5}));
  EXPECT_EQ(c.compute_s, 0.25);
  const float expected[] = {1.5f, -0.0f, std::numeric_limits<float>::denorm_min(), -2e30f};
  ASSERT_EQ(c.gradient.size(), 4u);
  EXPECT_EQ(std::memcmp(c.gradient.data(), expected, sizeof expected), 0);

  // No role and no gradient is still a well-formed message.
  const std::uint32_t block[] = {1, 7};
  const Frames bare = to_frames(encode_coded_gradient(7, 0, block, {}, 0.0, {}));
  const CodedPayload b = read_coded_payload(ok(decode_frames(bare, kPeers)).payload);
  EXPECT_EQ(b.covers, (std::vector<std::uint32_t>{1, 7}));
  EXPECT_TRUE(b.role.empty());
  EXPECT_TRUE(b.gradient.empty());
}

TEST(WireCoded, MalformedPayloadsAreBadPayloadLength) {
  ASSERT_TRUE(std::holds_alternative<DecodedMessage>(
      decode_frames(with_payload(coded_payload(1, 0, 1.0, 4 + 8)), kPeers)))
      << "the helper must build a valid payload";
  EXPECT_EQ(cause_of(with_payload(std::vector<std::byte>(15, std::byte{0}))),
            WireError::kBadPayloadLength);
  EXPECT_EQ(cause_of(with_payload({})), WireError::kBadPayloadLength);
  // Counts above kMaxCodedIds, even when the frame is long enough to hold them.
  EXPECT_EQ(cause_of(with_payload(coded_payload(kMaxCodedIds + 1, 0, 1.0, 4 * (kMaxCodedIds + 1)))),
            WireError::kBadPayloadLength);
  EXPECT_EQ(cause_of(with_payload(coded_payload(0, kMaxCodedIds + 1, 1.0, 4 * (kMaxCodedIds + 1)))),
            WireError::kBadPayloadLength);
  EXPECT_EQ(cause_of(with_payload(coded_payload(0xFFFFFFFF, 0xFFFFFFFF, 1.0, 8))),
            WireError::kBadPayloadLength);
  // Ids running past the end of the frame.
  EXPECT_EQ(cause_of(with_payload(coded_payload(3, 0, 1.0, 8))), WireError::kBadPayloadLength);
  EXPECT_EQ(cause_of(with_payload(coded_payload(1, 2, 1.0, 8))), WireError::kBadPayloadLength);
  // A gradient that is not a whole number of floats.
  EXPECT_EQ(cause_of(with_payload(coded_payload(1, 0, 1.0, 4 + 6))), WireError::kBadPayloadLength);
  // Compute times that are not a finite, non-negative number of seconds.
  for (double bad :
       {std::numeric_limits<double>::quiet_NaN(), -1.0, std::numeric_limits<double>::infinity()}) {
    EXPECT_EQ(cause_of(with_payload(coded_payload(1, 0, bad, 4 + 8))), WireError::kBadPayloadLength)
        << bad;
  }
  // A CODED_GRADIENT header with the MODEL payload kind.
  Frames kind = coded_frames();
  kind[0][kKindOffset] = std::byte{2};
  EXPECT_EQ(cause_of(kind), WireError::kBadPayloadKind);
}

// SHARED_MODEL (type 6, payload kind 4; node/WIRE.md): u32 slot, u32 reserved (0),
// u64 generation (> 0), u64 float count; 24 bytes, little-endian.
const ModelSlotRef kSlotRef{5, 0x0102030405060708u, 101770};

Frames shared_model_frames() { return to_frames(encode_shared_model(7, 11, kSlotRef, nullptr)); }

Frames shared_model_with(std::vector<std::byte> payload) {
  return replace_payload(shared_model_frames(), std::move(payload));
}

TEST(WireSharedModel, RoundTripKeepsSlotGenerationAndFloatCount) {
  const Frames f = shared_model_frames();
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(std::to_integer<int>(f[0][kTypeOffset]), 6);
  EXPECT_EQ(std::to_integer<int>(f[0][kKindOffset]), 4);
  EXPECT_EQ(load_le<std::uint32_t>(&f[0][kPayloadBytesOffset]), 24u);
  // The documented layout, byte by byte.
  ASSERT_EQ(f[1].size(), kModelSlotBytes);
  ASSERT_EQ(kModelSlotBytes, 24u);
  const std::vector<int> expected = {5,    0,    0,    0, 0, 0, 0, 0,   // slot, reserved
                                     8,    7,    6,    5, 4, 3, 2, 1,   // generation
                                     0x8A, 0x8D, 0x01, 0, 0, 0, 0, 0};  // 101770 floats
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(std::to_integer<int>(f[1][i]), expected[i]) << "payload byte " << i;
  }

  const DecodedMessage d = ok(decode_frames(f, kPeers));
  EXPECT_EQ(d.type, MessageType::kSharedModel);
  EXPECT_EQ(d.sender, 7u);
  EXPECT_EQ(d.iteration, 11);
  ASSERT_TRUE(model_slot_fits(d.payload));
  EXPECT_EQ(read_model_slot(d.payload), kSlotRef);

  // The largest values survive too.
  const ModelSlotRef extreme{0xFFFFFFFFu, 0xFFFFFFFFFFFFFFFFu, 0xFFFFFFFFFFFFFFFFu};
  const Frames big = to_frames(encode_shared_model(1, 0, extreme, nullptr));
  EXPECT_EQ(read_model_slot(ok(decode_frames(big, kPeers)).payload), extreme);
}

// ad_psgd's request and reply travel in shared memory like models, under their own types.
TEST(WireSharedModel, AveragingTypesCarryTheSameReference) {
  for (MessageType type : {MessageType::kSharedAverageRequest, MessageType::kSharedAverageReply}) {
    const Frames f = to_frames(encode_shared_model(1, 4, kSlotRef, nullptr, type));
    const DecodedMessage d = ok(decode_frames(f, kPeers));
    EXPECT_EQ(d.type, type);
    EXPECT_EQ(read_model_slot(d.payload), kSlotRef);
  }
  EXPECT_THROW(encode_shared_model(1, 4, kSlotRef, nullptr, MessageType::kModel),
               std::invalid_argument);
}

TEST(WireSharedModel, KeepAliveIsHeldByTheEncodedMessage) {
  auto owner = std::make_shared<int>(0);
  std::weak_ptr<int> watch = owner;
  {
    EncodedMessage m = encode_shared_model(1, 0, kSlotRef, std::move(owner));
    EXPECT_FALSE(watch.expired()) << "the slot must stay held while the message is queued";
  }
  EXPECT_TRUE(watch.expired()) << "the message must let go of the slot once dropped";
}

TEST(WireSharedModel, MalformedPayloadsAreBadPayloadLength) {
  ASSERT_TRUE(std::holds_alternative<DecodedMessage>(
      decode_frames(shared_model_with(shared_model_frames()[1]), kPeers)))
      << "the helper must keep a valid payload valid";
  std::vector<std::byte> longer = shared_model_frames()[1];
  longer.push_back(std::byte{0});
  EXPECT_EQ(cause_of(shared_model_with(longer)), WireError::kBadPayloadLength) << "25 bytes";
  std::vector<std::byte> shorter = shared_model_frames()[1];
  shorter.pop_back();
  EXPECT_EQ(cause_of(shared_model_with(shorter)), WireError::kBadPayloadLength) << "23 bytes";
  EXPECT_EQ(cause_of(shared_model_with({})), WireError::kBadPayloadLength) << "empty";
  for (std::size_t byte = 4; byte < 8; ++byte) {
    std::vector<std::byte> reserved = shared_model_frames()[1];
    reserved[byte] = std::byte{1};
    EXPECT_EQ(cause_of(shared_model_with(reserved)), WireError::kBadPayloadLength)
        << "reserved byte " << byte << " set";
  }
  std::vector<std::byte> generation_zero = shared_model_frames()[1];
  store_le<std::uint64_t>(&generation_zero[8], 0);
  EXPECT_EQ(cause_of(shared_model_with(generation_zero)), WireError::kBadPayloadLength);
  EXPECT_FALSE(model_slot_fits(generation_zero));
  // A generation with only its top byte set is not zero.
  std::vector<std::byte> high = generation_zero;
  high[15] = std::byte{0x80};
  EXPECT_TRUE(
      std::holds_alternative<DecodedMessage>(decode_frames(shared_model_with(high), kPeers)));
}

TEST(WireSharedModel, OtherPayloadKindsAndFrameCountsAreRejected) {
  for (int kind : {0, 1, 2, 3, 5}) {  // SHARED_MODEL carries a model slot (4) only
    Frames f = shared_model_frames();
    f[0][kKindOffset] = static_cast<std::byte>(kind);
    reseal(f);
    EXPECT_EQ(cause_of(f), WireError::kBadPayloadKind) << kind;
  }
  Frames header_only = shared_model_frames();
  header_only.pop_back();
  EXPECT_EQ(cause_of(header_only), WireError::kBadFrameCount);
  Frames corrupted = shared_model_frames();
  corrupted[1][17] ^= std::byte{0x04};  // the float count, checksummed like any payload
  EXPECT_EQ(cause_of(corrupted), WireError::kBadChecksum);
}

TEST(RejectionCounter, CountsEveryCauseAndLogsEachOnce) {
  std::vector<std::string> lines;
  RejectionCounter counter([&](std::string_view line) { lines.emplace_back(line); });
  for (int i = 0; i < 3; ++i) counter.record({WireError::kBadChecksum, "MODEL frame corrupted"});
  counter.record({WireError::kNotNeighbour, "peer 3 may not send to peer 0"});
  EXPECT_EQ(counter.count(WireError::kBadChecksum), 3u);
  EXPECT_EQ(counter.count(WireError::kNotNeighbour), 1u);
  EXPECT_EQ(counter.count(WireError::kBadMagic), 0u);
  EXPECT_EQ(counter.total(), 4u);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_THAT(lines[0], HasSubstr("bad checksum (MODEL frame corrupted)"));
  EXPECT_THAT(lines[1], HasSubstr("sender not a neighbour (peer 3 may not send to peer 0)"));
}

TEST(RejectionCounter, EveryCauseHasAName) {
  for (std::size_t i = 0; i < kWireErrorCount; ++i) {
    EXPECT_NE(to_string(static_cast<WireError>(i)), "unknown cause") << i;
  }
}

}  // namespace
}  // namespace fastk::node::wire
