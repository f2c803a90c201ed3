// make_torchscript_model for the rest of fastk: libtorch (and its 280 shared libraries, 0.8 s
// to load) is in a plugin, libfastk_torchscript.so, opened the first time a TorchScript
// model is made. Every other process (peers of hand-written models, the tests, `fastk
// --help`) starts without it. A build without libtorch (FASTK_TORCH=OFF) has no plugin and
// refuses the kind with the reason.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include "learning/torchscript/torchscript_model.h"

// The plugin's entry point (torchscript_model.cc); exceptions pass through it.
using MakeTorchScriptModel = fastk::learning::Model* (*)(const fastk::learning::ModelSpec&,
                                                         const fastk::learning::SampleShape&, int);

namespace fastk::learning {
namespace {

#ifdef FASTK_TORCHSCRIPT_PLUGIN
// Where the build put the plugin; else beside this binary (a build folder copied elsewhere).
std::filesystem::path plugin_path() {
  if (const char* set = std::getenv("FASTK_TORCHSCRIPT_PLUGIN"); set && *set) return set;
  const std::filesystem::path built = FASTK_TORCHSCRIPT_PLUGIN;
  std::error_code error;
  if (std::filesystem::exists(built, error)) return built;
  return std::filesystem::read_symlink("/proc/self/exe", error).parent_path() / built.filename();
}

MakeTorchScriptModel load_plugin() {
  const auto path = plugin_path();
  void* plugin = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);  // kept open for the process
  const char* why = plugin ? nullptr : ::dlerror();
  auto* make =
      plugin
          ? reinterpret_cast<MakeTorchScriptModel>(::dlsym(plugin, "fastk_make_torchscript_model"))
          : nullptr;
  if (!make) {
    throw std::invalid_argument(
        "model kind 'torchscript' needs fastk's libtorch plugin " + path.string() + ": " +
        (why ? why : "it has no entry point fastk_make_torchscript_model") +
        " (build it with fastk; FASTK_TORCHSCRIPT_PLUGIN=PATH names another)");
  }
  return make;
}
#endif

}  // namespace

std::unique_ptr<Model> make_torchscript_model(const ModelSpec& spec, const SampleShape& shape,
                                              int classes) {
#ifdef FASTK_TORCHSCRIPT_PLUGIN
  static const MakeTorchScriptModel make = load_plugin();  // a failure is retried next time
  return std::unique_ptr<Model>(make(spec, shape, classes));
#else
  (void)shape, (void)classes;
  throw std::invalid_argument(
      "model kind 'torchscript' (" + spec.file +
      "): this fastk was built without libtorch (FASTK_TORCH=OFF); rebuild with "
      "-DFASTK_TORCH=ON after installing Debian's libtorch-dev (scripts/install-deps.sh does)");
#endif
}

bool torchscript_available() {
#ifdef FASTK_TORCHSCRIPT_PLUGIN
  return true;
#else
  return false;
#endif
}

}  // namespace fastk::learning
