// The keys of a run's encrypted, authenticated links (ZeroMQ CURVE; docs/security.md).
//
// A key folder holds one key pair per peer:
//   public-keys        "<peer> <public key>" per line, every peer of the run (Z85, 40 chars)
//   peer-<i>.secret    peer i's secret key (Z85), mode 0600
// The folder is 0700. A peer needs its own secret file and public-keys; `fastk run` copies a
// LAN host only the secret files of its own peers. Keys are made by libsodium through
// ZeroMQ (zmq_curve_keypair), never derived from anything a stranger could know.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>

#include "node/wire/format.h"

namespace fastk::node::transport {

struct CurveKeyPair {
  std::string public_key;  // Z85, 40 characters
  std::string secret_key;
};

// What one peer's links need: its own pair, and the public key of every peer it sends to or
// hears from (a sender whose key is not here is refused before any frame arrives).
struct CurveKeys {
  CurveKeyPair own;
  std::map<wire::PeerId, std::string> peers;  // public keys, by peer id
};

// A fresh key pair. Throws std::runtime_error if this libzmq was built without CURVE.
CurveKeyPair make_key_pair();

// Writes a key pair for each of `peer_count` peers into `folder` (created 0700; an existing
// folder must hold no key files). Throws std::runtime_error naming the file on any failure.
void write_key_folder(const std::filesystem::path& folder, int peer_count);

// Reads peer `self`'s secret key and the public keys of `peers` from `folder`. Throws
// std::runtime_error naming the file and line for a missing file, a malformed line, a
// missing peer, a secret file others may read, a folder or public-keys file others may
// change (or of another user), or a secret that does not match the public key listed for
// `self`.
CurveKeys read_peer_keys(const std::filesystem::path& folder, wire::PeerId self,
                         std::span<const wire::PeerId> peers);

// Copies into `to` (created 0700) public-keys and the secret files of `peers` only: what the
// host that runs those peers needs.
void copy_keys_for(const std::filesystem::path& from, const std::filesystem::path& to,
                   std::span<const int> peers);

std::filesystem::path secret_key_file(const std::filesystem::path& folder, int peer);
std::filesystem::path public_keys_file(const std::filesystem::path& folder);

}  // namespace fastk::node::transport
