// What `fastk doctor` learns on one host: which fastk build runs there, whether the config and
// data files are there and the same as the launcher's, and whether each peer's port can be
// bound. The host's agent (agent.h) sends it to the launcher as one JSON line.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "node/config/experiment_config.h"

namespace fastk::node::doctor {

struct FileCheck {
  std::string path;
  std::int64_t size = -1;  // -1 when missing or unreadable
  std::uint32_t crc32c = 0;
  std::string error;  // why it is missing or unreadable
  bool operator==(const FileCheck&) const = default;
};

struct PortCheck {
  int peer = 0;
  std::string endpoint;  // what the peer binds
  std::string error;     // empty: free (the agent holds it for the probes)
};

// The instruction sets on the host (isa/level.h), as the agent there sees them.
struct IsaCheck {
  std::string march;    // the -march of the binary's own code ("x86-64")
  std::string kernels;  // the kernels it runs there ("x86-64-v3 (AVX2, FMA)")
  std::string cpu;      // the CPU's level ("x86-64-v3 (AVX2, FMA)")
  std::string lacks;    // what the CPU lacks of the next level ("avx512f avx512bw ..."), or ""
};

// One gradient of the config's model, timed on the host by a child process of the agent
// running the same binary: medians, or how that child ended when it failed (a signal, with
// what it said: "killed by SIGILL: SIGILL at start-up (...)").
struct GradientCheck {
  bool measured = false;  // false with no failure: not asked (--no-gradient)
  double plain_s = 0;
  double with_noise_s = 0;
  std::size_t parameters = 0;  // the model's
  std::string failure;
  // The failure was a death by signal or the start-up check's refusal: the run would crash
  // there. Otherwise (a missing data file, say) the gradient only could not be timed.
  bool crashed = false;
};

struct HostReport {
  std::string version;  // "fastk 0.1.0"
  std::uint32_t binary_crc32c = 0;
  std::vector<FileCheck> files;  // the config, then the data files
  std::vector<PortCheck> ports;
  IsaCheck isa;
  GradientCheck gradient;
};

// This process's IsaCheck.
IsaCheck own_isa();

inline constexpr const char* kVersion = "fastk 0.1.0";

// The CRC-32C of this process's own executable: two hosts with the same value run the same
// build.
std::uint32_t own_binary_crc32c();

// The config file and the data files it names, with sizes and checksums. A data folder or
// file that is missing becomes one entry, with path kDataFiles and the loader's error (naming
// the file).
inline constexpr const char* kDataFiles = "[data] files";
std::vector<FileCheck> check_files(const std::filesystem::path& config_path,
                                   const ExperimentConfig& config);

nlohmann::json to_json(const HostReport& report);
HostReport host_report_from_json(const nlohmann::json& j);  // throws on a malformed report

}  // namespace fastk::node::doctor
