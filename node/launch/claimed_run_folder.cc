#include "node/launch/claimed_run_folder.h"

#include <ostream>
#include <stdexcept>
#include <string>
#include <system_error>

namespace fastk::node {
namespace {

namespace fs = std::filesystem;

// A numbered name is taken by creating the folder (create_directory fails when it exists),
// so two commands started at once never pick the same one. Bounded: a folder with a
// thousand earlier runs is a sign of a script in a loop, better stopped than continued.
constexpr int kMaxNumberedFolders = 1000;

// Creates `dir` (and its parents); true if this call made `dir` itself.
bool make_folder(const fs::path& dir) {
  if (dir.has_parent_path()) fs::create_directories(dir.parent_path());
  return fs::create_directory(dir);
}

}  // namespace

bool holds_files(const fs::path& dir) {
  std::error_code error;
  if (!fs::is_directory(dir, error)) return fs::exists(dir, error);
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    if (entry.path().filename() != ".lock") return true;
  }
  return false;
}

ClaimedRunFolder::ClaimedRunFolder(const fs::path& explicit_dir, const fs::path& default_dir,
                                   std::ostream& notes) {
  if (!explicit_dir.empty()) {
    path_ = fs::absolute(explicit_dir);
    if (holds_files(path_)) {
      throw std::runtime_error("--output " + explicit_dir.string() +
                               " already holds files (an earlier run's?): fastk never writes "
                               "over another run; remove it or choose another folder");
    }
    made_here_ = make_folder(path_);
  } else {
    path_ = fs::absolute(default_dir);
    made_here_ = make_folder(path_);
    std::string shown = default_dir.string();
    for (int number = 2; !made_here_ && holds_files(path_); ++number) {
      if (number > kMaxNumberedFolders) {
        throw std::runtime_error(default_dir.string() + "-2 ... -" +
                                 std::to_string(kMaxNumberedFolders) +
                                 " all hold runs: remove some, or give --output");
      }
      shown = default_dir.string() + "-" + std::to_string(number);
      path_ = fs::absolute(shown);
      made_here_ = make_folder(path_);
    }
    if (shown != default_dir.string()) {
      notes << "fastk: " << default_dir.string() << " holds an earlier run: this one writes "
            << shown << std::endl;
    }
  }
  lock_.emplace(path_);
}

ClaimedRunFolder::~ClaimedRunFolder() {
  lock_.reset();
  if (made_here_ && !keep_) {
    std::error_code ignored;  // best effort: a destructor must not throw
    fs::remove_all(path_, ignored);
  }
}

}  // namespace fastk::node
