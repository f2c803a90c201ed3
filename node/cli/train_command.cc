// fastk train CONFIG: centralized single-process training on the config's [data], [model]
// and [optimizer]: the baseline that decentralized runs are compared with.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <numeric>

#include "learning/data_sources.h"
#include "learning/model.h"
#include "learning/sampler.h"
#include "learning/sgd.h"
#include "node/cli/commands.h"
#include "node/cli/config_options.h"
#include "node/config/experiment_config.h"
#include "node/metrics/output_files.h"
#include "node/report/progress_line.h"
#include "node/training/peer_trainer.h"

namespace fastk::node {
namespace {

struct TrainOptions {
  ConfigOptions config;
  double epochs = 0;  // 0: run.iterations
};

std::string format(const char* pattern, auto... values) {
  char text[512];
  std::snprintf(text, sizeof text, pattern, values...);
  return text;
}

// "test accuracy A, test loss L" (classification) or "test loss L" (regression).
std::string describe_test(const learning::Evaluation& test, bool classification) {
  return classification ? format("test accuracy %.4f, test loss %.4f", test.accuracy, test.loss)
                        : format("test loss %.4f", test.loss);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The data, the model that fits them and the iteration count (--epochs, else run.iterations),
// announced in one line.
struct TrainSetup {
  learning::TrainTest data;
  std::unique_ptr<learning::Model> model;
  std::int64_t iterations = 0;
};

TrainSetup set_up_training(const TrainOptions& o, const ExperimentConfig& config) {
  const auto load_start = std::chrono::steady_clock::now();
  TrainSetup t;
  t.data = learning::load_data(config.data);
  try {
    t.model = training::make_training_model(config.model, config.data, t.data.train);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(o.config.config + ": [model] does not fit [data]: " + e.what());
  }
  const learning::OptimizerSpec& opt = config.optimizer;
  const std::int64_t train_size = t.data.train.size();
  t.iterations = o.epochs > 0
                     ? std::int64_t(std::ceil(o.epochs * double(train_size) / opt.batch_size))
                     : config.run.iterations;
  std::cout << "fastk train: " << t.model->name() << " (" << t.model->num_parameters()
            << " parameters) on " << learning::to_string(config.data.kind) << " (" << train_size
            << " train, " << t.data.test.size() << " test samples, loaded in "
            << format("%.1f s", seconds_since(load_start)) << "), batch " << opt.batch_size << ", "
            << t.iterations << " iterations ("
            << format("%.2f", double(t.iterations) * opt.batch_size / double(train_size))
            << " epochs), lr " << opt.lr << " " << learning::to_string(opt.schedule) << "\n";
  return t;
}

// Batches over the whole training set, shuffled by the optimizer's seed.
learning::BatchSampler whole_set_sampler(std::int64_t train_size,
                                         const learning::OptimizerSpec& opt) {
  std::vector<std::int64_t> all(static_cast<std::size_t>(train_size));
  std::iota(all.begin(), all.end(), std::int64_t{0});
  return learning::BatchSampler(std::move(all), opt.batch_size, opt.seed);
}

void check_finite(double loss, std::int64_t k, const learning::OptimizerSpec& opt) {
  if (std::isfinite(loss)) return;
  throw std::runtime_error(
      format("training diverged at iteration %lld (loss %g): lower optimizer.lr (now %g)",
             (long long)k, loss, opt.lr));
}

// What a training run ends with: the figures `final:` prints and summary.json keeps.
struct TrainResult {
  learning::Evaluation test;
  double train_loss = 0;  // mean over the batches since the last evaluation
  double epochs = 0;
  double elapsed_s = 0;
  std::vector<float> params;
};

TrainResult train(const ExperimentConfig& config, const TrainSetup& setup) {
  const learning::TrainTest& data = setup.data;
  learning::Model* model = setup.model.get();  // evaluate() uses its workspace
  const learning::OptimizerSpec& opt = config.optimizer;
  const std::int64_t iterations = setup.iterations;

  std::vector<float> params(model->num_parameters()), grad(params.size());
  model->initialize(params, config.model.init_seed);
  learning::Sgd sgd(opt, params.size(), iterations);
  learning::BatchSampler sampler = whole_set_sampler(data.train.size(), opt);

  ProgressLine progress(std::cout, stdout_is_tty());
  const auto start = std::chrono::steady_clock::now();
  double loss_sum = 0;  // over the batches of the current epoch
  std::int64_t loss_count = 0;
  std::int64_t completed_epochs = 0;
  const bool classification = data.train.classes > 0;
  auto evaluate = [&](std::int64_t k) {
    const learning::Evaluation test = model->evaluate(params, data.test);
    progress.print(format("epoch %6.2f  iter %lld  train loss %.4f  %s  %.1f s", sampler.epochs(),
                          (long long)k, loss_sum / double(std::max<std::int64_t>(loss_count, 1)),
                          describe_test(test, classification).c_str(), seconds_since(start)));
    return test;
  };
  for (std::int64_t k = 0; k < iterations; ++k) {
    const double loss = model->loss_and_gradient(params, {&data.train, sampler.next()}, grad);
    check_finite(loss, k, opt);
    sgd.step(params, grad, k);
    loss_sum += loss;
    ++loss_count;
    if (std::int64_t(sampler.epochs()) > completed_epochs && k + 1 < iterations) {
      completed_epochs = std::int64_t(sampler.epochs());
      evaluate(k + 1);
      loss_sum = 0;
      loss_count = 0;
    } else if (progress.due()) {
      const double elapsed = seconds_since(start);
      progress.show(format("epoch %6.2f  iter %lld/%lld  loss %.4f  %.0f samples/s",
                           sampler.epochs(), (long long)(k + 1), (long long)iterations,
                           loss_sum / double(loss_count),
                           double(k + 1) * opt.batch_size / elapsed));
    }
  }
  TrainResult r;
  r.elapsed_s = seconds_since(start);
  r.test = evaluate(iterations);
  r.train_loss = loss_sum / double(std::max<std::int64_t>(loss_count, 1));
  r.epochs = sampler.epochs();
  r.params = std::move(params);
  return r;
}

// summary.json: what the `final:` line says, and what was trained, so a script compares a
// baseline with decentralized runs (their summary.json) without parsing the output.
nlohmann::ordered_json train_summary(const ExperimentConfig& config, const TrainSetup& setup,
                                     const TrainResult& r) {
  const bool classification = setup.data.train.classes > 0;
  const learning::OptimizerSpec& opt = config.optimizer;
  return {{"runtime", "train"},
          {"name", config.run.name},
          {"overrides", config.overrides},
          {"model", setup.model->name()},
          {"parameters", setup.model->num_parameters()},
          {"data", learning::to_string(config.data.kind)},
          {"train_samples", setup.data.train.size()},
          {"test_samples", r.test.samples},
          {"batch_size", opt.batch_size},
          {"iterations", setup.iterations},
          {"epochs", r.epochs},
          {"train_s", r.elapsed_s},
          {"samples_per_s", double(setup.iterations) * opt.batch_size / r.elapsed_s},
          {"final_train_loss", r.train_loss},
          {"test_loss", r.test.loss},
          {"test_accuracy",
           classification ? nlohmann::ordered_json(r.test.accuracy) : nlohmann::ordered_json()}};
}

void run_train(const TrainOptions& o) {
  const ExperimentConfig config = load_config(o.config);
  // Claimed before the data are loaded: a bad path fails now, not after the training.
  const auto claim = claim_run_folder(o.config, config, "-train");
  const std::filesystem::path& folder = claim->path();
  std::filesystem::copy_file(o.config.config, folder / "config.toml");
  const TrainSetup setup = set_up_training(o, config);
  const TrainResult r = train(config, setup);
  const bool classification = setup.data.train.classes > 0;
  std::cout << format(
      "final: %s on %lld samples; %.2f epochs, %lld iterations in %.1f s "
      "(%.0f samples/s)\n",
      describe_test(r.test, classification).c_str(), (long long)r.test.samples, r.epochs,
      (long long)setup.iterations, r.elapsed_s,
      double(setup.iterations) * config.optimizer.batch_size / r.elapsed_s);
  metrics::write_model(folder / "model-final.f32", r.params);
  metrics::write_json_file(folder / "summary.json", train_summary(config, setup, r));
  claim->keep();
  std::cout << "outputs: " << folder.string() << "\n";
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto options = std::make_shared<TrainOptions>();
  CLI::App* cmd = app.add_subcommand(
      "train", "Centralized training on a config's [data], [model] and [optimizer] (baseline)");
  cmd->footer(
      "Runs run.iterations SGD steps (or --epochs passes over the training set) in one\n"
      "process, evaluates on the test set after every epoch and at the end, and writes\n"
      "config.toml, summary.json and model-final.f32 (raw float32) into the run folder.\n"
      "Example:\n"
      "  fastk train experiments/configs/train_mlp.toml");
  add_config_options(cmd, options->config);
  cmd->get_option("--output")
      ->description(
          "Run folder, new or empty (default: <run.output>/<run.name>-train of the config, "
          "numbered -2, -3, ... when that folder holds a run)");
  cmd->add_option("--epochs", options->epochs,
                  "Train for this many passes over the training set instead of run.iterations")
      ->check(CLI::PositiveNumber);
  cmd->callback([options] { run_train(*options); });
}

}  // namespace fastk::node
