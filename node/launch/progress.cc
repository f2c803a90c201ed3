#include "node/launch/progress.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <sstream>

namespace fastk::node {
namespace {

bool parse_number(std::string_view text, double& out) {
  if (text == "nan") return out = NAN, true;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

bool parse_number(std::string_view text, std::int64_t& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::string format_progress(const PeerProgress& p) {
  char buffer[256];
  std::snprintf(buffer, sizeof buffer,
                "%.*siteration=%lld iterations=%lld loss=%.6g accuracy=%.6g elapsed_s=%.3f "
                "waiting_s=%.3f mean_backup=%.4g",
                static_cast<int>(kProgressPrefix.size()), kProgressPrefix.data(),
                static_cast<long long>(p.iteration), static_cast<long long>(p.iterations), p.loss,
                p.accuracy, p.elapsed_s, p.waiting_s, p.mean_backup);
  return buffer;
}

std::optional<PeerProgress> parse_progress(std::string_view line) {
  if (!line.starts_with(kProgressPrefix)) return std::nullopt;
  line.remove_prefix(kProgressPrefix.size());
  PeerProgress p;
  while (!line.empty()) {
    std::size_t space = line.find(' ');
    std::string_view field = line.substr(0, space);
    line = space == std::string_view::npos ? std::string_view() : line.substr(space + 1);
    if (field.empty()) continue;
    std::size_t eq = field.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    std::string_view key = field.substr(0, eq), value = field.substr(eq + 1);
    bool ok = true;
    if (key == "iteration")
      ok = parse_number(value, p.iteration);
    else if (key == "iterations")
      ok = parse_number(value, p.iterations);
    else if (key == "loss")
      ok = parse_number(value, p.loss);
    else if (key == "accuracy")
      ok = parse_number(value, p.accuracy);
    else if (key == "elapsed_s")
      ok = parse_number(value, p.elapsed_s);
    else if (key == "waiting_s")
      ok = parse_number(value, p.waiting_s);
    else if (key == "mean_backup")
      ok = parse_number(value, p.mean_backup);
    if (!ok) return std::nullopt;
  }
  return p;
}

std::string summarize_progress(const std::vector<std::optional<PeerProgress>>& latest,
                               int peers_running) {
  std::int64_t slowest = -1, fastest = -1, planned = 0;
  double loss_sum = 0, elapsed = 0, waiting = 0, iterations_sum = 0, backups_sum = 0;
  int loss_count = 0, heard = 0, backups_count = 0;
  double accuracy = NAN;
  for (const auto& p : latest) {
    if (!p) continue;
    ++heard;
    slowest = slowest < 0 ? p->iteration : std::min(slowest, p->iteration);
    fastest = std::max(fastest, p->iteration);
    planned = std::max(planned, p->iterations);
    if (!std::isnan(p->loss)) loss_sum += p->loss, ++loss_count;
    if (!std::isnan(p->mean_backup)) backups_sum += p->mean_backup, ++backups_count;
    if (!std::isnan(p->accuracy))
      accuracy = std::isnan(accuracy) ? p->accuracy : std::max(accuracy, p->accuracy);
    elapsed += p->elapsed_s;
    waiting += p->waiting_s;
    iterations_sum += static_cast<double>(p->iteration);
  }
  std::ostringstream out;
  out << "peers " << peers_running << "/" << latest.size() << " running";
  if (heard == 0) return out.str() + " | starting";
  out << " | iteration " << slowest << ".." << fastest << "/" << planned;
  char buffer[160];
  if (loss_count > 0) {
    std::snprintf(buffer, sizeof buffer, " | loss %.4f", loss_sum / loss_count);
    out << buffer;
  }
  if (!std::isnan(accuracy)) {
    std::snprintf(buffer, sizeof buffer, " | accuracy %.2f%%", 100 * accuracy);
    out << buffer;
  }
  if (backups_count > 0) {
    std::snprintf(buffer, sizeof buffer, " | backups %.2f", backups_sum / backups_count);
    out << buffer;
  }
  if (elapsed > 0) {
    std::snprintf(buffer, sizeof buffer, " | %.1f it/s per peer | waiting %.0f%%",
                  iterations_sum / elapsed, 100 * waiting / elapsed);
    out << buffer;
  }
  return out.str();
}

}  // namespace fastk::node
