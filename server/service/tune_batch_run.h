// TuneBatchRun: the Tunes of one TuneBatch stream. The stream's reader adds
// items as they arrive (waiting while kMaxQueued are queued); a few worker
// threads run them and write each answer as it finishes, one write at a
// time, with the progress counts. An item that arrived as an error (a
// message that did not parse) is answered with that error in its turn.
//
// Thread safety: Add and Finish from one thread (the reader); the callbacks
// run on the workers.
#ifndef TUNEDB_SERVER_SERVICE_TUNE_BATCH_RUN_H_
#define TUNEDB_SERVER_SERVICE_TUNE_BATCH_RUN_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tunedb/v1/tunedb.pb.h"

namespace tunedb {

class TuneBatchRun {
 public:
  using TuneFn = std::function<absl::Status(const v1::TuneRequest&,
                                            v1::TuneResponse*)>;
  // Returns false once the stream is broken; later answers are dropped.
  using WriteFn = std::function<bool(const v1::TuneBatchResponse&)>;

  TuneBatchRun(int parallelism, TuneFn tune, WriteFn write);
  // Finishes if Finish was not called.
  ~TuneBatchRun();

  // Queues the next item (its index is its place in the stream).
  void Add(absl::StatusOr<v1::TuneRequest> request);
  // No more items: waits until every queued item is answered.
  void Finish();

 private:
  static constexpr size_t kMaxQueued = 256;
  struct Item {
    int64_t index = 0;
    absl::StatusOr<v1::TuneRequest> request;
  };

  void Work();
  void Answer(const Item& item);
  bool HasWorkOrDone() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const TuneFn tune_;
  const WriteFn write_;
  absl::Mutex mu_;
  std::deque<Item> queue_ ABSL_GUARDED_BY(mu_);
  bool reading_done_ ABSL_GUARDED_BY(mu_) = false;
  int64_t received_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t done_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Mutex write_mu_ ABSL_ACQUIRED_BEFORE(mu_);  // one write at a time
  bool write_failed_ ABSL_GUARDED_BY(write_mu_) = false;
  std::vector<std::thread> workers_;
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SERVICE_TUNE_BATCH_RUN_H_
