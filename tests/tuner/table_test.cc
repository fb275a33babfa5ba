// Aligned tables, CSV escaping and the progress line.
#include "tuner/table.h"

#include <sstream>

#include "gtest/gtest.h"
#include "tuner/progress_bar.h"

namespace tunedb::tuner {
namespace {

TEST(TableTest, AlignsColumns) {
  Table t({"name", "ms>"});
  t.AddRow({"a", "1.5"});
  t.AddRow({"longer", "12.25"});
  std::ostringstream out;
  t.Print(out);
  EXPECT_EQ(out.str(),
            "name       ms\n"
            "------  -----\n"
            "a         1.5\n"
            "longer  12.25\n");
}

TEST(TableTest, Csv) {
  Table t({"a", "b"});
  t.AddRow({"x,y", "say \"hi\""});
  std::ostringstream out;
  t.PrintCsv(out);
  EXPECT_EQ(out.str(), "a,b\n\"x,y\",\"say \"\"hi\"\"\"\n");
}

TEST(ProgressBarTest, PlainLinesWhenNotATerminal) {
  std::ostringstream out;
  ProgressBar bar(out, /*tty=*/false, "tuning", 10,
                  std::chrono::milliseconds(0));
  bar.Update(5, "5 searched");
  bar.Finish("10 searched");
  const std::string text = out.str();
  EXPECT_EQ(text.find('\r'), std::string::npos);
  EXPECT_NE(text.find("tuning 5/10 (50%)"), std::string::npos) << text;
  EXPECT_NE(text.find("5 searched"), std::string::npos);
  EXPECT_NE(text.find("ETA"), std::string::npos);
}

TEST(ProgressBarTest, RedrawsOnATerminal) {
  std::ostringstream out;
  ProgressBar bar(out, /*tty=*/true, "tuning", 4);
  bar.Update(1);
  bar.Finish();
  EXPECT_EQ(out.str().front(), '\r');
  EXPECT_NE(out.str().find("[######"), std::string::npos);
}

TEST(ProgressBarTest,
     AWaitAfterTheCountedPartSaysWhatIsAwaitedNotOneHundredPercent) {
  for (bool tty : {false, true}) {
    std::ostringstream out;
    ProgressBar bar(out, tty, "sending", 4, std::chrono::milliseconds(0));
    bar.Update(4);
    bar.StartWaiting("committing 4 records");
    bar.Update(4);
    bar.Finish();
    const std::string text = out.str();
    const size_t sent = text.rfind("4/4 (100%)");
    const size_t waiting = text.find("committing 4 records...");
    ASSERT_NE(sent, std::string::npos) << text;
    ASSERT_NE(waiting, std::string::npos) << text;
    EXPECT_LT(sent, waiting) << text;
    // The counted part ends on its own line; the wait line has no bar.
    EXPECT_NE(text.substr(sent, waiting - sent).find('\n'), std::string::npos);
    EXPECT_EQ(text.find("(100%)", waiting), std::string::npos) << text;
    EXPECT_EQ(text.back(), '\n');
  }
}

TEST(ProgressBarTest, FormatSeconds) {
  EXPECT_EQ(FormatSeconds(3.21), "3.2s");
  EXPECT_EQ(FormatSeconds(65), "1m05s");
  EXPECT_EQ(FormatSeconds(7380), "2h03m");
}

}  // namespace
}  // namespace tunedb::tuner
