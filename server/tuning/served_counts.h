// ServedCounts: how many times each record was served, and to which program
// (LookupRequest.program, "" for none), added to the store in batches
// (Store::AddServed: the totals and the answers by day and program) by a
// PeriodicFlusher every interval, and once more when stopped.
//
// Thread safety: thread-safe.
#ifndef TUNEDB_SERVER_TUNING_SERVED_COUNTS_H_
#define TUNEDB_SERVER_TUNING_SERVED_COUNTS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/tuning/periodic_flusher.h"
#include "store/store.h"

namespace tunedb {

class ServedCounts {
 public:
  // Starts the flush thread; `store` must outlive this.
  ServedCounts(Store* store, absl::Duration flush_interval);
  ~ServedCounts();  // Stop()

  // Record `id` was served once more, to `program` ("" for none).
  void Count(int64_t id, absl::string_view program) ABSL_LOCKS_EXCLUDED(mu_);
  // Stops the flush thread and flushes what is left; idempotent.
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Flush() ABSL_LOCKS_EXCLUDED(mu_);

  Store* const store_;
  absl::Mutex mu_;
  // program -> record id -> count not yet flushed (found by string_view:
  // a Lookup copies its program only the first time in a flush interval)
  std::map<std::string, std::map<int64_t, int64_t>, std::less<>> counts_
      ABSL_GUARDED_BY(mu_);
  PeriodicFlusher flusher_;  // last: it calls Flush()
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_TUNING_SERVED_COUNTS_H_
