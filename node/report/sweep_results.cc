#include "node/report/sweep_results.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "node/metrics/file_writer.h"

namespace fastk::node {
namespace {

namespace fs = std::filesystem;

fs::path run_path(const fs::path& dir, const SweepPoint& p) { return dir / "runs" / p.folder; }

void write_atomically(const fs::path& path, const std::string& text) {
  metrics::FileWriter file(path, metrics::FileWriter::Mode::kAtomic);
  file.write(text);
  file.commit();
}

std::string csv_field(const std::string& value) {
  if (value.find_first_of(",\"\n") == std::string::npos) return value;
  std::string quoted = "\"";
  for (const char c : value) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

void add(Spread& s, double value) {
  s.min = s.count == 0 ? value : std::min(s.min, value);
  s.max = s.count == 0 ? value : std::max(s.max, value);
  s.mean += (value - s.mean) / ++s.count;
}

std::string format_spread(const Spread& s, const char* format) {
  if (s.count == 0) return "-";
  char mean[64], low[64], high[64];
  std::snprintf(mean, sizeof mean, format, s.mean);
  if (s.count == 1) return mean;
  std::snprintf(low, sizeof low, format, s.min);
  std::snprintf(high, sizeof high, format, s.max);
  return std::string(mean) + " (" + low + "-" + high + ")";
}

}  // namespace

void write_sweep_csv(const fs::path& dir, const std::vector<Variation>& variations,
                     const std::vector<SweepPoint>& points) {
  std::ostringstream out;
  std::string columns;
  for (const SweepPoint& p : points) {
    const fs::path file = run_path(dir, p) / "evaluation.csv";
    std::ifstream in(file);
    std::string header, line;
    if (!in || !std::getline(in, header)) {
      throw std::runtime_error(file.string() + " is missing or empty: run " + p.folder +
                               " left no evaluations");
    }
    if (columns.empty()) {
      columns = header;
      for (const Variation& v : variations) out << csv_field(v.key) << ",";
      out << "run," << header << "\n";
    } else if (header != columns) {
      throw std::runtime_error(file.string() + " has other columns than the sweep's first run (" +
                               header + " against " + columns + ")");
    }
    std::string prefix;
    for (const auto& setting : p.settings) prefix += csv_field(setting.second) + ",";
    prefix += p.folder + ",";
    while (std::getline(in, line)) {
      if (!line.empty()) out << prefix << line << "\n";
    }
  }
  write_atomically(dir / "sweep.csv", out.str());
}

std::vector<SettingResult> sweep_settings(const fs::path& dir,
                                          const std::vector<SweepPoint>& points,
                                          const std::string& over) {
  std::vector<SettingResult> results;
  std::map<std::vector<std::pair<std::string, std::string>>, std::size_t> index;
  for (const SweepPoint& p : points) {
    const fs::path file = run_path(dir, p) / "summary.json";
    nlohmann::json summary;
    try {
      std::ifstream in(file);
      if (!in) throw std::runtime_error("cannot be opened");
      summary = nlohmann::json::parse(in);
    } catch (const std::exception& e) {
      throw std::runtime_error(file.string() + ": " + e.what() + " (run " + p.folder + ")");
    }
    auto settings = p.settings;
    std::erase_if(settings, [&](const auto& s) { return s.first == over; });
    const auto [it, fresh] = index.emplace(settings, results.size());
    if (fresh) results.push_back(SettingResult{settings, 0, 0, {}, {}, {}});
    SettingResult& r = results[it->second];
    ++r.runs;
    r.target_accuracy = summary.value("target_accuracy", 0.0);
    if (summary.value("time_to_target_s", nlohmann::json()).is_number()) {
      add(r.time_to_target_s, summary["time_to_target_s"].get<double>());
    }
    if (summary.value("final_test_accuracy", nlohmann::json()).is_number()) {
      add(r.final_accuracy, summary["final_test_accuracy"].get<double>());
    }
    if (summary.value("final_time_s", nlohmann::json()).is_number()) {
      add(r.final_time_s, summary["final_time_s"].get<double>());
    }
  }
  return results;
}

void write_time_to_target_csv(const fs::path& dir, const std::vector<SettingResult>& results) {
  std::ostringstream out;
  if (!results.empty()) {
    for (const auto& setting : results.front().settings) out << csv_field(setting.first) << ",";
  }
  out << "runs,target_accuracy,reached,time_to_target_mean_s,time_to_target_min_s,"
         "time_to_target_max_s,final_accuracy_mean,final_accuracy_min,final_accuracy_max,"
         "final_time_mean_s\n";
  for (const SettingResult& r : results) {
    for (const auto& setting : r.settings) out << csv_field(setting.second) << ",";
    // Empty cells where no run gave a value.
    const auto spread = [&](const Spread& s) {
      if (s.count > 0) {
        out << s.mean << "," << s.min << "," << s.max;
      } else {
        out << ",,";
      }
    };
    out << r.runs << "," << r.target_accuracy << "," << r.time_to_target_s.count << ",";
    spread(r.time_to_target_s);
    out << ",";
    spread(r.final_accuracy);
    out << ",";
    if (r.final_time_s.count > 0) out << r.final_time_s.mean;
    out << "\n";
  }
  write_atomically(dir / "time_to_target.csv", out.str());
}

std::string time_to_target_table(const std::vector<SettingResult>& results, double target,
                                 const std::string& time_unit) {
  std::ostringstream t;
  if (results.empty()) return "";
  for (const auto& setting : results.front().settings) t << "| " << setting.first << " ";
  char target_text[32];
  std::snprintf(target_text, sizeof target_text, "%g%%", 100 * target);
  t << "| runs | time to " << (target > 0 ? target_text : "target") << " (" << time_unit
    << "), mean (min-max) | reached | final accuracy | final time (" << time_unit << ") |\n";
  for (std::size_t c = 0; c < results.front().settings.size() + 5; ++c) t << "|---";
  t << "|\n";
  for (const SettingResult& r : results) {
    for (const auto& setting : r.settings) t << "| " << setting.second << " ";
    Spread accuracy = r.final_accuracy;
    accuracy.mean *= 100, accuracy.min *= 100, accuracy.max *= 100;
    t << "| " << r.runs << " | " << format_spread(r.time_to_target_s, "%.2f") << " | "
      << r.time_to_target_s.count << "/" << r.runs << " | " << format_spread(accuracy, "%.2f%%")
      << " | " << format_spread(r.final_time_s, "%.2f") << " |\n";
  }
  return t.str();
}

}  // namespace fastk::node
