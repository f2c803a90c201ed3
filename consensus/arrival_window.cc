#include "consensus/arrival_window.h"

#include <algorithm>

namespace fastk::consensus {

void ArrivalWindow::begin(std::int64_t k, double start_s, std::span<const PeerId> neighbours,
                          const std::vector<bool>& already_arrived) {
  Entry entry;
  entry.k = k;
  entry.start_s = start_s;
  entry.neighbours.assign(neighbours.begin(), neighbours.end());
  entry.delay_s.resize(neighbours.size());
  entry.by_message.assign(neighbours.size(), false);
  for (std::size_t j = 0; j < neighbours.size(); ++j) {
    if (already_arrived[j]) entry.delay_s[j] = 0.0;
  }
  entries_.push_back(std::move(entry));
  // One more than the capacity: the current (open) iteration is not a sample.
  while (static_cast<int>(entries_.size()) > capacity_ + 1) entries_.pop_front();
}

void ArrivalWindow::gradient_done(std::int64_t k, double done_s) {
  for (auto& e : entries_) {
    if (e.k == k) e.gradient_s = done_s - e.start_s;
  }
}

void ArrivalWindow::message(PeerId from, std::int64_t tag, double now_s) {
  // Newest first: once an entry has `from`'s delay from a message, so has every older one
  // (that message went through all of them, and entries are only added at the new end), so
  // the walk stops there instead of visiting the whole window per message. A delay that
  // begin() set (a fresh model already there) says nothing about older entries: the walk
  // goes on past it.
  for (auto e = entries_.rbegin(); e != entries_.rend(); ++e) {
    if (e->k > tag) continue;
    for (std::size_t j = 0; j < e->neighbours.size(); ++j) {
      if (e->neighbours[j] != from) continue;
      if (e->by_message[j]) return;
      if (!e->delay_s[j]) e->delay_s[j] = std::max(0.0, now_s - e->start_s);
      e->by_message[j] = true;
    }
  }
}

std::span<const std::optional<double>> ArrivalWindow::delays(std::int64_t k) const {
  for (const auto& e : entries_) {
    if (e.k == k) return e.delay_s;
  }
  return {};
}

int ArrivalWindow::samples(std::int64_t current_k) const {
  int n = 0;
  for (const auto& e : entries_) n += (e.k < current_k && e.gradient_s) ? 1 : 0;
  return n;
}

std::vector<ArrivalWindow::Wait> ArrivalWindow::waits(int m, std::int64_t current_k,
                                                      double now_s) const {
  std::vector<Wait> waits;
  std::vector<double> delays;
  for (const auto& e : entries_) {
    if (e.k >= current_k || !e.gradient_s) continue;
    delays.clear();
    for (const auto& d : e.delay_s) delays.push_back(d ? *d : std::max(0.0, now_s - e.start_s));
    double arrival = 0;
    if (!delays.empty() && m > 0) {
      const auto index =
          static_cast<std::size_t>(std::min<int>(m, static_cast<int>(delays.size())) - 1);
      std::nth_element(delays.begin(), delays.begin() + static_cast<std::ptrdiff_t>(index),
                       delays.end());
      arrival = delays[index];
    }
    waits.push_back({*e.gradient_s, arrival});
  }
  return waits;
}

std::optional<double> ArrivalWindow::expected_iteration_time(int m, std::int64_t current_k,
                                                             double now_s) const {
  const std::vector<Wait> all = waits(m, current_k, now_s);
  if (all.empty()) return std::nullopt;
  return mean_iteration_s(all);
}

double ArrivalWindow::mean_iteration_s(const std::vector<Wait>& waits) {
  double sum = 0;
  for (const Wait& w : waits) sum += w.iteration_s();
  return sum / static_cast<double>(waits.size());
}

}  // namespace fastk::consensus
