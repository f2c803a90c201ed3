// Models in POSIX shared memory (node/transport/shared_models.h): real shm objects, one
// unique name per test, removed at the end. Writer and readers share one process here; the
// multi-process path is covered by the system tests.
#include "node/transport/shared_models.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

namespace fastk::node::transport {
namespace {

using consensus::Params;
using Outcome = NeighbourModels::Outcome;
using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr std::uint64_t kRun = 0xFA57'0000'5EED'0001;
constexpr std::size_t kFloats = 1500;  // more than one page per slot
constexpr PeerId kWriter = 0;

// `floats` values with arbitrary bit patterns (NaNs, -0, denormals included), so any
// conversion or partial copy shows.
std::vector<float> pattern(std::uint32_t seed, std::size_t floats = kFloats) {
  std::vector<float> values(floats);
  std::uint32_t x = seed * 2654435761u + 1;
  for (float& v : values) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    v = std::bit_cast<float>(x);
  }
  return values;
}

void write(consensus::MutableParamBuffer& buffer, const std::vector<float>& values) {
  ASSERT_EQ(buffer.mutable_values().size(), values.size());
  std::memcpy(buffer.mutable_values().data(), values.data(), values.size() * sizeof(float));
}

bool same_bits(const consensus::ParamBuffer& buffer, const std::vector<float>& values) {
  return buffer.values().size() == values.size() &&
         std::memcmp(buffer.values().data(), values.data(), values.size() * sizeof(float)) == 0;
}

// Whether a shared-memory object `name` exists; any error other than ENOENT fails the test.
bool shm_exists(const std::string& name) {
  const int fd = ::shm_open(name.c_str(), O_RDONLY, 0);
  if (fd >= 0) {
    ::close(fd);
    return true;
  }
  EXPECT_EQ(errno, ENOENT) << std::strerror(errno);
  return false;
}

// A shared-memory object `name` that is not a model region: `bytes` bytes of `fill`.
void create_foreign_object(const std::string& name, std::size_t bytes, char fill,
                           mode_t mode = 0600) {
  const int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, mode);
  ASSERT_GE(fd, 0) << name << ": " << std::strerror(errno);
  const std::string junk(bytes, fill);
  const auto written = ::write(fd, junk.data(), junk.size());
  ::close(fd);
  ASSERT_EQ(written, static_cast<ssize_t>(bytes));
}

class SharedModels : public ::testing::Test {
 protected:
  // A name no other test (or test process) uses; removed after the test whatever happened.
  std::string fresh_name() {
    static int counter = 0;
    names_.push_back("/fastk-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) +
                     ".models");
    return names_.back();
  }
  void TearDown() override {
    for (const std::string& name : names_) remove_shared_models(name);
  }

  // Acquires a slot, writes `values`, publishes it.
  static wire::ModelSlotRef publish_new(OwnModelSlots& writer, const std::vector<float>& values) {
    auto slot = writer.acquire();
    EXPECT_NE(slot, nullptr) << "no free slot";
    if (!slot) return {};
    write(*slot, values);
    const auto ref = writer.publish(*slot);
    EXPECT_TRUE(ref.has_value());
    return ref.value_or(wire::ModelSlotRef{});
  }

  std::vector<std::string> names_;
};

TEST(SharedModelSlots, ElevenForTwoReadersCappedAtThirtyTwo) {
  EXPECT_EQ(shared_model_slots(2), 11u);
  EXPECT_EQ(shared_model_slots(1), 7u);
  EXPECT_EQ(shared_model_slots(0), 7u);  // as for one reader
  EXPECT_EQ(shared_model_slots(4), 19u);
  EXPECT_EQ(shared_model_slots(7), 31u);
  EXPECT_EQ(shared_model_slots(8), 32u);
  EXPECT_EQ(shared_model_slots(1000), 32u);
}

