// fastk topo: graph and mixing-matrix facts, from flags or from a config's [topology]; with
// a coding scheme also where a coded run puts its data.
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <utility>

#include "node/cli/commands.h"
#include "node/config/experiment_config.h"
#include "node/report/placement_report.h"
#include "node/report/topology_report.h"
#include "node/training/peer_trainer.h"
#include "topology/facts.h"

namespace fastk::node {
namespace {

struct TopoOptions {
  std::string kind;
  std::string config;
  std::string weights;
  topology::TopologySpec flags;  // values of the flags given on the command line
  double eps = 1e-3;
  bool json = false;
  bool matrix = false;
  std::string coding;  // scheme; empty: the config's [coding]
  int coding_stragglers = 1;
  int coding_sub_blocks = 2;
  bool dynamic_roles = false;
  std::string dot;
};

// The topology and code to describe: the config's (if given), with the flags given on the
// command line on top, so `--config X --peers 32` explores a variant of X.
std::pair<topology::TopologySpec, coding::NeighbourhoodCodeSpec> topo_specs(CLI::App& cmd,
                                                                            const TopoOptions& o) {
  topology::TopologySpec spec;
  coding::NeighbourhoodCodeSpec code;
  if (!o.config.empty()) {
    const ExperimentConfig config = load_config(o.config);
    spec = config.topology;
    code = config.consensus.protocol.coding;
  }
  if (!o.kind.empty()) {
    spec.kind = topology::parse_topology_kind(o.kind);
    if (o.config.empty() && spec.kind == topology::TopologyKind::kEdgeList &&
        !cmd.count("--peers")) {
      spec.peers = 0;  // from the file
    }
  }
  auto given = [&](const char* flag) { return cmd.count(flag) > 0; };
  if (given("--peers")) spec.peers = o.flags.peers;
  if (given("--rows")) spec.rows = o.flags.rows;
  if (given("--cols")) spec.cols = o.flags.cols;
  if (given("--degree")) spec.degree = o.flags.degree;
  if (given("--probability")) spec.probability = o.flags.probability;
  if (given("--nearest")) spec.nearest = o.flags.nearest;
  if (given("--rewire")) spec.rewire = o.flags.rewire;
  if (given("--seed")) spec.seed = o.flags.seed;
  if (given("--file")) spec.file = o.flags.file;
  if (given("--directed")) spec.directed = o.flags.directed;
  if (given("--weights")) spec.weights = topology::parse_weight_rule(o.weights);
  if (given("--weights-file")) {
    spec.weights_file = o.flags.weights_file;
    if (!given("--weights")) spec.weights = topology::WeightRule::kFile;
  }
  if ((given("--rows") || given("--cols")) && !given("--peers")) spec.peers = 0;
  if (given("--coding")) code.scheme = coding::parse_scheme(o.coding);
  if (given("--coding-stragglers")) code.stragglers = o.coding_stragglers;
  if (given("--coding-sub-blocks")) code.sub_blocks = o.coding_sub_blocks;
  if (given("--dynamic-roles")) code.dynamic_roles = o.dynamic_roles;
  if (coding::sends_shares(code.scheme) && code.dynamic_roles) {
    throw std::invalid_argument("--dynamic-roles needs --coding frc: a " +
                                coding::to_string(code.scheme) +
                                " share is tied to its sender's place in the block");
  }
  if (given("--coding-sub-blocks") && !coding::cuts_messages(code.scheme)) {
    throw std::invalid_argument("--coding-sub-blocks applies to --coding mds or cyclic_mds only");
  }
  return {spec, code};
}

void run_topo(CLI::App& cmd, const TopoOptions& o) {
  const auto [spec, code] = topo_specs(cmd, o);
  topology::Topology topology = topology::build_topology(spec);
  if (o.matrix && topology.graph.size() > topology::kDenseSpectrumPeers) {
    throw std::invalid_argument(
        "--matrix prints W as n x n numbers, " + std::to_string(topology.graph.size()) +
        " peers here; it is for at most " + std::to_string(topology::kDenseSpectrumPeers) +
        " (--json gives the edges; their weights are W_ij = --dot's labels)");
  }
  topology::TopologyFacts facts = topology::analyze(topology, o.eps);
  std::optional<coding::Placement> placement;
  if (code.scheme != coding::Scheme::kNone) {
    if (topology.time_varying()) {
      throw std::invalid_argument("coding needs a fixed neighbourhood; " + describe_spec(spec) +
                                  " changes every round");
    }
    placement = training::coded_placement(topology.graph, code);
  }
  if (o.json) {
    const nlohmann::ordered_json coding_json =
        placement ? placement_json(*placement, code) : nlohmann::ordered_json();
    write_topology_json(std::cout, topology, facts, o.matrix, placement ? &coding_json : nullptr);
  } else {
    write_topology_text(std::cout, topology, facts);
    if (placement) write_placement_text(std::cout, *placement, code);
    if (o.matrix) {
      std::cout << "W" << (topology.time_varying() ? " (round 0)" : "") << ":\n";
      write_weight_matrix(std::cout, topology.weights);
    }
  }
  if (!o.dot.empty()) {
    std::ofstream out(o.dot);
    if (!out) throw std::runtime_error("cannot write DOT file '" + o.dot + "'");
    write_topology_dot(out, topology);
    if (!o.json) std::cout << "wrote " << o.dot << "\n";
  }
}

}  // namespace

void add_topo_command(CLI::App& app) {
  auto options = std::make_shared<TopoOptions>();
  CLI::App* cmd = app.add_subcommand(
      "topo", "Report a graph and its mixing matrix: degrees, diameter, spectrum, gossip rounds");
  cmd->footer(
      "Examples:\n"
      "  fastk topo torus --rows 4 --cols 4\n"
      "  fastk topo random_regular --peers 32 --degree 4 --seed 7 --json\n"
      "  fastk topo --config experiments/configs/quickstart.toml --dot ring.dot\n"
      "  fastk topo torus --rows 4 --cols 4 --coding frc   (data placement of FRC)\n"
      "Kinds: ring path torus grid complete star hypercube exponential random_regular\n"
      "       erdos_renyi watts_strogatz edge_list one_peer_exponential");
  auto& o = *options;
  cmd->add_option("kind", o.kind, "Graph family (default: ring, or the config's kind)");
  cmd->add_option("-c,--config", o.config, "Experiment config; its [topology] table is the base")
      ->check(CLI::ExistingFile);
  cmd->add_option("-n,--peers", o.flags.peers, "Number of peers (default 8)");
  cmd->add_option("--rows", o.flags.rows, "torus/grid rows (default: most square shape)");
  cmd->add_option("--cols", o.flags.cols, "torus/grid columns");
  cmd->add_option("--degree", o.flags.degree, "random_regular degree (default 4)");
  cmd->add_option("--probability", o.flags.probability,
                  "erdos_renyi edge probability (default 2 ln(n)/n)");
  cmd->add_option("--nearest", o.flags.nearest, "watts_strogatz lattice neighbours (default 4)");
  cmd->add_option("--rewire", o.flags.rewire, "watts_strogatz rewiring probability (default 0.1)");
  cmd->add_option("--seed", o.flags.seed, "Seed of random families (default 1)");
  cmd->add_flag("--directed", o.flags.directed,
                "edge_list: each line 'a b' is the arc a -> b (push-sum weights, column "
                "stochastic; checked for strong connectivity)");
  cmd->add_option("--file", o.flags.file, "edge_list: file of 'a b' lines")
      ->check(CLI::ExistingFile);
  cmd->add_option("-w,--weights", o.weights,
                  "metropolis_hastings (default), max_degree, uniform, file");
  cmd->add_option("--weights-file", o.flags.weights_file, "n x n matrix for weights = file")
      ->check(CLI::ExistingFile);
  cmd->add_option("--eps", o.eps, "Disagreement factor for the rounds estimate (default 1e-3)")
      ->check(CLI::Range(1e-300, 0.999999));
  cmd->add_option("--coding", o.coding,
                  "Also report where a coded run puts its data: none, frc, mds, crc or "
                  "cyclic_mds (default: the config's [coding] scheme)");
  cmd->add_option("--coding-stragglers", o.coding_stragglers,
                  "Late members tolerated per block (default 1)")
      ->check(CLI::Range(0, 1000));
  cmd->add_option("--coding-sub-blocks", o.coding_sub_blocks,
                  "mds, cyclic_mds: messages are 1/m of a gradient, members hold stragglers + m "
                  "partitions (default 2)")
      ->check(CLI::Range(1, 16));
  cmd->add_flag("--dynamic-roles", o.dynamic_roles,
                "frc: place data for dynamic roles (every neighbour stores all of N(p))");
  cmd->add_flag("--json", o.json, "Machine-readable report on stdout");
  cmd->add_flag("--matrix", o.matrix, "Also print W");
  cmd->add_option("--dot", o.dot,
                  "Write the graph as Graphviz DOT to this file (draw it with Graphviz: "
                  "apt-get install graphviz, then dot -Tpng FILE -o graph.png)");
  cmd->callback([cmd, options] { run_topo(*cmd, *options); });
}

}  // namespace fastk::node
