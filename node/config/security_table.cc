// [security]: CURVE on the links, and the key folder.
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

bool launcher_makes_keys(const SecurityConfig& security, const ClusterConfig& cluster,
                         int peer_count) {
  if (!security.keys.empty() || security.curve == "off") return false;
  return security.curve == "on" || spans_hosts(cluster, peer_count);
}

std::string key_folder(const SecurityConfig& security, const ClusterConfig& cluster, int peer_count,
                       const std::string& given) {
  if (security.curve == "off") return "";
  const std::string folder = given.empty() ? security.keys : given;
  if (!folder.empty()) return folder;
  if (security.curve == "on" || spans_hosts(cluster, peer_count)) {
    throw std::runtime_error(
        std::string(security.curve == "on" ? "[security] curve = \"on\""
                                           : "this run spans hosts, so its links") +
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
