// Binding a peer to its share of the machine's CPUs ([cluster] bind_cpus, on by default).
//
// Why: on a machine with fewer cores than busy threads (8 peers of 3 threads on 2 cores in
// the peers benchmark), every model notification woke a thread on whichever CPU the
// scheduler picked: a cross-CPU wake-up (an inter-processor interrupt, costly in a VM) and
// threads migrating away from their caches. Peers in blocks in peer order, like mpirun's
// --bind-to core --map-by slot, put ring neighbours and a peer's own threads on one CPU;
// the training phase of the peers benchmark went from 2.3-3.1 s to 1.9-2.2 s (README).
#pragma once

#include <span>
#include <string>
#include <vector>

namespace fastk::node::os {

// The CPUs peer `local_index` of the `local_count` peers on this host gets out of `allowed`
// (the CPUs the process may run on, in order): contiguous blocks in peer order, one CPU
// shared by several peers when there are more peers than CPUs, several CPUs per peer when
// there are fewer. A peer whose block straddles two CPUs gets both. Empty when `allowed`
// is empty or the indices make no sense.
std::vector<int> cpu_share(std::span<const int> allowed, int local_index, int local_count);

// Binds the calling thread, and every thread it starts afterwards, to its cpu_share() of
// the CPUs it may run on now (the runtime skips this for ranks of mpirun or srun). Returns the
// CPUs, or throws std::runtime_error saying why the kernel refused.
std::vector<int> bind_to_cpu_share(int local_index, int local_count);

std::string describe_cpus(std::span<const int> cpus);  // "0-3", "1", "0,2"

// How many CPUs this process may run on now (1 when the kernel will not say).
int usable_cpus();

}  // namespace fastk::node::os
