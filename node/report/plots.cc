#include "node/report/plots.h"

#include <cstdlib>
#include <iostream>
#include <string>

namespace fastk::node {

bool make_plots(const std::filesystem::path& run_dir) {
  // Debian's interpreter has python3-matplotlib even when another python3 comes first.
  const std::string python =
      std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  const std::string command =
      python + " '" FASTK_SOURCE_DIR "/experiments/plot_run.py' '" + run_dir.string() + "'";
  if (std::system(command.c_str()) == 0) return true;
  std::cerr << "fastk: plotting failed (" << command << ")\n";
  return false;
}

}  // namespace fastk::node
