// A received frame as the protocol's input (consensus/inputs.h): a model, a coded gradient, a
// compressed difference, an ad_psgd request or reply, or a goodbye. HELLO and HELLO_ACK are
// the rendezvous' business (rendezvous.h), not the protocol's.
#pragma once

#include <cstdint>
#include <optional>

#include "consensus/inputs.h"
#include "node/peer/shared_model_reader.h"
#include "node/transport/link.h"

namespace fastk::node::peer {

// The protocol input `message` carries; nullopt for HELLO, HELLO_ACK and a SHARED_MODEL that
// `shared` cannot read (lapped or bad: counted there). A MODEL's parameters are read in
// place from the received frame, which the returned message's params keep alive.
std::optional<consensus::Message> to_message(transport::ReceivedMessage message,
                                             SharedModelReader& shared);

}  // namespace fastk::node::peer
