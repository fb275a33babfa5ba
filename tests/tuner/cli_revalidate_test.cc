// `tunedb revalidate` against an in-process daemon on the simulated finder
// (cuDNN 9.19.0): records of a made-up older version (the daemon's own,
// exported, renamed, one ranking changed and one made unsupported,
// imported back) are revalidated for 9.19 once the daemon's own are gone.
#include <sstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/tuner/cli_test_fixture.h"
#include "tuner/exit_codes.h"

namespace tunedb::tuner {
namespace {

using ::testing::HasSubstr;

class RevalidateTest : public CliTest {
 protected:
  // Stores the forward problems of resnet18 as cuDNN 9.14.0's only, the
  // first one's fastest result 100 times slower there (its old choice is
  // another algorithm) and the second one unsupported there; returns how
  // many.
  int StoreOldVersion() {
    EXPECT_EQ(Run({"prewarm", "--model", "resnet18", "--batch", "2", "--ops",
                   "fwd"})
                  .code,
              kExitOk);
    int records = 0;
    const std::string old_version = ExportedAsCudnn914(
        [](int i, nlohmann::json& j) {
          if (i == 0) {
            SlowFirstResult(j, 100);
          } else if (i == 1) {
            for (auto& r : j["results"]) r["status"] = "not_supported";
          }
        },
        &records);
    EXPECT_EQ(Run({"invalidate", "--all", "--yes"}).code, kExitOk);
    EXPECT_EQ(Run({"import", WriteFile("old.jsonl", old_version)}).code,
              kExitOk);
    return records;
  }
};

TEST_F(RevalidateTest, KeepsChangesOrSearchesEachKeyAndSaysWhereItCameFrom) {
  const int records = StoreOldVersion();
  ASSERT_GT(records, 3);
  const int64_t before = SearchesRun();
  CliResult r = Run({"--json", "revalidate", "--from", "9.14", "--no-progress"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const nlohmann::json j = r.Json();
  EXPECT_EQ(j["old_records"], records);
  EXPECT_EQ(j["already_stored"], 0);
  // The made-slow leader was re-timed: the old choice changed back; the
  // unsupported one had nothing to re-time.
  EXPECT_EQ(j["changed"], 1);
  EXPECT_EQ(j["full_searches"], 1);
  EXPECT_EQ(j["kept"], records - 2);
  EXPECT_EQ(j["failed"], 0);
  EXPECT_GT(j["median_speedup_of_changed"].get<double>(), 1.0);
  // One search per key: the one with nothing to re-time went straight to
  // its full search.
  EXPECT_EQ(SearchesRun() - before, records);

  // The new records say where they came from; the old ones are untouched.
  CliResult fresh = Run({"--json", "query", "--filter", "cudnn=9.19.0"});
  ASSERT_EQ(fresh.code, kExitOk) << fresh.err;
  int revalidated = 0;
  for (const auto& rec : fresh.Json()) {
    if (rec["revalidated_from_cudnn"] == 91400) ++revalidated;
  }
  EXPECT_EQ(revalidated, records - 1);
  CliResult old = Run({"--json", "query", "--filter", "cudnn=9.14.0"});
  ASSERT_EQ(old.code, kExitOk) << old.err;
  EXPECT_EQ(old.Json().size(), static_cast<size_t>(records));

  // Run again: everything is stored, nothing is searched (a run that was
  // interrupted resumes the same way).
  const int64_t after = SearchesRun();
  CliResult again = Run({"--json", "revalidate", "--from", "9.14.0",
                         "--to", "9.19", "--no-progress"});
  ASSERT_EQ(again.code, kExitOk) << again.err;
  EXPECT_EQ(again.Json()["already_stored"], records);
  EXPECT_EQ(SearchesRun(), after);

  CliResult stats = Run({"stats"});
  EXPECT_THAT(stats.out, HasSubstr(absl::StrCat(
                             records - 1, " re-timed an older version's")));
}

TEST_F(RevalidateTest, WithAModelOnlyItsLayersAreRevalidated) {
  const int records = StoreOldVersion();  // resnet18's forward problems
  CliResult none = Run({"--json", "revalidate", "--from", "9.14",
                        "--no-progress", "--model", "vgg16"});
  ASSERT_EQ(none.code, kExitOk) << none.err;
  EXPECT_EQ(none.Json()["old_records"], 0);
  CliResult r = Run({"--json", "revalidate", "--from", "9.14",
                     "--no-progress", "--model", "resnet18"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.Json()["old_records"], records);
  EXPECT_EQ(r.Json()["changed"], 1);
}

TEST_F(RevalidateTest, TheTableSaysWhatStoodAndWhatItCost) {
  StoreOldVersion();
  CliResult r = Run({"revalidate", "--from", "9.14", "--no-progress"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("revalidated from cuDNN 9.14.0"));
  EXPECT_THAT(r.out, HasSubstr("choice changed"));
  EXPECT_THAT(r.out, HasSubstr("full search needed"));
  EXPECT_THAT(r.out, HasSubstr("legacy fwd f32"));
}

TEST_F(RevalidateTest, VersionsThatCannotBeUsedAreRefusedClearly) {
  for (const char* bad : {"9", "latest", "9.14.0.1"}) {
    CliResult r = Run({"revalidate", "--from", bad});
    EXPECT_EQ(r.code, kExitUsage) << bad;
    EXPECT_THAT(r.err, HasSubstr("cannot be read")) << bad;
  }
  CliResult same = Run({"revalidate", "--from", "9.19", "--to", "9.19.0"});
  EXPECT_EQ(same.code, kExitUsage);
  EXPECT_THAT(same.err, HasSubstr("same version"));
  // The daemon serves 9.19 only: there is nothing to revalidate for 9.14.
  CliResult none = Run({"revalidate", "--from", "9.19"});
  EXPECT_EQ(none.code, kExitUsage);
  EXPECT_THAT(none.err, HasSubstr("cuDNN version asked for"));
  EXPECT_THAT(none.err, HasSubstr("other than cuDNN 9.19.0 (--from)"));
}

TEST_F(RevalidateTest, AVersionNoGpuServesIsNamedNotAnEmptyGpuFlag) {
  CliResult r = Run({"revalidate", "--from", "9.14", "--to", "9.99"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("cuDNN 9.99.0 (--to)"));
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("--gpu ''")));
}

// After a driver upgrade: the daemon's GPU reports driver 580.65.06, and
// its records of resnet18's forward problems were measured under 575.57.08
// (the daemon's own, exported, the driver renamed, one ranking changed and
// one made unsupported, imported back).
class RevalidateDriverTest : public CliTest {
 protected:
  static constexpr char kServing[] = "580.65.06";
  static constexpr char kOld[] = "575.57.08";
  void SetUp() override {
    CliTest::SetUp();
    StartServer(absl::StrCat("driver=", kServing));
  }
  // Stores the records as the old driver's; returns how many.
  int StoreUnderOldDriver() {
    EXPECT_EQ(Run({"prewarm", "--model", "resnet18", "--batch", "2", "--ops",
                   "fwd"})
                  .code,
              kExitOk);
    CliResult exported = Run({"export"});
    EXPECT_EQ(exported.code, kExitOk) << exported.err;
    std::istringstream lines(exported.out);
    std::string line, old;
    int records = 0;
    while (std::getline(lines, line)) {
      nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded() || !j.contains("key")) continue;
      EXPECT_EQ(j["driver_version"], kServing);
      j["driver_version"] = kOld;
      if (records == 0) {
        SlowFirstResult(j, 100);
      } else if (records == 1) {
        for (auto& r : j["results"]) r["status"] = "not_supported";
      }
      ++records;
      old += j.dump() + "\n";
    }
    EXPECT_EQ(Run({"invalidate", "--all", "--yes"}).code, kExitOk);
    EXPECT_EQ(Run({"import", WriteFile("old.jsonl", old)}).code, kExitOk);
    return records;
  }
};

TEST_F(RevalidateDriverTest,
       ReTimesTheOlderDriversRecordsInPlaceAndSaysWhatStood) {
  const int records = StoreUnderOldDriver();
  ASSERT_GT(records, 3);
  const int64_t before = SearchesRun();
  CliResult r = Run({"--json", "revalidate", "--driver", "--no-progress"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const nlohmann::json j = r.Json();
  EXPECT_EQ(j["from_driver"], "");
  EXPECT_EQ(j["to_driver"], kServing);
  EXPECT_EQ(j["old_records"], records);
  EXPECT_EQ(j["changed"], 1);
  EXPECT_EQ(j["full_searches"], 1);
  EXPECT_EQ(j["kept"], records - 2);
  EXPECT_EQ(j["failed"], 0);
  EXPECT_GT(j["median_speedup_of_changed"].get<double>(), 1.0);
  EXPECT_EQ(SearchesRun() - before, records);

  // Each key holds one record: the re-timed one, under the new driver.
  EXPECT_EQ(StoredRecords(), records);
  CliResult now = Run({"--json", "query"});
  ASSERT_EQ(now.code, kExitOk) << now.err;
  int retimed = 0;
  std::string a_retimed_key;
  for (const auto& rec : now.Json()) {
    EXPECT_EQ(rec["driver_version"], kServing);
    if (rec["revalidated_from_driver"] == kOld) {
      ++retimed;
      a_retimed_key = rec["key"].get<std::string>();
    }
  }
  EXPECT_EQ(retimed, records - 1);
  CliResult show = Run({"show", a_retimed_key});
  ASSERT_EQ(show.code, kExitOk) << show.err;
  EXPECT_THAT(show.out, HasSubstr("revalidated from driver 575.57.08"));

  // Run again: nothing is left under the old driver, nothing is searched.
  const int64_t after = SearchesRun();
  CliResult again = Run({"--json", "revalidate", "--driver", "--no-progress"});
  ASSERT_EQ(again.code, kExitOk) << again.err;
  EXPECT_EQ(again.Json()["old_records"], 0);
  EXPECT_EQ(SearchesRun(), after);
}

TEST_F(RevalidateDriverTest, FromDriverTakesThatDriversRecordsOnly) {
  const int records = StoreUnderOldDriver();
  CliResult other = Run({"--json", "revalidate", "--from-driver", "570.1",
                         "--no-progress"});
  ASSERT_EQ(other.code, kExitOk) << other.err;
  EXPECT_EQ(other.Json()["old_records"], 0);
  CliResult r = Run({"revalidate", "--driver", "--from-driver", "575.57.8",
                     "--no-progress"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("revalidated from driver 575.57.8"));
  EXPECT_THAT(r.out, HasSubstr("driver 580.65.06"));
  EXPECT_THAT(r.out, HasSubstr("choice changed"));
  EXPECT_THAT(r.out, HasSubstr("full search needed"));
  EXPECT_THAT(r.err, HasSubstr(absl::StrCat(records, " records")));
}

TEST_F(RevalidateDriverTest, BadDriverFlagsAreRefusedAsBadUsage) {
  CliResult unreadable = Run({"revalidate", "--from-driver", "latest"});
  EXPECT_EQ(unreadable.code, kExitUsage);
  EXPECT_THAT(unreadable.err, HasSubstr("--from-driver"));
  EXPECT_THAT(unreadable.err, HasSubstr("cannot be read"));
  for (const char* not_older : {"580.65.06", "590.1"}) {
    CliResult r = Run({"revalidate", "--from-driver", not_older});
    EXPECT_EQ(r.code, kExitUsage) << not_older;
    EXPECT_THAT(r.err, HasSubstr("not an older driver")) << not_older;
  }
  CliResult other_form =
      Run({"revalidate", "--from-driver", "cuda-driver-api-12.8"});
  EXPECT_EQ(other_form.code, kExitUsage);
  for (const std::vector<std::string>& both :
       {std::vector<std::string>{"revalidate", "--from", "9.14", "--driver"},
        std::vector<std::string>{"revalidate", "--from", "9.14",
                                 "--from-driver", "575.57.08"}}) {
    CliResult r = Run(both);
    EXPECT_EQ(r.code, kExitUsage);
    EXPECT_THAT(r.err, HasSubstr("cannot be combined"));
  }
  CliResult neither = Run({"revalidate"});
  EXPECT_EQ(neither.code, kExitUsage);
  EXPECT_THAT(neither.err, HasSubstr("--from VERSION"));
  CliResult to = Run({"revalidate", "--driver", "--to", "9.19"});
  EXPECT_EQ(to.code, kExitUsage);
  EXPECT_EQ(SearchesRun(), 0);
}

TEST_F(RevalidateDriverTest, AGpuWhoseDriverCannotBeOrderedIsRefused) {
  StartServer();  // the simulated finder's default: no driver version
  CliResult r = Run({"revalidate", "--driver"});
  EXPECT_NE(r.code, kExitOk);
  EXPECT_THAT(r.err, HasSubstr("cannot be ordered"));
}

TEST_F(RevalidateDriverTest, TheHelpSaysTheOldRecordsAreReplaced) {
  CliResult r = Run({"revalidate", "--help"});
  EXPECT_THAT(r.out + r.err, HasSubstr("--driver"));
  EXPECT_THAT(r.out + r.err, HasSubstr("--from-driver"));
  EXPECT_THAT(r.out + r.err, HasSubstr("tunedb export"));
  EXPECT_THAT(r.out + r.err, HasSubstr("superseded_records"));
}

}  // namespace
}  // namespace tunedb::tuner
