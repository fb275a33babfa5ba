// WorkerCommand: the supervisor's command line is what the worker parses.
#include "server/worker/worker_command.h"

#include <unistd.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunedb {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(WorkerCommandTest, CudnnWorkerGetsFinderDeviceAndSocket) {
  WorkerCommand command;
  command.finder = "cudnn";
  command.device = 2;
  command.simulated = "ignored for cudnn";
  EXPECT_THAT(command.ToArgs(),
              ElementsAre("--finder=cudnn", "--device=2", "--fd=3"));
}

TEST(WorkerCommandTest, SimulatedWorkerAlsoGetsItsOptions) {
  WorkerCommand command;
  command.finder = "simulated";
  command.device = -1;
  command.simulated = "devices=2;slow_ms=50";
  EXPECT_THAT(command.ToArgs(),
              ElementsAre("--finder=simulated", "--device=-1", "--fd=3",
                          "--simulated=devices=2;slow_ms=50"));
}

TEST(WorkerCommandTest, ParseReadsWhatToArgsWrites) {
  WorkerCommand command;
  command.finder = "simulated";
  command.device = 5;
  command.fd = 7;
  command.simulated = "fail=1";
  absl::StatusOr<WorkerCommand> parsed = WorkerCommand::Parse(command.ToArgs());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->finder, "simulated");
  EXPECT_EQ(parsed->device, 5);
  EXPECT_EQ(parsed->fd, 7);
  EXPECT_EQ(parsed->simulated, "fail=1");
}

TEST(WorkerCommandTest, ParseOfNothingGivesTheDefaults) {
  absl::StatusOr<WorkerCommand> parsed = WorkerCommand::Parse({});
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->finder, "cudnn");
  EXPECT_EQ(parsed->device, 0);
  EXPECT_EQ(parsed->fd, 3);
  EXPECT_EQ(parsed->simulated, "");
}

TEST(WorkerCommandTest, ParseRejectsBadNumbersAndUnknownArguments) {
  absl::StatusOr<WorkerCommand> device = WorkerCommand::Parse({"--device=x"});
  EXPECT_TRUE(absl::IsInvalidArgument(device.status()));
  EXPECT_THAT(device.status().message(), HasSubstr("bad --device: x"));
  absl::StatusOr<WorkerCommand> fd = WorkerCommand::Parse({"--fd="});
  EXPECT_TRUE(absl::IsInvalidArgument(fd.status()));
  EXPECT_THAT(fd.status().message(), HasSubstr("bad --fd"));
  absl::StatusOr<WorkerCommand> unknown = WorkerCommand::Parse({"--gpu=0"});
  EXPECT_TRUE(absl::IsInvalidArgument(unknown.status()));
  EXPECT_THAT(unknown.status().message(),
              HasSubstr("unknown argument: --gpu=0"));
}

TEST(WorkerCommandTest, DefaultWorkerPathIsBesideThisExecutable) {
  const std::string dir = ExecutableDir();
  ASSERT_FALSE(dir.empty());
  EXPECT_EQ(dir.front(), '/') << dir;
  EXPECT_EQ(DefaultWorkerPath(), dir + "/tunedb-worker");
  EXPECT_EQ(::access((dir + "/worker_command_test").c_str(), X_OK), 0)
      << "this test's own binary is in " << dir;
}

}  // namespace
}  // namespace tunedb
