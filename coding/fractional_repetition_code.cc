#include "coding/fractional_repetition_code.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "coding/arrivals.h"

namespace fastk::coding {
namespace {

std::vector<std::vector<int>> consecutive_groups(int n, int s) {
  if (n < 1 || s < 0 || s >= n) {
    throw std::invalid_argument("fractional repetition code needs n >= 1 and 0 <= s < n, got n=" +
                                std::to_string(n) + " s=" + std::to_string(s));
  }
  if (n % (s + 1) != 0) {
    throw std::invalid_argument(
        "fractional repetition code needs s+1 = " + std::to_string(s + 1) +
        " to divide n = " + std::to_string(n) +
        " (members form groups of s+1); choose another s, uneven groups (from_groups) or the "
        "cyclic repetition code");
  }
  std::vector<std::vector<int>> groups(n / (s + 1));
  for (int i = 0; i < n; ++i) groups[i / (s + 1)].push_back(i);
  return groups;
}

// Member -> group index; throws unless the groups cover 0..n-1 exactly once each.
std::vector<int> index_groups(const std::vector<std::vector<int>>& groups) {
  std::size_t n = 0;
  for (const auto& g : groups) n += g.size();
  if (n == 0) throw std::invalid_argument("fractional repetition code needs at least one member");
  std::vector<int> group_of(n, -1);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].empty()) {
      throw std::invalid_argument("fractional repetition group " + std::to_string(g) + " is empty");
    }
    for (int m : groups[g]) {
      if (m < 0 || static_cast<std::size_t>(m) >= n) {
        throw std::invalid_argument("fractional repetition group " + std::to_string(g) +
                                    " names member " + std::to_string(m) + ", outside [0, " +
                                    std::to_string(n) + ") (members are numbered 0..n-1)");
      }
      if (group_of[m] != -1) {
        throw std::invalid_argument("member " + std::to_string(m) + " is in fractional " +
                                    "repetition groups " + std::to_string(group_of[m]) + " and " +
                                    std::to_string(g));
      }
      group_of[m] = static_cast<int>(g);
    }
  }
  return group_of;
}

Eigen::MatrixXd group_encoding(const std::vector<int>& group_of) {
  const auto n = static_cast<Eigen::Index>(group_of.size());
  Eigen::MatrixXd b = Eigen::MatrixXd::Zero(n, n);
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j < n; ++j) b(i, j) = group_of[i] == group_of[j] ? 1.0 : 0.0;
  }
  return b;
}

}  // namespace

FractionalRepetitionCode::FractionalRepetitionCode(int n, int s)
    : FractionalRepetitionCode(consecutive_groups(n, s)) {}

FractionalRepetitionCode FractionalRepetitionCode::from_groups(
    std::vector<std::vector<int>> groups) {
  return FractionalRepetitionCode(std::move(groups));
}

FractionalRepetitionCode::FractionalRepetitionCode(std::vector<std::vector<int>> groups)
    : GradientCode(group_encoding(index_groups(groups))),
      groups_(std::move(groups)),
      group_of_(index_groups(groups_)) {}

std::string FractionalRepetitionCode::name() const {
  return "frc(n=" + std::to_string(members()) + ",groups=" + std::to_string(groups_.size()) +
         ",s=" + std::to_string(stragglers_tolerated()) + ")";
}

int FractionalRepetitionCode::group_of(int member) const {
  check_member(member, members(), name());
  return group_of_[member];
}

int FractionalRepetitionCode::stragglers_tolerated() const {
  std::size_t smallest = groups_.front().size();
  for (const auto& g : groups_) smallest = std::min(smallest, g.size());
  return static_cast<int>(smallest) - 1;
}

std::vector<double> FractionalRepetitionCode::first_responder_coefficients(
    std::span<const int> arrived) const {
  check_arrived(arrived);
  std::vector<double> a(arrived.size(), 0.0);
  std::vector<bool> covered(groups_.size(), false);
  for (std::size_t r = 0; r < arrived.size(); ++r) {
    const int g = group_of_[arrived[r]];
    if (!covered[g]) {
      covered[g] = true;
      a[r] = 1.0;
    }
  }
  return a;
}

Decoding FractionalRepetitionCode::decode(std::span<const int> arrived) const {
  return evaluate_decoding(arrived_rows(arrived), first_responder_coefficients(arrived),
                           tolerance());
}

int FractionalRepetitionCode::covered_groups(std::span<const int> arrived) const {
  const std::vector<double> a = first_responder_coefficients(arrived);
  return static_cast<int>(std::count(a.begin(), a.end(), 1.0));
}

}  // namespace fastk::coding
