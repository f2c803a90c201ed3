// One pool of model buffers for every simulated peer (simulation/model_pool.h).
#include "simulation/model_pool.h"

#include <gtest/gtest.h>

#include <limits>

namespace fastk::simulation {
namespace {

TEST(ModelPool, ABufferGoesBackWhenItsLastHolderLetsGoAndIsReused) {
  const auto pool = std::make_shared<ModelPool>(5);
  std::shared_ptr<consensus::MutableParamBuffer> a = pool->take();
  ASSERT_EQ(a->values().size(), 5u);
  const float* memory = a->values().data();
  a->mutable_values()[2] = 7.0f;
  consensus::Params held = a;  // a neighbour's slot holds it
  a.reset();
  EXPECT_EQ(pool->free_buffers(), 0u);  // still held
  held.reset();
  EXPECT_EQ(pool->free_buffers(), 1u);
  const auto b = pool->take();
  EXPECT_EQ(b->values().data(), memory);  // the same memory, no new allocation
  EXPECT_EQ(pool->buffers_made(), 1u);
  const auto c = pool->take();  // b is held: a new one
  EXPECT_EQ(pool->buffers_made(), 2u);
  EXPECT_NE(c->values().data(), memory);
}

TEST(ModelPool, ItsSourceServesProtocolsAndOutlivesThePoolHandle) {
  consensus::BufferSource source;
  {
    const auto pool = std::make_shared<ModelPool>(3);
    source = pool->source();
  }
  const auto buffer = source();  // the source keeps the pool alive
  ASSERT_TRUE(buffer);
  EXPECT_EQ(buffer->values().size(), 3u);
}

// A rewritten buffer forgets whether its values were finite (consensus/params.h).
TEST(ModelPool, ARewrittenBufferIsCheckedForFinitenessAgain) {
  const auto pool = std::make_shared<ModelPool>(4);
  const auto buffer = pool->take();
  for (float& v : buffer->mutable_values()) v = 1.0f;
  EXPECT_TRUE(buffer->all_finite());
  buffer->mutable_values()[1] = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(buffer->all_finite());
  buffer->mutable_values()[1] = 0.0f;
  EXPECT_TRUE(buffer->all_finite());
}

}  // namespace
}  // namespace fastk::simulation
