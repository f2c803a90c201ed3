#include "node/doctor/host_check.h"

#include <cstring>
#include <fstream>

#include "isa/level.h"
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

IsaCheck own_isa() {
  IsaCheck check;
  check.march = isa::build_march().empty() ? "(compiler default)" : isa::build_march();
  const isa::Level cpu = isa::cpu_level();
  check.cpu = isa::describe(cpu);
  try {
    check.kernels = isa::describe(isa::kernel_level());
  } catch (const std::exception& e) {  // FASTK_ISA names no level this binary and CPU have
    check.kernels = std::string("none: ") + e.what();
  }
  if (cpu != isa::Level::kX86_64_V4) {
    for (const auto& f : isa::missing_features(static_cast<isa::Level>(static_cast<int>(cpu) + 1)))
      check.lacks += (check.lacks.empty() ? "" : " ") + f;
  }
  return check;
}

std::uint32_t own_binary_crc32c() { return check_file("/proc/self/exe").crc32c; }

std::vector<FileCheck> check_files(const std::filesystem::path& config_path,
                                   const ExperimentConfig& config) {
  std::vector<FileCheck> files{check_file(std::filesystem::absolute(config_path).string())};
  try {
    for (const auto& path : learning::data_files(config.data)) files.push_back(check_file(path));
  } catch (const learning::DataError& e) {
    files.push_back({.path = kDataFiles, .size = -1, .crc32c = 0, .error = e.what()});
  }
  // A TorchScript model's file, compared across hosts like the data (the gradient check then
  // loads it with this host's binary).
  if (!config.model.file.empty()) files.push_back(check_file(config.model.file));
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
  const auto& g = report.gradient;
  return {{"version", report.version},
          {"binary_crc32c", report.binary_crc32c},
          {"files", files},
          {"ports", ports},
          {"isa",
           {{"march", report.isa.march},
            {"kernels", report.isa.kernels},
            {"cpu", report.isa.cpu},
            {"lacks", report.isa.lacks}}},
          {"gradient",
           {{"measured", g.measured},
            {"plain_s", g.plain_s},
            {"with_noise_s", g.with_noise_s},
            {"parameters", g.parameters},
            {"failure", g.failure},
            {"crashed", g.crashed}}}};
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
  // An agent of a build older than the per-host gradient has no "isa" and no "gradient":
  // its row then says "DIFFERENT" build, not "malformed report".
  const auto isa = j.value("isa", nlohmann::json::object());
  report.isa = {isa.value("march", "?"), isa.value("kernels", "?"), isa.value("cpu", "?"),
                isa.value("lacks", "")};
  const auto g = j.value("gradient", nlohmann::json::object());
  report.gradient = {g.value("measured", false),        g.value("plain_s", 0.0),
                     g.value("with_noise_s", 0.0),      g.value("parameters", std::size_t{0}),
                     g.value("failure", std::string()), g.value("crashed", false)};
  return report;
}

}  // namespace fastk::node::doctor
