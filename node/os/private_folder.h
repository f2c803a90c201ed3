// A folder only this user can enter (mode 0700): where a run keeps what other users of the
// machine must not reach (its Unix-domain sockets, its keys; docs/security.md).
#pragma once

#include <filesystem>

namespace fastk::node::os {

// Creates `folder` with mode 0700 (its parent must exist), or accepts an existing one that is
// a real folder (not a link) owned by this user with mode exactly 0700. Throws
// std::runtime_error naming the folder and what is wrong with it otherwise: another user
// could have made it in a shared place like /tmp to watch or forge what goes in.
void make_private_folder(const std::filesystem::path& folder);

}  // namespace fastk::node::os
