// A damaged database, as issue #15 found it: one byte flipped in one stored
// value of the SQLite file (it still passes quick_check). query prints the
// other records and names the bad one (exit 5); export fails naming it and
// writes nothing, or with --skip-bad writes the rest (exit 5); report
// aggregates the rest and names it (exit 5); doctor lists
// it; repair quarantines it and a later doctor is clean; lookup and tune of
// its key are a miss and a new search.
#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/file_bytes.h"
#include "tests/tuner/cli_test_fixture.h"
#include "tuner/exit_codes.h"

namespace tunedb::tuner {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kProblem[] =
    "op=fwd n=2 c=16 k=32 in=28x28 filt=3x3 pad=1x1 stride=1x1 dil=1x1 "
    "groups=1 mode=xcorr in_type=f32 out_type=f32 compute=f32 layout=nchw "
    "tc=1 tf32=1";

class BadRowsTest : public CliTest {
 protected:
  // Tunes four problems (batch 1 to 4), then flips one byte in the stored
  // row of batch 2 and restarts the daemon on the damaged file.
  // `in_key`: the byte is the batch size in the key text (" n=2" becomes
  // " n=3"); otherwise the first byte of the GPU model stored beside it.
  void StoreAndDamage(bool in_key) {
    for (int n = 1; n <= 4; ++n) {
      std::string problem = kProblem;
      problem.replace(problem.find(" n=2 "), 5, absl::StrCat(" n=", n, " "));
      ASSERT_EQ(Run({"tune", problem}).code, kExitOk);
    }
    std::string key_text;
    ASSERT_TRUE(server_->core()
                    .store()
                    .Query({}, 0, 0,
                           [&](const Record& r) {
                             if (r.key.problem.n == 2) {
                               key_text = r.key.ToText();
                               damaged_id_ = r.id;
                             }
                             return true;
                           })
                    .ok());
    ASSERT_FALSE(key_text.empty());
    StopServer();  // a clean shutdown checkpoints the WAL into the file
    // In the records table the key text is followed by the GPU model; in
    // its unique index, by the row id: this needle is the table's copy.
    const size_t at = in_key ? key_text.find(" n=2 ") + 3 : key_text.size();
    ASSERT_TRUE(
        testing_util::FlipByte(db_path_, key_text + "Simulated GPU", at));
    StartServer();
    ASSERT_TRUE(server_->core().store().QuickCheck().ok());
  }

