// InflightSearches: the searches queued or running, by key text, so that
// identical concurrent Tunes are coalesced into one search. A search is
// entered while its start (the last look in the store, the queueing) runs
// under the map's lock, and leaves it when it ends (Remove) after its record
// is stored: a caller finds either the search in flight or its record.
//
// Thread safety: thread-safe. Lock order: the map's mutex is taken before a
// device queue's (the start and join callbacks queue or wake searches).
#ifndef TUNEDB_SERVER_TUNING_INFLIGHT_SEARCHES_H_
#define TUNEDB_SERVER_TUNING_INFLIGHT_SEARCHES_H_

#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "server/tuning/pending_search.h"

namespace tunedb {

class InflightSearches {
 public:
  // A search for one caller: joined (another call started it) or started.
  struct Entry {
    std::shared_ptr<PendingSearch> search;  // null: none was started
    bool joined = false;
  };

  // Whether a search of `key_text` is in flight.
  bool Contains(const std::string& key_text) const ABSL_LOCKS_EXCLUDED(mu_);

  // The search of `key_text` in flight, after `join` ran on it; else what
  // `start` returns (null: nothing to search; an error: none started),
  // entered under `key_text`. Both run under the map's lock.
  absl::StatusOr<Entry> JoinOrStart(
      const std::string& key_text,
      absl::FunctionRef<void(PendingSearch&)> join,
      absl::FunctionRef<absl::StatusOr<std::shared_ptr<PendingSearch>>()>
          start) ABSL_LOCKS_EXCLUDED(mu_);

  // The search of `key_text` ended (or was dropped): a new caller starts
  // another.
  void Remove(const std::string& key_text) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<PendingSearch>> searches_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_TUNING_INFLIGHT_SEARCHES_H_
