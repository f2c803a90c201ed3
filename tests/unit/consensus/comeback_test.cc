// The one rule for a peer that comes back (consensus/comeback.h), which the protocol, the
// config, fastk node and fastk run all ask.
#include "consensus/comeback.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "consensus/peer_protocol.h"

namespace fastk::consensus {
namespace {

using ::testing::HasSubstr;

std::string why(const ProtocolConfig& config, Comeback how) {
  return why_no_comeback(config, how).value_or("");
}

TEST(Comeback, APlainRunTakesAPeerBackEitherWay) {
  const ProtocolConfig plain;
  EXPECT_FALSE(why_no_comeback(plain, Comeback::kFromCheckpoint));
  EXPECT_FALSE(why_no_comeback(plain, Comeback::kJoining));
}

TEST(Comeback, PushSumCompressionAndCodingTakeNoPeerBackAndSayWhich) {
  ProtocolConfig push_sum;
  push_sum.push_sum = true;
  ProtocolConfig compressed;
  compressed.compression = compression::CompressorSpec{};
  ProtocolConfig coded;
  coded.coding.scheme = coding::Scheme::kFrc;
  for (const auto how : {Comeback::kFromCheckpoint, Comeback::kJoining}) {
    EXPECT_THAT(why(push_sum, how), HasSubstr("consensus.push_sum"));
    EXPECT_THAT(why(compressed, how), HasSubstr("[compression]"));
    EXPECT_THAT(why(coded, how), HasSubstr("[coding]"));
  }
}

TEST(Comeback, AnAdPsgdPeerNeedsItsCheckpoint) {
  ProtocolConfig ad_psgd;
  ad_psgd.policy.kind = PolicyKind::kAdPsgd;
  EXPECT_FALSE(why_no_comeback(ad_psgd, Comeback::kFromCheckpoint));
  EXPECT_THAT(why(ad_psgd, Comeback::kJoining), HasSubstr("run.checkpoint_every"));
}

}  // namespace
}  // namespace fastk::consensus
