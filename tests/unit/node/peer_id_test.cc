#include "node/peer/peer_id.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

namespace fastk::node {
namespace {

using ::testing::HasSubstr;

// A fake environment: only the variables in the map are set.
EnvLookup env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

std::string error_of(std::optional<int> flag, int peers, const EnvLookup& e) {
  try {
    resolve_peer_id(flag, peers, e);
  } catch (const std::runtime_error& error) {
    return error.what();
  }
  return "";
}

TEST(PeerId, FlagWinsOverTheEnvironment) {
  EXPECT_EQ(resolve_peer_id(3, 8, env({{"OMPI_COMM_WORLD_RANK", "5"}})), 3);
}

TEST(PeerId, LauncherVariablesInOrderOfPreference) {
  EXPECT_EQ(resolve_peer_id({}, 8, env({{"OMPI_COMM_WORLD_RANK", "5"}, {"PMI_RANK", "6"}})), 5);
  EXPECT_EQ(resolve_peer_id({}, 8, env({{"PMI_RANK", "6"}, {"SLURM_PROCID", "7"}})), 6);
  EXPECT_EQ(resolve_peer_id({}, 8, env({{"SLURM_PROCID", "7"}})), 7);
  EXPECT_EQ(resolve_peer_id({}, 8, env({{"SLURM_PROCID", "0"}})), 0);
}

TEST(PeerId, ClearErrors) {
  EXPECT_THAT(error_of({}, 8, env({})), HasSubstr("no peer id: pass --id I"));
  EXPECT_THAT(error_of({}, 8, env({{"SLURM_PROCID", "8"}})),
              HasSubstr("peer id 8 (from SLURM_PROCID) is out of range: the config has 8 peers, "
                        "ids 0..7"));
  EXPECT_THAT(error_of(-1, 8, env({})), HasSubstr("peer id -1 (from --id) is out of range"));
  for (const char* bad : {"", "x", "3x", "-2", " 3", "99999999999999999999"}) {
    EXPECT_THAT(error_of({}, 8, env({{"PMI_RANK", bad}})),
                HasSubstr("PMI_RANK='" + std::string(bad) + "'"))
        << bad;
  }
}

}  // namespace
}  // namespace fastk::node
