// The decoding error of gradient codes under random and under adversarial stragglers
// (docs/reproduction.md §5.3): for each code and each number s of stragglers, every set of s
// late members is decoded with the code's optimal decoder, and the mean (uniformly random
// stragglers) and the largest (an adversary's pick) of err(S)/k are printed as CSV.
//
// Usage: code_errors [--max-stragglers 6]
// Codes, all with 12 or 13 members and as many partitions:
//   bibd       the projective plane of order 3 (difference set {0, 1, 3, 9} mod 13), load 4
//   frc        fractional repetition, 3 groups of 4 (12 members), load 4
//   bernoulli  Bernoulli(13, 13, d = 4), seeds 1, 2 and 3, load 4 on average (the column is
//              each draw's mean load)
//   sbc        stochastic block code, 3 communities (5, 4, 4), p_in = 0.8, p_out = 0.05, seeds
//              1, 2 and 3, load 3.9 expected (4.15-4.46 in these draws)
//   graph      the 13-cycle as a graph code (members are edges), load 2
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "coding/bernoulli_code.h"
#include "coding/block_design_code.h"
#include "coding/fractional_repetition_code.h"
#include "coding/graph_code.h"
#include "coding/stochastic_block_code.h"
#include "coding/straggler_errors.h"

namespace {

using fastk::coding::GradientCode;

struct NamedCode {
  std::string kind;
  int seed;  // 0: a deterministic code
  std::unique_ptr<GradientCode> code;
};

std::vector<NamedCode> codes() {
  using namespace fastk::coding;
  std::vector<NamedCode> out;
  out.push_back(
      {"bibd", 0,
       std::make_unique<BlockDesignCode>(BlockDesignCode::from_difference_set(13, {0, 1, 3, 9}))});
  out.push_back({"frc", 0, std::make_unique<FractionalRepetitionCode>(12, 3)});
  for (int seed = 1; seed <= 3; ++seed) {
    out.push_back({"bernoulli", seed, std::make_unique<BernoulliCode>(13, 13, 4.0, seed)});
  }
  for (int seed = 1; seed <= 3; ++seed) {
    out.push_back({"sbc", seed, std::make_unique<StochasticBlockCode>(13, 13, 3, 0.8, 0.05, seed)});
  }
  std::vector<std::pair<int, int>> cycle;
  for (int v = 0; v < 13; ++v) cycle.emplace_back(v, (v + 1) % 13);
  out.push_back({"graph", 0, std::make_unique<GraphCode>(13, cycle)});
  return out;
}

int parse_max_stragglers(int argc, char** argv) {
  if (argc == 1) return 6;
  if (argc == 2 && (!std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "--help"))) {
    std::puts(
        "Usage: code_errors [--max-stragglers S]\n"
        "Prints CSV: code,seed,members,partitions,load,stragglers,sets,mean_error,"
        "worst_error,worst_stragglers\n(err(S)/k over every set of s late members, "
        "s = 0..S, default 6; docs/reproduction.md §5.3)");
    std::exit(0);
  }
  char* end = nullptr;
  const long s =
      argc == 3 && !std::strcmp(argv[1], "--max-stragglers") ? std::strtol(argv[2], &end, 10) : -1;
  if (s < 0 || s > 11 || end == nullptr || *end != '\0') {
    std::fprintf(stderr, "code_errors: expected [--max-stragglers S] with S in 0..11\n");
    std::exit(2);
  }
  return static_cast<int>(s);
}

}  // namespace

int main(int argc, char** argv) {
  const int max_stragglers = parse_max_stragglers(argc, argv);
  std::puts(
      "code,seed,members,partitions,load,stragglers,sets,mean_error,worst_error,"
      "worst_stragglers");
  try {
    for (const NamedCode& c : codes()) {
      for (int s = 0; s <= max_stragglers; ++s) {
        const auto e = fastk::coding::straggler_errors(*c.code, s);
        std::string worst;
        for (int m : e.worst_stragglers) worst += (worst.empty() ? "" : " ") + std::to_string(m);
        // The mean load: a Bernoulli code's rows differ, and its largest says little.
        const double load =
            static_cast<double>((c.code->encoding().array() != 0.0).count()) / c.code->members();
        std::printf("%s,%d,%d,%d,%.4g,%d,%llu,%.9g,%.9g,%s\n", c.kind.c_str(), c.seed,
                    c.code->members(), c.code->partitions(), load, s,
                    static_cast<unsigned long long>(e.sets), e.mean_error, e.worst_error,
                    worst.c_str());
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "code_errors: %s\n", e.what());
    return 1;
  }
  return 0;
}
