// Wall-clock time as Unix seconds: what peers and their launcher share (the instants model
// snapshots are taken at, a run's epoch), unlike each process's steady clock.
#pragma once

#include <chrono>

namespace fastk::node {

inline double unix_now_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace fastk::node
