// ValidKey: a ProblemKey that has passed Validate(), with its canonical text
// and hash computed once. The daemon makes one where a key enters (the
// service, from wire fields that FromProto validated) and passes it down, so
// the tuning core, its record cache and its logs neither validate the key
// again nor render its text again. Validation stays at the trust boundaries:
// RPC input, worker frames, rows read from disk, imports.
//
// Also the one implementation of the key hash (FNV-1a of the text), which
// ProblemKey::Hash() and HashText() use, and of its FNV loop.
//
// Thread safety: an immutable value.
#ifndef TUNEDB_COMMON_VALID_KEY_H_
#define TUNEDB_COMMON_VALID_KEY_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tunedb/problem.h"

namespace tunedb {

// 64-bit FNV-1a of `data` continued from `h` (the one FNV loop; a stored
// plan's digest, sealed_plan.h, uses it too).
uint64_t Fnv1aExtend(uint64_t h, absl::string_view data);
// 64-bit FNV-1a of a key's canonical text (ProblemKey::Hash()).
uint64_t KeyTextHash(absl::string_view key_text);
// `hash` as 16 lowercase hex digits (ProblemKey::HashText()).
std::string KeyHashText(uint64_t hash);

class ValidKey {
 public:
  // Validates `key`: INVALID_ARGUMENT naming the field otherwise.
  static absl::StatusOr<ValidKey> Make(ProblemKey key);
  // For a key whose device and problem were each validated where they
  // entered (decoded from the wire or a worker frame, parsed, read back).
  // Debug builds check it.
  static ValidKey FromValidated(ProblemKey key);

  const ProblemKey& key() const { return key_; }
  const DeviceKey& device() const { return key_.device; }
  const ConvProblem& problem() const { return key_.problem; }
  // key().ToText(), key().Hash() and key().HashText(), computed once.
  const std::string& text() const { return text_; }
  uint64_t hash() const { return hash_; }
  std::string HashText() const { return KeyHashText(hash_); }

 private:
  explicit ValidKey(ProblemKey key);

  ProblemKey key_;
  std::string text_;
  uint64_t hash_ = 0;
};

}  // namespace tunedb

#endif  // TUNEDB_COMMON_VALID_KEY_H_
