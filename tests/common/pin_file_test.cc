#include "common/pin_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>

#include <fstream>
#include <sstream>
#include <string>

#include "common/record_results.h"
#include "common/sealed_plan.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_values.h"

namespace tunedb {
namespace {

using testing_util::TempDir;
using testing_util::TestDevice;
using testing_util::TestProblem;

PinEntry Legacy(int64_t n, bool det, int algo) {
  PinEntry e;
  e.problem = TestProblem(n);
  e.slot.deterministic_only = det;
  e.source = PinnedSource::kTuned;
  e.answer.algo = algo;
  e.answer.math_type = MathType::kTensorOp;
  e.answer.workspace_bytes = 4096;
  e.answer.deterministic = det;
  return e;
}

PinEntry Graph(int64_t n) {
  PinEntry e;
  e.problem = TestProblem(n);
  e.problem.api = ConvApi::kGraph;
  e.problem.alignment = 16;
  e.slot.excluded_numerical_notes = 4;
  e.slot.max_workspace_bytes = 0;
  e.source = PinnedSource::kTuned;
  e.answer.algo = 70;
  e.answer.knobs = {Knob{3, 2}, Knob{9, 1}};
  e.answer.numerical_notes = 1;
  e.answer.behavior_notes = 2;
  e.answer.launch.median_ms = 0.25;
  e.answer.launch.samples = 1;
  return e;
}

PinFile APin() {
  PinFile pin;
  pin.device = TestDevice();
  pin.driver_version = 13000;
  pin.made_by = "tunedb run";
  pin.entries = {Legacy(8, false, 1), Legacy(8, true, 0), Graph(8)};
  PinEntry none;
  none.problem = TestProblem(16);
  none.source = PinnedSource::kNone;
  pin.entries.push_back(none);
  return pin;
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(PinFileTest, FormattedThenParsedGivesTheSamePin) {
  const PinFile pin = APin();
  absl::StatusOr<PinFile> back = ParsePin(FormatPin(pin));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->device, pin.device);
  EXPECT_EQ(back->driver_version, 13000);
  EXPECT_EQ(back->made_by, "tunedb run");
  ASSERT_EQ(back->entries.size(), 4u);
  // Sorted: the problem text of n=16 sorts after n=8's; graph before legacy.
  bool saw_graph = false;
  for (const PinEntry& e : back->entries) {
    if (e.problem.api != ConvApi::kGraph) continue;
    saw_graph = true;
    EXPECT_EQ(e.answer.algo, 70);
    EXPECT_EQ(e.answer.knobs, (std::vector<Knob>{Knob{3, 2}, Knob{9, 1}}));
    EXPECT_EQ(e.answer.numerical_notes, 1u);
    EXPECT_EQ(e.answer.behavior_notes, 2u);
    EXPECT_DOUBLE_EQ(e.answer.launch.median_ms, 0.25);
    EXPECT_EQ(e.slot.max_workspace_bytes, 0);
    EXPECT_EQ(e.slot.excluded_numerical_notes, 4u);
  }
  EXPECT_TRUE(saw_graph);
  // Formatting is stable: the same pin is the same text.
  EXPECT_EQ(FormatPin(*back), FormatPin(pin));
}

TEST(PinFileTest, EachAnswerIsOneLineSoADiffShowsWhichChanged) {
  PinFile pin = APin();
  const std::string before = FormatPin(pin);
  pin.entries[0].answer.algo = 6;
  const std::string after = FormatPin(pin);
  std::istringstream a(before), b(after);
  std::string la, lb;
  int changed = 0, lines = 0;
  while (std::getline(a, la) && std::getline(b, lb)) {
    ++lines;
    if (la != lb) ++changed;
  }
  EXPECT_EQ(changed, 1);
  // "{", six header fields, the list's opening, four answers, "]" and "}".
  EXPECT_EQ(lines, 1 + 6 + 1 + 4 + 2);
}

TEST(PinFileTest, ARuntimeCompiledConfigKeepsItsPlanSealedForItsKey) {
  ProblemKey key{TestDevice(), Graph(8).problem};
  AlgoResult chosen = Graph(8).answer;
  chosen.behavior_notes = NoteBit(kBehaviorNoteRuntimeCompilation);
  chosen.plan = R"({"cudnnVersion":91900})";
  const AlgoResult pinned = PinnedAnswerOf(chosen, key, LaunchMode::kDirect);
  absl::StatusOr<absl::string_view> opened =
      OpenSealedPlan(pinned.plan, key, chosen.algo, chosen.knobs);
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_EQ(*opened, chosen.plan);
  // A plan sealed already (a stored record's) is kept as it is.
  chosen.plan = pinned.plan;
  EXPECT_EQ(PinnedAnswerOf(chosen, key, LaunchMode::kDirect).plan, pinned.plan);
  // A precompiled config's plan is not pinned: it builds in no time.
  chosen.behavior_notes = 0;
  EXPECT_TRUE(PinnedAnswerOf(chosen, key, LaunchMode::kDirect).plan.empty());
  // In the file, and back.
  PinFile pin = APin();
  pin.entries[2].answer.plan = pinned.plan;
  absl::StatusOr<PinFile> back = ParsePin(FormatPin(pin));
  ASSERT_TRUE(back.ok()) << back.status();
  bool found = false;
  for (const PinEntry& e : back->entries) found |= e.answer.plan == pinned.plan;
  EXPECT_TRUE(found);
}

TEST(PinFileTest, APlanSharedByTwoSlotsIsWrittenOnce) {
  ProblemKey key{TestDevice(), Graph(8).problem};
  AlgoResult chosen = Graph(8).answer;
  chosen.behavior_notes = NoteBit(kBehaviorNoteRuntimeCompilation);
  chosen.plan = R"({"cudnnVersion":91900,"engine":"a plan"})";
  PinFile pin = APin();
  PinEntry other = Graph(8);
  other.slot.deterministic_only = true;
  pin.entries.push_back(other);
  for (PinEntry& e : pin.entries) {
    if (e.problem.api == ConvApi::kGraph) {
      e.answer.plan = PinnedAnswerOf(chosen, key, LaunchMode::kDirect).plan;
    }
  }
  const std::string text = FormatPin(pin);
  const size_t first = text.find("a plan");
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(text.find("a plan", first + 1), std::string::npos);
  absl::StatusOr<PinFile> back = ParsePin(text);
  ASSERT_TRUE(back.ok()) << back.status();
  int with_plan = 0;
  for (const PinEntry& e : back->entries) {
    if (!e.answer.plan.empty()) {
      ++with_plan;
      EXPECT_TRUE(OpenSealedPlan(e.answer.plan, key, chosen.algo, chosen.knobs).ok());
    }
  }
  EXPECT_EQ(with_plan, 2);
  // An answer naming a plan the pin does not hold is refused.
  std::string dangling = text;
  const size_t at = dangling.find("\"plan\":\"");
  ASSERT_NE(at, std::string::npos);
  dangling.insert(at + 8, "x");
  EXPECT_EQ(ParsePin(dangling).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(PinFileTest, APlanThatIsNotSealedIsRefused) {
  PinFile pin = APin();
  pin.entries[2].answer.plan = R"({"cudnnVersion":91900})";
  absl::StatusOr<PinFile> back = ParsePin(FormatPin(pin));
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(back.status().message().find("\"plan\""), std::string::npos);
}

TEST(PinFileTest, APinCutShortIsDataLoss) {
  const std::string text = FormatPin(APin());
  for (size_t keep : {text.size() - 3, text.size() / 2, size_t{1}}) {
    EXPECT_EQ(ParsePin(text.substr(0, keep)).status().code(),
              absl::StatusCode::kDataLoss)
        << keep;
  }
}

TEST(PinFileTest, AnEditedPinIsRefusedNamingTheField) {
  const std::string text = FormatPin(APin());
  auto edited = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    const size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    t.replace(at, from.size(), to);
    return ParsePin(t).status();
  };
  absl::Status s = edited("\"version\": 1", "\"version\": 2");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("version 2"), std::string::npos) << s;
  s = edited("\"source\":\"tuned\"", "\"source\":\"guessed\"");
  EXPECT_NE(s.message().find("unknown source"), std::string::npos) << s;
  s = edited("\"algo\":1,", "\"algo\":99999999,");
  EXPECT_NE(s.message().find("out of range"), std::string::npos) << s;
  s = edited("\"math\":\"tensor_op\"", "\"math\":\"fast\"");
  EXPECT_NE(s.message().find("math"), std::string::npos) << s;
  s = edited("\"format\": \"tunedb-pin\"", "\"format\": \"other\"");
  EXPECT_NE(s.message().find("not a tunedb pin"), std::string::npos) << s;
  s = edited("op=fwd", "op=sideways");
  EXPECT_NE(s.message().find("problem"), std::string::npos) << s;
}

TEST(PinFileTest, TwoAnswersForOneSlotAreRefused) {
  PinFile pin = APin();
  std::string text = FormatPin(pin);
  // Duplicate the first answer line.
  const size_t start = text.find("\n    {") + 1;
  const size_t end = text.find('\n', start);
  const std::string line = text.substr(start, end - start);  // ends in ','
  text.insert(end + 1, line + "\n");
  EXPECT_NE(ParsePin(text).status().message().find("two answers"),
            std::string::npos)
      << ParsePin(text).status();
}

TEST(PinFileTest, AMergeKeepsTheFilesAnswersAndAddsNewOnes) {
  TempDir dir;
  const std::string path = dir.File("job.pin");
  PinFile first = APin();
  ASSERT_TRUE(MergePinFile(path, first).ok());
  PinFile second = APin();
  second.entries = {Legacy(8, false, 5), Legacy(32, false, 2)};
  ASSERT_TRUE(MergePinFile(path, second).ok());
  absl::StatusOr<PinFile> merged = ReadPinFile(path);
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_EQ(merged->entries.size(), 5u);
  for (const PinEntry& e : merged->entries) {
    if (e.problem == TestProblem(8) && !e.slot.deterministic_only) {
      EXPECT_EQ(e.answer.algo, 1) << "the file's answer stays";
    }
  }
}

TEST(PinFileTest, AMergeNeverTouchesAPinOfAnotherDeviceOrOneThatCannotBeRead) {
  TempDir dir;
  const std::string path = dir.File("job.pin");
  ASSERT_TRUE(MergePinFile(path, APin()).ok());
  const std::string before = Read(path);
  PinFile other = APin();
  other.device.cudnn_version = 91400;
  absl::Status s = MergePinFile(path, other);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("cuDNN 9.19.0 in the pin, 9.14.0 here"),
            std::string::npos)
      << s;
  EXPECT_EQ(Read(path), before);

