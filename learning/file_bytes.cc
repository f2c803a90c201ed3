// Reading whole files, gunzipping those that start with the gzip magic, with errors that name
// the file. Gzip files go through the decompressed-file cache, so that the peers of a machine
// do not each inflate the same data set.
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "learning/data_sources.h"
#include "learning/decompressed_cache.h"

namespace fastk::learning {

namespace {

constexpr std::size_t kChunk = 1 << 20;

bool starts_gzip(std::span<const std::uint8_t> bytes) {
  return bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b;
}

// The trailer's ISIZE: the size of the last member's contents mod 2^32 (exact for the usual
// single-member file, merely a hint otherwise), to reserve the output once: growing a vector
// of tens of MB by doubling briefly holds the old and the new buffer.
std::size_t size_hint(std::span<const std::uint8_t> gz) {
  if (gz.size() < 18) return 0;
  const std::uint8_t* t = gz.data() + gz.size() - 4;
  return std::size_t(t[0]) | std::size_t(t[1]) << 8 | std::size_t(t[2]) << 16 |
         std::size_t(t[3]) << 24;
}

// Inflates one gzip member starting at `*at`, growing `out` by `chunk` bytes at a time;
// advances `*at` past it.
void inflate_member(z_stream& z, std::span<const std::uint8_t> gz, std::size_t* at,
                    std::size_t chunk, std::vector<std::uint8_t>& out, const std::string& name) {
  if (inflateReset(&z) != Z_OK) throw DataError(name + ": cannot reset the gzip decoder");
  const std::size_t begin = *at;
  z.next_in = const_cast<Bytef*>(gz.data() + begin);
  z.avail_in = static_cast<uInt>(std::min<std::size_t>(gz.size() - begin, UINT_MAX));
  while (true) {
    const std::size_t old_size = out.size();
    out.resize(old_size + chunk);
    z.next_out = out.data() + old_size;
    z.avail_out = static_cast<uInt>(chunk);
    const int code = inflate(&z, Z_NO_FLUSH);
    out.resize(old_size + (chunk - z.avail_out));
    *at = begin + static_cast<std::size_t>(z.next_in - (gz.data() + begin));
    if (code == Z_STREAM_END) return;
    if (code == Z_BUF_ERROR && z.avail_in == 0) {
      throw DataError(name + ": corrupt gzip data (it ends inside a member: truncated file?)");
    }
    if (code != Z_OK && code != Z_BUF_ERROR) {
      throw DataError(name + ": corrupt gzip data (" + (z.msg ? z.msg : "inflate failed") + ")");
    }
    if (z.avail_in == 0 && *at < gz.size()) {  // more than 4 GiB of input: feed the rest
      z.next_in = const_cast<Bytef*>(gz.data() + *at);
      z.avail_in = static_cast<uInt>(std::min<std::size_t>(gz.size() - *at, UINT_MAX));
    }
  }
}

}  // namespace

std::vector<std::uint8_t> gunzip_bytes(std::span<const std::uint8_t> gz, const std::string& name) {
  if (!starts_gzip(gz)) throw DataError(name + ": not gzip data");
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {  // 16: a gzip header and trailer only
    throw DataError(name + ": cannot start the gzip decoder");
  }
  std::vector<std::uint8_t> out;
  // The trailer of a cut or forged file holds any number: trusted only up to 16 times the
  // input (image data compress far less), past which the output grows as it comes.
  const std::size_t hint = std::min(size_hint(gz), gz.size() * 16);
  // Small files in small steps: each step zero-fills its bytes before inflate writes them.
  const std::size_t chunk = std::clamp<std::size_t>(hint + 1, 4096, kChunk);
  out.reserve(hint + chunk);
  std::size_t at = 0;
  try {
    // Concatenated members are one file (RFC 1952 §2.2); anything else after a member is not
    // gzip data, and a file that has it is not what it claims to be.
    do {
      inflate_member(z, gz, &at, chunk, out, name);
    } while (at < gz.size() && starts_gzip(gz.subspan(at)));
  } catch (...) {
    inflateEnd(&z);
    throw;
  }
  inflateEnd(&z);
  if (at != gz.size()) {
    throw DataError(name + ": " + std::to_string(gz.size() - at) +
                    " bytes after the end of the gzip data (a damaged or concatenated file?)");
  }
  return out;
}

ByteBuffer read_file_bytes(const std::string& path) {
  if (std::filesystem::is_directory(path)) {  // opens, then reads as a bogus size
    throw DataError(path + ": is a folder, not a data file");
  }
  // One read into a vector of the file's size: growing it by doubling would briefly hold two
  // buffers of a data set, in every peer of the machine.
  const auto read_all = [&] {
    std::ifstream file(path, std::ios::binary | std::ios::ate);
    if (!file) throw DataError(path + ": cannot open file (" + std::strerror(errno) + ")");
    const std::streamoff size = file.tellg();
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(std::max<std::streamoff>(size, 0)));
    file.seekg(0);
    file.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (size < 0 || file.gcount() != static_cast<std::streamsize>(bytes.size())) {
      throw DataError(path + ": cannot read file (" + std::strerror(errno) + ")");
    }
    return bytes;
  };
  unsigned char head[2] = {0, 0};
  {
    std::ifstream probe(path, std::ios::binary);
    if (!probe) throw DataError(path + ": cannot open file (" + std::strerror(errno) + ")");
    probe.read(reinterpret_cast<char*>(head), 2);
  }
  if (!starts_gzip(head)) return ByteBuffer(read_all());
  return cached_decompress(path, [&] { return gunzip_bytes(read_all(), path); });
}

}  // namespace fastk::learning
