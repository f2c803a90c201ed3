// Fuzz target for the wire decoder: arbitrary bytes from the network must never crash it.
// With clang -fsanitize=fuzzer this file is a libFuzzer target; without an engine,
// fuzz_replay_main.cc turns it into a CTest test over the committed corpus and a
// deterministic batch of mutations.
#include "tests/fuzz/wire_fuzz.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "compression/compressed.h"
#include "node/wire/coded_payload.h"
#include "node/wire/compressed_payload.h"
#include "node/wire/model_slot_payload.h"
#include "node/wire/rejection_counter.h"

namespace fastk::testing {
namespace {

using namespace node::wire;

constexpr PeerId kAuthenticatedSender = 1;

// `params` keeps a float32 payload alive: the encoded message only views it.
EncodedMessage reencode(const DecodedMessage& m, std::vector<float>& params) {
  if (m.type == MessageType::kCodedGradient) {
    const CodedPayload c = read_coded_payload(m.payload);
    return encode_coded_gradient(m.sender, m.iteration, c.covers, c.role, c.compute_s, c.gradient);
  }
  if (payload_kind_of(m.type) == PayloadKind::kModelSlot) {
    return encode_shared_model(m.sender, m.iteration, read_model_slot(m.payload), nullptr, m.type);
  }
  if (m.type == MessageType::kBye) return encode_bye(m.sender, m.iteration);
  if (payload_kind_of(m.type) != PayloadKind::kFloat32) {
    return encode_hello(m.type, m.sender, m.iteration, m.hello);
  }
  params.resize(m.payload.size() / sizeof(float));
  if (!params.empty()) std::memcpy(params.data(), m.payload.data(), params.size() * sizeof(float));
  if (m.type == MessageType::kModel) return encode_model(m.sender, m.iteration, nullptr, params);
  return encode_averaging(m.type, m.sender, m.iteration, nullptr, params);
}

// A compressed difference whose sizes fit: what the protocol does with it next. invalid()
// must not crash on any values; a valid one must decompress within its length and re-encode
// to its bytes (an invalid one is never encoded: the encoder refuses it).
void check_compressed(const DecodedMessage& m, const Frames& frames) {
  const compression::Compressed c = read_compressed_payload(m.kind, m.payload);
  if (compression::invalid(c)) return;
  if (c.length <= (1u << 20)) {
    std::vector<float> out(c.length);
    compression::add_decompressed(c, 1.0f, out);
  }
  if (to_frames(encode_compressed_difference(m.sender, m.iteration, c)) != frames) {
    std::fprintf(stderr, "accepted compressed difference does not re-encode to its bytes\n");
    std::abort();
  }
}

// Every accepted message must be one the encoder produces, byte for byte.
void check_reencodes(const DecodedMessage& m, const Frames& frames) {
  if (m.type == MessageType::kCompressedDifference) return check_compressed(m, frames);
  std::vector<float> params;
  const EncodedMessage again = reencode(m, params);
  if (to_frames(again) != frames) {
    std::fprintf(stderr, "accepted message does not re-encode to its bytes\n");
    std::abort();
  }
}

}  // namespace

Frames frames_from_fuzz_input(std::span<const std::uint8_t> input) {
  Frames frames;
  std::size_t at = 0;
  while (at + 2 <= input.size()) {
    std::size_t length = input[at] | (std::size_t{input[at + 1]} << 8);
    at += 2;
    length = std::min(length, input.size() - at);
    const auto* begin = reinterpret_cast<const std::byte*>(input.data() + at);
    frames.emplace_back(begin, begin + length);
    at += length;
  }
  return frames;
}

std::vector<std::uint8_t> fuzz_input_from_frames(const Frames& frames) {
  std::vector<std::uint8_t> input;
  for (const Frame& f : frames) {
    const std::size_t length = std::min<std::size_t>(f.size(), 0xFFFF);
    input.push_back(static_cast<std::uint8_t>(length & 0xFF));
    input.push_back(static_cast<std::uint8_t>(length >> 8));
    for (std::size_t i = 0; i < length; ++i) input.push_back(std::to_integer<std::uint8_t>(f[i]));
  }
  return input;
}

const WirePeers& fuzz_peers() {
  static const PeerId neighbours[] = {1, 7};
  static const WirePeers peers(0, {0xFA57'0001, 8}, neighbours);
  return peers;
}

std::optional<WireError> fuzz_wire_input(std::span<const std::uint8_t> input) {
  static RejectionCounter counter(nullptr);  // counting must not crash either
  const Frames frames = frames_from_fuzz_input(input);
  DecodeResult result = decode_frames(frames, fuzz_peers());
  if (auto* rejection = std::get_if<Rejection>(&result)) {
    counter.record(*rejection);
    return rejection->cause;
  }
  const DecodedMessage& message = std::get<DecodedMessage>(result);
  check_reencodes(message, frames);
  // The same frames over peer 1's CURVE link: accepted exactly when peer 1 sent them.
  DecodeResult over_curve = decode_frames(frames, fuzz_peers(), kAuthenticatedSender);
  const auto* refused = std::get_if<Rejection>(&over_curve);
  if ((message.sender == kAuthenticatedSender) != (refused == nullptr) ||
      (refused && refused->cause != WireError::kNotAuthenticated)) {
    std::fprintf(stderr, "the sender check over an authenticated link is wrong\n");
    std::abort();
  }
  return refused ? std::optional(refused->cause) : std::nullopt;
}

}  // namespace fastk::testing

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fastk::testing::fuzz_wire_input({data, size});
  return 0;
}
