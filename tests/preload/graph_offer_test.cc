// The graph half's offer order (OfferOrder) and what a thread carries from a
// count query to its fill query (GraphQueryMemory). No cuDNN is called.
#include "preload/graph_offer.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace tunedb::preload {
namespace {

AlgoResult Config(int engine) {
  AlgoResult r;
  r.algo = engine;
  return r;
}

// Two choices (engines 1, 2) and two alternatives (engines 7, 8).
CheckedConfigs TwoAndTwo(bool universal) {
  CheckedConfigs c;
  c.choices = {Config(1), Config(2)};
  c.alternatives = {Config(7), Config(8)};
  if (universal) c.universal = Config(8);
  return c;
}

std::vector<int> Engines(const std::vector<const AlgoResult*>& offer) {
  std::vector<int> out;
  for (const AlgoResult* r : offer) out.push_back(r->algo);
  return out;
}

TEST(OfferOrderTest, WithAUniversalConfigEachConfigIsOfferedOnce) {
  const CheckedConfigs c = TwoAndTwo(true);
  const std::vector<int> once = {1, 2, 7, 8};
  EXPECT_EQ(Engines(OfferOrder(c, 0, 10)), once);
  EXPECT_EQ(Engines(OfferOrder(c, 10, 10)), once);
  EXPECT_EQ(Engines(OfferOrder(c, 2, 10)), once);
}

TEST(OfferOrderTest, WithoutOneTheLastChoiceRepeatsBeforeTheAlternatives) {
  const CheckedConfigs c = TwoAndTwo(false);
  const std::vector<int> to_five = {1, 2, 2, 2, 2, 7, 8};
  EXPECT_EQ(Engines(OfferOrder(c, 0, 5)), to_five);
  EXPECT_EQ(Engines(OfferOrder(c, 7, 5)), to_five);
  EXPECT_EQ(Engines(OfferOrder(c, 20, 5)), to_five);
}

TEST(OfferOrderTest, ACallerAskingForFewerGetsTheDistinctConfigsFirst) {
  const CheckedConfigs c = TwoAndTwo(false);
  EXPECT_EQ(Engines(OfferOrder(c, 6, 5)),
            (std::vector<int>{1, 2, 7, 8, 2, 2}));
  EXPECT_EQ(Engines(OfferOrder(c, 3, 5)), (std::vector<int>{1, 2, 7, 8}));
}

TEST(OfferOrderTest, AlternativesAloneAreNotRepeated) {
  CheckedConfigs c;
  c.alternatives = {Config(7)};
  EXPECT_EQ(Engines(OfferOrder(c, 0, 10)), (std::vector<int>{7}));
  EXPECT_FALSE(c.empty());
  EXPECT_TRUE(CheckedConfigs().empty());
}

TEST(GraphQueryMemoryTest, AFillQueryTakesWhatTheCountQueryOfItsKeyChecked) {
  GraphQueryMemory memory;
  ProblemKey key;
  key.problem.n = 8;
  memory.counted = TwoAndTwo(true);
  memory.counted->key = key;
  std::optional<CheckedConfigs> taken = memory.TakeCounted(key, 4);
  ASSERT_TRUE(taken.has_value());
  EXPECT_EQ(taken->choices.size(), 2u);
  EXPECT_FALSE(memory.counted.has_value());
  // Taken once.
  EXPECT_FALSE(memory.TakeCounted(key, 4).has_value());
}

TEST(GraphQueryMemoryTest, AnotherKeyOrACountQueryForgetsIt) {
  GraphQueryMemory memory;
  ProblemKey key;
  key.problem.n = 8;
  ProblemKey other = key;
  other.problem.n = 16;
  memory.counted = TwoAndTwo(false);
  memory.counted->key = key;
  EXPECT_FALSE(memory.TakeCounted(other, 4).has_value());
  EXPECT_FALSE(memory.counted.has_value());
  memory.counted = TwoAndTwo(false);
  memory.counted->key = key;
  EXPECT_FALSE(memory.TakeCounted(key, 0).has_value());
  EXPECT_FALSE(memory.counted.has_value());
}

}  // namespace
}  // namespace tunedb::preload
