#include "node/wire/coded_payload.h"

#include <cmath>
#include <cstring>
#include <memory>

#include "node/wire/byte_order.h"

namespace fastk::node::wire {

bool coded_payload_fits(std::span<const std::byte> payload) {
  if (payload.size() < kCodedPrefixBytes) return false;
  const auto covers = load_le<std::uint32_t>(payload.data());
  const auto role = load_le<std::uint32_t>(payload.data() + 4);
  if (covers > kMaxCodedIds || role > kMaxCodedIds) return false;
  const std::size_t ids_end = kCodedPrefixBytes + 4 * (std::size_t{covers} + role);
  if (ids_end > payload.size() || (payload.size() - ids_end) % sizeof(float) != 0) return false;
  double compute_s = 0;
  const auto bits = load_le<std::uint64_t>(payload.data() + 8);
  std::memcpy(&compute_s, &bits, sizeof compute_s);
  return std::isfinite(compute_s) && compute_s >= 0;
}

CodedPayload read_coded_payload(std::span<const std::byte> payload) {
  CodedPayload out;
  const auto covers = load_le<std::uint32_t>(payload.data());
  const auto role = load_le<std::uint32_t>(payload.data() + 4);
  const auto bits = load_le<std::uint64_t>(payload.data() + 8);
  std::memcpy(&out.compute_s, &bits, sizeof out.compute_s);
  std::size_t at = kCodedPrefixBytes;
  for (std::uint32_t i = 0; i < covers; ++i, at += 4) {
    out.covers.push_back(load_le<std::uint32_t>(payload.data() + at));
  }
  for (std::uint32_t i = 0; i < role; ++i, at += 4) {
    out.role.push_back(load_le<std::uint32_t>(payload.data() + at));
  }
  out.gradient.resize((payload.size() - at) / sizeof(float));
  // An empty gradient has no data() to copy to (memcpy to null is undefined even for 0 bytes;
  // found by libFuzzer with UBSan).
  if (!out.gradient.empty()) {
    std::memcpy(out.gradient.data(), payload.data() + at, out.gradient.size() * sizeof(float));
  }
  return out;
}

EncodedMessage encode_coded_gradient(PeerId sender, std::int64_t iteration,
                                     std::span<const std::uint32_t> covers,
                                     std::span<const std::uint32_t> role, double compute_s,
                                     std::span<const float> gradient) {
  const std::size_t ids = covers.size() + role.size();
  auto bytes =
      std::make_shared<std::vector<std::byte>>(kCodedPrefixBytes + 4 * ids + gradient.size_bytes());
  std::byte* p = bytes->data();
  store_le<std::uint32_t>(p, static_cast<std::uint32_t>(covers.size()));
  store_le<std::uint32_t>(p + 4, static_cast<std::uint32_t>(role.size()));
  std::uint64_t bits = 0;
  std::memcpy(&bits, &compute_s, sizeof bits);
  store_le<std::uint64_t>(p + 8, bits);
  std::size_t at = kCodedPrefixBytes;
  for (std::uint32_t id : covers) store_le<std::uint32_t>(p + at, id), at += 4;
  for (std::uint32_t id : role) store_le<std::uint32_t>(p + at, id), at += 4;
  if (!gradient.empty()) std::memcpy(p + at, gradient.data(), gradient.size_bytes());
  std::span<const std::byte> view(*bytes);
  return {encode_header(
              {MessageType::kCodedGradient, PayloadKind::kCodedGradient, sender, iteration}, view),
          {std::move(bytes), view},
          true};
}

}  // namespace fastk::node::wire
