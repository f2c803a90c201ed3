// Line-oriented text input shared by the edge-list and weight-matrix readers.
#pragma once

#include <istream>
#include <string>

namespace fastk::topology {

// `line` as it may be shown in an error message: at most 60 characters, bytes that are not
// printable ASCII shown as '?' (a binary file must not garble the terminal).
inline std::string printable(const std::string& line) {
  std::string out;
  for (char c : line.substr(0, 60)) out += (c >= 32 && c < 127) ? c : '?';
  return line.size() > 60 ? out + "..." : out;
}

// Calls fn(line, where) for every line that is not blank once '#' comments are cut off.
// `where` is "source:line_number", ready to prefix an error message.
template <typename Fn>
void for_each_data_line(std::istream& in, const std::string& source, Fn&& fn) {
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    fn(line, source + ":" + std::to_string(number));
  }
}

}  // namespace fastk::topology
