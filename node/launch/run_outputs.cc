#include "node/launch/run_outputs.h"

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "learning/data_sources.h"
#include "learning/model.h"
#include "node/metrics/mean_model.h"

namespace fastk::node {
namespace {

std::filesystem::path peer_dir(const std::filesystem::path& run_dir, int peer) {
  return run_dir / "peers" / ("peer-" + std::to_string(peer));
}

std::optional<std::vector<float>> read_snapshot(const std::filesystem::path& path,
                                                std::size_t parameters) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::vector<float> values(parameters);
  in.read(reinterpret_cast<char*>(values.data()),
          static_cast<std::streamsize>(parameters * sizeof(float)));
  if (in.gcount() != static_cast<std::streamsize>(parameters * sizeof(float)) ||
      in.peek() != std::char_traits<char>::eof()) {
    return std::nullopt;  // truncated (a peer killed while writing) or of another model
  }
  return values;
}

}  // namespace

std::int64_t merge_peer_csv(const std::filesystem::path& run_dir, const std::string& name,
                            int peers) {
  std::ofstream out(run_dir / name);
  std::int64_t rows = 0;
  bool header_written = false;
  for (int i = 0; i < peers; ++i) {
    std::ifstream in(peer_dir(run_dir, i) / name);
    std::string line;
    if (!std::getline(in, line)) continue;  // a peer that never started writes nothing
    if (!header_written) out << line << '\n', header_written = true;
    while (std::getline(in, line)) out << line << '\n', ++rows;
  }
  return rows;
}

std::vector<MeanModelEvaluation> evaluate_mean_models(const ExperimentConfig& config,
                                                      const std::filesystem::path& run_dir,
                                                      int peers) {
  // Snapshot iterations present for each peer.
  std::map<std::int64_t, std::set<int>> holders;
  for (int i = 0; i < peers; ++i) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(peer_dir(run_dir, i), ec)) {
      const std::string file = entry.path().filename().string();
      if (!file.starts_with("model-") || !file.ends_with(".f32") || file == "model-final.f32") {
        continue;
      }
      try {
        holders[std::stoll(file.substr(6))].insert(i);
      } catch (const std::exception&) {
      }
    }
  }
  std::vector<MeanModelEvaluation> out;
  if (holders.empty()) return out;
  learning::TrainTest data = learning::load_data(config.data);
  auto model = learning::make_model(config.model, data.train);
  data.train = {};  // only the test set is needed from here on
  const std::size_t p = model->num_parameters();
  std::ofstream csv(run_dir / "evaluation.csv");
  csv << "iteration,peers,test_loss,test_accuracy,consensus_distance\n";
  for (const auto& [k, who] : holders) {
    std::vector<std::vector<float>> models;
    for (int i : who) {
      if (auto m =
              read_snapshot(peer_dir(run_dir, i) / ("model-" + std::to_string(k) + ".f32"), p)) {
        models.push_back(std::move(*m));
      }
    }
    if (models.empty()) continue;
    const std::vector<std::span<const float>> views(models.begin(), models.end());
    const metrics::MeanModel mean = metrics::mean_model(views);
    const learning::Evaluation e = model->evaluate(mean.mean, data.test);
    MeanModelEvaluation row{k, static_cast<int>(models.size()), e.loss, e.accuracy,
                            mean.consensus_distance};
    csv << row.iteration << ',' << row.peers << ',' << row.test_loss << ',' << row.test_accuracy
        << ',' << row.consensus_distance << '\n';
    out.push_back(row);
  }
  return out;
}

nlohmann::ordered_json summarize_run(const std::filesystem::path& run_dir, int peers,
                                     const std::vector<MeanModelEvaluation>& evaluations,
                                     double wall_s) {
  nlohmann::ordered_json s;
  s["peers"] = peers;
  s["wall_s"] = wall_s;
  auto& per_peer = s["per_peer"] = nlohmann::ordered_json::array();
  double waiting = 0, elapsed = 0, rss = 0, backups = 0;
  std::uint64_t bytes = 0, iterations = 0;
  int reported = 0;
  for (int i = 0; i < peers; ++i) {
    std::ifstream in(peer_dir(run_dir, i) / "summary.json");
    if (!in) {
      per_peer.push_back({{"peer", i}, {"status", "no summary (the peer failed)"}});
      continue;
    }
    nlohmann::ordered_json p = nlohmann::ordered_json::parse(in, nullptr, false);
    if (p.is_discarded()) {
      per_peer.push_back({{"peer", i}, {"status", "unreadable summary"}});
      continue;
    }
    ++reported;
    waiting += p.value("waiting_s", 0.0);
    elapsed += p.value("elapsed_s", 0.0);
    rss += p.value("peak_rss_mib", 0.0);
    backups += p.value("mean_backups", 0.0);
    bytes += p.value("bytes_sent", std::uint64_t{0});
    iterations += p.value("iterations", std::uint64_t{0});
    per_peer.push_back(p);
  }
  s["peers_reported"] = reported;
  s["wait_fraction"] = elapsed > 0 ? waiting / elapsed : 0.0;
  s["mean_backups"] = reported ? backups / reported : 0.0;
  s["bytes_sent"] = bytes;
  s["bytes_per_iteration"] =
      iterations ? static_cast<double>(bytes) / static_cast<double>(iterations) : 0.0;
  s["peak_rss_mib_total"] = rss;
  if (!evaluations.empty()) {
    const auto& last = evaluations.back();
    s["final_iteration"] = last.iteration;
    s["final_test_accuracy"] = last.test_accuracy;
    s["final_test_loss"] = last.test_loss;
    s["final_consensus_distance"] = last.consensus_distance;
  }
  return s;
}

}  // namespace fastk::node
