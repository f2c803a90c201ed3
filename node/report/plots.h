// The PNG plots of a run folder, by experiments/plot_run.py (matplotlib from Debian's
// python3-matplotlib), for `fastk run` and `fastk sim` alike.
#pragma once

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>

namespace fastk::node {

// Runs the plotting script on `run_dir`; false (and a message on stderr, after the script's
// own naming the file it could not write) if it failed. A folder whose iterations.csv has
// no rows gets no plots and a line saying so, as does a fastk that finds no script: true,
// nothing failed.
bool make_plots(const std::filesystem::path& run_dir);
// Whether <run_dir>/iterations.csv holds at least one iteration.
bool iterations_recorded(const std::filesystem::path& run_dir);
// The error a command ends with when make_plots failed: its outputs are incomplete.
std::runtime_error plots_failed(const std::filesystem::path& run_dir);
// The plots of a `fastk sweep` folder, by experiments/plot_sweep.py, found as plot_run.py is
// (false when the script failed, as make_plots).
bool make_sweep_plots(const std::filesystem::path& sweep_dir);

// Where a plotting script (plot_run.py, plot_sweep.py) is: for plot_run.py, $FASTK_PLOT_SCRIPT
// when set (nullopt if that file does not exist); else <prefix>/share/fastk/<script> next to
// an installed fastk (<prefix>/bin/fastk, `cmake --install`; `executable` is this program's
// absolute path, /proc/self/exe); else the source tree fastk was built from. nullopt: none
// exists.
std::optional<std::filesystem::path> find_plot_script(const std::filesystem::path& executable,
                                                      const std::string& script = "plot_run.py");

}  // namespace fastk::node
