#include "node/config/sweep_plan.h"

#include <cctype>
#include <cstdio>
#include <set>
#include <stdexcept>
#include <string>

namespace fastk::node {
namespace {

// Splits at commas outside brackets and quotes.
std::vector<std::string> split_values(const std::string& list) {
  std::vector<std::string> values(1);
  int depth = 0;
  char quote = 0;
  for (const char c : list) {
    if (quote) {
      quote = c == quote ? 0 : quote;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (c == ',' && depth == 0) {
      values.emplace_back();
      continue;
    }
    values.back() += c;
  }
  return values;
}

// The last part of a key, and a value, as characters a shell and a file system take as is.
std::string folder_part(const std::string& key, const std::string& value) {
  std::string part = key.substr(key.rfind('.') + 1) + "-";
  for (const char c : value) {
    const bool plain = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '+';
    if (plain) {
      part += c;
    } else if (!part.ends_with('_') && !part.ends_with('-')) {
      part += '_';
    }
  }
  while (part.ends_with('_')) part.pop_back();
  return part;
}

}  // namespace

Variation parse_variation(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos) {
    throw std::invalid_argument("--vary " + text + ": expected TABLE.KEY=VALUE1,VALUE2,...");
  }
  Variation v{text.substr(0, eq), split_values(text.substr(eq + 1))};
  if (v.key.find('.') == std::string::npos || v.key.front() == '.' || v.key.back() == '.') {
    throw std::invalid_argument("--vary " + text + ": the key must be TABLE.KEY, like run.seed");
  }
  std::set<std::string> seen;
  for (const std::string& value : v.values) {
    if (value.empty()) throw std::invalid_argument("--vary " + text + ": an empty value");
    if (!seen.insert(value).second) {
      throw std::invalid_argument("--vary " + text + ": " + value + " is given twice");
    }
  }
  return v;
}

std::vector<std::string> SweepPoint::overrides() const {
  std::vector<std::string> out;
  for (const auto& [key, value] : settings) out.push_back(key + "=" + value);
  return out;
}

std::vector<SweepPoint> sweep_points(const std::vector<Variation>& variations) {
  if (variations.empty()) throw std::invalid_argument("nothing to sweep: give --vary KEY=V1,V2");
  std::set<std::string> keys;
  std::size_t total = 1;
  for (const Variation& v : variations) {
    if (!keys.insert(v.key).second) {
      throw std::invalid_argument("--vary " + v.key + " is given twice: list its values once");
    }
    total *= v.values.size();
  }
  std::vector<SweepPoint> points;
  const int digits = static_cast<int>(std::to_string(total).size());
  for (std::size_t index = 0; index < total; ++index) {
    SweepPoint p;
    char number[32];
    std::snprintf(number, sizeof number, "%0*zu", digits, index + 1);
    p.folder = number;
    std::size_t rest = index, stride = total;
    for (const Variation& v : variations) {
      stride /= v.values.size();
      const std::string& value = v.values[rest / stride];
      rest %= stride;
      p.settings.emplace_back(v.key, value);
      p.folder += "_" + folder_part(v.key, value);
    }
    points.push_back(std::move(p));
  }
  return points;
}

}  // namespace fastk::node
