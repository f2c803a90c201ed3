#include "node/transport/shared_models.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "node/os/unique_fd.h"

namespace fastk::node::transport {
namespace {

constexpr std::array<char, 8> kRegionMagic = {'F', 'K', 'M', 'O', 'D', 'E', 'L', 'S'};
constexpr std::uint32_t kRegionVersion = 1;
constexpr std::size_t kMaxSlots = 32;
constexpr std::size_t kMaxReaders = 1u << 16;
constexpr std::size_t kCacheLine = 64;
constexpr std::size_t kPage = 4096;

static_assert(std::atomic_ref<std::uint64_t>::is_always_lock_free &&
                  std::atomic_ref<std::uint32_t>::is_always_lock_free,
              "shared-memory slots need address-free (lock-free) atomics");

// At offset 0 of a region; written once by the writer before any reader learns the name.
struct RegionHeader {
  std::array<char, 8> magic;
  std::uint32_t version;
  std::uint32_t owner;
  std::uint64_t run_id;
  std::uint64_t floats;  // per slot
  std::uint32_t slot_count;
  std::uint32_t reader_count;
  std::uint64_t total_bytes;
};
static_assert(sizeof(RegionHeader) <= kCacheLine);

std::size_t round_up(std::size_t value, std::size_t to) { return (value + to - 1) / to * to; }

// Where everything is, from the three sizes both sides know.
struct RegionLayout {
  RegionLayout(std::size_t slots, std::size_t readers, std::size_t floats)
      : slot_count(slots),
        reader_count(readers),
        readers_offset(kCacheLine),
        states_offset(round_up(readers_offset + 4 * readers, kCacheLine)),
        state_stride(round_up(8 + 4 * readers, kCacheLine)),
        values_offset(round_up(states_offset + slots * state_stride, kPage)),
        slot_stride(round_up(std::max<std::size_t>(floats, 1) * sizeof(float), kPage)),
        total_bytes(values_offset + slots * slot_stride) {}

  std::size_t slot_count, reader_count;
  std::size_t readers_offset, states_offset, state_stride, values_offset, slot_stride;
  std::size_t total_bytes;
};

std::string system_error(const std::string& what, int error) {
  return what + ": " + std::strerror(error);
}

}  // namespace

std::size_t shared_model_slots(std::size_t readers) {
  return std::min(kMaxSlots, 3 + 4 * std::max<std::size_t>(readers, 1));
}

// A mapping of a whole region; unmapped when the last buffer pointing into it is gone.
class SharedRegion {
 public:
  SharedRegion(void* base, std::size_t bytes, RegionLayout layout)
      : base_(static_cast<std::byte*>(base)), bytes_(bytes), layout_(layout) {}
  ~SharedRegion() { ::munmap(base_, bytes_); }
  SharedRegion(const SharedRegion&) = delete;
  SharedRegion& operator=(const SharedRegion&) = delete;

  RegionHeader& header() { return *reinterpret_cast<RegionHeader*>(base_); }
  const RegionLayout& layout() const { return layout_; }
  std::uint32_t* readers() {
    return reinterpret_cast<std::uint32_t*>(base_ + layout_.readers_offset);
  }
  std::atomic_ref<std::uint64_t> generation(std::size_t slot) {
    return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(state(slot)));
  }
  std::atomic_ref<std::uint32_t> hold(std::size_t slot, std::size_t reader) {
    return std::atomic_ref<std::uint32_t>(
        *reinterpret_cast<std::uint32_t*>(state(slot) + 8 + 4 * reader));
  }
  bool any_hold(std::size_t slot) {
    for (std::size_t r = 0; r < layout_.reader_count; ++r) {
      if (hold(slot, r).load() != 0) return true;
    }
    return false;
  }
  float* values(std::size_t slot) {
    return reinterpret_cast<float*>(base_ + layout_.values_offset + slot * layout_.slot_stride);
  }

 private:
  std::byte* state(std::size_t slot) {
    return base_ + layout_.states_offset + slot * layout_.state_stride;
  }
  std::byte* base_;
  std::size_t bytes_;
  RegionLayout layout_;
};

// ---- writer ----

class OwnModelSlots::Slot final : public consensus::MutableParamBuffer {
 public:
  Slot(std::shared_ptr<SharedRegion> region, std::size_t index, std::size_t floats)
      : region_(std::move(region)), index_(index), values_(region_->values(index), floats) {}
  std::span<const float> values() const override { return values_; }
  std::span<float> writable_values() override { return values_; }

  std::shared_ptr<SharedRegion> region_;
  std::size_t index_;
  std::span<float> values_;
  std::uint64_t published_ = 0;  // generation the current values went out under; 0: none yet
};

