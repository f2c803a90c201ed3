// [stragglers]: compute-time distribution, straggler models and link delays.
#include "node/config/tables.h"

namespace fastk::node {
namespace {

using stragglers::ComputeDistribution;

// Calls `read_one` with a reader for each table of the array of tables at `key`.
template <typename Fn>
void for_each_table(TableReader& t, std::string_view key, Fn read_one) {
  const toml::node* n = t.node(key);
  if (n == nullptr) return;
  const toml::array* array = n->as_array();
  if (array == nullptr) {
    t.errors().add(t.path_of(key), "expected an array of tables ([[" + t.path_of(key) + "]])");
    return;
  }
  for (std::size_t i = 0; i < array->size(); ++i) {
    const std::string where = t.path_of(key) + "[" + std::to_string(i) + "]";
    const toml::table* table = array->get(i)->as_table();
    if (table == nullptr) {
      t.errors().add(where, "expected a table");
      continue;
    }
    TableReader element(table, where, t.errors());
    read_one(element, where);
    element.finish();
  }
}

}  // namespace

// Slowdowns beyond this make runs that never end in practice (a factor of 1e12 on a 1 ms
// gradient is 30 years per iteration, and the simulator spun on such a run for good).
constexpr double kMaxSlowdown = 1e6;

namespace {

// slow_peers and slow_factors: one factor for all, or one per peer.
void read_slow_peers(TableReader& t, stragglers::DelaySpec& spec) {
  const auto ids = read_numbers<int>(t, "slow_peers");
  const auto factors = read_numbers<double>(t, "slow_factors");
  if (!factors.empty() && factors.size() != 1 && factors.size() != ids.size()) {
    t.errors().add(t.path_of("slow_factors"),
                   "expected one factor, or one per entry of slow_peers (" +
                       std::to_string(ids.size()) + "), got " + std::to_string(factors.size()));
  }
  for (std::size_t i = 0; i < factors.size(); ++i) {
    if (!(factors[i] > 0 && factors[i] <= kMaxSlowdown)) {
      t.errors().add(t.path_of("slow_factors") + "[" + std::to_string(i) + "]",
                     "expected a slowdown in (0, 1e6], got " + std::to_string(factors[i]) +
                         " (larger ones make runs that never end)");
    }
  }
  for (std::size_t i = 0; i < ids.size(); ++i) {
    double factor = 5.0;  // documented default
    if (factors.size() == 1) factor = factors[0];
    if (factors.size() == ids.size()) factor = factors[i];
    spec.slow_peers.push_back({ids[i], factor});
  }
}

stragglers::MarkovClass read_markov_class(TableReader& c, const std::string& where) {
  stragglers::MarkovClass markov;
  markov.peers = read_numbers<int>(c, "peers");
  if (markov.peers.empty()) c.errors().add(where, "needs peers = [PEER, ...]");
  c.read("good_to_bad", markov.good_to_bad, 0.0, 1.0);
  c.read("bad_to_good", markov.bad_to_good, 0.0, 1.0);
  c.read("factor", markov.factor, 1e-9, kMaxSlowdown);
  return markov;
}

}  // namespace

void read_stragglers_table(TableReader& t, stragglers::DelaySpec& spec,
                           std::uint64_t seed_default) {
  spec.seed = seed_default;
  t.read("compute_s", spec.compute_s, 0.0);
  t.read_choice<ComputeDistribution>("distribution", spec.distribution,
                                     stragglers::parse_compute_distribution);
  t.read("shift", spec.shift, 0.0);
  t.read("exp_mean", spec.exp_mean, 0.0);
  t.read("pareto_alpha", spec.pareto_alpha, 1e-9);
  t.read("transient_probability", spec.transient_probability, 0.0, 1.0);
  t.read("transient_factor", spec.transient_factor, 1e-9, kMaxSlowdown);
  read_slow_peers(t, spec);
  t.read("markov_good_to_bad", spec.markov_good_to_bad, 0.0, 1.0);
  t.read("markov_bad_to_good", spec.markov_bad_to_good, 0.0, 1.0);
  t.read("markov_factor", spec.markov_factor, 1e-9, kMaxSlowdown);
  for_each_table(t, "markov_classes", [&](TableReader& c, const std::string& where) {
    spec.markov_classes.push_back(read_markov_class(c, where));
  });
  for_each_table(t, "windows", [&](TableReader& w, const std::string&) {
    stragglers::SlowWindow window;
    window.peers = read_numbers<int>(w, "peers");
    w.read("from_iteration", window.from_iteration, 0);
    w.read("to_iteration", window.to_iteration, 0);
    w.read("probability", window.probability, 0.0, 1.0);
    w.read("factor", window.factor, 1e-9, kMaxSlowdown);
    if (window.to_iteration < window.from_iteration) {
      w.errors().add(w.path_of("to_iteration"), "must be >= from_iteration");
    }
    spec.windows.push_back(window);
  });
  t.read("link_s", spec.link_s, 0.0);
  t.read("link_jitter_s", spec.link_jitter_s, 0.0);
  for_each_table(t, "links", [&](TableReader& l, const std::string& where) {
    stragglers::LinkOverride link;
    if (!l.has("from") || !l.has("to")) l.errors().add(where, "needs from = PEER and to = PEER");
    l.read("from", link.from, 0);
    l.read("to", link.to, 0);
    l.read("delay_s", link.delay_s, 0.0);
    l.read("factor", link.factor, 1e-9, kMaxSlowdown);
    spec.links.push_back(link);
  });
  t.read("seed", spec.seed);
  t.finish();
}

namespace {

nlohmann::ordered_json windows_json(const std::vector<stragglers::SlowWindow>& windows) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& w : windows) {
    out.push_back({{"peers", w.peers},
                   {"from_iteration", w.from_iteration},
                   {"to_iteration", w.to_iteration},
                   {"probability", w.probability},
                   {"factor", w.factor}});
  }
  return out;
}

