#include "node/config/table_reader.h"

#include <algorithm>
#include <sstream>

namespace fastk::node {
namespace {

std::string type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    default:
      return "a date/time";
  }
}

// Levenshtein distance, to suggest the intended key for a typo.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

void ConfigErrors::throw_if_any(const std::string& source) const {
  if (problems_.empty()) return;
  std::ostringstream out;
  out << source << ": " << problems_.size() << (problems_.size() == 1 ? " problem" : " problems")
      << " in the config";
  const auto from_set = std::count_if(problems_.begin(), problems_.end(), [](const Problem& p) {
    return p.origin.starts_with("--set ") || p.text.starts_with("--set ");
  });
  if (from_set > 0) out << " (" << from_set << " from --set)";
  out << ":";
  for (const auto& p : problems_) {
    out << "\n  ";
    if (!p.origin.empty()) out << p.origin << ": ";
    out << p.text;
  }
  throw ConfigError(out.str());
}

TableReader::TableReader(const toml::table* table, std::string path, ConfigErrors& errors)
    : table_(table), path_(std::move(path)), errors_(errors) {}

std::string TableReader::path_of(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

const toml::node* TableReader::node(std::string_view key) {
  known_.emplace(key);
  return table_ ? table_->get(key) : nullptr;
}

bool TableReader::has(std::string_view key) { return node(key) != nullptr; }

void TableReader::type_error(std::string_view key, const char* expected, const toml::node& got) {
  errors_.add(path_of(key), std::string("expected ") + expected + ", got " + type_name(got));
}

void TableReader::read(std::string_view key, bool& out) {
  const toml::node* n = node(key);
  if (!n) return;
  if (auto v = n->value_exact<bool>()) {
    out = *v;
  } else {
    type_error(key, "true or false", *n);
  }
}

bool TableReader::read_string_if_present(std::string_view key, std::string& out) {
  const toml::node* n = node(key);
  if (!n) return false;
  if (auto v = n->value_exact<std::string>()) {
    out = *v;
    return true;
  }
  type_error(key, "a string", *n);
  return false;
}

void TableReader::read(std::string_view key, std::string& out) { read_string_if_present(key, out); }

void TableReader::read(std::string_view key, std::int64_t& out, std::int64_t min,
                       std::int64_t max) {
  const toml::node* n = node(key);
  if (!n) return;
  auto v = n->value_exact<std::int64_t>();
  if (!v) {
    type_error(key, "an integer", *n);
  } else if (*v < min || *v > max) {
    std::string range =
        max == std::numeric_limits<std::int64_t>::max() || max == std::numeric_limits<int>::max()
            ? ">= " + std::to_string(min)
            : "in " + std::to_string(min) + ".." + std::to_string(max);
    errors_.add(path_of(key), "expected an integer " + range + ", got " + std::to_string(*v));
  } else {
    out = *v;
  }
}

void TableReader::read(std::string_view key, int& out, std::int64_t min, std::int64_t max) {
  std::int64_t wide = out;
  read(key, wide, std::max<std::int64_t>(min, std::numeric_limits<int>::min()),
       std::min<std::int64_t>(max, std::numeric_limits<int>::max()));
  out = static_cast<int>(wide);
}

void TableReader::read(std::string_view key, std::uint64_t& out) {
  std::int64_t wide = static_cast<std::int64_t>(out);
  read(key, wide, 0);
  out = static_cast<std::uint64_t>(wide);
}

void TableReader::read(std::string_view key, double& out, double min, double max) {
  const toml::node* n = node(key);
  if (!n) return;
  std::optional<double> v;
  if (auto f = n->value_exact<double>()) v = *f;
  if (auto i = n->value_exact<std::int64_t>()) v = static_cast<double>(*i);
  if (!v) {
    type_error(key, "a number", *n);
  } else if (!(*v >= min && *v <= max)) {
    std::ostringstream msg;
    msg << "expected a number in [" << min << ", " << max << "], got " << *v;
    errors_.add(path_of(key), msg.str());
  } else {
    out = *v;
  }
}

TableReader TableReader::table(std::string_view key) {
  const toml::node* n = node(key);
  if (n && !n->is_table()) {
    type_error(key, "a table", *n);
    n = nullptr;
  }
  return TableReader(n ? n->as_table() : nullptr, path_of(key), errors_);
}

void TableReader::finish() {
  if (!table_) return;
  for (const auto& [key, value] : *table_) {
    if (known_.count(key.str())) continue;
    std::string message = "unknown key";
    std::string best;
    std::size_t best_distance = 3;  // suggest only near misses
    for (const auto& k : known_) {
      std::size_t d = edit_distance(key.str(), k);
      if (d < best_distance) best_distance = d, best = k;
    }
    if (!best.empty()) message += " (did you mean '" + best + "'?)";
    errors_.add(path_of(key.str()), message);
  }
}

}  // namespace fastk::node
