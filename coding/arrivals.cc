#include "coding/arrivals.h"

#include <stdexcept>
#include <vector>

namespace fastk::coding {

void check_arrivals(std::span<const int> arrived, int members, const std::string& code_name) {
  std::vector<bool> seen(members, false);
  for (int member : arrived) {
    if (member < 0 || member >= members) {
      throw std::invalid_argument("arrived member " + std::to_string(member) + " is outside [0, " +
                                  std::to_string(members) + ") of code " + code_name);
    }
    if (seen[member]) {
      throw std::invalid_argument("member " + std::to_string(member) +
                                  " is listed twice in the arrival set of code " + code_name);
    }
    seen[member] = true;
  }
}

void check_member(int member, int members, const std::string& code_name) {
  if (member < 0 || member >= members) {
    throw std::invalid_argument("member " + std::to_string(member) + " is outside [0, " +
                                std::to_string(members) + ") of code " + code_name);
  }
}

}  // namespace fastk::coding
