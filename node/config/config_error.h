// Errors in an experiment config. The message lists every problem found, each prefixed by
// the TOML path (e.g. "topology.peers: expected an integer >= 1, got -3").
#pragma once

#include <functional>
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
  // Where the value at a TOML path ("cluster.hosts[2]") came from, as the problem's prefix:
  // "FILE:LINE" when the file wrote it, "--set KEY=VALUE" when an override did, "" when
  // neither (an absent key). Given by the loader, which has the parsed file and overrides.
  using OriginOf = std::function<std::string(const std::string& path)>;
  void set_origin_of(OriginOf origin_of) { origin_of_ = std::move(origin_of); }

  void add(const std::string& path, const std::string& message) {
    std::string origin = origin_of_ && !path.empty() ? origin_of_(path) : "";
    problems_.push_back({std::move(origin), path.empty() ? message : path + ": " + message});
  }
  bool empty() const { return problems_.empty(); }
  // Throws ConfigError("SOURCE: N problem(s) in the config:\n  ORIGIN: path: message ...")
  // when any problem was recorded (without "ORIGIN: " for one with no origin). The first line
  // counts those of --set overrides, so a reader does not search the file for them.
  void throw_if_any(const std::string& source) const;

 private:
  struct Problem {
    std::string origin;
    std::string text;
  };
  std::vector<Problem> problems_;
  OriginOf origin_of_;
};

}  // namespace fastk::node
