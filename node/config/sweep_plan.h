// The grid of a parameter sweep (`fastk sweep CONFIG --vary KEY=V1,V2 ...`): each --vary names
// one config key and its values; the sweep runs every combination, the last key varying
// fastest. Values are written as for --set (TOML values, a bare word is a string); commas
// inside brackets or quotes do not split values, so `--vary model.hidden=[64],[128,64]` has two.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace fastk::node {

struct Variation {
  std::string key;  // table.key
  std::vector<std::string> values;
};

// "consensus.policy=full,static,adaptive". Throws std::invalid_argument naming what is wrong
// (no '=', no table, an empty value, a value given twice).
Variation parse_variation(const std::string& text);

struct SweepPoint {
  std::vector<std::pair<std::string, std::string>> settings;  // key, value: one per variation
  std::string folder;  // "03_policy-static_seed-1": unique, sorted as run, shell-safe
  std::vector<std::string> overrides() const;  // "key=value", for --set
};

// Every combination, in order. Throws std::invalid_argument when a key is varied twice or
// there is nothing to vary.
std::vector<SweepPoint> sweep_points(const std::vector<Variation>& variations);

}  // namespace fastk::node
