// [security]: CURVE on the links, and the key folder.
#include <optional>
#include <stdexcept>

#include "node/config/security.h"
#include "node/config/tables.h"

namespace fastk::node {

bool spans_hosts(const ClusterConfig& cluster, int peer_count) {
  for (int i = 0; i < peer_count; ++i) {
    const auto endpoint = parse_tcp_endpoint(peer_endpoints(cluster, peer_count, i).connect);
    if (endpoint && !is_loopback(endpoint->host)) return true;
  }
  return false;
}

bool uses_tcp(const ClusterConfig& cluster, int peer_count) {
  for (int i = 0; i < peer_count; ++i) {
    if (parse_tcp_endpoint(peer_endpoints(cluster, peer_count, i).connect)) return true;
  }
  return false;
}

bool needs_curve(const SecurityConfig& security, const ClusterConfig& cluster, int peer_count) {
  if (security.curve == "off") return false;
  return security.curve == "on" || uses_tcp(cluster, peer_count);
}

bool launcher_makes_keys(const SecurityConfig& security, const ClusterConfig& cluster,
                         int peer_count) {
  return security.keys.empty() && needs_curve(security, cluster, peer_count);
}

std::optional<std::string> plain_tcp_warning(const SecurityConfig& security,
                                             const ClusterConfig& cluster, int peer_count) {
  if (security.curve != "off" || !uses_tcp(cluster, peer_count)) return std::nullopt;
  return std::string("warning: [security] curve = \"off\": this run's peers talk plain TCP, ") +
         (spans_hosts(cluster, peer_count) ? "which any host of the network"
                                           : "which any user of this machine") +
         " can reach: a forged MODEL or BYE would be taken as a neighbour's (docs/security.md)";
}

std::string key_folder(const SecurityConfig& security, const ClusterConfig& cluster, int peer_count,
                       const std::string& given) {
  if (security.curve == "off") return "";
  const std::string folder = given.empty() ? security.keys : given;
  if (!folder.empty()) return folder;
  if (needs_curve(security, cluster, peer_count)) {
    throw std::runtime_error(
        std::string(security.curve == "on"
                        ? "[security] curve = \"on\", so this run's links"
                        : "this run's peers use TCP (which anyone who can reach the ports, on "
                          "this machine or the network, could send to), so their links") +
        " must be encrypted and authenticated, and no keys are known: make them with `fastk "
        "keys DIR --config CONFIG` and set [security] keys = \"DIR\" (or pass --keys DIR; "
        "`fastk run` makes them itself), or set [security] curve = \"off\" on a network you "
        "trust");
  }
  return "";
}

void read_security_table(TableReader& t, SecurityConfig& security,
                         const std::filesystem::path& base_dir) {
  t.read("curve", security.curve);
  t.read("keys", security.keys);
  t.finish();
  if (security.curve != "auto" && security.curve != "on" && security.curve != "off") {
    t.errors().add(t.path_of("curve"),
                   "expected \"auto\", \"on\" or \"off\", got \"" + security.curve + "\"");
  }
  if (!security.keys.empty()) security.keys = resolve_path(security.keys, base_dir);
}

nlohmann::ordered_json security_table_json(const SecurityConfig& security) {
  return {{"curve", security.curve}, {"keys", security.keys}};
}

}  // namespace fastk::node
