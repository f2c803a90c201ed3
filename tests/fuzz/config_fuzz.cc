// Fuzz target for the config loader: any text given as a config file is either a validated
// config or a ConfigError that says what is wrong; never a crash, a hang, or another exception
// (a std::out_of_range from a number conversion, say, would reach the user as an unexplained
// failure). Relative paths resolve against a folder that does not exist, so the loader's file
// checks run and fail without touching real files.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "node/config/config_error.h"
#include "node/config/experiment_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const fastk::node::ExperimentConfig config =
        fastk::node::parse_config(text, "fuzz.toml", "/nonexistent-fastk-fuzz");
    // Accepted: the promises validation makes.
    if (config.run.iterations < 1 || config.optimizer.batch_size < 1) {
      std::fprintf(stderr, "accepted a config with iterations or batch_size below 1\n");
      std::abort();
    }
  } catch (const fastk::node::ConfigError&) {
    // The expected outcome of bad input.
  } catch (const std::exception& e) {
    std::fprintf(stderr, "the config loader threw something other than ConfigError: %s\n",
                 e.what());
    std::abort();
  }
  return 0;
}
