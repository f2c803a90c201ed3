// Models a user brings: a TorchScript module (saved with torch.jit.save) trained through
// libtorch behind the same Model interface as the hand-written networks, so that the protocol,
// the simulator and every policy, code and compressor see one flat float vector per peer
// (docs/learning.md §6 says how a module becomes that vector and what stays local).
//
// This header has no libtorch in it: only the files of this folder include libtorch's
// headers, compiled into one plugin (libfastk_torchscript.so) that plugin_loader.cc opens the
// first time a TorchScript model is made, so the rest of the tree pays neither their compile
// time nor libtorch's 0.8 s of loading at every process start. A build without libtorch
// (FASTK_TORCH=OFF) keeps the declaration and refuses the kind with a clear error.
#pragma once

#include <memory>

#include "learning/model.h"

namespace fastk::learning {

// Loads spec.file and checks it against the data before anything trains: the file exists and
// is a TorchScript module, it has float32 parameters, and a batch of two zero inputs of
// `shape` ([2, channels, height, width], float32) gives float logits of shape [2, classes].
// Throws std::invalid_argument naming the file and what is wrong. Every thread that uses the
// model runs libtorch's intra-op work on spec.threads threads.
std::unique_ptr<Model> make_torchscript_model(const ModelSpec& spec, const SampleShape& shape,
                                              int classes);

// Whether this build has the TorchScript backend (FASTK_TORCH).
bool torchscript_available();

}  // namespace fastk::learning