OwnModelSlots::OwnModelSlots(const std::string& name, std::uint64_t run_id, PeerId owner,
                             std::span<const PeerId> readers, std::size_t floats,
                             std::size_t slot_count)
    : name_(name) {
  if (slot_count == 0 || slot_count > kMaxSlots || readers.size() > kMaxReaders) {
    throw std::invalid_argument("shared models: " + std::to_string(slot_count) + " slots for " +
                                std::to_string(readers.size()) + " readers");
  }
  const RegionLayout layout(slot_count, readers.size(), floats);
  const std::string where = "shared memory /dev/shm" + name;
  ::shm_unlink(name.c_str());  // a stale object of a killed peer that had this endpoint
  os::UniqueFd fd(::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600));
  if (!fd.valid()) throw std::runtime_error(system_error("cannot create " + where, errno));
  void* base = MAP_FAILED;
  std::string failure;
  if (::ftruncate(fd.get(), static_cast<off_t>(layout.total_bytes)) != 0) {
    failure = system_error("cannot size " + where, errno);
  } else if (const int e = ::posix_fallocate(fd.get(), 0, static_cast<off_t>(layout.total_bytes))) {
    failure = system_error(
        "cannot reserve " + std::to_string(layout.total_bytes >> 20) + " MiB for " + where, e);
  } else {
    base = ::mmap(nullptr, layout.total_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
    if (base == MAP_FAILED) failure = system_error("cannot map " + where, errno);
  }
  fd.reset();  // the mapping stays
  if (base == MAP_FAILED) {
    ::shm_unlink(name.c_str());
    throw std::runtime_error(failure);
  }
  region_ = std::make_shared<SharedRegion>(base, layout.total_bytes, layout);
  RegionHeader& h = region_->header();
  h.magic = kRegionMagic;
  h.version = kRegionVersion;
  h.owner = owner;
  h.run_id = run_id;
  h.floats = floats;
  h.slot_count = static_cast<std::uint32_t>(slot_count);
  h.reader_count = static_cast<std::uint32_t>(readers.size());
  h.total_bytes = layout.total_bytes;
  std::copy(readers.begin(), readers.end(), region_->readers());
  for (std::size_t s = 0; s < slot_count; ++s) {
    slots_.push_back(std::make_shared<Slot>(region_, s, floats));
  }
}

OwnModelSlots::~OwnModelSlots() { ::shm_unlink(name_.c_str()); }

std::shared_ptr<consensus::MutableParamBuffer> OwnModelSlots::acquire() {
  std::vector<Slot*> order;
  for (auto& slot : slots_) order.push_back(slot.get());
  std::sort(order.begin(), order.end(),
            [](const Slot* a, const Slot* b) { return a->published_ < b->published_; });
  for (Slot* slot : order) {
    const std::size_t s = slot->index_;
    if (slots_[s].use_count() != 1 || region_->any_hold(s)) continue;
    // Dekker with the readers (see the header): announce the rewrite, then look again.
    auto generation = region_->generation(s);
    const std::uint64_t before = generation.load();
    generation.store(0);
    if (region_->any_hold(s)) {
      generation.store(before);
      continue;
    }
    // The last other reference may have been dropped on another thread (the compute
    // thread's job holds the model it computes on): pairs with the release in that
    // reference count's decrement.
    std::atomic_thread_fence(std::memory_order_acquire);
    slot->published_ = 0;
    return slots_[s];
  }
  return nullptr;
}

std::optional<wire::ModelSlotRef> OwnModelSlots::publish(const consensus::ParamBuffer& params) {
  for (auto& slot : slots_) {
    if (slot.get() != &params) continue;
    if (slot->published_ == 0) {
      slot->published_ = next_generation_++;
      region_->generation(slot->index_).store(slot->published_);  // releases the values
    }
    return wire::ModelSlotRef{static_cast<std::uint32_t>(slot->index_), slot->published_,
                              slot->values_.size()};
  }
  return std::nullopt;
}

// ---- reader ----

struct NeighbourModels::Mapped {
  std::shared_ptr<SharedRegion> region;
  std::size_t reader = 0;  // this peer's index among the region's readers
};

namespace {

// A neighbour's slot this peer holds: the writer leaves it alone until this is destroyed.
class HeldSlot final : public consensus::ParamBuffer {
 public:
  HeldSlot(std::shared_ptr<SharedRegion> region, std::size_t slot, std::size_t reader,
           std::size_t floats)
      : region_(std::move(region)),
        slot_(slot),
        reader_(reader),
        values_(region_->values(slot), floats) {}
  ~HeldSlot() override { region_->hold(slot_, reader_).fetch_sub(1); }
  std::span<const float> values() const override { return values_; }

