#include "node/report/topology_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

namespace fastk::node {
namespace {

using topology::TopologyKind;

std::string fixed(double v, int digits = 4) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

// A lambda near 1 (a large ring: 1 - 1.3e-9) with the digits that show how near.
std::string lambda_text(double lambda) {
  const double gap = 1.0 - lambda;
  if (!(gap > 0 && gap < 1e-3)) return fixed(lambda);
  return fixed(lambda, std::min(15, 3 + static_cast<int>(std::ceil(-std::log10(gap)))));
}

std::string gap_text(double gap) {
  if (!(gap > 0 && gap < 1e-3)) return fixed(gap);
  std::ostringstream s;
  s << std::setprecision(3) << gap;
  return s.str();
}

std::string format_eigenvalue(std::complex<double> v) {
  if (std::abs(v.imag()) < 1e-12) return fixed(v.real());
  return fixed(v.real()) + (v.imag() < 0 ? "-" : "+") + fixed(std::abs(v.imag())) + "i";
}

std::string describe_weights(const topology::TopologySpec& spec, const topology::TopologyFacts& f) {
  if (spec.directed) {
    return std::string("push-sum (1 / (1 + out-degree) to self and to each out-neighbour): ") +
           (f.mixing.column_stochastic ? "column-stochastic" : "NOT column-stochastic") +
           (f.mixing.row_stochastic ? ", row-stochastic too" : ", not row-stochastic");
  }
  std::string text = f.period > 1
                         ? "one-peer averaging (1/2 self, 1/2 one in-neighbour per round): "
                         : to_string(spec.weights) + ": ";
  text += f.mixing.symmetric ? "symmetric" : "NOT symmetric";
  text += f.mixing.row_stochastic && f.mixing.column_stochastic ? ", doubly stochastic"
                                                                : ", row-stochastic only";
  text += f.mixing.nonnegative ? ", non-negative" : ", has negative entries";
  return text;
}

}  // namespace

std::string describe_spec(const topology::TopologySpec& s) {
  std::string d = to_string(s.kind);
  switch (s.kind) {
    case TopologyKind::kTorus:
    case TopologyKind::kGrid:
      return d + " " + std::to_string(s.rows) + "x" + std::to_string(s.cols);
    case TopologyKind::kRandomRegular:
      return d + " degree=" + std::to_string(s.degree) + " seed=" + std::to_string(s.seed);
    case TopologyKind::kErdosRenyi:
      return d + " p=" + fixed(s.probability) + " seed=" + std::to_string(s.seed);
    case TopologyKind::kWattsStrogatz:
      return d + " k=" + std::to_string(s.nearest) + " rewire=" + fixed(s.rewire, 2) +
             " seed=" + std::to_string(s.seed);
    case TopologyKind::kEdgeList:
      return d + " " + s.file;
    default:
      return d;
  }
}

void write_topology_text(std::ostream& out, const topology::Topology& t,
                         const topology::TopologyFacts& f) {
  auto row = [&](const char* label) -> std::ostream& {
    return out << "  " << std::left << std::setw(12) << label;
  };
  out << "topology " << describe_spec(t.spec) << "\n";
  row("peers") << f.peers << " peers, " << f.edges << " edges\n";
  if (t.directed()) {
    row("directed") << f.arcs << " arcs, strongly connected (every peer reaches every other)\n";
  }
  row("degree") << "min " << f.min_degree << ", max " << f.max_degree << ", mean "
                << fixed(f.mean_degree, 2) << (f.regular ? " (regular)" : "") << "\n";
  row("diameter") << f.diameter;
  if (f.diameter_upper > f.diameter) {
    out << " to " << f.diameter_upper << " (bounds: exact takes a search from most peers)";
  }
  out << "\n";
  row("weights") << describe_weights(t.spec, f) << "\n";
  for (const auto& e : f.mixing.errors) row("  error") << e << "\n";
  for (const auto& w : f.mixing.warnings) row("  note") << w << "\n";
  if (!f.rounds_to_eps) {
    row("  warning") << "lambda = 1: disagreement never shrinks (the graph is disconnected, or W "
                        "keeps some peers apart); training would not reach consensus\n";
  }
  const bool flat = (t.spec.kind == topology::TopologyKind::kTorus ||
                     t.spec.kind == topology::TopologyKind::kGrid) &&
                    std::min(t.spec.rows, t.spec.cols) == 1 && f.peers > 2;
  if (flat) {
    row("  note") << f.peers << " peers make a 1x" << f.peers << " " << to_string(t.spec.kind)
                  << ", which is a "
                  << (t.spec.kind == topology::TopologyKind::kTorus ? "ring" : "path")
                  << ": give a peer count with factors, or --rows and --cols\n";
  }
  if (f.period > 1) {
    row("schedule") << "time-varying, period " << f.period << " rounds\n";
    row("lambda") << lambda_text(f.spectrum.lambda) << " over one period, "
                  << lambda_text(f.lambda_per_round)
                  << " per round on average (second-largest eigenvalue modulus)\n";
    row("per round");
    for (std::size_t k = 0; k < f.round_lambdas.size(); ++k) {
      out << (k ? " " : "") << fixed(f.round_lambdas[k]);
    }
    if (f.round_lambdas.empty()) {
      out << "not computed above " << topology::kMaxPeersForRoundSpectra << " peers\n";
    } else {
      out << "  (lambda of each round's W alone)\n";
    }
  } else {
    row("lambda") << lambda_text(f.spectrum.lambda)
                  << " (second-largest eigenvalue modulus of W)\n";
  }
  row("gap") << gap_text(1.0 - f.lambda_per_round) << " (spectral gap 1 - lambda"
             << (f.period > 1 ? " per round" : "") << ")\n";
  std::ostringstream eps;
  eps << std::setprecision(3) << f.eps;
  row("rounds") << (f.rounds_to_eps ? std::to_string(*f.rounds_to_eps) : "never (lambda = 1)")
                << " gossip rounds"
                << (f.period > 1 && f.rounds_to_eps
                        ? " (" + std::to_string(*f.rounds_to_eps / f.period) + " period(s) of " +
                              std::to_string(f.period) + ")"
                        : std::string())
                << " to shrink disagreement by " << eps.str() << "\n";
  const auto& ev = f.spectrum.eigenvalues;
  if (!f.spectrum.complete) {
    row("eigenvalues");
    for (std::size_t i = 0; i < ev.size(); ++i) {
      out << (i ? " " : "")
          << (ev[i].imag() == 0 && i > 0 ? lambda_text(ev[i].real()) : format_eigenvalue(ev[i]));
    }
    out << "  (the largest of " << f.peers << ", " << f.spectrum.method
        << (f.period > 1 ? ", of the period product" : "") << ")\n";
    return;
  }
  row("eigenvalues");
  const std::size_t shown = 8;
  for (std::size_t i = 0; i < ev.size(); ++i) {
    if (ev.size() > shown + 2 && i == shown) {
      out << " ... (" << ev.size() - shown - 2 << " more)";
      i = ev.size() - 3;
      continue;
    }
    out << (i ? " " : "") << format_eigenvalue(ev[i]);
  }
  out << (f.period > 1 ? "  (of the period product)" : "") << "\n";
}

void write_topology_json(std::ostream& out, const topology::Topology& t,
                         const topology::TopologyFacts& f, bool with_matrix,
                         const nlohmann::ordered_json* coding) {
  nlohmann::ordered_json j;
  j["kind"] = to_string(t.spec.kind);
  j["description"] = describe_spec(t.spec);
  j["peers"] = f.peers;
  j["edges"] = f.edges;
  j["degree"] = {{"min", f.min_degree},
                 {"max", f.max_degree},
                 {"mean", f.mean_degree},
                 {"regular", f.regular}};
  j["diameter"] = f.diameter;
  j["diameter_upper"] = f.diameter_upper;
  j["weights"] = {{"rule", f.period > 1 ? "one_peer" : to_string(t.spec.weights)},
                  {"symmetric", f.mixing.symmetric},
                  {"row_stochastic", f.mixing.row_stochastic},
                  {"column_stochastic", f.mixing.column_stochastic},
                  {"nonnegative", f.mixing.nonnegative},
                  {"errors", f.mixing.errors},
                  {"warnings", f.mixing.warnings}};
  j["directed"] = t.directed();
  j["arcs"] = f.arcs;
  j["period"] = f.period;
  j["lambda"] = f.spectrum.lambda;
  j["lambda_per_round"] = f.lambda_per_round;
  j["round_lambdas"] = f.round_lambdas;
  j["spectral_gap"] = 1.0 - f.lambda_per_round;
  j["eps"] = f.eps;
  j["rounds_to_eps"] = f.rounds_to_eps ? nlohmann::ordered_json(*f.rounds_to_eps) : nullptr;
  j["spectrum_method"] = f.spectrum.method;
  j["eigenvalues_complete"] = f.spectrum.complete;
  auto& ev = j["eigenvalues"] = nlohmann::ordered_json::array();
  for (auto v : f.spectrum.eigenvalues) {
    if (f.spectrum.real) {
      ev.push_back(v.real());
    } else {
      ev.push_back({v.real(), v.imag()});
    }
  }
  auto& edges = j["edge_list"] = nlohmann::ordered_json::array();
  for (const auto& e : t.graph.edges()) edges.push_back({e.a, e.b});
  if (with_matrix) {
    auto& m = j["matrix"] = nlohmann::ordered_json::array();
    const Eigen::MatrixXd w = topology::dense(t.weights);
    for (int i = 0; i < w.rows(); ++i) {
      std::vector<double> r(w.row(i).begin(), w.row(i).end());
      m.push_back(r);
    }
  }
  if (coding) j["coding"] = *coding;
  out << j.dump(2) << "\n";
}

void write_topology_dot(std::ostream& out, const topology::Topology& t) {
  if (t.directed()) {  // arcs j -> i labelled with W_ij, the share j sends i
    out << "digraph fastk {\n  // " << describe_spec(t.spec) << "; arc labels are W_ij\n";
    out << "  node [shape=circle];\n";
    for (int i = 0; i < t.graph.size(); ++i) {
      for (int j : t.schedule->round(i, 0).receive_from) {
        out << "  " << j << " -> " << i << " [label=\"" << fixed(t.weights.coeff(i, j), 3)
            << "\"];\n";
      }
    }
    out << "}\n";
    return;
  }
  out << "graph fastk {\n  // " << describe_spec(t.spec) << "; edge labels are W_ij\n";
  out << "  node [shape=circle];\n";
  for (int i = 0; i < t.graph.size(); ++i) out << "  " << i << ";\n";
  for (const auto& e : t.graph.edges()) {
    out << "  " << e.a << " -- " << e.b;
    if (!t.time_varying()) out << " [label=\"" << fixed(t.weights.coeff(e.a, e.b), 3) << "\"]";
    out << ";\n";
  }
  out << "}\n";
}

void write_weight_matrix(std::ostream& out, const topology::MixingMatrix& w) {
  for (int i = 0; i < w.rows(); ++i) {
    // Every digit (%.17g), so that --weights-file reads the printed W back exactly.
    for (int j = 0; j < w.cols(); ++j) {
      char text[32];
      std::snprintf(text, sizeof text, "%.17g", w.coeff(i, j));
      out << (j ? " " : "") << text;
    }
    out << "\n";
  }
}

}  // namespace fastk::node
