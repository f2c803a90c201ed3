// The TorchScript backend of a build without libtorch (FASTK_TORCH=OFF): the kind is refused
// with the reason, before anything starts.
#include <stdexcept>

#include "learning/torchscript/torchscript_model.h"

namespace fastk::learning {

std::unique_ptr<Model> make_torchscript_model(const ModelSpec& spec, const SampleShape&, int) {
  throw std::invalid_argument(
      "model kind 'torchscript' (" + spec.file +
      "): this fastk was built without libtorch (FASTK_TORCH=OFF); rebuild with "
      "-DFASTK_TORCH=ON after installing Debian's libtorch-dev (scripts/install-deps.sh does)");
}

bool torchscript_available() { return false; }

}  // namespace fastk::learning
