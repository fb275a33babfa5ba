// ProgramKeys over a real store: a key remembered once however often it is
// asked, recalled before and after the flush, newest first, and the bounds
// (request size, memory waiting for the flush, keys per program, programs
// and bytes over all programs).
#include "server/tuning/program_keys.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "store/store.h"

namespace tunedb {
namespace {

using Strings = std::vector<std::string>;

// Flushes only when a test says so.
constexpr absl::Duration kNoTimedFlush = absl::Hours(24);

absl::Time At(int64_t us) { return absl::FromUnixMicros(us); }

class ProgramKeysTest : public testing::Test {
 protected:
  void SetUp() override {
    Store::Options options;
    options.path = ":memory:";
    auto store = Store::Open(options);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
  }

  std::unique_ptr<ProgramKeys> Make(ProgramKeys::Limits limits = {}) {
    return std::make_unique<ProgramKeys>(store_.get(), limits, kNoTimedFlush);
  }

  Strings Recall(ProgramKeys& keys, const std::string& program,
                 const std::string& device = "d", int64_t limit = 0) {
    auto recalled = keys.Recall(program, device, limit);
    EXPECT_TRUE(recalled.ok()) << recalled.status();
    return recalled.value_or(Strings());
  }

  std::unique_ptr<Store> store_;
};

TEST_F(ProgramKeysTest, AKeyAskedManyTimesIsRecalledOnceBeforeAndAfterFlush) {
  auto keys = Make();
  for (int i = 0; i < 1000; ++i) keys->Remember("p", "d", "a", At(10 + i));
  keys->Remember("p", "d", "b", At(500));
  keys->Remember("p", "other", "c", At(600));
  EXPECT_EQ(keys->counts().remembered, 3);
  // Waiting for the flush: "a" was last asked at 1009, after "b".
  EXPECT_EQ(Recall(*keys, "p"), (Strings{"a", "b"}));
  keys->Flush();
  EXPECT_EQ(Recall(*keys, "p"), (Strings{"a", "b"}));
  EXPECT_EQ(Recall(*keys, "p", "other"), (Strings{"c"}));
  EXPECT_EQ(Recall(*keys, "p", "d", 1), (Strings{"a"}));
  EXPECT_TRUE(Recall(*keys, "unknown").empty());
  // Asked again after the flush: one key still, now the newest.
  keys->Remember("p", "d", "b", At(2000));
  EXPECT_EQ(Recall(*keys, "p"), (Strings{"b", "a"}));
}

TEST_F(ProgramKeysTest, WhatWaitsIsWrittenWhenStopped) {
  auto keys = Make();
  keys->Remember("p", "d", "a", At(1));
  keys->Stop();
  auto stored = store_->ReadProgramKeys("p", "d", 0);
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_EQ(stored->size(), 1u);
  EXPECT_EQ((*stored)[0].request, "a");
}

TEST_F(ProgramKeysTest, ALongRequestAndOnePastTheMemoryBoundAreNotRemembered) {
  ProgramKeys::Limits limits;
  limits.max_request_bytes = 8;
  limits.max_pending_bytes = 200;  // room for one short key and its costs
  auto keys = Make(limits);
  keys->Remember("p", "d", std::string(9, 'x'), At(1));
  keys->Remember("p", "d", "short", At(2));
  keys->Remember("p", "d", "full", At(3));
  EXPECT_EQ(keys->counts().not_remembered, 2);
  EXPECT_EQ(Recall(*keys, "p"), (Strings{"short"}));
  // The flush frees the memory.
  keys->Flush();
  keys->Remember("p", "d", "full", At(4));
  EXPECT_EQ(Recall(*keys, "p"), (Strings{"full", "short"}));
}

TEST_F(ProgramKeysTest, AProgramKeepsItsNewestKeys) {
  ProgramKeys::Limits limits;
  limits.max_keys_per_program = 2;
  auto keys = Make(limits);
  keys->Remember("p", "d", "k1", At(1));
  keys->Remember("p", "d", "k2", At(2));
  keys->Remember("p", "d", "k3", At(3));
  // Before the flush too, a recall gives at most the bound.
  EXPECT_EQ(Recall(*keys, "p"), (Strings{"k3", "k2"}));
  keys->Flush();
  auto stored = store_->ReadProgramKeys("p", "d", 0);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->size(), 2u);
  EXPECT_EQ(Recall(*keys, "p"), (Strings{"k3", "k2"}));
}

TEST_F(ProgramKeysTest, PastTheProgramBoundTheLeastRecentProgramIsForgotten) {
  // Two programs stored by an earlier daemon, read at the first flush.
  ASSERT_TRUE(store_->PutProgramKeys({{"old", "d", "x", 1},
                                      {"older", "d", "y", 0}},
                                     100)
                  .ok());
  ProgramKeys::Limits limits;
  limits.max_programs = 2;
  auto keys = Make(limits);
  keys->Remember("new", "d", "z", At(5));
  keys->Flush();
  EXPECT_EQ(keys->counts().programs_forgotten, 1);
  EXPECT_TRUE(Recall(*keys, "older").empty());
  EXPECT_EQ(Recall(*keys, "old"), (Strings{"x"}));
  EXPECT_EQ(Recall(*keys, "new"), (Strings{"z"}));
  // "old" asks again: now "new" is the least recent.
  keys->Remember("old", "d", "x", At(9));
  keys->Remember("third", "d", "w", At(8));
  keys->Flush();
  EXPECT_TRUE(Recall(*keys, "new").empty());
  EXPECT_EQ(Recall(*keys, "third"), (Strings{"w"}));
}

TEST_F(ProgramKeysTest, PastTheByteBoundTheLeastRecentProgramsAreForgotten) {
  ProgramKeys::Limits limits;
  limits.max_stored_bytes = 10;
  auto keys = Make(limits);
  keys->Remember("a", "d", "aaaa", At(1));
  keys->Remember("b", "d", "bbbb", At(2));
  keys->Flush();
  EXPECT_EQ(keys->counts().programs_forgotten, 0);
  keys->Remember("c", "d", "cccc", At(3));
  keys->Flush();
  // 12 bytes: "a" goes, 8 are left.
  EXPECT_EQ(keys->counts().programs_forgotten, 1);
  EXPECT_TRUE(Recall(*keys, "a").empty());
  EXPECT_EQ(Recall(*keys, "b"), (Strings{"bbbb"}));
  EXPECT_EQ(Recall(*keys, "c"), (Strings{"cccc"}));
}

}  // namespace
}  // namespace tunedb