  std::ofstream(path) << before.substr(0, before.size() / 2);
  s = MergePinFile(path, APin());
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_EQ(Read(path), before.substr(0, before.size() / 2));
}

TEST(PinFileTest, AMissingFileIsNotFound) {
  TempDir dir;
  EXPECT_EQ(ReadPinFile(dir.File("none.pin")).status().code(),
            absl::StatusCode::kNotFound);
}

TEST(PinFileTest, MismatchNamesEachDifferenceAndTheDriverOnlyWhenBothAreKnown) {
  const PinFile pin = APin();
  EXPECT_EQ(PinMismatch(pin, TestDevice(), 13000), "");
  EXPECT_EQ(PinMismatch(pin, TestDevice(), 0), "");
  DeviceKey other = TestDevice("NVIDIA H100");
  other.cudnn_version = 91400;
  const std::string m = PinMismatch(pin, other, 12080);
  EXPECT_NE(m.find("GPU Simulated GPU in the pin, NVIDIA H100 here"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("cuDNN 9.19.0 in the pin, 9.14.0 here"), std::string::npos)
      << m;
  EXPECT_NE(m.find("driver (CUDA) 13.0 in the pin, 12.8 here"),
            std::string::npos)
      << m;
}

TEST(PinFileTest, ANumberThatIsNotWholeOrPastItsRangeIsRefusedNotTruncated) {
  const std::string text = FormatPin(APin());
  auto edited = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    const size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    t.replace(at, from.size(), to);
    return ParsePin(t, PinDigests::kAcceptEdits).status();
  };
  absl::Status s = edited("\"version\": 1", "\"version\": 1.9");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("\"version\" is 1.9, not a whole number"),
            std::string::npos)
      << s;
  s = edited("\"algo\":1,", "\"algo\":7.9,");
  EXPECT_NE(s.message().find("\"algo\" is 7.9"), std::string::npos) << s;
  s = edited("\"driver\": 13000", "\"driver\": 4294980296");
  EXPECT_NE(s.message().find("\"driver\" 4294980296 is out of range"),
            std::string::npos)
      << s;
  s = edited("\"notes\":0", "\"notes\":-1");
  EXPECT_NE(s.message().find("\"notes\" -1 is out of range"),
            std::string::npos)
      << s;
  s = edited("\"workspace\":4096", "\"workspace\":4096.5");
  EXPECT_NE(s.message().find("\"workspace\""), std::string::npos) << s;
  s = edited("\"ws\":null", "\"ws\":1.5");
  EXPECT_NE(s.message().find("\"ws\""), std::string::npos) << s;
}

