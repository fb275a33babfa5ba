// ExpectSame: two predictions are the same answer (configs in order, the
// voting sources, distance and confidence), for the tests that check one
// way of predicting against another.
#ifndef TUNEDB_TESTS_SERVER_TUNING_EXPECT_SAME_PREDICTION_H_
#define TUNEDB_TESTS_SERVER_TUNING_EXPECT_SAME_PREDICTION_H_

#include <optional>
#include <string>

#include "gtest/gtest.h"
#include "server/tuning/shape_predictor.h"

namespace tunedb::testing_util {

inline void ExpectSame(const std::optional<Prediction>& want,
                       const std::optional<Prediction>& got,
                       const std::string& at) {
  ASSERT_EQ(want.has_value(), got.has_value()) << at;
  if (!want) return;
  ASSERT_EQ(want->candidates.size(), got->candidates.size()) << at;
  for (size_t i = 0; i < want->candidates.size(); ++i) {
    EXPECT_EQ(ConfigIdOf(want->candidates[i]), ConfigIdOf(got->candidates[i]))
        << at;
  }
  EXPECT_EQ(want->sources, got->sources) << at;
  EXPECT_EQ(want->distance, got->distance) << at;
  EXPECT_EQ(want->confidence, got->confidence) << at;
}

}  // namespace tunedb::testing_util

#endif  // TUNEDB_TESTS_SERVER_TUNING_EXPECT_SAME_PREDICTION_H_
