// Validation of an arrival list, shared by every decoder: a member id out of range or listed
// twice is a bug in the caller (the runtime de-duplicates messages), so it throws.
#pragma once

#include <span>
#include <string>

namespace fastk::coding {

// Throws std::invalid_argument naming the member and the code when an id is outside
// [0, members) or appears twice.
void check_arrivals(std::span<const int> arrived, int members, const std::string& code_name);

// Throws std::invalid_argument naming the member and the code when it is outside [0, members).
void check_member(int member, int members, const std::string& code_name);

}  // namespace fastk::coding
