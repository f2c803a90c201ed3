// [model]: architecture (or a TorchScript module's file), L2 regularisation, initialisation
// seed.
#include "node/config/tables.h"

namespace fastk::node {
namespace {

// `hidden = [256, 128]`: an array of positive integers.
void read_hidden(TableReader& t, std::vector<int>& hidden) {
  const toml::node* n = t.node("hidden");
  if (!n) return;
  const toml::array* array = n->as_array();
  if (!array) {
    t.errors().add(t.path_of("hidden"), "expected an array of layer widths, e.g. [128, 64]");
    return;
  }
  std::vector<int> widths;
  for (std::size_t i = 0; i < array->size(); ++i) {
    auto width = (*array)[i].value_exact<std::int64_t>();
    if (!width || *width < 1 || *width > 1'000'000) {
      t.errors().add(t.path_of("hidden") + "[" + std::to_string(i) + "]",
                     "expected a layer width (an integer >= 1)");
      return;
    }
    widths.push_back(int(*width));
  }
  hidden = widths;
}

}  // namespace

void read_model_table(TableReader& t, learning::ModelSpec& spec, std::uint64_t seed_default,
                      const std::filesystem::path& base_dir) {
  spec.init_seed = seed_default;
  t.read_choice<learning::ModelKind>("kind", spec.kind, learning::parse_model_kind);
  read_hidden(t, spec.hidden);
  t.read("l2", spec.l2, 0.0);
  t.read("seed", spec.init_seed);
  t.read("file", spec.file);
  t.read("threads", spec.threads, 1, 1024);
  const bool torchscript = spec.kind == learning::ModelKind::kTorchScript;
  if (torchscript && spec.file.empty()) {
    t.errors().add(t.path_of("file"),
                   "kind = \"torchscript\" needs the module's file, e.g. file = \"mlp.pt\" "
                   "(experiments/models/export_torchscript.py writes some)");
  } else if (!torchscript && !spec.file.empty()) {
    t.errors().add(t.path_of("file"), "only kind = \"torchscript\" reads a file");
  }
  spec.file = resolve_path(spec.file, base_dir);  // relative to the config, like [data] dir
  t.finish();
}

nlohmann::ordered_json model_table_json(const learning::ModelSpec& m) {
  return {{"kind", learning::to_string(m.kind)},
          {"hidden", m.hidden},
          {"l2", m.l2},
          {"seed", m.init_seed},
          {"file", m.file},
          {"threads", m.threads}};
}

}  // namespace fastk::node
