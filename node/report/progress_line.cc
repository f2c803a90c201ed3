#include "node/report/progress_line.h"

#include <unistd.h>

namespace fastk::node {

ProgressLine::ProgressLine(std::ostream& out, bool tty, double plain_interval_s)
    : out_(out),
      tty_(tty),
      interval_s_(tty ? 0.2 : plain_interval_s),
      last_(std::chrono::steady_clock::now()) {}

bool ProgressLine::due() const {
  const std::chrono::duration<double> since = std::chrono::steady_clock::now() - last_;
  return since.count() >= interval_s_;
}

void ProgressLine::show(const std::string& text) {
  last_ = std::chrono::steady_clock::now();
  if (tty_) {
    out_ << "\r\033[K" << text << std::flush;
    drawn_ = true;
  } else {
    out_ << text << '\n' << std::flush;
  }
}

void ProgressLine::clear() {
  if (drawn_) out_ << "\r\033[K";
  drawn_ = false;
}

void ProgressLine::print(const std::string& text) {
  clear();
  out_ << text << '\n' << std::flush;
}

bool stdout_is_tty() { return ::isatty(STDOUT_FILENO) == 1; }

}  // namespace fastk::node
