// full, static, half, deadline and ad_psgd: the policies that need no estimation.
#include <algorithm>
#include <stdexcept>

#include "consensus/adaptive_policy.h"
#include "consensus/backup_policy.h"

namespace fastk::consensus {
namespace {

class FullPolicy final : public BackupPolicy {
 public:
  PolicyKind kind() const override { return PolicyKind::kFull; }
  Decision decide(const PolicyInput& in) override { return {in.neighbours, {}}; }
  bool mixes_exact_iteration() const override { return true; }
  bool allows_coding() const override { return true; }
};

class StaticPolicy final : public BackupPolicy {
 public:
  explicit StaticPolicy(int backups) : backups_(backups) {}
  PolicyKind kind() const override { return PolicyKind::kStatic; }
  Decision decide(const PolicyInput& in) override {
    return {std::max(in.neighbours - backups_, in.m_min), {}};
  }

 private:
  int backups_;
};

class HalfPolicy final : public BackupPolicy {
 public:
  PolicyKind kind() const override { return PolicyKind::kHalf; }
  Decision decide(const PolicyInput& in) override {
    return {std::max((in.neighbours + 1) / 2, in.m_min), {}};
  }
};

class DeadlinePolicy final : public BackupPolicy {
 public:
  explicit DeadlinePolicy(double slack) : slack_(slack) {}
  PolicyKind kind() const override { return PolicyKind::kDeadline; }
  Decision decide(const PolicyInput& in) override { return {in.neighbours, {}}; }
  std::optional<double> relax_at(double start_s, double gradient_done_s) const override {
    return start_s + (1.0 + slack_) * (gradient_done_s - start_s);
  }

 private:
  double slack_;
};

// Waits for no neighbour's model: the protocol's pairwise averages take the place of mixing.
class AdPsgdPolicy final : public BackupPolicy {
 public:
  PolicyKind kind() const override { return PolicyKind::kAdPsgd; }
  Decision decide(const PolicyInput&) override { return {0, {}}; }
  bool pairwise_averaging() const override { return true; }
};

}  // namespace

namespace {

// Every policy's name in the config, in the order error messages list them.
struct PolicyName {
  PolicyKind kind;
  const char* name;
};
constexpr PolicyName kPolicyNames[] = {
    {PolicyKind::kFull, "full"},         {PolicyKind::kStatic, "static"},
    {PolicyKind::kDeadline, "deadline"}, {PolicyKind::kAdaptive, "adaptive"},
    {PolicyKind::kHalf, "half"},         {PolicyKind::kAdPsgd, "ad_psgd"},
};

}  // namespace

PolicyKind parse_policy_kind(const std::string& name) {
  std::string known;
  for (const PolicyName& p : kPolicyNames) {
    if (name == p.name) return p.kind;
    known += known.empty() ? p.name : std::string(", ") + p.name;
  }
  throw std::invalid_argument("unknown backup policy \"" + name + "\"; expected one of " + known +
                              " (docs/protocol.md §5)");
}

std::string to_string(PolicyKind kind) {
  for (const PolicyName& p : kPolicyNames) {
    if (p.kind == kind) return p.name;
  }
  return "?";
}

std::unique_ptr<BackupPolicy> make_policy(const PolicySpec& spec) {
  switch (spec.kind) {
    case PolicyKind::kFull:
      return std::make_unique<FullPolicy>();
    case PolicyKind::kStatic:
      if (spec.backups < 0) throw std::invalid_argument("static policy: backups must be >= 0");
      return std::make_unique<StaticPolicy>(spec.backups);
    case PolicyKind::kDeadline:
      if (spec.slack < 0) throw std::invalid_argument("deadline policy: slack must be >= 0");
      return std::make_unique<DeadlinePolicy>(spec.slack);
    case PolicyKind::kAdaptive:
      return std::make_unique<AdaptivePolicy>(spec);
    case PolicyKind::kHalf:
      return std::make_unique<HalfPolicy>();
    case PolicyKind::kAdPsgd:
      return std::make_unique<AdPsgdPolicy>();
  }
  throw std::invalid_argument("unknown backup policy");
}

}  // namespace fastk::consensus
