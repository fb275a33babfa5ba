#include "common/valid_key.h"

#include <cassert>
#include <utility>

#include "absl/strings/str_format.h"
#include "common/status_macros.h"

namespace tunedb {

uint64_t Fnv1aExtend(uint64_t h, absl::string_view data) {
  for (unsigned char ch : data) {
    h ^= ch;
    h *= 1099511628211ULL;
  }
  return h;
}

uint64_t KeyTextHash(absl::string_view key_text) {
  // The historical offset basis (FNV-1a's is 14695981039346656037): stored
  // key hashes depend on it.
  return Fnv1aExtend(1469598103934665603ULL, key_text);
}

std::string KeyHashText(uint64_t hash) {
  return absl::StrFormat("%016x", hash);
}

ValidKey::ValidKey(ProblemKey key)
    : key_(std::move(key)), text_(key_.ToText()), hash_(KeyTextHash(text_)) {}

absl::StatusOr<ValidKey> ValidKey::Make(ProblemKey key) {
  RETURN_IF_ERROR(key.Validate());
  return ValidKey(std::move(key));
}

ValidKey ValidKey::FromValidated(ProblemKey key) {
  assert(key.Validate().ok());
  return ValidKey(std::move(key));
}

}  // namespace tunedb