TEST_F(SharedModels, APublishedSlotIsReadBackBitIdenticallyInPlace) {
  const std::string name = fresh_name();
  const PeerId readers[] = {1, 2};
  OwnModelSlots writer(name, kRun, kWriter, readers, kFloats, 4);
  EXPECT_EQ(writer.name(), name);
  EXPECT_EQ(writer.slot_count(), 4u);
  EXPECT_TRUE(shm_exists(name));

  auto slot = writer.acquire();
  ASSERT_NE(slot, nullptr);
  const std::vector<float> values = pattern(1);
  write(*slot, values);
  const auto ref = writer.publish(*slot);
  ASSERT_TRUE(ref.has_value());
  EXPECT_LT(ref->slot, 4u);
  EXPECT_GT(ref->generation, 0u);
  EXPECT_EQ(ref->floats, kFloats);
  EXPECT_EQ(writer.publish(*slot), ref) << "a second publish must not start a new generation";

  for (PeerId self : readers) {
    NeighbourModels reader(kRun, self, kFloats);
    const auto taken = reader.take(kWriter, name, *ref);
    ASSERT_EQ(taken.outcome, Outcome::kHeld) << taken.problem;
    ASSERT_NE(taken.params, nullptr);
    EXPECT_TRUE(same_bits(*taken.params, values)) << "reader " << self;
    EXPECT_TRUE(taken.problem.empty());
    // In place: the reader sees the writer's memory, not a copy of it.
    slot->mutable_values()[7] = 42.0f;
    EXPECT_EQ(taken.params->values()[7], 42.0f);
    slot->mutable_values()[7] = values[7];
  }

  // Another slot: a new, later generation.
  auto other = writer.acquire();
  ASSERT_NE(other, nullptr);
  EXPECT_NE(other.get(), slot.get());
  const auto second = writer.publish(*other);
  ASSERT_TRUE(second.has_value());
  EXPECT_NE(second->slot, ref->slot);
  EXPECT_GT(second->generation, ref->generation);

  // Not one of the writer's slots, even with the right size.
  const consensus::VectorParams foreign{std::vector<float>(kFloats)};
  EXPECT_EQ(writer.publish(foreign), std::nullopt);
}

TEST_F(SharedModels, ASlotAReaderHoldsIsNotHandedOutUntilReleased) {
  const std::string name = fresh_name();
  const PeerId readers[] = {4, 9};  // the holder is the second reader listed
  OwnModelSlots writer(name, kRun, kWriter, readers, kFloats, 3);

  auto slot = writer.acquire();
  ASSERT_NE(slot, nullptr);
  const float* held_values = slot->values().data();
  write(*slot, pattern(2));
  const auto ref = writer.publish(*slot);
  ASSERT_TRUE(ref.has_value());
  NeighbourModels reader(kRun, 9, kFloats);
  auto first = reader.take(kWriter, name, *ref);
  auto second = reader.take(kWriter, name, *ref);  // the same model taken twice: two holds
  ASSERT_EQ(first.outcome, Outcome::kHeld) << first.problem;
  ASSERT_EQ(second.outcome, Outcome::kHeld) << second.problem;
  slot.reset();  // the writer's protocol let go of it; only the reader holds it now

  std::vector<std::shared_ptr<consensus::MutableParamBuffer>> others;
  for (int i = 0; i < 2; ++i) {
    others.push_back(writer.acquire());
    ASSERT_NE(others.back(), nullptr) << "slot " << i << " of the 2 free ones";
    EXPECT_NE(others.back()->values().data(), held_values) << "handed out a held slot";
  }
  EXPECT_EQ(writer.acquire(), nullptr) << "every slot is in use";

  first.params.reset();
  EXPECT_EQ(writer.acquire(), nullptr) << "the reader still holds it once";
  EXPECT_TRUE(same_bits(*second.params, pattern(2))) << "rewritten while held";
  second.params.reset();
  auto back = writer.acquire();
  ASSERT_NE(back, nullptr) << "released by the reader, the slot must come back";
  EXPECT_EQ(back->values().data(), held_values);
}

TEST_F(SharedModels, ASlotTheWritersProcessStillUsesIsNotHandedOut) {
  const std::string name = fresh_name();
  const PeerId readers[] = {1};
  OwnModelSlots writer(name, kRun, kWriter, readers, kFloats, 2);
  auto a = writer.acquire();
  auto b = writer.acquire();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a.get(), b.get());
  EXPECT_EQ(writer.acquire(), nullptr);
  std::shared_ptr<const void> queued_send = b;  // e.g. a send's keep-alive
  b.reset();
  EXPECT_EQ(writer.acquire(), nullptr) << "a send still refers to the slot";
  queued_send.reset();
  EXPECT_NE(writer.acquire(), nullptr);
}

