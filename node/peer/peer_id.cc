#include "node/peer/peer_id.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

namespace fastk::node {
namespace {

int check_range(long long id, int peer_count, const std::string& source) {
  if (id < 0 || id >= peer_count) {
    throw std::runtime_error("peer id " + std::to_string(id) + " (from " + source +
                             ") is out of range: the config has " + std::to_string(peer_count) +
                             " peers, ids 0.." + std::to_string(peer_count - 1));
  }
  return static_cast<int>(id);
}

}  // namespace

int resolve_peer_id(std::optional<int> id_flag, int peer_count, const EnvLookup& env) {
  if (id_flag) return check_range(*id_flag, peer_count, "--id");
  for (const char* name : kRankVariables) {
    const char* value = env(name);
    if (!value) continue;
    std::string_view text(value);
    unsigned long long id = 0;  // unsigned: a sign is as wrong as any other non-digit
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), id);
    if (text.empty() || error != std::errc{} || end != text.data() + text.size()) {
      throw std::runtime_error(std::string(name) + "='" + std::string(text) +
                               "' is not a peer id: expected a non-negative integer");
    }
    return check_range(static_cast<long long>(std::min<unsigned long long>(id, INT_MAX + 1ULL)),
                       peer_count, name);
  }
  throw std::runtime_error(
      "no peer id: pass --id I, or start the peers with mpirun or srun (which set "
      "OMPI_COMM_WORLD_RANK, PMI_RANK or SLURM_PROCID)");
}

int resolve_peer_id(std::optional<int> id_flag, int peer_count) {
  return resolve_peer_id(id_flag, peer_count, [](const char* name) { return std::getenv(name); });
}

}  // namespace fastk::node
