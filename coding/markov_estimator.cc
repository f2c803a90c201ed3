#include "coding/markov_estimator.h"

#include <stdexcept>
#include <string>

namespace fastk::coding {
namespace {

// Count MLE shrunk towards the prior; with no data and no prior weight it is the prior.
double shrunk_rate(double events, double trials, double prior, double prior_weight) {
  const double denominator = trials + prior_weight;
  if (denominator <= 0.0) return prior;
  return (events + prior_weight * prior) / denominator;
}

void check_probability(double p, const char* name) {
  if (!(p >= 0.0 && p <= 1.0)) {
    throw std::invalid_argument(std::string("Markov straggler prior ") + name + " is " +
                                std::to_string(p) + "; it must lie in [0, 1]");
  }
}

}  // namespace

MarkovStragglerEstimator::MarkovStragglerEstimator(double prior_good_to_bad,
                                                   double prior_bad_to_good, double prior_weight)
    : prior_good_to_bad_(prior_good_to_bad),
      prior_bad_to_good_(prior_bad_to_good),
      prior_weight_(prior_weight) {
  check_probability(prior_good_to_bad, "good_to_bad");
  check_probability(prior_bad_to_good, "bad_to_good");
  if (prior_good_to_bad + prior_bad_to_good <= 0.0) {
    throw std::invalid_argument(
        "Markov straggler priors good_to_bad and bad_to_good are both 0: the chain would never "
        "change state and has no stationary straggle probability");
  }
  if (!(prior_weight >= 0.0)) {
    throw std::invalid_argument("Markov straggler prior weight is " + std::to_string(prior_weight) +
                                "; it must be >= 0");
  }
}

void MarkovStragglerEstimator::observe(bool straggled) {
  if (observed_) {
    if (last_straggled_) {
      from_bad_ += 1;
      if (!straggled) bad_to_good_ += 1;
    } else {
      from_good_ += 1;
      if (straggled) good_to_bad_ += 1;
    }
  }
  observed_ = true;
  last_straggled_ = straggled;
}

double MarkovStragglerEstimator::good_to_bad() const {
  return shrunk_rate(good_to_bad_, from_good_, prior_good_to_bad_, prior_weight_);
}

double MarkovStragglerEstimator::bad_to_good() const {
  return shrunk_rate(bad_to_good_, from_bad_, prior_bad_to_good_, prior_weight_);
}

double MarkovStragglerEstimator::predict() const {
  if (!observed_) {
    return prior_good_to_bad_ / (prior_good_to_bad_ + prior_bad_to_good_);
  }
  return last_straggled_ ? 1.0 - bad_to_good() : good_to_bad();
}

}  // namespace fastk::coding
