#include "node/doctor/host_check.h"

#include <cstring>
#include <fstream>

#include "learning/data_sources.h"
#include "node/wire/checksum.h"

namespace fastk::node::doctor {
namespace {

FileCheck check_file(const std::string& path) {
  FileCheck check{.path = path, .size = -1, .crc32c = 0, .error = {}};
  std::ifstream in(path, std::ios::binary);
  if (!in || std::filesystem::is_directory(path)) {
    check.error = std::filesystem::exists(path) ? "cannot read it" : "missing";
    return check;
  }
  std::vector<char> buffer(1 << 20);
  check.size = 0;
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    check.crc32c =
        wire::crc32c_extend(check.crc32c, std::as_bytes(std::span<const char>(buffer.data(), got)));
    check.size += static_cast<std::int64_t>(got);
  }
  if (in.bad()) check.error = std::string("read error: ") + std::strerror(errno);
  return check;
}

}  // namespace

std::uint32_t own_binary_crc32c() { return check_file("/proc/self/exe").crc32c; }

std::vector<FileCheck> check_files(const std::filesystem::path& config_path,
                                   const ExperimentConfig& config) {
  std::vector<FileCheck> files{check_file(std::filesystem::absolute(config_path).string())};
  try {
    for (const auto& path : learning::data_files(config.data)) files.push_back(check_file(path));
  } catch (const learning::DataError& e) {
    files.push_back({.path = kDataFiles, .size = -1, .crc32c = 0, .error = e.what()});
  }
  return files;
}

nlohmann::json to_json(const HostReport& report) {
  nlohmann::json files = nlohmann::json::array(), ports = nlohmann::json::array();
  for (const auto& f : report.files) {
    files.push_back({{"path", f.path}, {"size", f.size}, {"crc32c", f.crc32c}, {"error", f.error}});
  }
  for (const auto& p : report.ports) {
    ports.push_back({{"peer", p.peer}, {"endpoint", p.endpoint}, {"error", p.error}});
  }
  return {{"version", report.version},
          {"binary_crc32c", report.binary_crc32c},
          {"files", files},
          {"ports", ports}};
}

HostReport host_report_from_json(const nlohmann::json& j) {
  HostReport report;
  report.version = j.at("version").get<std::string>();
  report.binary_crc32c = j.at("binary_crc32c").get<std::uint32_t>();
  for (const auto& f : j.at("files")) {
    report.files.push_back({f.at("path").get<std::string>(), f.at("size").get<std::int64_t>(),
                            f.at("crc32c").get<std::uint32_t>(), f.at("error").get<std::string>()});
  }
  for (const auto& p : j.at("ports")) {
    report.ports.push_back({p.at("peer").get<int>(), p.at("endpoint").get<std::string>(),
                            p.at("error").get<std::string>()});
  }
  return report;
}

}  // namespace fastk::node::doctor
