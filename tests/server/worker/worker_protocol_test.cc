// The worker protocol's conversions: what a worker's search reports reaches
// the daemon whole.
#include "server/worker/worker_protocol.h"

#include "gtest/gtest.h"

namespace tunedb {
namespace {

TEST(WorkerProtocolTest, SearchPhasesAndPlansLoadedCrossTheWire) {
  SearchResult sent;
  sent.repeats = 7;
  sent.verified = true;
  sent.phases.setup_ms = 1.5;
  sent.phases.find_ms = 20;
  sent.phases.heuristics_ms = 2.25;
  sent.phases.screen_ms = 3;
  sent.phases.retime_ms = 4;
  sent.phases.verify_ms = 0.5;
  sent.phases.plans_loaded = 3;
  worker::Response wire;
  ToProto(sent, &wire);
  absl::StatusOr<SearchResult> got = FromProto(wire);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->repeats, 7);
  EXPECT_TRUE(got->verified);
  EXPECT_DOUBLE_EQ(got->phases.setup_ms, 1.5);
  EXPECT_DOUBLE_EQ(got->phases.find_ms, 20);
  EXPECT_DOUBLE_EQ(got->phases.heuristics_ms, 2.25);
  EXPECT_DOUBLE_EQ(got->phases.screen_ms, 3);
  EXPECT_DOUBLE_EQ(got->phases.retime_ms, 4);
  EXPECT_DOUBLE_EQ(got->phases.verify_ms, 0.5);
  EXPECT_EQ(got->phases.plans_loaded, 3);
}

TEST(WorkerProtocolTest, AResponseWithoutPhasesReadsAsNoPhases) {
  absl::StatusOr<SearchResult> got = FromProto(worker::Response());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->phases.find_ms, 0);
  EXPECT_EQ(got->phases.plans_loaded, 0);
}

}  // namespace
}  // namespace tunedb
