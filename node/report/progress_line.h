// A status line for long-running commands: on a terminal it is redrawn in place (at most a
// few times a second); otherwise plain lines are written at a slower pace, so logs stay short.
#pragma once

#include <chrono>
#include <ostream>
#include <string>

namespace fastk::node {

class ProgressLine {
 public:
  // `tty`: whether `out` is a terminal (redraw in place).
  ProgressLine(std::ostream& out, bool tty, double plain_interval_s = 10.0);
  // Whether a call to show() now would be written: callers build the text only then.
  bool due() const;
  void show(const std::string& text);
  // A permanent line (e.g. an evaluation), written below the status line.
  void print(const std::string& text);

 private:
  void clear();
  std::ostream& out_;
  bool tty_;
  double interval_s_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_;
};

// Whether standard output is a terminal.
bool stdout_is_tty();

}  // namespace fastk::node
