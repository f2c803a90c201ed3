// Where fastk finds plot_run.py (node/report/plots.h): an installed fastk finds its own copy,
// FASTK_PLOT_SCRIPT overrides both, and a build tree falls back to its source tree.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

#include "node/report/plots.h"
#include "tests/support/temp_dir.h"

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

// A run stopped before its first iteration (Ctrl-C during start-up) has nothing to plot:
// the script is not even started, and nothing failed. With one iteration it runs, and a
// script that fails is reported as failed.
TEST(Plots, NoIterationsMeansNoPlotAttemptAndNoFailure) {
  const fs::path dir = testutil::fresh_test_dir();
  const fs::path run = dir / "run";
  fs::create_directories(run);
  // A stand-in for plot_run.py that leaves a mark when it is run, then fails.
  std::ofstream(dir / "plot.py") << "import pathlib, sys\n"
                                    "pathlib.Path(sys.argv[1], 'attempted').touch()\n"
                                    "sys.exit('plot_run: cannot write x.png: No space left')\n";
  ::setenv("FASTK_PLOT_SCRIPT", (dir / "plot.py").c_str(), 1);
  std::ofstream(run / "iterations.csv") << "peer,iteration,start_s\n";
  ::testing::internal::CaptureStdout();
  EXPECT_TRUE(make_plots(run));
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "no iterations recorded: no plots\n");
  EXPECT_FALSE(fs::exists(run / "attempted"));
  fs::remove(run / "iterations.csv");  // a run stopped before writing any
  EXPECT_TRUE(make_plots(run));
  EXPECT_FALSE(fs::exists(run / "attempted"));

  std::ofstream(run / "iterations.csv") << "peer,iteration,start_s\n0,0,0.0\n";
  EXPECT_FALSE(make_plots(run));
  EXPECT_TRUE(fs::exists(run / "attempted"));
  ::unsetenv("FASTK_PLOT_SCRIPT");
}

}  // namespace
}  // namespace fastk::node
