// The folder a command writes its results to, chosen so that no run overwrites another's
// results: `fastk run`, `sim`, `calibrate`, `train` and `sweep` each claim one. An explicit
// --output must be missing or empty (else it is refused, naming it); the default folder
// (<run.output>/<run.name> plus the command's suffix) moves on to the first free
// <default>-2, -3, ... when it holds files, and says so. The claim holds the folder's lock
// (run_folder_lock.h) and, unless kept, removes a folder it made when it goes out of scope,
// so a launch that fails before it wrote results leaves nothing behind.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <optional>

#include "node/launch/run_folder_lock.h"

namespace fastk::node {

class ClaimedRunFolder {
 public:
  // `explicit_dir` (from --output) if not empty, else `default_dir` or the first free
  // numbered folder after it (passing over ones another command holds); a move is reported
  // on `notes`. Throws std::runtime_error naming the folder when --output holds files or
  // another process holds its lock.
  ClaimedRunFolder(const std::filesystem::path& explicit_dir,
                   const std::filesystem::path& default_dir, std::ostream& notes);
  ~ClaimedRunFolder();
  ClaimedRunFolder(const ClaimedRunFolder&) = delete;
  ClaimedRunFolder& operator=(const ClaimedRunFolder&) = delete;

  // Absolute.
  const std::filesystem::path& path() const { return path_; }
  // The folder holds results now: it stays, whatever happens next.
  void keep() { keep_ = true; }

 private:
  void claim_default(const std::filesystem::path& default_dir, std::ostream& notes);
  void remove_folder();

  std::filesystem::path path_;
  bool made_here_ = false;  // created by this claim: removed unless kept
  bool keep_ = false;
  std::optional<RunFolderLock> lock_;
};

// True when `dir` exists and holds anything besides a run folder's lock file.
bool holds_files(const std::filesystem::path& dir);

}  // namespace fastk::node
