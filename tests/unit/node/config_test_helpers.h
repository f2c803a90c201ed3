// Parsing configs from text in tests: the config as parsed, or the error message.
#pragma once

#include <string>

#include "node/config/config_error.h"
#include "node/config/experiment_config.h"

namespace fastk::node::testing {

inline ExperimentConfig parse(const std::string& text) {
  return parse_config(text, "exp.toml", "/cfg");
}

// The ConfigError message, or "" when the text parses.
inline std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace fastk::node::testing
