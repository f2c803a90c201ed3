// [data]: which data set (files or synthetic), its normalisation and how it is split across
// peers.
#include "node/config/tables.h"

namespace fastk::node {

void read_data_table(TableReader& t, learning::DataSpec& spec, std::uint64_t seed_default,
                     const std::filesystem::path& base_dir) {
  using namespace learning;
  spec.seed = seed_default;
  t.read_choice<DatasetKind>("kind", spec.kind, parse_dataset_kind);
  t.read("dir", spec.dir);
  t.read_choice<Normalization>("normalization", spec.normalization, parse_normalization);
  t.read_choice<Augmentation>("augment", spec.augment, parse_augmentation);
  const bool generated =
      spec.kind == DatasetKind::kGaussianMixture || spec.kind == DatasetKind::kLeastSquares;
  if (spec.augment != Augmentation::kNone && generated) {
    // Crops and flips move pixels: on feature vectors (height and width 1) they mean nothing.
    t.errors().add(t.path_of("augment"), "\"" + to_string(spec.augment) +
                                             "\" needs image data (height and width above 1); \"" +
                                             to_string(spec.kind) + "\" samples are vectors");
  }
  t.read("train_limit", spec.train_limit, 0);
  t.read("test_limit", spec.test_limit, 0);
  t.read("train_samples", spec.train_samples, 1, 100'000'000);
  t.read("test_samples", spec.test_samples, 1, 100'000'000);
  t.read("dim", spec.dim, 1, 1'000'000);
  t.read("classes", spec.classes, 2, 1'000'000);
  t.read("separation", spec.separation, 0.0);
  t.read("noise", spec.noise, 0.0);
  t.read("seed", spec.seed);
  t.read_choice<PartitionKind>("partition", spec.partition.kind, parse_partition_kind);
  t.read("classes_per_peer", spec.partition.classes_per_peer, 1, 1'000'000);
  t.read("alpha", spec.partition.alpha, 1e-6);
  spec.dir = resolve_path(spec.dir, base_dir);
  t.finish();
}

nlohmann::ordered_json data_table_json(const learning::DataSpec& d) {
  return {{"kind", learning::to_string(d.kind)},
          {"dir", d.dir},
          {"normalization", learning::to_string(d.normalization)},
          {"augment", learning::to_string(d.augment)},
          {"train_limit", d.train_limit},
          {"test_limit", d.test_limit},
          {"train_samples", d.train_samples},
          {"test_samples", d.test_samples},
          {"dim", d.dim},
          {"classes", d.classes},
          {"separation", d.separation},
          {"noise", d.noise},
          {"seed", d.seed},
          {"partition", learning::to_string(d.partition.kind)},
          {"classes_per_peer", d.partition.classes_per_peer},
          {"alpha", d.partition.alpha}};
}

}  // namespace fastk::node