TEST_F(SharedModels, ARewrittenSlotIsLappedAndTheFailedTakeLeavesNoHold) {
  const std::string name = fresh_name();
  const PeerId readers[] = {1};
  OwnModelSlots writer(name, kRun, kWriter, readers, kFloats, 1);  // one slot: always reused
  const auto old_ref = publish_new(writer, pattern(3));
  NeighbourModels reader(kRun, 1, kFloats);

  // Being rewritten (acquired again, generation void) when the reader looks.
  auto rewriting = writer.acquire();
  ASSERT_NE(rewriting, nullptr) << "nobody holds the only slot";
  const auto lapped = reader.take(kWriter, name, old_ref);
  EXPECT_EQ(lapped.outcome, Outcome::kLapped);
  EXPECT_EQ(lapped.params, nullptr);
  rewriting.reset();
  ASSERT_NE(writer.acquire(), nullptr) << "the lapped take must have taken its hold back";

  // Rewritten and published again: the old reference names nothing any more.
  const std::vector<float> newer = pattern(4);
  const auto new_ref = publish_new(writer, newer);
  EXPECT_EQ(new_ref.slot, old_ref.slot);
  EXPECT_GT(new_ref.generation, old_ref.generation);
  EXPECT_EQ(reader.take(kWriter, name, old_ref).outcome, Outcome::kLapped);
  const auto held = reader.take(kWriter, name, new_ref);
  ASSERT_EQ(held.outcome, Outcome::kHeld) << held.problem;
  EXPECT_TRUE(same_bits(*held.params, newer));
  EXPECT_EQ(writer.acquire(), nullptr) << "the new model is held";
}

// The Dekker handshake under real concurrency: a writer thread keeps rewriting the slots
// while a reader thread takes the newest model and checks that a held slot never changes.
TEST_F(SharedModels, AHeldSlotNeverChangesWhileAWriterThreadRewritesSlots) {
  const std::string name = fresh_name();
  const PeerId readers[] = {1};
  constexpr std::size_t kSmall = 256;
  OwnModelSlots writer(name, kRun, kWriter, readers, kSmall, 3);
  struct Latest {
    std::mutex mutex;
    wire::ModelSlotRef ref;
    float value = 0;
  } latest;
  std::atomic<bool> done{false};
  std::atomic<int> held{0};
  // At least kModels models, and on until the reader held kHeld of them: bounded in time
  // (not in models, which a loaded machine can write before the reader thread runs at all),
  // so a reader that never gets one fails instead of hanging.
  constexpr int kModels = 20000, kHeld = 200;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);

  std::thread writing([&] {
    std::shared_ptr<consensus::MutableParamBuffer> current;  // the writer's own model
    for (int m = 1; m <= kModels || (held < kHeld && std::chrono::steady_clock::now() < give_up);) {
      auto slot = writer.acquire();
      if (!slot) {
        std::this_thread::yield();
        continue;
      }
      const auto value = static_cast<float>(m++);
      for (float& v : slot->mutable_values()) v = value;
      const auto ref = writer.publish(*slot);
      current = slot;
      std::lock_guard lock(latest.mutex);
      latest.ref = *ref;
      latest.value = value;
    }
    done = true;
  });

  NeighbourModels reader(kRun, 1, kSmall);
  int lapped = 0, changed = 0, invalid = 0;
  while (!done) {
    wire::ModelSlotRef ref;
    float value = 0;
    {
      std::lock_guard lock(latest.mutex);
      ref = latest.ref;
      value = latest.value;
    }
    if (ref.generation == 0) continue;
    const auto taken = reader.take(kWriter, name, ref);
    if (taken.outcome == Outcome::kInvalid) ++invalid;
    if (taken.outcome == Outcome::kLapped) ++lapped;
    if (taken.outcome != Outcome::kHeld) continue;
    ++held;
    for (int look = 0; look < 3; ++look) {
      for (float v : taken.params->values()) changed += v != value ? 1 : 0;
      std::this_thread::yield();
    }
  }
  writing.join();
  EXPECT_EQ(changed, 0) << "a held slot was rewritten";
  EXPECT_EQ(invalid, 0);
  EXPECT_GE(held, kHeld);
  RecordProperty("held", held.load());
  RecordProperty("lapped", lapped);
}

class InvalidReferences : public SharedModels {
 protected:
  void SetUp() override {
    name_ = fresh_name();
    writer_ = std::make_unique<OwnModelSlots>(name_, kRun, kWriter, kReaders, kFloats, 4);
    ref_ = publish_new(*writer_, pattern(5));
  }
  // What a fresh reader `self` of run `run` gets for `ref` from `from`.
  NeighbourModels::Taken take(PeerId from, const std::string& name, wire::ModelSlotRef ref,
                              PeerId self = 1, std::uint64_t run = kRun,
                              std::size_t floats = kFloats) {
    NeighbourModels reader(run, self, floats);
    auto taken = reader.take(from, name, ref);
    EXPECT_EQ(taken.outcome, Outcome::kInvalid);
    EXPECT_EQ(taken.params, nullptr);
    return taken;
  }
  static constexpr PeerId kReaders[] = {1, 2};
  std::string name_;
  std::unique_ptr<OwnModelSlots> writer_;
  wire::ModelSlotRef ref_;
};

