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
  if (::mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST) {
    throw std::runtime_error("cannot create the private folder " + name + ": " +
                             std::strerror(errno));
  }
  struct stat st {};
  if (::lstat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    throw std::runtime_error(name + " is not a folder (a link or a file is in its place)");
  }
  if (st.st_uid != ::geteuid() || (st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    throw std::runtime_error(name + " must belong to this user and have mode 0700 (it has owner " +
                             std::to_string(st.st_uid) + ", mode " + mode +
                             "): others could reach what goes in it. Remove it, or chmod 700 it");
  }
}

}  // namespace fastk::node::os
