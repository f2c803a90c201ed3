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
  if (explicit_dir.empty()) {
    claim_default(default_dir, notes);
    return;
  }
  path_ = fs::absolute(explicit_dir);
  if (holds_files(path_)) {
    throw std::runtime_error("--output " + explicit_dir.string() +
                             " already holds files (an earlier run's?): fastk never writes "
                             "over another run; remove it or choose another folder");
  }
  made_here_ = make_folder(path_);
  try {
    lock_.emplace(path_);
  } catch (...) {
    if (made_here_) remove_folder();  // no destructor runs for a constructor that throws
    throw;
  }
}

// The default folder, or the first numbered one that is new, or empty and not locked by a
// command starting in it (fastk calibrate holds its folder empty for seconds).
void ClaimedRunFolder::claim_default(const fs::path& default_dir, std::ostream& notes) {
  std::string shown = default_dir.string();
  for (int number = 1;; ++number) {
    if (number > kMaxNumberedFolders) {
      throw std::runtime_error(default_dir.string() + "-2 ... -" +
                               std::to_string(kMaxNumberedFolders) +
                               " all hold runs: remove some, or give --output");
    }
    if (number > 1) shown = default_dir.string() + "-" + std::to_string(number);
    path_ = fs::absolute(shown);
    made_here_ = make_folder(path_);
    if (!made_here_ && holds_files(path_)) continue;
    try {
      lock_.emplace(path_);
      break;
    } catch (const RunFolderInUse&) {
      made_here_ = false;  // whoever holds it uses it
    }
  }
  if (shown != default_dir.string()) {
    notes << "fastk: " << default_dir.string() << " holds an earlier run: this one writes " << shown
          << std::endl;
  }
}

void ClaimedRunFolder::remove_folder() {
  std::error_code ignored;  // best effort: called from a destructor, which must not throw
  fs::remove_all(path_, ignored);
}

ClaimedRunFolder::~ClaimedRunFolder() {
  // Removed while still locked, so that no other command claims it in between.
  if (made_here_ && !keep_) remove_folder();
  lock_.reset();
}

}  // namespace fastk::node
