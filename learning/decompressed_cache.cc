// The decompressed-file cache: locating the cache directory, naming and validating entries,
// and publishing them atomically. Every failure of the cache itself means "no cache".
#include "learning/decompressed_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>

namespace fastk::learning {

namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'F', 'K', 'R', 'A', 'W', 'C', 'C', '\n'};
// 2: entries are inflated by gunzip_bytes, which refuses bytes after the gzip data; an entry
// of 1 (zlib's gzread, which skipped them) could stand for a file now refused.
constexpr std::uint32_t kFormatVersion = 2;

// A source modified again within this time of the moment its entry is written could keep the
// same mtime (file systems stamp times with a coarse clock tick) and, with the same size,
// would be taken for the cached version. Such fresh sources are therefore not cached (as git
// treats "racily clean" index entries); data sets are old files, so they are.
constexpr std::int64_t kRacyWindowNs = 2'000'000'000;

struct EntryHeader {
  char magic[8];
  std::uint32_t format_version;
  std::uint32_t reserved;  // zero; keeps the 64-bit fields aligned
  std::uint64_t source_size;
  std::int64_t source_mtime_ns;
  std::uint64_t payload_length;
};

struct SourceStamp {
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
};

std::int64_t mtime_ns(const struct stat& info) {
  return std::int64_t(info.st_mtim.tv_sec) * 1'000'000'000 + std::int64_t(info.st_mtim.tv_nsec);
}

std::optional<SourceStamp> stamp_of(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
  return SourceStamp{std::uint64_t(info.st_size), mtime_ns(info)};
}

// A stable name for a path (std::hash may differ between builds and runs).
std::uint64_t fnv1a_64(const std::string& text) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const char c : text) {
    hash ^= std::uint8_t(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

std::string non_empty_env(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::string(value) : std::string();
}

// The cache directory the environment asks for; empty when the cache is off or has no home.
fs::path cache_dir_from_environment() {
  const std::string explicit_dir = non_empty_env("FASTK_CACHE_DIR");
  if (explicit_dir == "off") return {};
  std::error_code error;  // an unusable directory means no cache, never an exception
  if (!explicit_dir.empty()) return fs::absolute(explicit_dir, error);
  const std::string xdg = non_empty_env("XDG_CACHE_HOME");
  if (!xdg.empty() && fs::path(xdg).is_absolute()) return fs::path(xdg) / "fastk";
  const std::string home = non_empty_env("HOME");
  if (!home.empty()) return fs::path(home) / ".cache" / "fastk";
  return {};
}

// mkdir -p with mode 0700 for the directories it creates.
bool ensure_directory(const fs::path& dir) {
  fs::path prefix;
  for (const fs::path& part : dir.lexically_normal()) {
    prefix /= part;
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) return false;
  }
  struct stat info {};
  return ::stat(dir.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

// Reads exactly `length` bytes at `offset`; false on an error or a short file.
bool read_exactly(int fd, void* out, std::size_t length, std::size_t offset) {
  auto* to = static_cast<char*>(out);
  while (length > 0) {
    const ssize_t got = ::pread(fd, to, length, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    to += got, offset += std::size_t(got), length -= std::size_t(got);
  }
  return true;
}

// The payload of the entry at `entry`, if the entry is whole and describes `source`: mapped
// (entries are never changed in place, byte_buffer.h), or read when mapping fails.
std::optional<ByteBuffer> read_entry(const fs::path& entry, const SourceStamp& source) {
  const int fd = ::open(entry.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::optional<ByteBuffer> payload;
  EntryHeader header{};
  struct stat info {};
  if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) &&
      read_exactly(fd, &header, sizeof header, 0) &&
      std::memcmp(header.magic, kMagic, sizeof kMagic) == 0 &&
      header.format_version == kFormatVersion && header.source_size == source.size &&
      header.source_mtime_ns == source.mtime_ns &&
      std::uint64_t(info.st_size) == sizeof header + header.payload_length) {
    payload = ByteBuffer::map(fd, sizeof header, header.payload_length);
    if (!payload) {
      std::vector<std::uint8_t> bytes(header.payload_length);
      if (read_exactly(fd, bytes.data(), bytes.size(), sizeof header)) payload = std::move(bytes);
    }
  }
  ::close(fd);
  return payload;
}

// Writes a temporary file next to `entry` and renames it over `entry`, unless the source is
// too fresh to be told apart from a quick rewrite (see kRacyWindowNs). Failures leave no file.
void write_entry(const fs::path& entry, const SourceStamp& source,
                 const std::vector<std::uint8_t>& payload) {
  // A name no other writer can have (mkstemp), even one with the same pid on another host
  // sharing the cache directory: two writers of one file would interleave their bytes.
  std::string name = entry.string() + ".tmp.XXXXXX";
  const int fd = ::mkstemp(name.data());
  if (fd < 0) return;
  const fs::path temporary = name;
  std::FILE* file = ::fdopen(fd, "wb");
  if (!file) {
    ::close(fd);
    ::unlink(temporary.c_str());
    return;
  }
  EntryHeader header{};
  std::memcpy(header.magic, kMagic, sizeof kMagic);
  header.format_version = kFormatVersion;
  header.source_size = source.size;
  header.source_mtime_ns = source.mtime_ns;
  header.payload_length = payload.size();
  struct stat written {};
  bool ok = std::fwrite(&header, sizeof header, 1, file) == 1 &&
            std::fwrite(payload.data(), 1, payload.size(), file) == payload.size() &&
            std::fflush(file) == 0 && ::fsync(::fileno(file)) == 0 &&
            ::fstat(::fileno(file), &written) == 0;
  // fsync before the rename: after a crash the entry is whole or absent, never a right-sized
  // file of zeroed pages.
  ok = std::fclose(file) == 0 && ok;
  // The temporary file's mtime is the file system's "now": no clock needed.
  ok = ok && mtime_ns(written) - source.mtime_ns >= kRacyWindowNs;
  if (!ok || ::rename(temporary.c_str(), entry.c_str()) != 0) ::unlink(temporary.c_str());
}

}  // namespace

ByteBuffer cached_decompress(const std::string& source_path,
                             const std::function<std::vector<std::uint8_t>()>& decompress) {
  const fs::path dir = cache_dir_from_environment();
  const std::optional<SourceStamp> source = stamp_of(source_path);
  if (dir.empty() || !source) return decompress();
  std::error_code error;
  const fs::path absolute = fs::absolute(source_path, error).lexically_normal();
  if (error) return decompress();
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx",
                static_cast<unsigned long long>(fnv1a_64(absolute.string())));
  const fs::path entry = dir / (absolute.filename().string() + "-" + hash + ".raw");
  if (std::optional<ByteBuffer> cached = read_entry(entry, *source)) {
    return std::move(*cached);
  }
  std::vector<std::uint8_t> bytes = decompress();
  if (ensure_directory(dir)) write_entry(entry, *source, bytes);
  return ByteBuffer(std::move(bytes));
}

}  // namespace fastk::learning
