// The PNG plots of a run folder, by experiments/plot_run.py (matplotlib from Debian's
// python3-matplotlib), for `fastk run` and `fastk sim` alike.
#pragma once

#include <filesystem>

namespace fastk::node {

// Runs the plotting script on `run_dir`; false (and a message on stderr) if it failed.
bool make_plots(const std::filesystem::path& run_dir);

}  // namespace fastk::node
