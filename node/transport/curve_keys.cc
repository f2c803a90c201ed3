#include "node/transport/curve_keys.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "node/os/private_folder.h"
#include "node/os/unique_fd.h"

namespace fastk::node::transport {
namespace {

constexpr std::size_t kZ85KeyChars = 40;  // 32 bytes in Z85

std::runtime_error error_at(const std::filesystem::path& file, const std::string& what) {
  return std::runtime_error("'" + file.string() + "': " + what);
}

bool z85_key(const std::string& text) {
  if (text.size() != kZ85KeyChars) return false;
  std::uint8_t decoded[32];
  return zmq_z85_decode(decoded, text.c_str()) != nullptr;
}

// Creates `file` (never over an existing one) with mode `mode`, writes `text`, syncs it.
// On failure the file is removed and the error names it and the reason (ENOSPC included).
void write_new_file(const std::filesystem::path& file, const std::string& text, mode_t mode) {
  os::UniqueFd fd(::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode));
  if (!fd.valid() && errno == EEXIST) {
    throw error_at(file,
                   "cannot create: it exists (keys are never overwritten: choose a new "
                   "folder, or remove this one)");
  }
  if (!fd.valid()) throw error_at(file, std::string("cannot create: ") + std::strerror(errno));
  const auto fail = [&](const std::string& reason) {
    ::unlink(file.c_str());
    return error_at(file, "cannot write: " + reason);
  };
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd.get(), text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw fail(n < 0 ? std::strerror(errno) : "nothing written");
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd.get()) != 0) throw fail(std::strerror(errno));
}

// A key file must be this user's and a regular file; `private_file`: readable by nobody
// else (a secret), else at least writable by nobody else (public keys someone could swap).
void check_key_file(const std::filesystem::path& file, bool private_file) {
  struct stat st {};
  if (::lstat(file.c_str(), &st) != 0) {
    throw error_at(file, std::string("cannot read: ") + std::strerror(errno) +
                             " (make keys with `fastk keys`)");
  }
  if (!S_ISREG(st.st_mode)) throw error_at(file, "not a regular file (a link?)");
  if (st.st_uid != ::geteuid()) throw error_at(file, "belongs to another user");
  if (private_file && (st.st_mode & 077) != 0) {
    throw error_at(file, "others may read this secret key (chmod 600)");
  }
  if (!private_file && (st.st_mode & 022) != 0) {
    throw error_at(file, "others may change these public keys (chmod 644)");
  }
}

// The folder too: whoever may write it may swap public-keys for a file of their own.
void check_key_folder(const std::filesystem::path& folder) {
  struct stat st {};
  if (::stat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    throw error_at(folder, "no such key folder (make keys with `fastk keys`)");
  }
  if (st.st_uid != ::geteuid() || (st.st_mode & 022) != 0) {
    throw error_at(folder,
                   "the key folder must belong to this user and be writable by nobody "
                   "else (chmod 700)");
  }
}

std::string read_secret(const std::filesystem::path& file) {
  check_key_file(file, /*private_file=*/true);
  std::ifstream in(file);
  if (!in) throw error_at(file, std::string("cannot read: ") + std::strerror(errno));
  std::string secret;
  in >> secret;
  if (!z85_key(secret)) throw error_at(file, "not a CURVE secret key (40 Z85 characters)");
  return secret;
}

// public-keys: "<peer> <key>" per line; blank lines and lines starting with '#' are skipped.
std::map<wire::PeerId, std::string> read_public_keys(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw error_at(file, "cannot read the public keys (make keys with `fastk keys`)");
  std::map<wire::PeerId, std::string> keys;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    long long peer = -1;
    std::string key, rest;
    fields >> peer >> key >> rest;
    const std::string where = "line " + std::to_string(number) + ": ";
    if (peer < 0 || peer > 0xFFFFFFFFLL || !z85_key(key) || !rest.empty()) {
      throw error_at(file, where + "expected '<peer> <40-character Z85 public key>'");
    }
    if (!keys.emplace(static_cast<wire::PeerId>(peer), key).second) {
      throw error_at(file, where + "peer " + std::to_string(peer) + " is listed twice");
    }
  }
  return keys;
}

std::string public_of(const std::string& secret) {
  char public_key[kZ85KeyChars + 1];
  if (zmq_curve_public(public_key, secret.c_str()) != 0) {
    throw std::runtime_error(std::string("zmq_curve_public: ") + zmq_strerror(zmq_errno()));
  }
  return public_key;
}

}  // namespace

std::filesystem::path secret_key_file(const std::filesystem::path& folder, int peer) {
  return folder / ("peer-" + std::to_string(peer) + ".secret");
}

std::filesystem::path public_keys_file(const std::filesystem::path& folder) {
  return folder / "public-keys";
}

CurveKeyPair make_key_pair() {
  char public_key[kZ85KeyChars + 1];
  char secret_key[kZ85KeyChars + 1];
  if (zmq_curve_keypair(public_key, secret_key) != 0) {
    throw std::runtime_error(std::string("cannot make CURVE keys (libzmq without libsodium?): ") +
                             zmq_strerror(zmq_errno()));
  }
  return {public_key, secret_key};
}

void write_key_folder(const std::filesystem::path& folder, int peer_count) {
  os::make_private_folder(folder);
  std::string publics = "# fastk CURVE public keys: <peer> <key>. Made by `fastk keys`.\n";
  for (int i = 0; i < peer_count; ++i) {
    const CurveKeyPair pair = make_key_pair();
    write_new_file(secret_key_file(folder, i), pair.secret_key + "\n", 0600);
    publics += std::to_string(i) + " " + pair.public_key + "\n";
  }
  write_new_file(public_keys_file(folder), publics, 0644);
}

CurveKeys read_peer_keys(const std::filesystem::path& folder, wire::PeerId self,
                         std::span<const wire::PeerId> peers) {
  CurveKeys keys;
  check_key_folder(folder);
  const auto file = public_keys_file(folder);
  check_key_file(file, /*private_file=*/false);
  const auto publics = read_public_keys(file);
  keys.own.secret_key = read_secret(secret_key_file(folder, static_cast<int>(self)));
  keys.own.public_key = public_of(keys.own.secret_key);
  const auto listed = publics.find(self);
  if (listed == publics.end() || listed->second != keys.own.public_key) {
    throw error_at(secret_key_file(folder, static_cast<int>(self)),
                   "does not match peer " + std::to_string(self) + "'s key in " + file.string() +
                       " (keys of two runs mixed?)");
  }
  for (wire::PeerId peer : peers) {
    const auto it = publics.find(peer);
    if (it == publics.end()) {
      throw error_at(file, "no public key for peer " + std::to_string(peer));
    }
    keys.peers[peer] = it->second;
  }
  return keys;
}

void copy_keys_for(const std::filesystem::path& from, const std::filesystem::path& to,
                   std::span<const int> peers) {
  os::make_private_folder(to);
  const auto read_all = [](const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw error_at(file, "cannot read");
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  write_new_file(public_keys_file(to), read_all(public_keys_file(from)), 0644);
  for (int peer : std::set<int>(peers.begin(), peers.end())) {
    write_new_file(secret_key_file(to, peer), read_all(secret_key_file(from, peer)), 0600);
  }
}

}  // namespace fastk::node::transport