nlohmann::ordered_json markov_classes_json(const std::vector<stragglers::MarkovClass>& classes) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& c : classes) {
    out.push_back({{"peers", c.peers},
                   {"good_to_bad", c.good_to_bad},
                   {"bad_to_good", c.bad_to_good},
                   {"factor", c.factor}});
  }
  return out;
}

nlohmann::ordered_json links_json(const std::vector<stragglers::LinkOverride>& links) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& l : links) {
    out.push_back({{"from", l.from}, {"to", l.to}, {"delay_s", l.delay_s}, {"factor", l.factor}});
  }
  return out;
}

}  // namespace

nlohmann::ordered_json stragglers_table_json(const stragglers::DelaySpec& s) {
  std::vector<int> slow_peers;
  std::vector<double> slow_factors;
  for (const auto& sp : s.slow_peers) {
    slow_peers.push_back(sp.peer);
    slow_factors.push_back(sp.factor);
  }
  return {{"compute_s", s.compute_s},
          {"distribution", stragglers::to_string(s.distribution)},
          {"shift", s.shift},
          {"exp_mean", s.exp_mean},
          {"pareto_alpha", s.pareto_alpha},
          {"transient_probability", s.transient_probability},
          {"transient_factor", s.transient_factor},
          {"slow_peers", slow_peers},
          {"slow_factors", slow_factors},
          {"markov_good_to_bad", s.markov_good_to_bad},
          {"markov_bad_to_good", s.markov_bad_to_good},
          {"markov_factor", s.markov_factor},
          {"markov_classes", markov_classes_json(s.markov_classes)},
          {"windows", windows_json(s.windows)},
          {"link_s", s.link_s},
          {"link_jitter_s", s.link_jitter_s},
          {"links", links_json(s.links)},
          {"seed", s.seed}};
}

}  // namespace fastk::node
