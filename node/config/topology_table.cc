// [topology]: which graph, how many peers, family parameters, weights.
#include "node/config/tables.h"

namespace fastk::node {

void read_topology_table(TableReader& t, topology::TopologySpec& spec, std::uint64_t seed_default,
                         const std::filesystem::path& base_dir) {
  using topology::TopologyKind;
  using topology::WeightRule;
  spec.seed = seed_default;
  t.read_choice<TopologyKind>("kind", spec.kind, topology::parse_topology_kind);
  t.read("peers", spec.peers, 1, 1'000'000);
  t.read("rows", spec.rows, 1, 1'000'000);
  t.read("cols", spec.cols, 1, 1'000'000);
  t.read("degree", spec.degree, 1, 1'000'000);
  t.read("probability", spec.probability, 0.0, 1.0);
  t.read("nearest", spec.nearest, 2, 1'000'000);
  t.read("rewire", spec.rewire, 0.0, 1.0);
  t.read("seed", spec.seed);
  t.read("file", spec.file);
  t.read("directed", spec.directed);
  t.read_choice<WeightRule>("weights", spec.weights, topology::parse_weight_rule);
  t.read("weights_file", spec.weights_file);
  spec.file = resolve_path(spec.file, base_dir);
  spec.weights_file = resolve_path(spec.weights_file, base_dir);
  if (spec.kind == TopologyKind::kEdgeList && spec.file.empty()) {
    t.errors().add(t.path_of("file"), "kind = \"edge_list\" needs file = \"PATH\"");
  }
  if (spec.kind == TopologyKind::kEdgeList && !t.has("peers")) spec.peers = 0;  // from file
  if (spec.directed && spec.kind != TopologyKind::kEdgeList) {
    t.errors().add(t.path_of("directed"),
                   "only an edge_list can be directed (each line \"a b\" the arc a -> b); the "
                   "families are undirected");
  }
  if (spec.weights == WeightRule::kFile && spec.weights_file.empty()) {
    t.errors().add(t.path_of("weights_file"), "weights = \"file\" needs weights_file = \"PATH\"");
  }
  t.finish();
}

nlohmann::ordered_json topology_table_json(const topology::TopologySpec& t, int peers) {
  return {{"kind", topology::to_string(t.kind)},
          {"peers", peers},
          {"rows", t.rows},
          {"cols", t.cols},
          {"degree", t.degree},
          {"probability", t.probability},
          {"nearest", t.nearest},
          {"rewire", t.rewire},
          {"seed", t.seed},
          {"file", t.file},
          {"directed", t.directed},
          {"weights", topology::to_string(t.weights)},
          {"weights_file", t.weights_file}};
}

}  // namespace fastk::node
