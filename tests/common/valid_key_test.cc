// ValidKey: validated once, text and hash computed once and equal to the
// key's own.
#include "common/valid_key.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/test_values.h"

namespace tunedb {
namespace {

using ::testing::HasSubstr;

TEST(ValidKeyTest, CarriesTheKeysTextAndHash) {
  const ProblemKey key = testing_util::StemKey(16);
  absl::StatusOr<ValidKey> valid = ValidKey::Make(key);
  ASSERT_TRUE(valid.ok()) << valid.status();
  EXPECT_EQ(valid->key(), key);
  EXPECT_EQ(valid->device(), key.device);
  EXPECT_EQ(valid->problem(), key.problem);
  EXPECT_EQ(valid->text(), key.ToText());
  EXPECT_EQ(valid->hash(), key.Hash());
  EXPECT_EQ(valid->HashText(), key.HashText());
}

TEST(ValidKeyTest, FromValidatedIsTheSameValue) {
  const ProblemKey key = testing_util::TestKey(3);
  const ValidKey valid = ValidKey::FromValidated(key);
  EXPECT_EQ(valid.text(), ValidKey::Make(key)->text());
  EXPECT_EQ(valid.hash(), key.Hash());
}

TEST(ValidKeyTest, MakeRejectsAnInvalidKeyNamingTheField) {
  ProblemKey key = testing_util::TestKey(3);
  key.problem.groups = 5;  // does not divide c=64
  absl::StatusOr<ValidKey> valid = ValidKey::Make(key);
  EXPECT_TRUE(absl::IsInvalidArgument(valid.status()));
  EXPECT_THAT(std::string(valid.status().message()), HasSubstr("groups"));
  key = testing_util::TestKey(3);
  key.device.gpu_model.clear();
  EXPECT_THAT(std::string(ValidKey::Make(key).status().message()),
              HasSubstr("gpu"));
}

// Stored rows carry this hash: its values are pinned. (The basis is the
// historical 1469598103934665603, not FNV's 14695981039346656037.)
TEST(ValidKeyTest, KeyHashValuesArePinned) {
  EXPECT_EQ(KeyTextHash(""), 1469598103934665603ULL);
  EXPECT_EQ(KeyTextHash("a"), 0x44bd8ad473cd9906ULL);
  EXPECT_EQ(KeyHashText(0x44bd8ad473cd9906ULL), "44bd8ad473cd9906");
  EXPECT_EQ(KeyHashText(1), "0000000000000001");
}

}  // namespace
}  // namespace tunedb
