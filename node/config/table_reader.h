// Typed, path-aware reading of one TOML table into plain structs. Each read leaves the
// caller's default in place when the key is absent, records a ConfigErrors entry naming the
// TOML path when the value has the wrong type or range, and marks the key as known so that
// finish() can report misspelt keys ("did you mean ...?").
#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <string_view>

#include "node/config/config_error.h"

namespace fastk::node {

class TableReader {
 public:
  // `table` may be null (table absent: every read keeps its default).
  TableReader(const toml::table* table, std::string path, ConfigErrors& errors);

  void read(std::string_view key, bool& out);
  void read(std::string_view key, std::string& out);
  void read(std::string_view key, int& out, std::int64_t min = std::numeric_limits<int>::min(),
            std::int64_t max = std::numeric_limits<int>::max());
  void read(std::string_view key, std::int64_t& out,
            std::int64_t min = std::numeric_limits<std::int64_t>::min(),
            std::int64_t max = std::numeric_limits<std::int64_t>::max());
  void read(std::string_view key, std::uint64_t& out);
  // Integers are accepted where a float is expected.
  void read(std::string_view key, double& out, double min = -std::numeric_limits<double>::max(),
            double max = std::numeric_limits<double>::max());
  // A string turned into an enum (or anything) by `parse`, which throws
  // std::invalid_argument with a message listing the accepted values.
  template <typename T>
  void read_choice(std::string_view key, T& out,
                   const std::function<T(const std::string&)>& parse) {
    std::string name;
    if (!read_string_if_present(key, name)) return;
    try {
      out = parse(name);
    } catch (const std::invalid_argument& e) {
      errors_.add(path_of(key), e.what());
    }
  }
  // Whether the table is in the file at all.
  bool present() const { return table_ != nullptr; }
  // Whether the key is present (and marks it known).
  bool has(std::string_view key);
  // A sub-table reader; records an error if the key holds something else.
  TableReader table(std::string_view key);
  // Reports keys that no read asked for, with a suggestion when one is close.
  void finish();

  std::string path_of(std::string_view key) const;
  // The keys asked for so far (read or looked at), whether present or not.
  const std::set<std::string, std::less<>>& known() const { return known_; }
  const toml::node* node(std::string_view key);
  ConfigErrors& errors() { return errors_; }

 private:
  bool read_string_if_present(std::string_view key, std::string& out);
  void type_error(std::string_view key, const char* expected, const toml::node& got);

  const toml::table* table_;
  std::string path_;
  ConfigErrors& errors_;
  std::set<std::string, std::less<>> known_;
};

}  // namespace fastk::node
