#include "node/peer/checkpoint.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include "node/metrics/file_writer.h"
#include "node/wire/byte_order.h"
#include "node/wire/checksum.h"

namespace fastk::node::peer {
namespace {

// "FASTKCP" and the format's version; all numbers little-endian; a CRC-32C of everything
// before it at the end.
constexpr char kMagic[8] = {'F', 'A', 'S', 'T', 'K', 'C', 'P', '1'};
constexpr std::uint32_t kMaxSamplers = 1u << 16;

class Bytes {
 public:
  template <typename T>
  void put(T value) {
    std::byte b[sizeof(T)];
    wire::store_le(b, value);
    bytes_.append(reinterpret_cast<const char*>(b), sizeof(T));
  }
  void put_double(double v) { put(std::bit_cast<std::uint64_t>(v)); }
  void put_floats(const std::vector<float>& values) {
    for (float v : values) put(std::bit_cast<std::uint32_t>(v));
  }
  std::string& str() { return bytes_; }

 private:
  std::string bytes_;
};

// Reads fields in order; any read past the end, or past what the sizes allow, throws.
class Reader {
 public:
  Reader(const std::string& bytes, std::filesystem::path path)
      : bytes_(bytes), path_(std::move(path)) {}
  template <typename T>
  T get(const char* what) {
    need(sizeof(T), what);
    const T value = wire::load_le<T>(reinterpret_cast<const std::byte*>(bytes_.data() + at_));
    at_ += sizeof(T);
    return value;
  }
  double get_double(const char* what) { return std::bit_cast<double>(get<std::uint64_t>(what)); }
  void need(std::size_t n, const char* what) const {
    if (n > bytes_.size() - at_) fail(std::string("it ends inside ") + what);
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw std::runtime_error("checkpoint '" + path_.string() + "' cannot be used: " + why);
  }
  std::size_t at() const { return at_; }

 private:
  const std::string& bytes_;
  std::filesystem::path path_;
  std::size_t at_ = 0;
};

void put_sampler(Bytes& out, int partition, const learning::SamplerState& s) {
  out.put(static_cast<std::int32_t>(partition));
  out.put(static_cast<std::uint64_t>(s.order.size()));
  for (std::int64_t i : s.order) out.put(i);
  out.put(s.position);
  out.put(s.batches);
  out.put(s.drawn);
  for (std::uint64_t word : s.rng.s) out.put(word);
  out.put(static_cast<std::uint8_t>(s.rng.has_spare));
  out.put_double(s.rng.spare);
}

std::pair<int, learning::SamplerState> get_sampler(Reader& in) {
  const int partition = in.get<std::int32_t>("a sampler");
  const auto n = in.get<std::uint64_t>("a sampler");
  in.need(n > (1ULL << 40) ? ~std::size_t{0} : n * 8, "a sampler's order");
  learning::SamplerState s;
  s.order.resize(n);
  for (auto& i : s.order) i = in.get<std::int64_t>("a sampler's order");
  s.position = in.get<std::uint64_t>("a sampler");
  s.batches = in.get<std::int64_t>("a sampler");
  s.drawn = in.get<std::int64_t>("a sampler");
  for (auto& word : s.rng.s) word = in.get<std::uint64_t>("a sampler");
  s.rng.has_spare = in.get<std::uint8_t>("a sampler") != 0;
  s.rng.spare = in.get_double("a sampler");
  return {partition, std::move(s)};
}

// A checkpoint is a regular file (a device or a pipe could feed bytes without end).
std::string read_whole(const std::filesystem::path& path) {
  if (!std::filesystem::is_regular_file(path)) {
    throw std::runtime_error("checkpoint '" + path.string() + "' is not a regular file");
  }
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) {
    throw std::runtime_error("cannot read checkpoint '" + path.string() +
                             "': " + std::strerror(errno));
  }
  return bytes;
}

}  // namespace

