// The PNG plots of a run folder, by experiments/plot_run.py (matplotlib from Debian's
// python3-matplotlib), for `fastk run` and `fastk sim` alike.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace fastk::node {

// Runs the plotting script on `run_dir`; false (and a message on stderr) if it failed.
bool make_plots(const std::filesystem::path& run_dir);
// The plots of a `fastk sweep` folder, by experiments/plot_sweep.py, found as plot_run.py is.
bool make_sweep_plots(const std::filesystem::path& sweep_dir);

// Where a plotting script (plot_run.py, plot_sweep.py) is: for plot_run.py, $FASTK_PLOT_SCRIPT
// when set (nullopt if that file does not exist); else <prefix>/share/fastk/<script> next to
// an installed fastk (<prefix>/bin/fastk, `cmake --install`; `executable` is this program's
// absolute path, /proc/self/exe); else the source tree fastk was built from. nullopt: none
// exists.
std::optional<std::filesystem::path> find_plot_script(const std::filesystem::path& executable,
                                                      const std::string& script = "plot_run.py");

}  // namespace fastk::node
