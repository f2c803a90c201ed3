// The timing history DBW-C learns from (docs/protocol.md §5.5.3): for each of the last W
// iterations of one peer, when it started, how long its own gradient took, and for every
// neighbour it listened to, the delay A_j = (arrival of the first message from j with
// tag >= k) - t(k). A neighbour whose message has not arrived yet counts with the elapsed
// time as a lower bound, which grows until the message arrives, so the bias corrects itself.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <vector>

#include "topology/graph.h"

namespace fastk::consensus {

using topology::PeerId;

class ArrivalWindow {
 public:
  explicit ArrivalWindow(int capacity) : capacity_(capacity) {}

  // Opens iteration k (oldest entries beyond the capacity are dropped). `already_arrived`
  // marks neighbours whose fresh message was in the mailbox before the iteration began.
  void begin(std::int64_t k, double start_s, std::span<const PeerId> neighbours,
             const std::vector<bool>& already_arrived);
  void gradient_done(std::int64_t k, double done_s);
  // A message with `tag` from `from` arrived: it is the first qualifying arrival for every
  // open iteration k' <= tag that had not yet heard from `from`.
  void message(PeerId from, std::int64_t tag, double now_s);

  // Number of finished iterations (gradient known) in the window, the current one excluded.
  int samples(std::int64_t current_k) const;
  // What waiting for m neighbours meant in one finished iteration k' of the window: its own
  // gradient time tau(k') and A_(m)(k'), the m-th smallest neighbour delay (clipped at 0;
  // unknown ones bounded below by now - t(k'); the largest if it had fewer than m). The
  // iteration would have taken max(tau, A_(m)).
  struct Wait {
    double gradient_s = 0;
    double arrival_s = 0;
    double iteration_s() const { return gradient_s > arrival_s ? gradient_s : arrival_s; }
  };
  std::vector<Wait> waits(int m, std::int64_t current_k, double now_s) const;
  // The delays A_j of iteration k, aligned with its neighbours (nullopt: not arrived yet);
  // empty when k is not in the window.
  std::span<const std::optional<double>> delays(std::int64_t k) const;
  // The mean of max(tau, A_(m)) over `waits` (not empty).
  static double mean_iteration_s(const std::vector<Wait>& waits);
  // T(m): mean_iteration_s of waits(). nullopt without samples.
  std::optional<double> expected_iteration_time(int m, std::int64_t current_k, double now_s) const;

 private:
  struct Entry {
    std::int64_t k = 0;
    double start_s = 0;
    std::optional<double> gradient_s;            // own compute time tau(k)
    std::vector<PeerId> neighbours;              // receive_from of round k
    std::vector<bool> by_message;                // the delay came from message() (its walk)
    std::vector<std::optional<double>> delay_s;  // A_j, aligned with neighbours
  };
  int capacity_;
  std::deque<Entry> entries_;
};

}  // namespace fastk::consensus
