// Where fastk finds plot_run.py (node/report/plots.h): an installed fastk finds its own copy,
// FASTK_PLOT_SCRIPT overrides both, and a build tree falls back to its source tree.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

#include "node/report/plots.h"
#include "tests/testutil/temp_dir.h"

namespace fastk::node {
namespace {

namespace fs = std::filesystem;

void touch(const fs::path& file) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << "# plot\n";
}

TEST(PlotScript, AnInstalledFastkUsesTheScriptInstalledBesideIt) {
  ::unsetenv("FASTK_PLOT_SCRIPT");
  const fs::path prefix = testutil::fresh_test_dir();
  touch(prefix / "share" / "fastk" / "plot_run.py");
  EXPECT_EQ(find_plot_script(prefix / "bin" / "fastk"), prefix / "share" / "fastk" / "plot_run.py");
}

TEST(PlotScript, TheEnvironmentOverridesAndABuildTreeFallsBackToItsSources) {
  const fs::path dir = testutil::fresh_test_dir();
  touch(dir / "mine.py");
  touch(dir / "share" / "fastk" / "plot_run.py");
  ::setenv("FASTK_PLOT_SCRIPT", (dir / "mine.py").c_str(), 1);
  EXPECT_EQ(find_plot_script(dir / "bin" / "fastk"), dir / "mine.py");
  // A named script that is not there is not replaced by another.
  ::setenv("FASTK_PLOT_SCRIPT", (dir / "missing.py").c_str(), 1);
  EXPECT_FALSE(find_plot_script(dir / "bin" / "fastk").has_value());
  ::unsetenv("FASTK_PLOT_SCRIPT");
  // Without an absolute executable path (/proc/self/exe unreadable) no installed copy is
  // looked for, not even relative to the working directory.
  const auto fallback = find_plot_script("");
  ASSERT_TRUE(fallback.has_value());
  EXPECT_EQ(fallback->filename(), "plot_run.py");
  EXPECT_EQ(fallback->parent_path().filename(), "experiments");
}

}  // namespace
}  // namespace fastk::node
