#include "node/report/plots.h"

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "node/launch/child_process.h"

namespace fastk::node {

std::optional<std::filesystem::path> find_plot_script(const std::filesystem::path& executable) {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates;
  if (const char* set = std::getenv("FASTK_PLOT_SCRIPT"); set && *set) candidates.emplace_back(set);
  candidates.push_back(executable.parent_path().parent_path() / "share" / "fastk" / "plot_run.py");
  candidates.push_back(fs::path(FASTK_SOURCE_DIR) / "experiments" / "plot_run.py");
  for (const fs::path& p : candidates) {
    std::error_code ignored;
    if (fs::is_regular_file(p, ignored)) return p;
  }
  return std::nullopt;
}

bool make_plots(const std::filesystem::path& run_dir) {
  std::error_code no_exe;
  const auto script = find_plot_script(std::filesystem::read_symlink("/proc/self/exe", no_exe));
  if (!script) {
    std::cerr << "fastk: no plots: plot_run.py not found (set FASTK_PLOT_SCRIPT, or install "
                 "fastk with `cmake --install`, which puts it in <prefix>/share/fastk)\n";
    return false;
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

}  // namespace fastk::node
