// Reading whole files, transparently gunzipping (zlib's gz* functions read plain files as
// they are), with errors that name the file.
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "learning/data_sources.h"

namespace fastk::learning {

std::vector<std::uint8_t> read_file_bytes(const std::string& path) {
  {
    std::ifstream probe(path, std::ios::binary);
    if (!probe) throw DataError(path + ": cannot open file (" + std::strerror(errno) + ")");
  }
  gzFile file = gzopen(path.c_str(), "rb");
  if (!file) throw DataError(path + ": cannot open file");
  std::vector<std::uint8_t> bytes;
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

}  // namespace fastk::learning
