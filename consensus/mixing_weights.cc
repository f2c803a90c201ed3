#include "consensus/mixing_weights.h"

#include <stdexcept>

namespace fastk::consensus {

Renormalisation parse_renormalisation(const std::string& name) {
  if (name == "return_to_self") return Renormalisation::kReturnToSelf;
  if (name == "uniform") return Renormalisation::kUniform;
  if (name == "proportional") return Renormalisation::kProportional;
  throw std::invalid_argument("unknown weight renormalisation \"" + name +
                              "\"; expected return_to_self, uniform or proportional");
}

std::string to_string(Renormalisation rule) {
  switch (rule) {
    case Renormalisation::kReturnToSelf:
      return "return_to_self";
    case Renormalisation::kUniform:
      return "uniform";
    case Renormalisation::kProportional:
      return "proportional";
  }
  return "?";
}

SubsetRow subset_row(std::span<const double> base_weights, double base_self,
                     std::span<const int> used, Renormalisation rule) {
  SubsetRow row;
  row.weights.reserve(used.size());
  if (rule == Renormalisation::kUniform) {
    const double w = 1.0 / static_cast<double>(used.size() + 1);
    row.weights.assign(used.size(), w);
    row.self_weight = w;
    return row;
  }
  double used_mass = 0;
  for (int index : used) used_mass += base_weights[static_cast<std::size_t>(index)];
  if (rule == Renormalisation::kReturnToSelf) {
    for (int index : used) row.weights.push_back(base_weights[static_cast<std::size_t>(index)]);
    row.self_weight = 1.0 - used_mass;
    return row;
  }
  const double total = base_self + used_mass;
  if (total <= 0) {  // W_ii = 0 and nothing used: fall back to keeping the own model
    row.weights.assign(used.size(), 0.0);
    row.self_weight = 1.0;
    return row;
  }
  for (int index : used) {
    row.weights.push_back(base_weights[static_cast<std::size_t>(index)] / total);
  }
  row.self_weight = base_self / total;
  return row;
}

}  // namespace fastk::consensus
