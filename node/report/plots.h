// The PNG plots of a run folder, by experiments/plot_run.py (matplotlib from Debian's
// python3-matplotlib), for `fastk run` and `fastk sim` alike.
#pragma once

#include <filesystem>
#include <optional>

namespace fastk::node {

// Runs the plotting script on `run_dir`; false (and a message on stderr) if it failed.
bool make_plots(const std::filesystem::path& run_dir);

// Where plot_run.py is: $FASTK_PLOT_SCRIPT when set (nullopt if that file does not exist);
// else <prefix>/share/fastk/plot_run.py next to an installed fastk (<prefix>/bin/fastk,
// `cmake --install`; `executable` is this program's absolute path, /proc/self/exe); else
// the source tree fastk was built from. nullopt: none exists.
std::optional<std::filesystem::path> find_plot_script(const std::filesystem::path& executable);

}  // namespace fastk::node
