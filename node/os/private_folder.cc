#include "node/os/private_folder.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace fastk::node::os {

void make_private_folder(const std::filesystem::path& folder) {
  const std::string name = "'" + folder.string() + "'";
  if (::mkdir(folder.c_str(), 0700) == 0) {
    // Default ACLs of the parent (NFS group folders) may have added group bits.
    ::chmod(folder.c_str(), 0700);
  } else if (errno != EEXIST) {
    throw std::runtime_error("cannot create the private folder " + name + ": " +
                             std::strerror(errno));
  }
  struct stat st {};
  if (::lstat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    throw std::runtime_error(name + " is not a folder (a link or a file is in its place)");
  }
  if (st.st_uid != ::geteuid()) {
    throw std::runtime_error(name + " belongs to user " + std::to_string(st.st_uid) +
                             ", not to this one: someone else made it, perhaps to watch or "
                             "forge what goes in. Ask an administrator to remove it");
  }
  if ((st.st_mode & 0777) != 0700) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    throw std::runtime_error(name + " has mode " + mode +
                             "; it must be 0700 (only this user may enter it, and may use it): "
                             "chmod 700 it, or remove it");
  }
}

}  // namespace fastk::node::os
