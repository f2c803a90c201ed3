// A neighbour's message as protocol input: a model, a coded gradient, an ad_psgd request or
// reply, or a goodbye. HELLO and HELLO_ACK are the rendezvous' business (rendezvous.h), not
// the protocol's.
#pragma once

#include <cstdint>
#include <optional>

#include "consensus/actions.h"
#include "consensus/coded_message.h"
#include "consensus/params.h"
#include "node/peer/shared_model_reader.h"
#include "node/transport/link.h"

namespace fastk::node::peer {

struct Inbound {
  int from = 0;
  std::int64_t tag = 0;
  consensus::Params params;                           // a model
  consensus::CodedPart coded;                         // or a coded gradient
  consensus::CompressedPart compressed;               // or a compressed difference
  std::optional<consensus::AveragingStep> averaging;  // or (with params) ad_psgd's messages
  bool bye = false;                                   // or the neighbour left
};

// The protocol input `message` carries; nullopt for HELLO, HELLO_ACK and a SHARED_MODEL that
// `shared` cannot read (lapped or bad: counted there). A MODEL's parameters are read in
// place from the received frame, which the Inbound keeps alive.
std::optional<Inbound> to_inbound(transport::ReceivedMessage message, SharedModelReader& shared);

}  // namespace fastk::node::peer
