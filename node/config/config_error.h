// Errors in an experiment config. The message lists every problem found, each prefixed by
// the TOML path (e.g. "topology.peers: expected an integer >= 1, got -3").
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace fastk::node {

class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(const std::string& message) : std::runtime_error(message) {}
};

// Collects problems so one load reports all of them, not just the first.
class ConfigErrors {
 public:
  void add(const std::string& path, const std::string& message) {
    problems_.push_back(path.empty() ? message : path + ": " + message);
  }
  bool empty() const { return problems_.empty(); }
  // Throws ConfigError("SOURCE: N problem(s):\n  ...") when any problem was recorded.
  void throw_if_any(const std::string& source) const;

 private:
  std::vector<std::string> problems_;
};

}  // namespace fastk::node
