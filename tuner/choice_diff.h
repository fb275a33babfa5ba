// ChoiceDiff: how the choices stored for one GPU model changed from one
// cuDNN version to another (`tunedb diff --from 9.14 --to 9.19`): the
// records of both versions matched by the rest of their key, each side's
// choice (Choose, no constraints), and for a changed choice how much faster
// the new version's choice is than the old choice re-timed on the new
// version, where the new record measured it.
//
// Thread safety: a plain value, filled on one thread.
#ifndef TUNEDB_TUNER_CHOICE_DIFF_H_
#define TUNEDB_TUNER_CHOICE_DIFF_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/median.h"
#include "tunedb/record.h"

namespace tunedb::tuner {

// "9.14" or "9.14.0" as cuDNN's encoding (91400); INVALID_ARGUMENT naming
// the text otherwise.
absl::StatusOr<int> ParseCudnnVersionFlag(absl::string_view text);

struct KeyChange {
  std::string key;  // the new version's key text
  AlgoResult from, to;  // each version's choice
  bool changed = false;  // another engine config or algorithm
  // The old choice's time on the new version over the new choice's
  // (launch medians of the new record); nullopt where the new record did
  // not time the old choice.
  std::optional<double> speedup;
  // The new choice's time over the old choice's on the old version.
  double to_over_from = 0;
};

struct ChoiceDiff {
  // By group ("api op dtype", after Add's group_prefix): the keys in both
  // versions.
  std::map<std::string, std::vector<KeyChange>> groups;
  int64_t only_from = 0;  // keys stored for the old version alone
  int64_t only_to = 0;
  int64_t without_choice = 0;  // in both, but one side has no OK result

  // Adds the records of both versions (keys differ only in cuDNN version),
  // `group_prefix` (e.g. "resnet50 ") before each group's name.
  void Add(const std::vector<Record>& from, const std::vector<Record>& to,
           absl::string_view group_prefix = "");
};

}  // namespace tunedb::tuner

#endif  // TUNEDB_TUNER_CHOICE_DIFF_H_
