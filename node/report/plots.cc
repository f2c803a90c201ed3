#include "node/report/plots.h"

#include <iostream>
#include <string>
#include <vector>

#include "node/launch/child_process.h"

namespace fastk::node {

bool make_plots(const std::filesystem::path& run_dir) {
  // Debian's interpreter has python3-matplotlib even when another python3 comes first.
  const std::string python =
      std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  // An argument vector, not a shell line: a run folder may hold any character.
  const std::vector<std::string> argv{python, FASTK_SOURCE_DIR "/experiments/plot_run.py",
                                      run_dir.string()};
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
