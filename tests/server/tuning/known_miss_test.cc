// A Lookup of a key not stored reads the store once: the record cache keeps
// that nothing is stored (RecordCache::PutRead), and every write of the
// core (a search's record, an import, a delete) makes the key found, or
// missed, at once.
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "server/finder/simulated_finder.h"
#include "server/tuning/tuning_core.h"
#include "tests/server/test_util.h"

namespace tunedb {
namespace {

using testing_util::TestProblem;

class KnownMissTest : public testing::Test {
 protected:
  void SetUp() override {
    Store::Options so;
    so.path = ":memory:";
    auto store = Store::Open(so);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    auto o = SimulatedFinder::Options::Parse("");
    ASSERT_TRUE(o.ok()) << o.status();
    finder_ = std::make_unique<SimulatedFinder>(*o);
    auto core = TuningCore::Create({}, store_.get(), finder_.get());
    ASSERT_TRUE(core.ok()) << core.status();
    core_ = std::move(*core);
  }
  void TearDown() override { core_->Shutdown(absl::Seconds(5)); }

  ValidKey Key(int64_t n) {
    return ValidKey::Make(ProblemKey{core_->devices()[0].key, TestProblem(n)})
        .value();
  }
  absl::StatusOr<LookupAnswer> Lookup(int64_t n) {
    return core_->Lookup(Key(n), {});
  }
  absl::StatusOr<TuneAnswer> Tune(int64_t n) {
    return core_->Tune(TestProblem(n), std::nullopt, {}, TuneMode{},
                       absl::Now() + absl::Seconds(30));
  }
  // Deletes the record of batch `n`.
  void Delete(int64_t n) {
    RecordFilter filter;
    filter.fields["hash"] = Key(n).HashText();
    ASSERT_EQ(core_->Invalidate(filter).value(), 1);
  }

  std::unique_ptr<Store> store_;
  std::unique_ptr<SimulatedFinder> finder_;
  std::unique_ptr<TuningCore> core_;
};

TEST_F(KnownMissTest, AKeyTunedAfterAMissIsFoundAtOnce) {
  EXPECT_TRUE(absl::IsNotFound(Lookup(8).status()));
  EXPECT_TRUE(absl::IsNotFound(Lookup(8).status()));  // the kept miss
  absl::StatusOr<TuneAnswer> tuned = Tune(8);
  ASSERT_TRUE(tuned.ok()) << tuned.status();
  absl::StatusOr<LookupAnswer> found = Lookup(8);
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->record->id, tuned->record->id);
}

TEST_F(KnownMissTest, AKeyImportedAfterAMissIsFoundAtOnce) {
  absl::StatusOr<TuneAnswer> tuned = Tune(8);
  ASSERT_TRUE(tuned.ok()) << tuned.status();
  const Record record = *tuned->record;
  Delete(8);
  EXPECT_TRUE(absl::IsNotFound(Lookup(8).status()));
  EXPECT_TRUE(absl::IsNotFound(Lookup(8).status()));  // the kept miss
  auto import = core_->BeginImport();
  ASSERT_TRUE(import.ok()) << import.status();
  ASSERT_TRUE((*import)->Add(record).ok());
  ASSERT_EQ(core_->CommitImport(**import, ImportTag{}).value(), 1);
  absl::StatusOr<LookupAnswer> found = Lookup(8);
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->record->results.size(), record.results.size());
}

TEST_F(KnownMissTest, AKeyDeletedAfterAHitIsAMissAtOnce) {
  ASSERT_TRUE(Tune(8).ok());
  ASSERT_TRUE(Lookup(8).ok());
  Delete(8);
  EXPECT_TRUE(absl::IsNotFound(Lookup(8).status()));
}

TEST_F(KnownMissTest, AMissOfOneKeyLeavesTheOthersFound) {
  ASSERT_TRUE(Tune(8).ok());
  EXPECT_TRUE(absl::IsNotFound(Lookup(16).status()));
  EXPECT_TRUE(Lookup(8).ok());
  EXPECT_TRUE(absl::IsNotFound(Lookup(16).status()));
}

}  // namespace
}  // namespace tunedb