TEST_F(InvalidReferences, TheValidReferenceIsHeld) {
  NeighbourModels reader(kRun, 2, kFloats);
  const auto taken = reader.take(kWriter, name_, ref_);
  EXPECT_EQ(taken.outcome, Outcome::kHeld) << taken.problem;
  EXPECT_TRUE(same_bits(*taken.params, pattern(5)));
}

TEST_F(InvalidReferences, SlotIndexOutOfRange) {
  wire::ModelSlotRef ref = ref_;
  ref.slot = 4;
  EXPECT_THAT(take(kWriter, name_, ref).problem,
              AllOf(HasSubstr(name_), HasSubstr("no slot 4"), HasSubstr("it has")));
  ref.slot = 0xFFFFFFFFu;
  EXPECT_THAT(take(kWriter, name_, ref).problem, HasSubstr("slot 4294967295"));
}

TEST_F(InvalidReferences, WrongFloatCountInTheReference) {
  wire::ModelSlotRef ref = ref_;
  ref.floats = kFloats + 1;
  EXPECT_THAT(take(kWriter, name_, ref).problem,
              AllOf(HasSubstr("a model of 1501 values"), HasSubstr("this run's has 1500")));
  ref.floats = 0;
  EXPECT_THAT(take(kWriter, name_, ref).problem, HasSubstr("0 values"));
}

TEST_F(InvalidReferences, RegionOfAnotherModelSize) {
  wire::ModelSlotRef ref = ref_;
  ref.floats = kFloats - 1;
  EXPECT_THAT(take(kWriter, name_, ref, 1, kRun, kFloats - 1).problem,
              HasSubstr("holds models of 1500 values, not 1499"));
}

TEST_F(InvalidReferences, NameThatDoesNotExist) {
  const std::string missing = name_ + "-missing";
  EXPECT_THAT(take(kWriter, missing, ref_).problem,
              AllOf(HasSubstr("cannot open"), HasSubstr(missing), HasSubstr("peer 0"),
                    HasSubstr(std::strerror(ENOENT))));
}

TEST_F(InvalidReferences, RegionOfAnotherRun) {
  EXPECT_THAT(take(kWriter, name_, ref_, 1, kRun + 1).problem,
              AllOf(HasSubstr(name_), HasSubstr("belongs to another run")));
}

TEST_F(InvalidReferences, RegionOwnedByAnotherPeer) {
  // Peer 3 names peer 0's region as its own.
  EXPECT_THAT(take(3, name_, ref_).problem,
              AllOf(HasSubstr("peer 3's shared memory"), HasSubstr("belongs to peer 0")));
}

TEST_F(InvalidReferences, ReaderNotListedInTheRegion) {
  EXPECT_THAT(take(kWriter, name_, ref_, 5).problem, HasSubstr("does not list peer 5 as a reader"));
}

TEST_F(InvalidReferences, ObjectThatIsNotAModelRegion) {
  const std::string junk = fresh_name();
  ASSERT_NO_FATAL_FAILURE(create_foreign_object(junk, 100, 'x'));
  EXPECT_THAT(take(kWriter, junk, ref_).problem, HasSubstr("is not a fastk model region"));
  const std::string empty = fresh_name();
  ASSERT_NO_FATAL_FAILURE(create_foreign_object(empty, 0, 'x'));
  EXPECT_THAT(take(kWriter, empty, ref_).problem, HasSubstr("is not a fastk model region"));
}

TEST_F(InvalidReferences, AFailedLookLeavesNoHoldAndDoesNotPoisonTheReader) {
  NeighbourModels reader(kRun, 1, kFloats);
  EXPECT_EQ(reader.take(kWriter, name_ + "-missing", ref_).outcome, Outcome::kInvalid);
  wire::ModelSlotRef out_of_range = ref_;
  out_of_range.slot = 9;
  EXPECT_EQ(reader.take(kWriter, name_, out_of_range).outcome, Outcome::kInvalid);
  const auto taken = reader.take(kWriter, name_, ref_);
  ASSERT_EQ(taken.outcome, Outcome::kHeld) << taken.problem;
  // Of the 4 slots one is published (held by the reader), 3 are free, and no invalid look
  // left a hold behind.
  std::vector<std::shared_ptr<consensus::MutableParamBuffer>> free;
  while (auto slot = writer_->acquire()) free.push_back(slot);
  EXPECT_EQ(free.size(), 3u);
}