std::filesystem::path checkpoint_path(const std::filesystem::path& peer_folder) {
  return peer_folder / "checkpoint.bin";
}

void write_checkpoint(const std::filesystem::path& path, const Checkpoint& c) {
  Bytes out;
  out.str().append(kMagic, sizeof kMagic);
  out.put(static_cast<std::uint32_t>(c.peer));
  out.put(c.config);
  out.put(c.run);
  out.put(c.iteration);
  out.put(static_cast<std::uint64_t>(c.model.size()));
  out.put_floats(c.model);
  out.put(static_cast<std::uint32_t>(c.samplers.size()));
  for (const auto& [partition, state] : c.samplers) put_sampler(out, partition, state);
  const auto crc = wire::crc32c_extend(0, std::as_bytes(std::span(out.str())));
  out.put(crc);
  metrics::FileWriter file(path, metrics::FileWriter::Mode::kAtomic);
  file.write(out.str());
  file.commit();
}

std::optional<Checkpoint> read_checkpoint(const std::filesystem::path& path,
                                          const CheckpointOwner& owner) {
  std::error_code error;
  const auto status = std::filesystem::symlink_status(path, error);
  if (status.type() == std::filesystem::file_type::not_found) return std::nullopt;
  if (error) {
    throw std::runtime_error("cannot look at checkpoint '" + path.string() +
                             "': " + error.message());
  }
  const std::string bytes = read_whole(path);
  Reader in(bytes, path);
  if (bytes.size() < sizeof kMagic + 4 || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) {
    in.fail("it is not a fastk checkpoint (or of another format version)");
  }
  const std::string body = bytes.substr(0, bytes.size() - 4);
  const auto crc = wire::load_le<std::uint32_t>(
      reinterpret_cast<const std::byte*>(bytes.data() + bytes.size() - 4));
  if (crc != wire::crc32c_extend(0, std::as_bytes(std::span(body)))) {
    in.fail("its checksum does not match (a truncated or damaged file)");
  }
  Reader fields(body, path);
  fields.need(sizeof kMagic, "the header");
  for (std::size_t i = 0; i < sizeof kMagic; ++i) fields.get<std::uint8_t>("the header");
  Checkpoint c;
  c.peer = static_cast<int>(fields.get<std::uint32_t>("the header"));
  c.config = fields.get<std::uint64_t>("the header");
  c.run = fields.get<std::uint64_t>("the header");
  c.iteration = fields.get<std::int64_t>("the header");
  const auto values = fields.get<std::uint64_t>("the header");
  if (c.peer != owner.peer) fields.fail("it is peer " + std::to_string(c.peer) + "'s");
  if (c.config != owner.config) fields.fail("it was saved by a run of another config (or --set)");
  if (c.run != owner.run) {
    fields.fail("it was saved by another launch of this config (a run that is over; delete it)");
  }
  if (values != owner.parameters) {
    fields.fail("its model has " + std::to_string(values) + " values, this config's " +
                std::to_string(owner.parameters));
  }
  if (c.iteration < 0) fields.fail("its iteration is negative");
  fields.need(values * 4, "the model");
  c.model.resize(values);
  for (float& v : c.model) {
    v = std::bit_cast<float>(fields.get<std::uint32_t>("the model"));
    if (!std::isfinite(v)) fields.fail("its model holds a NaN or infinite value");
  }
  const auto samplers = fields.get<std::uint32_t>("the sampler count");
  if (samplers > kMaxSamplers) fields.fail("it claims " + std::to_string(samplers) + " samplers");
  for (std::uint32_t i = 0; i < samplers; ++i) c.samplers.insert(get_sampler(fields));
  if (fields.at() != body.size()) fields.fail("it has bytes after its last sampler");
  return c;
}

bool CheckpointSchedule::due(std::int64_t iteration, double now_s) const {
  if (every_ > 0 && iteration % every_ == 0) return true;
  return every_s_ > 0 && now_s - last_s_ >= every_s_;
}

}  // namespace fastk::node::peer
