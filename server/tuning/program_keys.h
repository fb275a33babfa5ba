// ProgramKeys: the Lookups each program made (LookupRequest.program), kept
// so that its next run is answered all of them in one Warm call
// (docs/program-keys.md).
//
// Remember() keeps a new (program, device, request) in memory, as a set: a
// key asked a thousand times between two flushes is one entry, with the
// time it was last asked. A PeriodicFlusher writes the set to the store in
// one batch every interval, and once more when stopped.
// Recall() answers from the store and from what is not written yet, so a
// program run twice within one interval still gets its keys. The requests
// are opaque bytes here: the service writes and reads them.
//
// Bounds (docs/reliability.md, "Program keys"), in Limits:
//  - a request over max_request_bytes is not remembered;
//  - at most max_pending_bytes wait in memory for the flush; past them a
//    new key is not remembered until the next flush (not_remembered);
//  - the store keeps a program's newest max_keys_per_program keys;
//  - and at most max_programs programs and max_stored_bytes of requests:
//    past either, the programs that asked least recently are forgotten
//    whole. The programs' totals are read from the store at the first
//    flush and then kept here (one small entry per program).
// A failed write is logged and its batch dropped (flush_failures).
//
// Thread safety: thread-safe.
#ifndef TUNEDB_SERVER_TUNING_PROGRAM_KEYS_H_
#define TUNEDB_SERVER_TUNING_PROGRAM_KEYS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/tuning/periodic_flusher.h"
#include "store/store.h"

namespace tunedb {

class ProgramKeys {
 public:
  struct Limits {
    // A request longer than this is not remembered. Default 16 KiB.
    int64_t max_request_bytes = int64_t{16} << 10;
    // Keys the store keeps per program, the newest. Default 16,384.
    int64_t max_keys_per_program = 16384;
    // Programs kept, those that asked last. Default 4,096.
    int64_t max_programs = 4096;
    // Bytes of requests kept over all programs. Default 256 MiB (so one
    // program's keys at their largest fit).
    int64_t max_stored_bytes = int64_t{256} << 20;
    // Bytes waiting in memory for the flush. Default 16 MiB.
    int64_t max_pending_bytes = int64_t{16} << 20;
  };

  struct Counts {
    int64_t remembered = 0;      // new keys taken into memory
    int64_t not_remembered = 0;  // too long, or memory full
    int64_t flush_failures = 0;
    int64_t programs_forgotten = 0;  // past max_programs or max_stored_bytes
    int64_t warms = 0;       // Warm calls answered (CountWarm)
    int64_t warm_keys = 0;   // keys they answered
  };

  // Starts the flush thread; `store` must outlive this.
  ProgramKeys(Store* store, Limits limits, absl::Duration flush_interval);
  ~ProgramKeys();  // Stop()

  // `program` asked `request` on device `device` (its key's text) at `now`.
  void Remember(const std::string& program, const std::string& device,
                std::string request, absl::Time now) ABSL_LOCKS_EXCLUDED(mu_);

  // The requests `program` made on `device`, the most recently asked first,
  // at most `limit` (<= 0: max_keys_per_program): those written and those
  // waiting for the flush.
  absl::StatusOr<std::vector<std::string>> Recall(const std::string& program,
                                                  const std::string& device,
                                                  int64_t limit)
      ABSL_LOCKS_EXCLUDED(mu_);

  // A Warm call answered `keys` keys (for counts()).
  void CountWarm(int64_t keys) ABSL_LOCKS_EXCLUDED(mu_);

  // Writes what waits now (the flush thread's work, also for tests).
  void Flush() ABSL_LOCKS_EXCLUDED(mu_, flush_mu_);
  // Stops the flush thread and flushes what is left; idempotent.
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

  Counts counts() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // (device, request) -> when last asked, Unix µs.
  using Asked =
      absl::flat_hash_map<std::pair<std::string, std::string>, int64_t>;
  // By program.
  using Batch = absl::flat_hash_map<std::string, Asked>;

  // Writes `batch` and applies the bounds across programs.
  void Write(const Batch& batch) ABSL_EXCLUSIVE_LOCKS_REQUIRED(flush_mu_);
  // Reads every program's totals from the store, once.
  void ReadTotalsOnce() ABSL_EXCLUSIVE_LOCKS_REQUIRED(flush_mu_);
  // Forgets the programs that asked least recently while past max_programs
  // or max_stored_bytes.
  void ForgetPastBounds() ABSL_EXCLUSIVE_LOCKS_REQUIRED(flush_mu_);
  // Adds `program`'s keys on `device` in `batch` to `*out` (request -> µs).
  static void Collect(const Batch& batch, const std::string& program,
                      const std::string& device,
                      absl::flat_hash_map<std::string, int64_t>* out);

  Store* const store_;
  const Limits limits_;

  // One flush at a time; the programs' totals as stored.
  absl::Mutex flush_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  std::map<std::string, ProgramTotals> totals_ ABSL_GUARDED_BY(flush_mu_);
  bool totals_read_ ABSL_GUARDED_BY(flush_mu_) = false;

  mutable absl::Mutex mu_;
  Batch pending_ ABSL_GUARDED_BY(mu_);
  int64_t pending_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  // The batch being written, until it is in the store (Recall reads it).
  std::shared_ptr<const Batch> flushing_ ABSL_GUARDED_BY(mu_);
  Counts counts_ ABSL_GUARDED_BY(mu_);
  PeriodicFlusher flusher_;  // last: it calls Flush()
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_TUNING_PROGRAM_KEYS_H_
