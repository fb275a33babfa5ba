// PinnedAnswers: a Client's pin (ClientOptions::pin, docs/pins.md): the
// answers of a followed pin file, or those a recording client has given so
// far, by problem and caller constraints (PinSlot). A slot's first answer is
// its answer for the life of the client; a recording client merges them
// into the file on Write.
//
// Thread safety: thread-safe (one mutex; a pinned client's Get costs a
// problem's key text and a map lookup, about a microsecond, instead of the
// cache's nanoseconds).
#ifndef TUNEDB_CLIENT_PINNED_ANSWERS_H_
#define TUNEDB_CLIENT_PINNED_ANSWERS_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/pin_file.h"
#include "tunedb/client_options.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

class PinnedAnswers {
 public:
  // kFollow: reads and checks the file (its errors, prefixed "pin: ");
  // kRecord: starts empty (the file is read when written). INVALID_ARGUMENT
  // for a mode without a path or a path without a mode.
  static absl::StatusOr<std::unique_ptr<PinnedAnswers>> Open(
      const PinOptions& options);

  // A recording instance without a file: a job's client fixes its first
  // answers (ClientOptions::job_id).
  static std::unique_ptr<PinnedAnswers> InMemory();

  bool following() const { return options_.mode == PinMode::kFollow; }

  // The slot's pinned entry: the one of the same constraints, else (the
  // caller's workspace limit differing) one that differs only in the limit
  // and whose answer fits `c`'s; nullopt if none. A key of another device
  // than the pin's finds nothing, unless PinOptions::accept_mismatch.
  std::optional<PinEntry> Find(const ProblemKey& key,
                               const Constraints& c) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // kRecord: pins `answer` (from `source`) for the slot unless it already
  // holds one; returns the slot's entry, which is the one to give. A key of
  // another device than the first one recorded is not pinned. A legacy
  // answer that another slot of its problem knows to be deterministic (the
  // same algorithm) is marked deterministic.
  PinEntry Remember(const ProblemKey& key, const Constraints& c,
                    PinnedSource source, const AlgoResult& answer)
      ABSL_LOCKS_EXCLUDED(mu_);

  // kRecord: merges what was remembered into the file (MergePinFile); OK
  // when nothing was, or without a file.
  absl::Status Write() ABSL_LOCKS_EXCLUDED(mu_);

  // How the pin's identity differs from `device` ("" if it does not, or
  // without a device yet).
  std::string Mismatch(const DeviceKey& device) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // kFollow: the file was written before pins carried digests
  // (PinFile::sealed false), so an edit of its answers cannot be told.
  bool unsealed() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  explicit PinnedAnswers(const PinOptions& options) : options_(options) {}

  // Marks deterministic each of a legacy problem's answers whose algorithm
  // another of them has as a deterministic answer.
  static void ShareDeterminism(std::vector<PinEntry>& slots);

  const PinOptions options_;
  mutable absl::Mutex mu_;
  // The pin's identity (its entries are by_problem_'s); entries by problem
  // text (a problem has one entry per slot asked, a handful).
  PinFile pin_ ABSL_GUARDED_BY(mu_);
  bool has_device_ ABSL_GUARDED_BY(mu_) = false;
  std::map<std::string, std::vector<PinEntry>> by_problem_
      ABSL_GUARDED_BY(mu_);
  size_t remembered_ ABSL_GUARDED_BY(mu_) = 0;  // kRecord: entries pinned
  size_t written_ ABSL_GUARDED_BY(mu_) = 0;  // entries merged into the file
};

}  // namespace tunedb

#endif  // TUNEDB_CLIENT_PINNED_ANSWERS_H_