TEST(PinFileTest, AnEditedAnswerIsRefusedNamingItAndSealingAcceptsTheEdit) {
  TempDir dir;
  const std::string path = dir.File("job.pin");
  ASSERT_TRUE(MergePinFile(path, APin()).ok());
  std::string text = Read(path);
  const size_t at = text.find("\"algo\":1,");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 9, "\"algo\":3,");
  std::ofstream(path, std::ios::trunc) << text;
  absl::Status s = ReadPinFile(path).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("was edited after it was recorded"),
            std::string::npos)
      << s;
  EXPECT_NE(s.message().find("algo 3"), std::string::npos) << s;
  EXPECT_NE(s.message().find(TestProblem(8).ToText()), std::string::npos) << s;
  EXPECT_NE(s.message().find("tunedb pin seal"), std::string::npos) << s;
  // A merge never seals an edit by the way.
  EXPECT_EQ(MergePinFile(path, APin()).code(),
            absl::StatusCode::kFailedPrecondition);

  absl::StatusOr<std::vector<std::string>> sealed = SealPinFile(path);
  ASSERT_TRUE(sealed.ok()) << sealed.status();
  ASSERT_EQ(sealed->size(), 1u);
  EXPECT_NE((*sealed)[0].find("algo 3"), std::string::npos) << (*sealed)[0];
  absl::StatusOr<PinFile> pin = ReadPinFile(path);
  ASSERT_TRUE(pin.ok()) << pin.status();
  EXPECT_TRUE(pin->sealed);
  bool saw = false;
  for (const PinEntry& e : pin->entries) saw |= e.answer.algo == 3;
  EXPECT_TRUE(saw);
  EXPECT_TRUE(SealPinFile(path)->empty());  // nothing left to seal
}

