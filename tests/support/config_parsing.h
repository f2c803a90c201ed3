// Test helpers: parse an experiment config from text as if it were /cfg/exp.toml.
#pragma once

#include <string>

#include "node/config/config_error.h"
#include "node/config/experiment_config.h"

namespace fastk::testing {

inline node::ExperimentConfig parse(const std::string& text) {
  return node::parse_config(text, "exp.toml", "/cfg");
}

// The ConfigError message parsing `text` gives, or "" when it parses.
inline std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const node::ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace fastk::testing
