// Model is a Network<float> behind a virtual interface, so that callers do not see layers.
// A kernel source (learning/CMakeLists.txt): compiled for the baseline and for each level of
// FASTK_KERNELS, each copy's models running that level's instructions behind the one virtual
// interface; make_model.cc picks the copy.
#include "learning/model.h"

#include "isa/kernels.h"
#include "learning/network.h"

namespace fastk::learning {
namespace {

class NetworkModel final : public Model {
 public:
  NetworkModel(std::string name, Network<float> network)
      : name_(std::move(name)), network_(std::move(network)) {}
  std::string name() const override { return name_; }
  std::size_t num_parameters() const override { return network_.num_parameters(); }
  void initialize(std::span<float> params, std::uint64_t seed) const override {
    network_.initialize(params, seed);
  }
  using Model::loss_and_gradient;
  double loss_and_gradient(std::span<const float> params, const BatchView& batch,
                           std::span<float> grad, GradientNoise* noise) override {
    return network_.loss_and_gradient(params, batch, grad, noise);
  }
  void predict(std::span<const float> params, const BatchView& batch,
               std::span<std::int32_t> out) override {
    network_.predict(params, batch, out);
  }
  Evaluation evaluate(std::span<const float> params, const Dataset& data) override {
    return network_.evaluate(params, data);
  }
  double flops_per_sample() const override { return network_.flops_per_sample(); }
  std::unique_ptr<Model> clone() const override {
    return std::make_unique<NetworkModel>(name_, Network<float>(network_));
  }

 private:
  std::string name_;
  Network<float> network_;
};

}  // namespace

}  // namespace fastk::learning

// This copy's entry point: the caller owns the model. Exceptions (a model that does not fit
// the data) pass through to make_model's caller.
extern "C" fastk::learning::Model* FASTK_KERNEL(make_model)(
    const fastk::learning::ModelSpec& spec, const fastk::learning::SampleShape& shape,
    int classes) {
  using namespace fastk::learning;
  return std::make_unique<NetworkModel>(to_string(spec.kind),
                                        build_network<float>(spec, shape, classes))
      .release();
}
