// Online estimate of one worker's two-state Markov straggling chain (docs/coding.md §6.2): state N
// (on time) or S (straggler), p_NS = P(N -> S), p_SN = P(S -> N). Stragglers are correlated in
// time, so the last observed state predicts the next one better than a plain frequency.
#pragma once

namespace fastk::coding {

class MarkovStragglerEstimator {
 public:
  // Priors act as pseudo-counts (prior_weight transitions out of each state, split according
  // to the prior probability) so that estimates exist before any data and a few early
  // observations do not swing them to 0 or 1. Throws std::invalid_argument when a prior is
  // outside [0, 1], both priors are 0 (no stationary distribution), or the weight is negative.
  explicit MarkovStragglerEstimator(double prior_good_to_bad = 0.1, double prior_bad_to_good = 0.5,
                                    double prior_weight = 1.0);

  void observe(bool straggled);  // this iteration's state
  double good_to_bad() const;    // p_NS estimate (transition-count MLE with prior)
  double bad_to_good() const;    // p_SN estimate
  // P(straggle next | last observed state); before any observation: the stationary
  // probability p_NS / (p_NS + p_SN) of the prior chain.
  double predict() const;
  bool observed() const { return observed_; }

 private:
  double prior_good_to_bad_;
  double prior_bad_to_good_;
  double prior_weight_;
  bool observed_ = false;
  bool last_straggled_ = false;
  // Transition counts out of each state.
  double from_good_ = 0, good_to_bad_ = 0;
  double from_bad_ = 0, bad_to_good_ = 0;
};

}  // namespace fastk::coding
