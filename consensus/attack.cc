#include "consensus/attack.h"

#include <cmath>
#include <stdexcept>

namespace fastk::consensus {
namespace {

constexpr struct {
  AttackKind kind;
  const char* name;
} kKinds[] = {{AttackKind::kLarge, "large"},
              {AttackKind::kSignFlip, "sign_flip"},
              {AttackKind::kAlie, "alie"},
              {AttackKind::kNoise, "noise"},
              {AttackKind::kLabelFlip, "label_flip"}};

// The standard normal distribution's quantile, by bisection on its CDF (portable and exact
// enough: 60 halvings of [-10, 10]).
double normal_quantile(double p) {
  double low = -10, high = 10;
  for (int i = 0; i < 60; ++i) {
    const double mid = (low + high) / 2;
    (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p ? low : high) = mid;
  }
  return (low + high) / 2;
}

}  // namespace

AttackKind parse_attack_kind(const std::string& name) {
  std::string known;
  for (const auto& k : kKinds) {
    if (name == k.name) return k.kind;
    known += std::string(known.empty() ? "" : ", ") + k.name;
  }
  throw std::invalid_argument("unknown attack kind \"" + name + "\"; expected " + known);
}

std::string to_string(AttackKind kind) {
  for (const auto& k : kKinds) {
    if (k.kind == kind) return k.name;
  }
  throw std::logic_error("an attack kind without a name");
}

double alie_z(int neighbours) {
  const int n = neighbours + 1;
  const int s = n / 2 + 1 - 1;
  return normal_quantile(static_cast<double>(n - s) / n);
}

}  // namespace fastk::consensus