TEST_F(SharedModels, TheWritersDestructorUnlinksButHeldModelsStayReadable) {
  const std::string name = fresh_name();
  const PeerId readers[] = {1};
  auto writer = std::make_unique<OwnModelSlots>(name, kRun, kWriter, readers, kFloats, 2);
  const std::vector<float> values = pattern(6);
  auto own = writer->acquire();
  ASSERT_NE(own, nullptr);
  write(*own, values);
  const auto ref = writer->publish(*own);
  ASSERT_TRUE(ref.has_value());
  NeighbourModels reader(kRun, 1, kFloats);
  const auto taken = reader.take(kWriter, name, *ref);
  ASSERT_EQ(taken.outcome, Outcome::kHeld) << taken.problem;

  writer.reset();
  errno = 0;
  EXPECT_EQ(::shm_open(name.c_str(), O_RDONLY, 0), -1);
  EXPECT_EQ(errno, ENOENT) << "the writer's destructor must unlink " << name;
  EXPECT_TRUE(same_bits(*taken.params, values)) << "the reader's mapping must outlive the name";
  EXPECT_TRUE(same_bits(*own, values)) << "the writer's own buffer too";
  EXPECT_FALSE(remove_shared_models(name)) << "nothing left to remove";

  // A reader that had not mapped the region yet can no longer find it.
  NeighbourModels late(kRun, 1, kFloats);
  EXPECT_EQ(late.take(kWriter, name, *ref).outcome, Outcome::kInvalid);
}

TEST_F(SharedModels, RemoveSharedModelsRemovesAnExistingObjectOnly) {
  const std::string name = fresh_name();
  EXPECT_FALSE(remove_shared_models(name));
  const PeerId readers[] = {1};
  OwnModelSlots writer(name, kRun, kWriter, readers, kFloats, 2);
  EXPECT_TRUE(remove_shared_models(name));
  EXPECT_FALSE(shm_exists(name));
  EXPECT_FALSE(remove_shared_models(name));
}

TEST_F(SharedModels, AStaleObjectUnderTheNameIsReplaced) {
  const std::string name = fresh_name();
  ASSERT_NO_FATAL_FAILURE(create_foreign_object(name, 100, '\x7f', 0644));

  const PeerId readers[] = {1};
  OwnModelSlots writer(name, kRun, kWriter, readers, kFloats, 2);
  const int again = ::shm_open(name.c_str(), O_RDONLY, 0);
  ASSERT_GE(again, 0) << std::strerror(errno);
  struct stat info {};
  ASSERT_EQ(::fstat(again, &info), 0);
  ::close(again);
  EXPECT_GT(info.st_size, 2 * static_cast<off_t>(kFloats * sizeof(float)));
  EXPECT_EQ(info.st_size % 4096, 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u) << "a new object, not the stale one";

  const std::vector<float> values = pattern(7);
  const auto ref = publish_new(writer, values);
  NeighbourModels reader(kRun, 1, kFloats);
  const auto taken = reader.take(kWriter, name, ref);
  ASSERT_EQ(taken.outcome, Outcome::kHeld) << taken.problem;
  EXPECT_TRUE(same_bits(*taken.params, values));
}

TEST_F(SharedModels, ImpossibleShapesAndNamesAreRefusedWithTheReason) {
  const std::string name = fresh_name();
  const PeerId readers[] = {1};
  EXPECT_THROW(OwnModelSlots(name, kRun, kWriter, readers, kFloats, 0), std::invalid_argument);
  EXPECT_THROW(OwnModelSlots(name, kRun, kWriter, readers, kFloats, 33), std::invalid_argument);
  EXPECT_FALSE(shm_exists(name)) << "refused before creating anything";
  EXPECT_NO_THROW(OwnModelSlots(name, kRun, kWriter, readers, kFloats, 32));
  const std::string bad = "/fastk-test-" + std::to_string(::getpid()) + "/with/slashes";
  try {
    OwnModelSlots writer(bad, kRun, kWriter, readers, kFloats, 2);
    ADD_FAILURE() << "created " << bad;
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("cannot create"), HasSubstr(bad)));
  }
}

}  // namespace
}  // namespace fastk::node::transport