  int64_t damaged_id_ = 0;
};

TEST_F(BadRowsTest, QueryPrintsTheGoodRecordsAndNamesTheBadOneWithExitPartial) {
  StoreAndDamage(/*in_key=*/true);
  CliResult r = Run({"query"});
  EXPECT_EQ(r.code, kExitPartial) << r.err;
  EXPECT_THAT(r.out, HasSubstr("3 record(s) matching"));
  EXPECT_THAT(r.err, HasSubstr(absl::StrCat(
                         "record ", damaged_id_,
                         " cannot be read: key_hash does not match key_text")));
  EXPECT_THAT(r.err, HasSubstr("1 unreadable record(s) skipped"));
  CliResult j = Run({"--json", "query"});
  EXPECT_EQ(j.code, kExitPartial);
  EXPECT_EQ(j.Json().size(), 3u);
}

// The damaged row cannot be matched against a filter, so it is left alone;
// the records the filter names are deleted all the same.
TEST_F(BadRowsTest, InvalidateDeletesTheMatchingRecordsAndLeavesTheBadRowAlone) {
  StoreAndDamage(/*in_key=*/true);
  CliResult r = Run({"invalidate", "n=1", "--yes"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("deleted 1 record(s)"));
  EXPECT_THAT(r.err, HasSubstr("1 stored record(s) cannot be read and are "
                               "left alone"));
  CliResult left = Run({"query"});
  EXPECT_THAT(left.out, HasSubstr("2 record(s) matching"));
  EXPECT_THAT(left.err, HasSubstr(absl::StrCat("record ", damaged_id_)));
}

TEST_F(BadRowsTest, ExportWithoutSkipBadFailsNamingTheRowAndWritesNothing) {
  StoreAndDamage(/*in_key=*/false);
  const std::string out = dir_ + "/export.jsonl";
  CliResult r = Run({"export", "-o", out});
  EXPECT_EQ(r.code, kExitUnreadable) << r.err;
  EXPECT_THAT(r.err, HasSubstr(absl::StrCat("record ", damaged_id_,
                                            " cannot be read: gpu_model")));
  EXPECT_THAT(r.err, HasSubstr("tunedb repair"));
  struct stat st;
  EXPECT_NE(stat(out.c_str(), &st), 0) << "a partial export was written";
  EXPECT_NE(stat((out + ".part").c_str(), &st), 0);
  CliResult to_stdout = Run({"export"});
  EXPECT_EQ(to_stdout.code, kExitUnreadable);
  EXPECT_EQ(to_stdout.out, "") << "lines were sent before the failure";
}

TEST_F(BadRowsTest, ExportSkipBadWritesTheOtherRecordsAndExitsPartial) {
  StoreAndDamage(/*in_key=*/false);
  const std::string out = dir_ + "/export.jsonl";
  CliResult r = Run({"export", "--skip-bad", "-o", out});
  EXPECT_EQ(r.code, kExitPartial) << r.err;
  EXPECT_THAT(r.out, HasSubstr("exported 3 record(s)"));
  EXPECT_THAT(r.err, HasSubstr(absl::StrCat("record ", damaged_id_,
                                            " cannot be read")));
  std::ifstream file(out);
  std::stringstream read;
  read << file.rdbuf();
  const std::string text = read.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3) << text;
  // What was exported imports back.
  StopServer();
  std::remove(db_path_.c_str());
  StartServer();
  CliResult imported = Run({"import", out});
  EXPECT_EQ(imported.code, kExitOk) << imported.err;
  EXPECT_EQ(StoredRecords(), 3);
}

TEST_F(BadRowsTest, ReportAggregatesTheOtherRecordsNamesTheBadOneAndExitsPartial) {
  StoreAndDamage(/*in_key=*/true);
  const std::string out = dir_ + "/report.html";
  CliResult r = Run({"report", "-o", out});
  EXPECT_EQ(r.code, kExitPartial) << r.err;
  EXPECT_THAT(r.err, HasSubstr("wrote " + out + ": 3 records"));
  EXPECT_THAT(r.err, HasSubstr(absl::StrCat(
                         "record ", damaged_id_,
                         " cannot be read: key_hash does not match key_text")));
  EXPECT_THAT(r.err, HasSubstr("1 unreadable record(s) skipped"));
}

TEST_F(BadRowsTest, DoctorListsTheBadRowAndRepairQuarantinesIt) {
  StoreAndDamage(/*in_key=*/true);
  CliResult doctor = Run({"--json", "doctor"});
  EXPECT_EQ(doctor.code, kExitError) << doctor.out << doctor.err;
  ASSERT_EQ(doctor.Json()["bad_rows"].size(), 1u) << doctor.out;
  EXPECT_EQ(doctor.Json()["bad_rows"][0]["id"], damaged_id_);
  EXPECT_THAT(doctor.Json()["bad_rows"][0]["reason"].get<std::string>(),
              HasSubstr("key_hash does not match key_text"));
  CliResult table = Run({"doctor"});
  EXPECT_THAT(table.out, HasSubstr("stored records readable"));
  EXPECT_THAT(table.out, HasSubstr(absl::StrCat("record ", damaged_id_)));

  CliResult repair = Run({"repair"});
  EXPECT_EQ(repair.code, kExitOk) << repair.err;
  EXPECT_THAT(repair.out,
              HasSubstr(absl::StrCat("quarantined 1 unreadable record(s): "
                                     "record ",
                                     damaged_id_)));
  CliResult clean = Run({"doctor"});
  EXPECT_EQ(clean.code, kExitOk) << clean.out;
  EXPECT_THAT(clean.out, HasSubstr("3 records read back"));
  EXPECT_EQ(Run({"query"}).code, kExitOk);
  EXPECT_EQ(Run({"repair"}).out,
            "every stored record reads back; nothing to repair\n");

  // The quarantine keeps the damaged bytes: " n=3" where " n=2" was stored.
  StopServer();
  sqlite3* db = nullptr;
  ASSERT_EQ(
      sqlite3_open_v2(db_path_.c_str(), &db, SQLITE_OPEN_READONLY, nullptr),
      SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(
      sqlite3_prepare_v2(db, "SELECT id, key_text FROM quarantined_records", -1,
                         &stmt, nullptr),
      SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int64(stmt, 0), damaged_id_);
  EXPECT_THAT(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 1)),
              HasSubstr(" n=3 "));
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

TEST_F(BadRowsTest, LookupOfABadRowIsAMissAndTuneSearchesAgainAndReplacesIt) {
  StoreAndDamage(/*in_key=*/false);
  CliResult lookup = Run({"lookup", kProblem});
  EXPECT_EQ(lookup.code, kExitNotFound) << lookup.err;
  const int64_t searches = SearchesRun();
  CliResult tune = Run({"--json", "tune", kProblem});
  ASSERT_EQ(tune.code, kExitOk) << tune.err;
  EXPECT_TRUE(tune.Json()["searched"].get<bool>());
  EXPECT_EQ(SearchesRun(), searches + 1);
  // The search's Put replaced the damaged row.
  EXPECT_EQ(Run({"query"}).code, kExitOk);
  EXPECT_EQ(Run({"lookup", kProblem}).code, kExitOk);
}

}  // namespace
}  // namespace tunedb::tuner
