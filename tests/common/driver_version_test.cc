// DriverVersion: the two forms of a record's driver text, and their order.
#include "common/driver_version.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tunedb {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(DriverVersionTest, ReadsTheKernelModulesDottedNumbers) {
  absl::StatusOr<DriverVersion> v = DriverVersion::Parse("580.65.06");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->form(), DriverVersion::Form::kKernelModule);
  EXPECT_THAT(v->numbers(), ElementsAre(580, 65, 6));
  EXPECT_EQ(v->text(), "580.65.06");
  EXPECT_TRUE(DriverVersion::Parse("575.57").ok());
}

TEST(DriverVersionTest, ReadsTheCudaDriverApiForm) {
  absl::StatusOr<DriverVersion> v =
      DriverVersion::Parse("cuda-driver-api-13.0");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->form(), DriverVersion::Form::kCudaDriverApi);
  EXPECT_THAT(v->numbers(), ElementsAre(13, 0));
}

TEST(DriverVersionTest, TextOfNeitherFormIsRefusedSayingWhatIsRead) {
  for (const char* bad :
       {"", "simulated", "580", "580.", ".65", "580.65.06.1.2", "580.6x.06",
        "-580.65", "580 .65", "cuda-driver-api-13", "cuda-driver-api-13.0.1",
        "cuda-driver-api-", "1234567890.1"}) {
    absl::StatusOr<DriverVersion> v = DriverVersion::Parse(bad);
    ASSERT_FALSE(v.ok()) << bad;
    EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(v.status().message(), HasSubstr("cannot be read")) << bad;
    EXPECT_THAT(v.status().message(), HasSubstr("cuda-driver-api-")) << bad;
  }
}

TEST(DriverVersionTest, VersionsOfOneFormAreOrderedNumberByNumber) {
  auto v = [](const char* text) { return *DriverVersion::Parse(text); };
  EXPECT_TRUE(v("575.57.08").OlderThan(v("580.65.06")));
  EXPECT_TRUE(v("580.9.1").OlderThan(v("580.65.06")));  // not as text
  EXPECT_FALSE(v("580.65.06").OlderThan(v("575.57.08")));
  EXPECT_EQ(v("580.65.06").Compare(v("580.65.6")), 0);
  EXPECT_EQ(v("580.65").Compare(v("580.65.0")), 0);
  EXPECT_LT(*v("580.65").Compare(v("580.65.1")), 0);
  EXPECT_TRUE(v("cuda-driver-api-12.8").OlderThan(v("cuda-driver-api-13.0")));
}

TEST(DriverVersionTest, VersionsOfTwoFormsHaveNoOrder) {
  const DriverVersion kernel = *DriverVersion::Parse("580.65.06");
  const DriverVersion api = *DriverVersion::Parse("cuda-driver-api-13.0");
  EXPECT_FALSE(kernel.Compare(api).has_value());
  EXPECT_FALSE(kernel.OlderThan(api));
  EXPECT_FALSE(api.OlderThan(kernel));
}

TEST(DriverVersionTest, OnlyAReadableOlderDriverOfTheSameFormIsOlder) {
  EXPECT_TRUE(DriverIsOlder("575.57.08", "580.65.06"));
  EXPECT_FALSE(DriverIsOlder("580.65.06", "580.65.06"));
  EXPECT_FALSE(DriverIsOlder("590.1", "580.65.06"));
  EXPECT_FALSE(DriverIsOlder("simulated", "580.65.06"));
  EXPECT_FALSE(DriverIsOlder("575.57.08", "simulated"));
  EXPECT_FALSE(DriverIsOlder("cuda-driver-api-12.8", "580.65.06"));
}

}  // namespace
}  // namespace tunedb
