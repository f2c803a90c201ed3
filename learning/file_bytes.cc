// Reading whole files, transparently gunzipping (zlib's gz* functions read plain files as
// they are), with errors that name the file. Gzip files go through the decompressed-file
// cache, so that the peers of a machine do not each inflate the same data set.
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "learning/data_sources.h"
#include "learning/decompressed_cache.h"

namespace fastk::learning {

namespace {

struct FileKind {
  bool gzip = false;
  // The size the contents will have, to reserve it once: growing a vector of tens of MB by
  // doubling briefly holds the old and the new buffer, which is what a peer's peak memory
  // would be made of. For gzip, the trailer's ISIZE (uncompressed size mod 2^32 of the last
  // member: exact for the usual single-member file, merely a hint otherwise).
  std::size_t expected_size = 0;
};

FileKind probe_file(std::ifstream& file) {
  file.seekg(0, std::ios::end);
  const std::streamoff size = file.tellg();
  if (size < 18) return {false, std::size_t(std::max<std::streamoff>(size, 0))};
  unsigned char head[2] = {0, 0}, tail[4] = {0, 0, 0, 0};
  file.seekg(0);
  file.read(reinterpret_cast<char*>(head), 2);
  if (head[0] != 0x1f || head[1] != 0x8b) return {false, std::size_t(size)};
  file.seekg(size - 4);
  file.read(reinterpret_cast<char*>(tail), 4);
  return {true, std::size_t(tail[0]) | std::size_t(tail[1]) << 8 | std::size_t(tail[2]) << 16 |
                    std::size_t(tail[3]) << 24};
}

std::vector<std::uint8_t> gunzip_file(const std::string& path, std::size_t expected) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (!file) throw DataError(path + ": cannot open file");
  std::vector<std::uint8_t> bytes;
  bytes.reserve(expected + (1 << 20));  // + one chunk: the loop reads past the end once
  constexpr unsigned kChunk = 1 << 20;
  while (true) {
    const std::size_t old_size = bytes.size();
    bytes.resize(old_size + kChunk);
    const int got = gzread(file, bytes.data() + old_size, kChunk);
    if (got < 0) {
      int code = 0;
      std::string message = gzerror(file, &code);
      gzclose(file);
      throw DataError(path + ": corrupt gzip data (" + message + ")");
    }
    bytes.resize(old_size + std::size_t(got));
    if (got == 0) break;
  }
  // A gzip stream cut short reads as end of file; zlib reports it only through gzerror.
  int code = 0;
  const char* message = gzerror(file, &code);
  std::string error = code != Z_OK && code != Z_STREAM_END ? message : "";
  gzclose(file);
  if (!error.empty()) throw DataError(path + ": corrupt gzip data (" + error + ")");
  return bytes;
}

}  // namespace

std::vector<std::uint8_t> read_file_bytes(const std::string& path) {
  if (std::filesystem::is_directory(path)) {  // opens, then reads as a bogus size
    throw DataError(path + ": is a folder, not a data file");
  }
  FileKind kind;
  {
    std::ifstream probe(path, std::ios::binary);
    if (!probe) throw DataError(path + ": cannot open file (" + std::strerror(errno) + ")");
    kind = probe_file(probe);
  }
  if (!kind.gzip) return gunzip_file(path, kind.expected_size);  // gzread copies plain files
  return cached_decompress(path, [&] { return gunzip_file(path, kind.expected_size); });
}

}  // namespace fastk::learning
