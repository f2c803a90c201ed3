// Models in shared memory, for peers on one machine ([cluster] local_transport = "shm").
//
// Why: over a Unix-domain socket every model (407 kB for the MLP 784-128-10) is checksummed
// by both ends, copied into the kernel once per neighbour and out again by each, and carried
// in freshly allocated socket buffers; on 2 cores that cost more CPU than the gradients
// (README, "Peers benchmark"). Here a peer's protocol writes each new model straight into a
// slot of a POSIX shared-memory object that its neighbours have mapped; the ZeroMQ message
// (SHARED_MODEL, node/WIRE.md) only names the slot, and a neighbour mixes it in place. No
// copy, no checksum over the values: they never leave this machine's memory, and the
// protocol below guarantees a slot is not rewritten while anyone reads it.
//
// Region of one peer (the writer), laid out by RegionLayout:
//   RegionHeader | reader ids (u32 each) | one SlotState per slot (a generation, then one
//   hold counter per reader; cache-line aligned) | slot values (page aligned)
//
// Without locks, a Dekker handshake with sequentially consistent atomics:
//   writer, to reuse slot s (nothing in its own process refers to it any more): if every
//     hold of s is 0, store generation 0 ("being written"), then read the holds again; if
//     one is set now, restore the generation and take another slot.
//   reader, on SHARED_MODEL(slot s, generation g): add 1 to its hold of s, then read the
//     generation; if it is not g (the writer lapped it), take the hold back and drop the
//     message: a newer model from the writer is on its way.
// Either the writer sees the hold or the reader sees the new generation, so a slot is never
// rewritten while a reader holds it. A reader holds a slot as long as its protocol keeps
// the model (its mailbox, the update), and lets go when the model is dropped.
//
// Failure: a reader that dies holding slots leaks them (at most the few its mailbox held);
// when no slot is free the writer's protocol uses a buffer of its own and the model goes
// over the socket (MODEL), so nothing waits on a dead peer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "consensus/params.h"
#include "node/wire/format.h"
#include "node/wire/model_slot_payload.h"

namespace fastk::node::transport {

using wire::PeerId;

// Slots a writer with `readers` neighbours gets: its own models (the current one, the
// adapted one of adapt-then-combine, the one being written), plus what each neighbour may
// hold (mailbox, iteration-k model, one arriving, one in the writer's queue of refused
// sends: under policy full up to two, or staleness + 2, are held there, and those beyond the
// budget take slots from the others), capped at 32. Running short only sends a model over
// the socket instead.
std::size_t shared_model_slots(std::size_t readers);

class SharedRegion;  // a mapped region, shared by the buffers that point into it

// The writer's side: the slots its protocol writes its models into.
class OwnModelSlots {
 public:
  // Creates the shared-memory object `name` (replacing a stale one: the caller has bound
  // this peer's socket, so no live peer owns the name) with `slot_count` slots of `floats`
  // values, its pages reserved up front so a full /dev/shm fails here and not with SIGBUS
  // later. `readers` are the peers it sends models to. Throws std::runtime_error naming the
  // object and the reason.
  OwnModelSlots(const std::string& name, std::uint64_t run_id, PeerId owner,
                std::span<const PeerId> readers, std::size_t floats, std::size_t slot_count);
  ~OwnModelSlots();  // unlinks the name; mapped buffers stay valid until released
  OwnModelSlots(const OwnModelSlots&) = delete;
  OwnModelSlots& operator=(const OwnModelSlots&) = delete;

  // A slot nobody refers to (the least recently published first), or nullptr when all are
  // in use. Its previous generation is void from now on. For PeerProtocol's BufferSource.
  std::shared_ptr<consensus::MutableParamBuffer> acquire();

  // Where `params` is, if it is one of these slots: publishes the values written since
  // acquire() under a new generation (once; later calls give the same reference).
  // nullopt for any other buffer.
  std::optional<wire::ModelSlotRef> publish(const consensus::ParamBuffer& params);

  const std::string& name() const { return name_; }
  std::size_t slot_count() const { return slots_.size(); }

 private:
  class Slot;
  std::string name_;
  std::shared_ptr<SharedRegion> region_;
  std::vector<std::shared_ptr<Slot>> slots_;
  std::uint64_t next_generation_ = 1;
};

// The reader's side: its neighbours' regions, mapped on first use.
class NeighbourModels {
 public:
  NeighbourModels(std::uint64_t run_id, PeerId self, std::size_t floats);
  ~NeighbourModels();

  enum class Outcome { kHeld, kLapped, kInvalid };
  struct Taken {
    Outcome outcome = Outcome::kInvalid;
    consensus::Params params;  // kHeld: the slot, held until the last copy is dropped
    std::string problem;       // kInvalid: what was wrong, for the log
  };
  // The model `ref` names in `from`'s region `name`. kLapped when the slot was rewritten
  // before this look (benign), kInvalid for a reference or region that does not fit this
  // run (wrong slot, size, owner, run, or a name that cannot be mapped). Never throws for
  // such input.
  Taken take(PeerId from, const std::string& name, const wire::ModelSlotRef& ref);
  // `from` restarted: its region is a new object under the old name, mapped again on next
  // use (models taken from the old one stay valid while held).
  void forget(PeerId from) { mapped_.erase(from); }

 private:
  struct Mapped;
  std::variant<std::shared_ptr<Mapped>, std::string> open_region(PeerId from,
                                                                 const std::string& name,
                                                                 const std::string& where);
  std::uint64_t run_id_;
  PeerId self_;
  std::size_t floats_;
  std::map<PeerId, std::shared_ptr<Mapped>> mapped_;
};

// Removes the shared-memory object `name` if it exists (the launcher, after its peers
// exited, for peers that were killed before they could). True if one was removed.
bool remove_shared_models(const std::string& name);

}  // namespace fastk::node::transport
