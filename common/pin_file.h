// PinFile: a pin, the cuDNN answers one program got, kept in one plain,
// versioned, diff-able file (docs/pins.md): the device, cuDNN, CUDA runtime
// and driver it was made on, whether it was made with deterministic
// algorithms only, and per problem and caller constraints (a PinSlot) the
// answer given. A later run that follows the pin gets exactly those answers.
//
// ParsePin checks every field, so a pin cut short, edited into nonsense or
// of another format version is refused with the reason; each answer line
// carries a digest of itself, so an edited answer is refused too, naming
// it (SealPinFile seals a deliberate edit). ReadPinFile and MergePinFile do
// the file's IO: only a regular file of at most kMaxPinBytes is read; a
// merge locks the pin's folder (flock), keeps every answer the file already
// holds (the first answer recorded stays) and replaces the file whole by
// rename, so a reader sees the old pin or the new one, never a mix; a
// symbolic link is followed, so the file it names is replaced and the link
// stays.
//
// Thread safety: plain values and functions without shared state.
#ifndef TUNEDB_COMMON_PIN_FILE_H_
#define TUNEDB_COMMON_PIN_FILE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

inline constexpr int kPinFormatVersion = 1;
inline constexpr absl::string_view kPinFormatName = "tunedb-pin";
// The largest pin read (docs/pins.md): a pin with the plans of a large
// model is a few MB.
inline constexpr int64_t kMaxPinBytes = int64_t{16} << 20;

// The caller's constraints that tell two answers for one problem apart.
// The workspace limit is kept as given; a follower whose own limit differs
// still gets the answer if it fits (PinnedAnswers).
struct PinSlot {
  bool deterministic_only = false;
  LaunchMode launch_mode = LaunchMode::kDirect;
  uint32_t excluded_numerical_notes = 0;
  std::optional<int64_t> max_workspace_bytes;

  static PinSlot Of(const Constraints& c);
  // "det=0 launch=direct notes=0 ws=any"
  std::string ToText() const;
  friend bool operator==(const PinSlot& a, const PinSlot& b) {
    return a.deterministic_only == b.deterministic_only &&
           a.launch_mode == b.launch_mode &&
           a.excluded_numerical_notes == b.excluded_numerical_notes &&
           a.max_workspace_bytes == b.max_workspace_bytes;
  }
};

// Where the pinned answer first came from.
enum class PinnedSource {
  kTuned = 0,      // a measured search
  kPredicted = 1,  // predicted from the key's family
  kHeuristic = 2,  // the client's heuristic
  kNone = 3,       // no answer: the caller's own deterministic rule
                   // (cuDNN's first heuristic choice, docs/pins.md)
};
absl::string_view PinnedSourceName(PinnedSource s);

struct PinEntry {
  ConvProblem problem;
  PinSlot slot;
  PinnedSource source = PinnedSource::kNone;
  // What the answer carries: algo, math_type, workspace_bytes,
  // deterministic, and for the graph API knobs, numerical_notes,
  // behavior_notes, launch.median_ms (the order of a graph's configs) and,
  // for a runtime-compiled config, its sealed plan where one was stored
  // ("plan" in the file). Meaningless for kNone.
  AlgoResult answer;
};

struct PinFile {
  int version = kPinFormatVersion;
  DeviceKey device;
  // cudaDriverGetVersion() where the maker knew it (13000 = 13.0); 0: not
  // known, not checked.
  int driver_version = 0;
  // Made by a program that asked for deterministic algorithms only
  // (torch.backends.cudnn.deterministic = True): every answer it recorded
  // for a deterministic-only slot is a deterministic algorithm.
  bool deterministic = false;
  // What made it: "tunedb run", "tunedb pin make".
  std::string made_by;
  // Sorted by problem text, then slot text; one entry per (problem, slot).
  std::vector<PinEntry> entries;
  // Read from a file: false for a pin written before answers carried
  // digests (none of its answers has one), which is followed with a warning.
  bool sealed = true;
  // Read with PinDigests::kAcceptEdits: the answers whose digest does not
  // match or is missing ("answer 3 (problem; slot: source algo ...)").
  std::vector<std::string> edited;
};

// How a reader treats answers whose digest does not match.
enum class PinDigests {
  kCheck,        // refused: the pin cannot be read
  kAcceptEdits,  // read, listed in PinFile::edited (SealPinFile)
};

// What a pin keeps of `chosen`, an answer for `key` to a caller launching
// in `mode`: the fields PinEntry::answer lists (no timings but the one that
// orders a graph's configs) and, for a runtime-compiled graph config, its
// stored plan sealed for `key` (sealed_plan.h), so that a follower without
// a daemon loads it instead of compiling.
AlgoResult PinnedAnswerOf(const AlgoResult& chosen, const ProblemKey& key,
                          LaunchMode mode);

// The exit code of a program stopped because its pin was refused (the
// preload) and of `tunedb run --pin` refusing one (EX_CONFIG).
inline constexpr int kPinRefusedExitCode = 78;

// Sorts `pin.entries` and drops later duplicates of a (problem, slot): the
// first one stays.
void NormalizePin(PinFile& pin);

// The pin as JSON text, one entry per line, sorted (NormalizePin first).
std::string FormatPin(PinFile pin);

// INVALID_ARGUMENT naming the first bad field for text that is not a
// whole pin of this format version (a number that is not whole or past its
// field's range included: never truncated), or naming the first answer
// whose digest does not match (DATA_LOSS for text that is not JSON, as a
// pin cut short is).
absl::StatusOr<PinFile> ParsePin(absl::string_view text,
                                 PinDigests digests = PinDigests::kCheck);

// NOT_FOUND for a missing file; FAILED_PRECONDITION for a directory, device
// or FIFO and RESOURCE_EXHAUSTED for a file over kMaxPinBytes, without
// reading it (regular_file.h); other errors as ParsePin, prefixed by the
// path.
absl::StatusOr<PinFile> ReadPinFile(const std::string& path,
                                    PinDigests digests = PinDigests::kCheck);

// Writes `pin` to `path`, merged with the pin already there (its entries
// win). FAILED_PRECONDITION when the file holds a pin of another device
// (PinMismatch), or one that cannot be read (it is left as it is); the
// write's errors as ReplaceRegularFile's (a full disk: RESOURCE_EXHAUSTED).
absl::Status MergePinFile(const std::string& path, const PinFile& pin);

// Seals the pin at `path` again as it now reads (`tunedb pin seal`: a
// deliberate edit, or a pin of before digests): every answer gets the
// digest of its line. Returns the answers sealed anew (PinFile::edited,
// plus one line for a pin that had no digests); errors as ReadPinFile's
// for anything but digests, and as MergePinFile's.
absl::StatusOr<std::vector<std::string>> SealPinFile(const std::string& path);

// The warning for a pin read without digests (PinFile::sealed false), one
// line naming `path` and `tunedb pin seal`; "" for a sealed pin.
std::string UnsealedPinWarning(const PinFile& pin, const std::string& path);

// How `pin`'s identity differs from the running process's, one clause per
// difference ("cuDNN 9.14.0 in the pin, 9.19.0 here"); "" if none. The
// driver is compared only where both are known.
std::string PinMismatch(const PinFile& pin, const DeviceKey& device,
                        int driver_version);

}  // namespace tunedb

#endif  // TUNEDB_COMMON_PIN_FILE_H_
