#include "node/report/plots.h"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "node/launch/child_process.h"

namespace fastk::node {

namespace {

// Runs `script` (plot_run.py or plot_sweep.py) on `dir`.
bool run_plot_script(const std::string& name, const std::filesystem::path& dir);

}  // namespace

std::optional<std::filesystem::path> find_plot_script(const std::filesystem::path& executable,
                                                      const std::string& script) {
  namespace fs = std::filesystem;
  std::error_code ignored;
  // A script the user names is the one wanted: if it is not there, say so rather than use
  // another.
  const char* set = std::getenv("FASTK_PLOT_SCRIPT");
  if (script == "plot_run.py" && set && *set) {
    return fs::is_regular_file(set, ignored) ? std::optional<fs::path>(set) : std::nullopt;
  }
  std::vector<fs::path> candidates;
  if (executable.is_absolute()) {
    candidates.push_back(executable.parent_path().parent_path() / "share" / "fastk" / script);
  }
  candidates.push_back(fs::path(FASTK_SOURCE_DIR) / "experiments" / script);
  for (const fs::path& p : candidates) {
    if (fs::is_regular_file(p, ignored)) return p;
  }
  return std::nullopt;
}

bool iterations_recorded(const std::filesystem::path& run_dir) {
  std::ifstream csv(run_dir / "iterations.csv");
  std::string header, row;
  return std::getline(csv, header) && std::getline(csv, row) && !row.empty();
}

bool make_plots(const std::filesystem::path& run_dir) {
  // A run stopped before any iteration (Ctrl-C during start-up) has nothing to draw: that
  // is no plotting failure, and the script would only say so in its own words.
  if (!iterations_recorded(run_dir)) {
    std::cout << "no iterations recorded: no plots" << std::endl;
    return true;
  }
  return run_plot_script("plot_run.py", run_dir);
}

std::runtime_error plots_failed(const std::filesystem::path& run_dir) {
  return std::runtime_error("the plots of " + run_dir.string() +
                            " were not written (above: why); its other files are complete");
}

bool make_sweep_plots(const std::filesystem::path& sweep_dir) {
  return run_plot_script("plot_sweep.py", sweep_dir);
}

namespace {

bool run_plot_script(const std::string& name, const std::filesystem::path& run_dir) {
  std::error_code no_exe;
  const auto script =
      find_plot_script(std::filesystem::read_symlink("/proc/self/exe", no_exe), name);
  if (!script) {
    const char* set = std::getenv("FASTK_PLOT_SCRIPT");
    std::cerr << "fastk: no plots: "
              << (name == "plot_run.py" && set && *set
                      ? std::string("FASTK_PLOT_SCRIPT names ") + set + ", which does not exist"
                      : name + " is neither in <prefix>/share/fastk beside this fastk nor in " +
                            FASTK_SOURCE_DIR +
                            "/experiments (install fastk with `cmake --install`" +
                            (name == "plot_run.py" ? ", or set FASTK_PLOT_SCRIPT)" : ")"))
              << "\n";
    return true;  // said so: a fastk installed without its scripts still runs (design.md)
  }
  // Debian's interpreter has python3-matplotlib even when another python3 comes first.
  const std::string python =
      std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  // An argument vector, not a shell line: a run folder may hold any character.
  const std::vector<std::string> argv{python, script->string(), run_dir.string()};
  try {
    ChildProcess plot(argv);
    const ExitStatus status = plot.wait([](const std::string& line) { std::cout << line << '\n'; });
    if (status.ok()) return true;
    std::cerr << "fastk: plotting failed (" << status.describe() << "): " << python << ' '
              << argv[1] << ' ' << argv[2] << '\n';
  } catch (const std::exception& e) {
    std::cerr << "fastk: plotting failed: " << e.what() << '\n';
  }
  return false;
}

}  // namespace

}  // namespace fastk::node
