// make_model: the model of the kernels this process runs (isa/level.h kernel_level()), from
// model.cc's copy for that instruction-set level; or a TorchScript module's.
#include "isa/kernels.h"
#include "learning/model.h"
#include "learning/torchscript/torchscript_model.h"

FASTK_DECLARE_KERNEL(fastk::learning::Model*, make_model,
                     (const fastk::learning::ModelSpec& spec,
                      const fastk::learning::SampleShape& shape, int classes))

namespace fastk::learning {

std::unique_ptr<Model> make_model(const ModelSpec& spec, const SampleShape& shape, int classes) {
  // libtorch picks its own instruction set at run time.
  if (spec.kind == ModelKind::kTorchScript) return make_torchscript_model(spec, shape, classes);
  static const auto make = FASTK_PICK_KERNEL(make_model);
  return std::unique_ptr<Model>(make(spec, shape, classes));
}

}  // namespace fastk::learning
