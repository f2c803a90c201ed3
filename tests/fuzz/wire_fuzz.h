// The wire fuzz target's pieces, shared by LLVMFuzzerTestOneInput (wire_fuzz.cc) and the
// corpus-and-mutation replay driver used when no fuzzing engine is linked
// (fuzz_replay_main.cc).
//
// A fuzz input is a sequence of frames, each a u16 little-endian length followed by that
// many bytes; a last frame shorter than its length takes what is left.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "node/wire/decoder.h"
#include "tests/support/wire_frames.h"

namespace fastk::testing {

testing::Frames frames_from_fuzz_input(std::span<const std::uint8_t> input);
std::vector<std::uint8_t> fuzz_input_from_frames(const testing::Frames& frames);

// The peer every fuzz input is decoded as: peer 0 of a ring of 8 (hears from 1 and 7).
const node::wire::WirePeers& fuzz_peers();

// Decodes one input and checks the decoder's promises (an accepted message re-encodes to
// the same bytes; over peer 1's authenticated link it is accepted exactly when peer 1 sent
// it); aborts on a broken promise. Returns the rejection cause, or empty when the message
// was accepted, over peer 1's link.
std::optional<node::wire::WireError> fuzz_wire_input(std::span<const std::uint8_t> input);

}  // namespace fastk::testing

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
