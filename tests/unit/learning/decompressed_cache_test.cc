// The decompressed-file cache behind read_file_bytes, on real files in a fresh directory: one
// entry per gzip source, entries used while the source's size and mtime match, ignored and
// rewritten when stale or damaged, and never in the way when the cache is unusable or off.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "learning/data_sources.h"
#include "tests/support/temp_dir.h"

namespace fastk::learning {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<std::uint8_t>;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// An old mtime: sources this old are cached (fresh ones are not, see decompressed_cache.h).
constexpr time_t kOldSeconds = 1'000'000'000;
constexpr long kOldNanoseconds = 123'456'789;

// Sets an environment variable for one test and restores it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::optional<std::string>& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

Bytes content_of_size(std::size_t size, std::uint8_t seed) {
  Bytes bytes(size);
  for (std::size_t i = 0; i < size; ++i) bytes[i] = std::uint8_t((i * 31 + seed) % 251);
  return bytes;
}

Bytes read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

void write_all(const fs::path& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

void set_mtime(const fs::path& path, time_t seconds, long nanoseconds) {
  const struct timespec times[2] = {{seconds, nanoseconds}, {seconds, nanoseconds}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

void write_gzip(const fs::path& path, const Bytes& bytes) {
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr) << path;
  ASSERT_EQ(gzwrite(file, bytes.data(), unsigned(bytes.size())), int(bytes.size()));
  ASSERT_EQ(gzclose(file), Z_OK);
}

std::vector<fs::path> files_under(const fs::path& dir) {
  std::vector<fs::path> files;
  if (!fs::is_directory(dir)) return files;
  for (const auto& item : fs::recursive_directory_iterator(dir)) {
    if (item.is_regular_file()) files.push_back(item.path());
  }
  return files;
}

class DecompressedCacheTest : public ::testing::Test {
 protected:
  DecompressedCacheTest()
      : dir_(testutil::fresh_test_dir("fastk_gz_cache")),
        cache_(dir_ / "cache"),
        source_(dir_ / "data.gz"),
        content_(content_of_size(5000, 7)),
        cache_env_("FASTK_CACHE_DIR", cache_.string()) {}

  void SetUp() override {
    write_gzip(source_, content_);
    set_mtime(source_, kOldSeconds, kOldNanoseconds);
  }

  // The one entry the cache holds (fails the test otherwise).
  fs::path only_entry() const {
    const std::vector<fs::path> entries = files_under(cache_);
    EXPECT_EQ(entries.size(), 1u);
    return entries.empty() ? fs::path() : entries.front();
  }

  std::size_t header_size() const { return fs::file_size(only_entry()) - content_.size(); }

  // The entry with its payload replaced by other bytes of the same length, header kept.
  Bytes tamper_entry_payload() {
    const fs::path entry = only_entry();
    Bytes bytes = read_all(entry);
    const std::size_t header = bytes.size() - content_.size();
    for (std::size_t i = header; i < bytes.size(); ++i) bytes[i] ^= 0xa5;
    write_all(entry, bytes);
    return Bytes(bytes.begin() + std::ptrdiff_t(header), bytes.end());
  }

  fs::path dir_;
  fs::path cache_;
  fs::path source_;
  Bytes content_;
  ScopedEnv cache_env_;
};

TEST_F(DecompressedCacheTest, FirstReadOfGzipCreatesExactlyOneEntryHoldingTheContents) {
  EXPECT_EQ(read_file_bytes(source_.string()).to_vector(), content_);
  const fs::path entry = only_entry();
  EXPECT_THAT(entry.filename().string(), StartsWith("data.gz-"));
  EXPECT_EQ(entry.extension(), ".raw");
  EXPECT_EQ(entry.filename().string().size(), std::string("data.gz-0123456789abcdef.raw").size());
  const Bytes stored = read_all(entry);
  ASSERT_GT(stored.size(), content_.size());
  EXPECT_EQ(Bytes(stored.end() - std::ptrdiff_t(content_.size()), stored.end()), content_);
  EXPECT_EQ(fs::status(cache_).permissions() & fs::perms::all, fs::perms::owner_all);
}

TEST_F(DecompressedCacheTest, SecondReadUsesTheEntry) {
  read_file_bytes(source_.string());
  const Bytes tampered = tamper_entry_payload();
  ASSERT_NE(tampered, content_);
  EXPECT_EQ(read_file_bytes(source_.string()).to_vector(), tampered);
}

// A valid entry is mapped, not copied; the mapping keeps the bytes it validated even when the
// entry is replaced (entries are renamed over, never rewritten in place).
TEST_F(DecompressedCacheTest, AValidEntryIsMappedAndOutlivesItsReplacement) {
  EXPECT_FALSE(read_file_bytes(source_.string()).mapped());  // decompressed: no entry yet
  const ByteBuffer held = read_file_bytes(source_.string());
  EXPECT_TRUE(held.mapped());
  const Bytes longer = content_of_size(7000, 3);
  write_gzip(source_, longer);
  set_mtime(source_, kOldSeconds, kOldNanoseconds + 1);
  EXPECT_EQ(read_file_bytes(source_.string()).to_vector(), longer);  // the entry rewritten
  EXPECT_EQ(held.to_vector(), content_);
}

TEST_F(DecompressedCacheTest, NewMtimeInvalidatesTheEntryWhichIsRewritten) {
  read_file_bytes(source_.string());
  tamper_entry_payload();
  set_mtime(source_, kOldSeconds, kOldNanoseconds + 1);  // one nanosecond later is new
  EXPECT_EQ(read_file_bytes(source_.string()).to_vector(), content_);
  const Bytes stored = read_all(only_entry());
  EXPECT_EQ(Bytes(stored.end() - std::ptrdiff_t(content_.size()), stored.end()), content_);
  EXPECT_EQ(read_file_bytes(source_.string()).to_vector(), content_);
}

TEST_F(DecompressedCacheTest, NewSizeInvalidatesTheEntryWhichIsRewritten) {
  read_file_bytes(source_.string());
  const std::size_t header = header_size();
  const Bytes longer = content_of_size(7000, 3);
  write_gzip(source_, longer);
  set_mtime(source_, kOldSeconds, kOldNanoseconds);  // same mtime: only the size tells
  EXPECT_EQ(read_file_bytes(source_.string()).to_vector(), longer);
  const Bytes stored = read_all(only_entry());
  ASSERT_EQ(stored.size(), header + longer.size());
  EXPECT_EQ(Bytes(stored.begin() + std::ptrdiff_t(header), stored.end()), longer);
}

TEST_F(DecompressedCacheTest, TruncatedEntryIsIgnoredAndRewritten) {
  read_file_bytes(source_.string());
  const fs::path entry = only_entry();
  const std::uintmax_t whole = fs::file_size(entry);
  fs::resize_file(entry, whole - 100);
  EXPECT_EQ(read_file_bytes(source_.string()).to_vector(), content_);
  EXPECT_EQ(fs::file_size(entry), whole);
  fs::resize_file(entry, 10);  // shorter than a header
  EXPECT_EQ(read_file_bytes(source_.string()).to_vector(), content_);
  EXPECT_EQ(fs::file_size(entry), whole);
}

TEST_F(DecompressedCacheTest, EntryLongerThanItsHeaderSaysIsIgnoredAndRewritten) {
  read_file_bytes(source_.string());
  const fs::path entry = only_entry();
  const std::uintmax_t whole = fs::file_size(entry);
  tamper_entry_payload();
  fs::resize_file(entry, whole + 1);
  EXPECT_EQ(read_file_bytes(source_.string()).to_vector(), content_);
  EXPECT_EQ(fs::file_size(entry), whole);
}

TEST_F(DecompressedCacheTest, EntryWithDamagedHeaderIsIgnoredAndRewritten) {
  read_file_bytes(source_.string());
  const fs::path entry = only_entry();
  const Bytes good = read_all(entry);
  Bytes damaged = good;
  damaged[0] ^= 0xff;  // the magic
  for (std::size_t i = good.size() - content_.size(); i < damaged.size(); ++i) damaged[i] = 0;
  write_all(entry, damaged);
  EXPECT_EQ(read_file_bytes(source_.string()).to_vector(), content_);
  EXPECT_EQ(read_all(entry), good);
}

TEST_F(DecompressedCacheTest, CorruptGzipStillThrowsNamingTheFile) {
  read_file_bytes(source_.string());
  Bytes compressed = read_all(source_);
  for (std::size_t i = 12; i < compressed.size(); ++i) compressed[i] ^= 0x5a;
  write_all(source_, compressed);
  set_mtime(source_, kOldSeconds + 10, 0);
  try {
    read_file_bytes(source_.string());
    FAIL() << "corrupt gzip read without error";
  } catch (const DataError& error) {
    EXPECT_THAT(error.what(), HasSubstr(source_.string()));
    EXPECT_THAT(error.what(), HasSubstr("corrupt gzip"));
  }
}

TEST_F(DecompressedCacheTest, CacheDirThatCannotBeCreatedStillReads) {
  const fs::path blocker = dir_ / "a_file";
  write_all(blocker, {1, 2, 3});
  ScopedEnv env("FASTK_CACHE_DIR", (blocker / "cache").string());
  EXPECT_EQ(read_file_bytes(source_.string()).to_vector(), content_);
  EXPECT_TRUE(fs::is_regular_file(blocker));
  EXPECT_TRUE(files_under(cache_).empty());
}

// An entry that cannot be replaced (here a directory in its place; permissions would not stop
// root) is neither read nor written, and no temporary file is left behind.
TEST_F(DecompressedCacheTest, EntryThatCannotBeWrittenStillReads) {
  read_file_bytes(source_.string());
  const fs::path entry = only_entry();
  fs::remove(entry);
  fs::create_directory(entry);
  EXPECT_EQ(read_file_bytes(source_.string()).to_vector(), content_);
  EXPECT_TRUE(fs::is_directory(entry));
  EXPECT_TRUE(files_under(cache_).empty());
}

TEST_F(DecompressedCacheTest, OffWritesNothing) {
  ScopedEnv off("FASTK_CACHE_DIR", "off");
  ScopedEnv xdg("XDG_CACHE_HOME", (dir_ / "xdg").string());
  ScopedEnv home("HOME", (dir_ / "home").string());
  EXPECT_EQ(read_file_bytes(source_.string()).to_vector(), content_);
  EXPECT_EQ(read_file_bytes(source_.string()).to_vector(), content_);
  EXPECT_FALSE(fs::exists(dir_ / "xdg"));
  EXPECT_FALSE(fs::exists(dir_ / "home"));
  EXPECT_FALSE(fs::exists(fs::current_path() / "off"));
  EXPECT_TRUE(files_under(dir_).size() == 1 && fs::exists(source_));
}

TEST_F(DecompressedCacheTest, WithoutFastkCacheDirUsesXdgCacheHomeThenHome) {
  ScopedEnv unset("FASTK_CACHE_DIR", std::nullopt);
  {
    ScopedEnv xdg("XDG_CACHE_HOME", (dir_ / "xdg").string());
    EXPECT_EQ(read_file_bytes(source_.string()).to_vector(), content_);
    EXPECT_EQ(files_under(dir_ / "xdg" / "fastk").size(), 1u);
    EXPECT_EQ(fs::status(dir_ / "xdg").permissions() & fs::perms::all, fs::perms::owner_all);
  }
  ScopedEnv no_xdg("XDG_CACHE_HOME", std::nullopt);
  ScopedEnv home("HOME", (dir_ / "home").string());
  EXPECT_EQ(read_file_bytes(source_.string()).to_vector(), content_);
  EXPECT_EQ(files_under(dir_ / "home" / ".cache" / "fastk").size(), 1u);
}

TEST_F(DecompressedCacheTest, PlainFileNeverCreatesAnEntry) {
  const fs::path plain = dir_ / "data.raw";
  write_all(plain, content_);
  set_mtime(plain, kOldSeconds, kOldNanoseconds);
  EXPECT_EQ(read_file_bytes(plain.string()).to_vector(), content_);
  EXPECT_EQ(read_file_bytes(plain.string()).to_vector(), content_);
  EXPECT_TRUE(files_under(cache_).empty());
}

TEST_F(DecompressedCacheTest, JustWrittenSourceIsNotCached) {
  write_gzip(source_, content_);  // mtime now: a rewrite in the same clock tick would go unseen
  EXPECT_EQ(read_file_bytes(source_.string()).to_vector(), content_);
  EXPECT_TRUE(files_under(cache_).empty());
}

}  // namespace
}  // namespace fastk::learning