 private:
  std::shared_ptr<SharedRegion> region_;
  std::size_t slot_, reader_;
  std::span<const float> values_;
};

}  // namespace

NeighbourModels::NeighbourModels(std::uint64_t run_id, PeerId self, std::size_t floats)
    : run_id_(run_id), self_(self), floats_(floats) {}

NeighbourModels::~NeighbourModels() = default;

// `from`'s region `name`, mapped and checked against this run, or what is wrong with it.
std::variant<std::shared_ptr<NeighbourModels::Mapped>, std::string> NeighbourModels::open_region(
    PeerId from, const std::string& name, const std::string& where) {
  os::UniqueFd fd(::shm_open(name.c_str(), O_RDWR, 0));
  if (!fd.valid()) return std::string(system_error("cannot open " + where, errno));
  struct stat info {};
  RegionHeader h{};
  const bool sized = ::fstat(fd.get(), &info) == 0 &&
                     static_cast<std::size_t>(info.st_size) >= sizeof(RegionHeader) &&
                     ::pread(fd.get(), &h, sizeof h, 0) == static_cast<ssize_t>(sizeof h);
  if (!sized || h.magic != kRegionMagic || h.version != kRegionVersion) {
    return std::string(where + " is not a fastk model region (version " +
                       std::to_string(kRegionVersion) + ")");
  }
  const std::string mismatch =
      h.owner != from       ? "belongs to peer " + std::to_string(h.owner)
      : h.run_id != run_id_ ? "belongs to another run"
      : h.floats != floats_ ? "holds models of " + std::to_string(h.floats) + " values, not " +
                                  std::to_string(floats_)
      : h.slot_count == 0 || h.slot_count > kMaxSlots || h.reader_count > kMaxReaders
          ? "has an impossible shape"
      : RegionLayout(h.slot_count, h.reader_count, h.floats).total_bytes != h.total_bytes ||
              h.total_bytes != static_cast<std::size_t>(info.st_size)
          ? "has the wrong size"
          : "";
  if (!mismatch.empty()) return std::string(where + " " + mismatch);
  void* base = ::mmap(nullptr, h.total_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  const int map_error = errno;
  fd.reset();  // the mapping stays
  if (base == MAP_FAILED) return std::string(system_error("cannot map " + where, map_error));
  auto region = std::make_shared<SharedRegion>(
      base, h.total_bytes, RegionLayout(h.slot_count, h.reader_count, h.floats));
  const std::uint32_t* readers = region->readers();
  const auto* me = std::find(readers, readers + h.reader_count, self_);
  if (me == readers + h.reader_count) {
    return std::string(where + " does not list peer " + std::to_string(self_) + " as a reader");
  }
  auto mapped = std::make_shared<Mapped>();
  mapped->region = std::move(region);
  mapped->reader = static_cast<std::size_t>(me - readers);
  return mapped;
}

NeighbourModels::Taken NeighbourModels::take(PeerId from, const std::string& name,
                                             const wire::ModelSlotRef& ref) {
  const std::string where = "peer " + std::to_string(from) + "'s shared memory /dev/shm" + name;
  auto invalid = [](std::string problem) {
    return Taken{Outcome::kInvalid, nullptr, std::move(problem)};
  };
  auto found = mapped_.find(from);
  if (found == mapped_.end()) {
    std::variant<std::shared_ptr<Mapped>, std::string> opened = open_region(from, name, where);
    if (auto* problem = std::get_if<std::string>(&opened)) return invalid(std::move(*problem));
    found = mapped_.emplace(from, std::get<std::shared_ptr<Mapped>>(std::move(opened))).first;
  }
  SharedRegion& region = *found->second->region;
  if (ref.slot >= region.layout().slot_count) {
    return invalid(where + ": no slot " + std::to_string(ref.slot) + " (it has " +
                   std::to_string(region.layout().slot_count) + ")");
  }
  if (ref.floats != floats_) {
    return invalid(where + ": the reference is to a model of " + std::to_string(ref.floats) +
                   " values, this run's has " + std::to_string(floats_));
  }
  const std::size_t reader = found->second->reader;
  // Dekker with the writer (see the header): hold, then check the slot still has this model.
  region.hold(ref.slot, reader).fetch_add(1);
  if (region.generation(ref.slot).load() != ref.generation) {
    region.hold(ref.slot, reader).fetch_sub(1);
    return {Outcome::kLapped, nullptr, {}};
  }
  return {Outcome::kHeld,
          std::make_shared<HeldSlot>(found->second->region, ref.slot, reader, floats_),
          {}};
}

bool remove_shared_models(const std::string& name) { return ::shm_unlink(name.c_str()) == 0; }

}  // namespace fastk::node::transport
