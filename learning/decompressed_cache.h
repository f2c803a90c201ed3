// A per-machine cache of decompressed data files, so that a gzipped data set is gunzipped once
// per machine (and per version of the source file) instead of once by every peer of every run.
//
// Where: $FASTK_CACHE_DIR if set (the value "off" disables the cache), else
// $XDG_CACHE_HOME/fastk, else $HOME/.cache/fastk; directories it creates get mode 0700.
// An entry is one file per source path, <basename>-<16 hex digits of FNV-1a 64 of the absolute
// path>.raw, holding a header (magic, format version, source size, source mtime in ns, payload
// length, in this machine's byte order) and then the decompressed bytes. An entry is used only
// if the source's size and mtime and the entry's own length match its header; otherwise the
// source is decompressed again and the entry rewritten. A source modified less than 2 s before
// its entry would be written is not cached (a rewrite within the same file-system clock tick
// could keep its mtime and size). Entries are published with rename(2) from a temporary file
// named after the writer's pid, so concurrent readers never see half of one. The cache is
// best effort: when it cannot be created, read or written, the source is simply decompressed,
// and errors of the source itself (corrupt gzip) are never masked. A valid entry is mapped,
// not copied (byte_buffer.h): the peers of a machine share one copy of it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "learning/byte_buffer.h"

namespace fastk::learning {

// The decompressed contents of the file at `source_path`: its cache entry, mapped, when that
// is valid, else `decompress()`, whose result is then stored. Exceptions of `decompress` pass
// through and store nothing.
ByteBuffer cached_decompress(const std::string& source_path,
                             const std::function<std::vector<std::uint8_t>()>& decompress);

}  // namespace fastk::learning