TEST(PinFileTest, AnAnswerWithoutItsDigestAmongSealedOnesIsRefused) {
  std::string text = FormatPin(APin());
  const size_t at = text.find(",\"digest\":\"");
  ASSERT_NE(at, std::string::npos);
  text.erase(at, text.find('"', at + 11) + 1 - at);
  absl::Status s = ParsePin(text).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("has no digest"), std::string::npos) << s;
}

TEST(PinFileTest, APinOfBeforeDigestsIsReadAsUnsealed) {
  std::string text = FormatPin(APin());
  // Every answer line without its digest, as pins were written before.
  for (size_t at; (at = text.find(",\"digest\":\"")) != std::string::npos;) {
    text.erase(at, text.find('"', at + 11) + 1 - at);
  }
  absl::StatusOr<PinFile> pin = ParsePin(text);
  ASSERT_TRUE(pin.ok()) << pin.status();
  EXPECT_FALSE(pin->sealed);
  EXPECT_EQ(pin->entries.size(), 4u);
  EXPECT_TRUE(ParsePin(FormatPin(APin()))->sealed);
}

TEST(PinFileTest, APinThatIsADeviceAFifoAFolderOrTooLargeIsRefusedAtOnce) {
  TempDir dir;
  const std::string link = dir.File("zero.pin");
  ASSERT_EQ(symlink("/dev/zero", link.c_str()), 0);
  const std::string fifo = dir.File("fifo.pin");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string big = dir.File("big.pin");
  std::ofstream(big) << FormatPin(APin());
  ASSERT_EQ(truncate(big.c_str(), 100'000'000), 0);
  for (const std::string& path : {link, fifo, dir.path(), big}) {
    const auto start = std::chrono::steady_clock::now();
    absl::Status s = ReadPinFile(path).status();
    EXPECT_LT(std::chrono::steady_clock::now() - start,
              std::chrono::seconds(1));
    EXPECT_FALSE(s.ok()) << path;
    EXPECT_EQ(s.message().find("not JSON"), std::string::npos) << s;
    EXPECT_NE(s.message().find("cannot read the pin"), std::string::npos) << s;
  }
  EXPECT_NE(ReadPinFile(dir.path()).status().message().find("is a directory"),
            std::string::npos);
  // Nothing is merged into, or written over, a device.
  EXPECT_EQ(MergePinFile("/dev/full", APin()).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(PinFileTest, AMergeThroughALinkReplacesItsTargetAndKeepsTheLink) {
  TempDir dir;
  const std::string target = dir.File("real.pin");
  const std::string link = dir.File("job.pin");
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  ASSERT_TRUE(MergePinFile(link, APin()).ok());
  struct stat st;
  ASSERT_EQ(lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_TRUE(ReadPinFile(target).ok());
}

}  // namespace
}  // namespace tunedb
