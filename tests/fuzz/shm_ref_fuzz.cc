// Fuzz target for the shared-memory reference check (local_transport = "shm",
// node/transport/shared_models.h): a SHARED_MODEL's reference, and the region it points into,
// come from another process, which may be buggy or hostile. Whatever the reference, and
// whatever that process wrote into its region's header, NeighbourModels::take gives a model
// of this run's size, a lapped reference or a named refusal; it never throws, crashes or reads
// outside the region.
//
// One region (peer 1's, read by peer 0, models of 5 values) is made once and holds a published
// model. Each input: bytes 0-23 are the reference (u32 slot, u32 ignored, u64 generation, u64
// float count, little-endian); then pairs (offset, byte) overwrite bytes of the region's first
// 128 (its header and reader list) before a fresh reader opens it; they are put back after.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "node/transport/shared_models.h"
#include "node/wire/byte_order.h"

namespace {

using namespace fastk::node;

constexpr std::uint64_t kRun = 0x5eed;
constexpr std::size_t kFloats = 5;
constexpr std::size_t kPatchable = 128;

struct Region {
  std::string name = "/fastk-shm-fuzz-" + std::to_string(::getpid()) + ".models";
  std::unique_ptr<transport::OwnModelSlots> slots;
  std::shared_ptr<fastk::consensus::MutableParamBuffer> model;  // kept: its slot stays valid
  unsigned char* header = nullptr;  // a writable view of the first bytes, for the patches
  std::array<unsigned char, kPatchable> original{};

  Region() {
    const transport::PeerId reader = 0;
    slots = std::make_unique<transport::OwnModelSlots>(name, kRun, 1, std::span(&reader, 1),
                                                       kFloats, 3);
    model = slots->acquire();
    for (float& v : model->mutable_values()) v = 1.5f;
    slots->publish(*model);
    const int fd = ::shm_open(name.c_str(), O_RDWR, 0);
    void* base = fd < 0 ? MAP_FAILED
                        : ::mmap(nullptr, kPatchable, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (fd >= 0) ::close(fd);
    if (base == MAP_FAILED) {
      std::perror("shm fuzz: cannot map the region");
      std::abort();
    }
    header = static_cast<unsigned char*>(base);
    std::memcpy(original.data(), header, kPatchable);
  }
};

Region& region() {
  static Region r;
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < wire::kModelSlotBytes) return 0;
  Region& r = region();
  const auto* bytes = reinterpret_cast<const std::byte*>(data);
  wire::ModelSlotRef ref;
  ref.slot = wire::load_le<std::uint32_t>(bytes);
  ref.generation = wire::load_le<std::uint64_t>(bytes + 8);
  ref.floats = wire::load_le<std::uint64_t>(bytes + 16);
  for (std::size_t at = wire::kModelSlotBytes; at + 1 < size; at += 2) {
    r.header[data[at] % kPatchable] = data[at + 1];
  }
  {
    transport::NeighbourModels reader(kRun, 0, kFloats);  // fresh: it opens the region anew
    const auto taken = reader.take(1, r.name, ref);
    if (taken.outcome == transport::NeighbourModels::Outcome::kHeld) {
      const auto values = taken.params ? taken.params->values() : std::span<const float>();
      if (values.size() != kFloats) {
        std::fprintf(stderr, "a held model has %zu values, not %zu\n", values.size(), kFloats);
        std::abort();
      }
      volatile float sum = 0;
      for (float v : values) sum = sum + v;  // every value readable
    } else if (taken.params) {
      std::fprintf(stderr, "a refused or lapped reference came with a model\n");
      std::abort();
    }
  }
  std::memcpy(r.header, r.original.data(), kPatchable);
  return 0;
}
