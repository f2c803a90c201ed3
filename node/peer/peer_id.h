// Which peer this process is: from `fastk node --id I`, or from the environment that a
// launcher sets (mpirun: OMPI_COMM_WORLD_RANK or PMI_RANK; srun: SLURM_PROCID), so existing
// launchers can start peers without knowing about fastk.
#pragma once

#include <functional>
#include <optional>

namespace fastk::node {

// Looks up an environment variable; null when unset. std::getenv by default, a map in tests.
using EnvLookup = std::function<const char*(const char* name)>;

// The launcher variables read, in order of preference.
inline constexpr const char* kRankVariables[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK",
                                                 "SLURM_PROCID"};

// `id_flag` (from --id) wins; otherwise the first rank variable that is set. Throws
// std::runtime_error saying what to fix when no id is given, when a variable is not a
// non-negative integer, or when the id is not below `peer_count`.
int resolve_peer_id(std::optional<int> id_flag, int peer_count, const EnvLookup& env);
int resolve_peer_id(std::optional<int> id_flag, int peer_count);  // from the real environment

}  // namespace fastk::node
