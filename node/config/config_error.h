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
  // The line of the file a TOML path ("cluster.hosts[2]") was written on, 0 when it was
  // not (absent, or set by --set); given by the loader, which has the parsed file.
  using LineOf = std::function<int(const std::string& path)>;
  void set_line_of(LineOf line_of) { line_of_ = std::move(line_of); }

  void add(const std::string& path, const std::string& message) {
    const int line = line_of_ && !path.empty() ? line_of_(path) : 0;
    problems_.push_back({line, path.empty() ? message : path + ": " + message});
  }
  bool empty() const { return problems_.empty(); }
  // Throws ConfigError("SOURCE: N problem(s):\n  SOURCE:LINE: path: message ...") when any
  // problem was recorded (without ":LINE" for a problem the file has no line for).
  void throw_if_any(const std::string& source) const;

 private:
  struct Problem {
    int line;
    std::string text;
  };
  std::vector<Problem> problems_;
  LineOf line_of_;
};

}  // namespace fastk::node
