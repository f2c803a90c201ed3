#include "node/config/experiment_config.h"

#include <fstream>
#include <sstream>
#include <string>

#include "coding/neighbourhood_code.h"
#include "coding/subsets.h"
#include "consensus/comeback.h"
#include "consensus/variants/variants.h"
#include "node/config/tables.h"
#include "topology/topology.h"

namespace fastk::node {

std::string resolve_path(const std::string& path, const std::filesystem::path& base_dir) {
  if (path.empty()) return path;
  std::filesystem::path p(path);
  return p.is_absolute() ? path : (base_dir / p).lexically_normal().string();
}

namespace {

// "a.b.c=value" applied to `root`: intermediate tables are created, the last key replaced.
// Returns the key path ("a.b.c"), or "" when the setting was refused.
std::string apply_override(toml::table& root, const std::string& setting, ConfigErrors& errors) {
  const std::string where = "--set " + setting;
  const auto equals = setting.find('=');
  if (equals == std::string::npos || equals == 0) {
    errors.add(where, "expected table.key=value");
    return "";
  }
  const std::string path = setting.substr(0, equals);
  const std::string text = setting.substr(equals + 1);
  std::vector<std::string> keys;
  for (std::size_t start = 0;;) {
    const auto dot = path.find('.', start);
    keys.push_back(path.substr(start, dot == std::string::npos ? dot : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  for (const auto& key : keys) {
    if (key.empty() || key.find_first_of(" \t") != std::string::npos) {
      errors.add(where, "'" + path + "' is not a key path (table.key, no empty parts or spaces)");
      return "";
    }
  }
  if (text.find_first_not_of(" \t") == std::string::npos) {
    errors.add(where, "no value after '=' (a string is written value or \"value\")");
    return "";
  }
  toml::table parsed;
  try {
    parsed = toml::parse("value = " + text);
  } catch (const toml::parse_error&) {
    parsed.insert_or_assign("value", text);  // a bare word: a string
  }
  toml::table* table = &root;
  for (std::size_t i = 0; i + 1 < keys.size(); ++i) {
    toml::node* next = table->get(keys[i]);
    if (next == nullptr) next = &table->insert_or_assign(keys[i], toml::table{}).first->second;
    table = next->as_table();
    if (table == nullptr) {
      errors.add(where, "'" + keys[i] + "' is not a table");
      return "";
    }
  }
  table->insert_or_assign(keys.back(), std::move(*parsed.get("value")));
  return path;
}

// Whether a problem at TOML path `problem` ("stragglers.slow_peers[0]", "consensus.policyy")
// is about what the override of `set` ("stragglers.slow_peers") wrote: the value itself, a
// part of it, or a table the override created.
bool concerns(const std::string& problem, const std::string& set) {
  const auto under = [](const std::string& inner, const std::string& outer) {
    return inner.size() > outer.size() && inner.starts_with(outer) &&
           (inner[outer.size()] == '.' || inner[outer.size()] == '[');
  };
  return problem == set || under(problem, set) || under(set, problem);
}

// A problem's origin (ConfigErrors::OriginOf): the file's line when the file wrote the value,
// else the last --set about it. toml++ keeps each value's source, so a key the file wrote and
// an override replaced is the override's.
ConfigErrors::OriginOf origin_of(const toml::table& root, const std::string& source,
                                 std::vector<std::pair<std::string, std::string>> applied) {
  return [&root, source, applied = std::move(applied)](const std::string& path) {
    const toml::node_view<const toml::node> found = toml::at_path(root, path);
    if (found) {
      const toml::source_region& where = found.node()->source();
      if (where.path && *where.path == source) {
        return source + ":" + std::to_string(where.begin.line);
      }
    }
    for (auto it = applied.rbegin(); it != applied.rend(); ++it) {
      if (concerns(path, it->first)) return "--set " + it->second;
    }
    return std::string();
  };
}

// crc and cyclic_mds make each peer's neighbours one block of windows (docs/coding.md §7.7):
// every peer needs as many neighbours as a window, and cyclic_mds at most kMaxMdsSubsets ways
// to lose `stragglers` of them. Said here, not when the peers start.
void check_cyclic_code(const coding::NeighbourhoodCodeSpec& spec,
                       const topology::TopologySchedule& schedule, ConfigErrors& errors) {
  const std::string scheme = "coding.scheme = \"" + coding::to_string(spec.scheme) + "\": peer ";
  for (topology::PeerId peer = 0; peer < schedule.size(); ++peer) {
    const auto degree = static_cast<int>(topology::peers_over_rounds(schedule, peer, true).size());
    if (degree < coding::block_size(spec)) {
      errors.add("coding.stragglers",
                 scheme + std::to_string(peer) + " has " + std::to_string(degree) +
                     " neighbours, fewer than the " + std::to_string(coding::block_size(spec)) +
                     " partitions each of them must hold: lower coding.stragglers (or "
                     "sub_blocks) or use a denser topology");
      return;
    }
    const std::uint64_t sets = coding::binomial(degree, degree - spec.stragglers);
    if (spec.scheme == coding::Scheme::kCyclicMds && sets > coding::kMaxMdsSubsets) {
      errors.add("coding.stragglers",
                 scheme + std::to_string(peer) + " has " + std::to_string(sets) + " ways to lose " +
                     std::to_string(spec.stragglers) + " of its " + std::to_string(degree) +
                     " neighbours, too many to choose a code from (at "
                     "most " +
                     std::to_string(coding::kMaxMdsSubsets) + ")");
      return;
    }
  }
}

// What only the graph itself tells (an edge list's peers, each peer's neighbours): attackers
// that are not peers, a clipped_gossip radius that no peer's neighbourhood can set, and
// neighbourhoods too small for a cyclic code.
void check_against_graph(const ExperimentConfig& config, ConfigErrors& errors) {
  const consensus::ProtocolConfig& protocol = config.consensus.protocol;
  const bool clipped = protocol.aggregation == "clipped_gossip" && protocol.clipping_radius <= 0;
  const bool unsized_attack = protocol.attack && config.topology.peers == 0;
  const bool cyclic_code = coding::cyclic(protocol.coding.scheme);
  if (!clipped && !unsized_attack && !cyclic_code) return;
  std::optional<topology::Topology> graph;
  try {
    graph = topology::build_topology(config.topology);
  } catch (const std::exception&) {
    return;  // [topology] names what is wrong with it
  }
  const int peers = graph->schedule->size();
  if (cyclic_code) check_cyclic_code(protocol.coding, *graph->schedule, errors);
  if (unsized_attack) {
    for (std::size_t i = 0; i < protocol.attack->peers.size(); ++i) {
      if (protocol.attack->peers[i] < peers) continue;
      errors.add("attack.peers[" + std::to_string(i) + "]",
                 "peer " + std::to_string(protocol.attack->peers[i]) +
                     " is not a peer of the run (0 to " + std::to_string(peers - 1) + ")");
    }
  }
  for (topology::PeerId peer = 0; clipped && peer < peers; ++peer) {
    const auto degree =
        static_cast<int>(topology::peers_over_rounds(*graph->schedule, peer, true).size());
    if (const auto why = consensus::unfit_for_clipped_gossip(protocol, peer, degree)) {
      errors.add("consensus.faulty_neighbours", *why);
      return;
    }
  }
}

// Every table of the file into `config`, in the order their checks need (run's seed first,
// the topology before what depends on its peers).
void read_tables(TableReader& top, ExperimentConfig& config, const std::filesystem::path& base_dir,
                 ConfigErrors& errors) {
  TableReader run = top.table("run");
  read_run_table(run, config.run);
  TableReader topology = top.table("topology");
  read_topology_table(topology, config.topology, config.run.seed, base_dir);
  TableReader cluster = top.table("cluster");
  read_cluster_table(cluster, config.cluster, config.topology.peers);
  TableReader security = top.table("security");
  read_security_table(security, config.security, base_dir);
  TableReader data = top.table("data");
  read_data_table(data, config.data, config.run.seed, base_dir);
  TableReader model = top.table("model");
  read_model_table(model, config.model, config.run.seed, base_dir);
  TableReader optimizer = top.table("optimizer");
  read_optimizer_table(optimizer, config.optimizer, config.run.seed);
  TableReader consensus = top.table("consensus");
  read_consensus_table(consensus, config.consensus, config.topology);
  TableReader coding = top.table("coding");
  read_coding_table(coding, config.consensus, config.topology);
  TableReader compression = top.table("compression");
  read_compression_table(compression, config.consensus, config.topology);
  TableReader attack = top.table("attack");
  read_attack_table(attack, config.consensus, config.topology);
  TableReader stragglers = top.table("stragglers");
  read_stragglers_table(stragglers, config.stragglers, config.run.seed);
  TableReader sim = top.table("sim");
  read_sim_table(sim, config.sim, base_dir);
  TableReader churn = top.table("churn");
  read_churn_table(churn, config, base_dir);
  const consensus::ProtocolConfig& protocol = config.consensus.protocol;
  const bool plain_gossip = !protocol.push_sum && !protocol.compression &&
                            protocol.coding.scheme == coding::Scheme::kNone &&
                            protocol.policy.kind != consensus::PolicyKind::kAdPsgd;
  const std::pair<const char*, bool> plain_gossip_only[] = {
      {"consensus.aggregation", protocol.aggregation != "mean"},
      {"attack", protocol.attack.has_value()},
      {"consensus.validate", protocol.validate},
  };
  for (const auto& [key, set] : plain_gossip_only) {
    if (set && !plain_gossip) {
      errors.add(key,
                 "is for plain gossip: push_sum, [compression], [coding] and policy "
                 "ad_psgd mix in their own way");
    }
  }
  if (protocol.local_steps > 1 && protocol.coding.scheme != coding::Scheme::kNone) {
    errors.add("consensus.local_steps",
               "and [coding] exclude each other: a coded gradient is "
               "one per gossip");
  }
  check_against_graph(config, errors);
  const bool checkpoints = config.run.checkpoint_every > 0 || config.run.checkpoint_every_s > 0;
  const auto why =
      consensus::why_no_comeback(config.consensus.protocol, consensus::Comeback::kFromCheckpoint);
  if (checkpoints && why) {
    errors.add("run.checkpoint_every", *why +
                                           ", so its checkpoints serve nothing: remove "
                                           "run.checkpoint_every and run.checkpoint_every_s");
  }
}

}  // namespace

ExperimentConfig parse_config(std::string_view text, const std::string& source,
                              const std::filesystem::path& base_dir,
                              const std::vector<std::string>& overrides) {
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    throw ConfigError(source + ":" + std::to_string(where.line) + ":" +
                      std::to_string(where.column) +
                      ": TOML syntax error: " + std::string(e.description()));
  }
  if (root.empty() && overrides.empty()) {
    // Every key has a default, but a file that sets none is a mistake (the wrong file, or
    // one not saved yet), not a request for the default 1000-iteration run.
    throw ConfigError(source +
                      ": the config is empty: nothing says what to run (start from "
                      "experiments/configs/quickstart.toml; fastk sim --help lists the tables)");
  }
  ExperimentConfig config;
  config.source = source;
  config.overrides = overrides;
  ConfigErrors errors;
  std::vector<std::pair<std::string, std::string>> applied;  // key path, setting
  for (const auto& setting : overrides) {
    std::string path = apply_override(root, setting, errors);
    if (!path.empty()) applied.emplace_back(std::move(path), setting);
  }
  // Values from the file carry its name as their source; those of --set do not.
  errors.set_origin_of(origin_of(root, source, std::move(applied)));
  TableReader top(&root, "", errors);
  read_tables(top, config, base_dir, errors);
  top.finish();
  errors.throw_if_any(source);
  return config;
}

ExperimentConfig load_config(const std::filesystem::path& path,
                             const std::vector<std::string>& overrides) {
  std::ifstream in(path);
  if (!in) throw ConfigError("cannot read config file '" + path.string() + "'");
  std::stringstream text;
  text << in.rdbuf();
  return parse_config(text.str(), path.string(), path.parent_path(), overrides);
}

std::uint64_t run_fingerprint(const std::filesystem::path& path,
                              const std::vector<std::string>& overrides) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  std::uint64_t h = 0xcbf29ce484222325ULL;
  const auto mix = [&](const std::string& bytes) {
    for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ULL;
  };
  mix(text.str());
  for (const auto& setting : overrides) mix('\0' + setting);
  return h;
}

}  // namespace fastk::node
