// [compression]: compressed gossip, CHOCO-SGD style (docs/compression.md).
#include <algorithm>

#include "compression/compressor.h"
#include "consensus/peer_protocol.h"
#include "consensus/variants/compressed_gossip.h"
#include "node/config/tables.h"
#include "topology/topology.h"

namespace fastk::node {
namespace {

std::string kind_name(const std::optional<compression::CompressorSpec>& spec) {
  return spec ? compression::to_string(spec->kind) : "none";
}

// The consensus step a compressor gets unless the table sets one: clear of the steps that
// failed to learn in the sweep of docs/compression.md §5.1. The quantisers keep nearly every bit,
// so the estimates may move all the way; the others' estimates lag their models, and a large step
// mixes the lag in until the training diverges.
double default_consensus_step(compression::Kind kind) {
  switch (kind) {
    case compression::Kind::kFloat16:
    case compression::Kind::kInt8:
      return 1.0;
    case compression::Kind::kQsgd:
      return 0.05;  // 0.1 held, 0.2 did not
    case compression::Kind::kTopK:
      return 0.05;  // 0.2 held, 0.5 did not
    case compression::Kind::kRandomK:
      return 0.02;  // 0.02 held, 0.05 did not
  }
  return 1.0;
}

void check_compatible(TableReader& t, const consensus::ProtocolConfig& protocol,
                      const topology::TopologySpec& topology) {
  const auto refuse = [&](const std::string& why) { t.errors().add(t.path_of("kind"), why); };
  if (protocol.order != consensus::UpdateOrder::kAdaptThenCombine) {
    refuse(
        "compressed gossip steps, then sends its difference: set consensus.order = "
        "\"adapt_then_combine\"");
  }
  if (protocol.push_sum) refuse("compressed gossip and consensus.push_sum exclude each other");
  if (protocol.coding.scheme != coding::Scheme::kNone) {
    refuse("compressed gossip and [coding] exclude each other");
  }
  if (protocol.policy.kind == consensus::PolicyKind::kAdPsgd) {
    refuse("compressed gossip and consensus.policy = \"ad_psgd\" exclude each other");
  }
  std::optional<topology::Topology> graph;
  try {
    graph = topology::build_topology(topology);
  } catch (const std::exception&) {
    return;  // [topology] names what is wrong with it
  }
  if (const auto why = consensus::unfit_for_compressed_gossip(*graph->schedule)) {
    refuse("compressed gossip " + *why);
  }
}

// A consensus step key, if the table has it.
std::optional<double> optional_step(TableReader& t, const std::string& key) {
  if (!t.has(key)) return std::nullopt;
  double value = 1.0;
  t.read(key, value, 1e-9, 1.0);
  return value;
}

// The error reset keys (compression/error_reset.h) as read.
struct ResetKeys {
  int every = 0;  // 0: no error reset
  std::string kind = "fp16";
  std::optional<double> step;
};

ResetKeys read_reset_keys(TableReader& t) {
  ResetKeys keys;
  t.read("reset_every", keys.every, 0, 1 << 30);
  t.read("reset_kind", keys.kind);
  keys.step = optional_step(t, "reset_consensus_step");
  return keys;
}

// The error reset the keys ask for: the reset's compressor with the run's chunk and levels,
// and its default step; none with reset_every = 0 (the other keys are checked still, and do
// nothing, as chunk does for a kind without chunks: a resolved config echoes them).
std::optional<compression::ErrorReset> error_reset(TableReader& t, const ResetKeys& keys,
                                                   const compression::CompressorSpec& base) {
  compression::ErrorReset reset;
  reset.every = std::max(keys.every, 1);
  reset.spec = base;
  try {
    reset.spec.kind = compression::parse_kind(keys.kind);
    reset.consensus_step = keys.step.value_or(default_consensus_step(reset.spec.kind));
    compression::check(reset);
  } catch (const std::invalid_argument& e) {
    t.errors().add(t.path_of("reset_kind"), e.what());
    return std::nullopt;
  }
  if (keys.every == 0) return std::nullopt;
  return reset;
}

}  // namespace

void read_compression_table(TableReader& t, ConsensusConfig& config,
                            const topology::TopologySpec& topology) {
  consensus::ProtocolConfig& protocol = config.protocol;
  std::string kind = "none";
  t.read("kind", kind);
  compression::CompressorSpec spec;
  int chunk = static_cast<int>(spec.chunk), levels = static_cast<int>(spec.levels);
  t.read("chunk", chunk, 1, 1 << 20);
  t.read("levels", levels, 1, 127);
  spec.chunk = static_cast<std::uint32_t>(chunk);
  spec.levels = static_cast<std::uint32_t>(levels);
  t.read("fraction", spec.fraction, 1e-9, 1.0);
  const std::optional<double> step = optional_step(t, "consensus_step");
  const ResetKeys reset = read_reset_keys(t);
  t.finish();
  if (kind == "none") {
    protocol.compression.reset();
    protocol.error_reset.reset();
    if (reset.every > 0) {
      t.errors().add(t.path_of("reset_every"), "error reset needs a compression.kind");
    }
    return;
  }
  try {
    spec.kind = compression::parse_kind(kind);
  } catch (const std::invalid_argument& e) {
    t.errors().add(t.path_of("kind"), std::string(e.what()) + " or none");
    return;
  }
  try {
    compression::check(spec);
  } catch (const std::invalid_argument& e) {
    t.errors().add(t.path_of("kind"), e.what());
    return;
  }
  protocol.compression = spec;
  protocol.consensus_step = step.value_or(default_consensus_step(spec.kind));
  protocol.error_reset = error_reset(t, reset, spec);
  check_compatible(t, protocol, topology);
}

nlohmann::ordered_json compression_table_json(const ConsensusConfig& config) {
  const auto& c = config.protocol.compression;
  const compression::CompressorSpec spec = c.value_or(compression::CompressorSpec{});
  const auto& reset = config.protocol.error_reset;
  constexpr auto fp16 = compression::Kind::kFloat16;
  return {{"kind", kind_name(c)},
          {"chunk", spec.chunk},
          {"levels", spec.levels},
          {"fraction", spec.fraction},
          {"consensus_step", config.protocol.consensus_step},
          {"reset_every", reset ? reset->every : 0},
          {"reset_kind", compression::to_string(reset ? reset->spec.kind : fp16)},
          {"reset_consensus_step", reset ? reset->consensus_step : 1.0}};
}

}  // namespace fastk::node
