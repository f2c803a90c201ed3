// Linked into every test executable (fastk_add_tests, tests/CMakeLists.txt): the caches of
// the tests and of the processes they start go under TMPDIR (CTest points it into the build
// folder), so the suite writes nothing into the user's ~/.cache: the decompressed data files
// (FASTK_CACHE_DIR, learning/decompressed_cache.h) and matplotlib's font cache (MPLCONFIGDIR,
// the plots). Values the caller set are kept.
#include <cstdlib>
#include <string>

namespace {

const bool kCacheUnderTmpdir = [] {
  const char* tmp = std::getenv("TMPDIR");
  if (!tmp || *tmp != '/') return false;
  ::setenv("FASTK_CACHE_DIR", (std::string(tmp) + "/fastk-cache").c_str(), 0);
  ::setenv("MPLCONFIGDIR", (std::string(tmp) + "/matplotlib").c_str(), 0);
  return true;
}();

}  // namespace
