// `tunedb report` against an in-process daemon on the simulated finder: a
// tuned model, served answers and a revalidation from a made-up older cuDNN
// version make a page with each section and the figures they should show.
#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/tuner/cli_test_fixture.h"
#include "tuner/exit_codes.h"

namespace tunedb::tuner {
namespace {

using ::testing::HasSubstr;

class ReportTest : public CliTest {
 protected:
  std::string ReadFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
};

TEST_F(ReportTest, ShowsRecordsCoverageRevalidationAndWorkspaces) {
  // resnet18's forward passes under a made-up cuDNN 9.14.0, the first
  // one's leader made slow there, revalidated for the daemon's 9.19.0.
  ASSERT_EQ(Run({"prewarm", "-m", "resnet18", "--batch", "2", "--ops", "fwd",
                 "--no-progress"})
                .code,
            kExitOk);
  int records = 0;
  const std::string old_version = ExportedAsCudnn914(
      [](int i, nlohmann::json& j) {
        if (i == 0) SlowFirstResult(j, 100);
      },
      &records);
  ASSERT_EQ(Run({"invalidate", "--all", "--yes"}).code, kExitOk);
  ASSERT_EQ(Run({"import", WriteFile("old.jsonl", old_version)}).code,
            kExitOk);
  CliResult revalidated =
      Run({"--json", "revalidate", "--from", "9.14", "--no-progress"});
  ASSERT_EQ(revalidated.code, kExitOk) << revalidated.err;
  const int64_t stored = StoredRecords();
  ASSERT_EQ(stored, 2 * records);

  const std::string out = dir_ + "/report.html";
  CliResult report = Run({"report", "-o", out, "-m", "resnet18", "--batch",
                          "2", "--ops", "fwd,bwd_data"});
  ASSERT_EQ(report.code, kExitOk) << report.err;
  EXPECT_THAT(report.err, HasSubstr("wrote " + out));
  const std::string html = ReadFile(out);
  for (const char* id : {"summary", "devices", "saved", "heuristic",
                         "predictions", "revalidation", "workspaces"}) {
    EXPECT_THAT(html, HasSubstr(std::string("<section id=") + id)) << id;
  }
  EXPECT_THAT(html, HasSubstr("<b>" + std::to_string(stored) +
                              "</b><span>records</span>"));
  EXPECT_THAT(html, HasSubstr("<td>9.14.0</td>"));
  EXPECT_THAT(html, HasSubstr("<td>9.19.0</td>"));
  // Each version stores every forward problem, none of the backward ones.
  EXPECT_THAT(html, HasSubstr(absl::StrCat(records, "/")));
  EXPECT_THAT(html, HasSubstr("<td>cuDNN 9.14.0</td><td>cuDNN 9.19.0</td>"));
  // The made-slow leader's choice changed back.
  EXPECT_THAT(html, HasSubstr("data-v=\"1\">1 ("));
  EXPECT_THAT(html, HasSubstr("data-figure=\"saved\""));
}

TEST_F(ReportTest, AnEmptyDatabaseStillMakesAPage) {
  const std::string out = dir_ + "/empty.html";
  CliResult report = Run({"report", "-o", out});
  ASSERT_EQ(report.code, kExitOk) << report.err;
  const std::string html = ReadFile(out);
  EXPECT_THAT(html, HasSubstr("<b>0</b><span>records</span>"));
  EXPECT_THAT(html, HasSubstr("No record was made by a revalidation."));
}

TEST_F(ReportTest, AFileThatCannotBeWrittenIsAnError) {
  CliResult report = Run({"report", "-o", dir_ + "/no/such/dir/r.html"});
  EXPECT_EQ(report.code, kExitError);
  EXPECT_THAT(report.err, HasSubstr("cannot write"));
}

}  // namespace
}  // namespace tunedb::tuner
