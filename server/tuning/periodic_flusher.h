// PeriodicFlusher: runs a flush on a thread of its own every interval, and
// once more when stopped, so that what was added before Stop() is written.
// ServedCounts and ProgramKeys batch their writes with one.
//
// Thread safety: Stop() is thread-safe; `flush` runs on the flusher's
// thread, and on each Stop() caller's once that thread has ended.
#ifndef TUNEDB_SERVER_TUNING_PERIODIC_FLUSHER_H_
#define TUNEDB_SERVER_TUNING_PERIODIC_FLUSHER_H_

#include <functional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace tunedb {

class PeriodicFlusher {
 public:
  // Starts the thread: `flush` every `interval` until Stop(). Construct it
  // last in its owner, so that `flush` finds the owner's members built.
  PeriodicFlusher(absl::Duration interval, std::function<void()> flush);
  ~PeriodicFlusher();  // Stop()

  // Ends the thread (the first call), then flushes what is left.
  void Stop() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Loop() ABSL_LOCKS_EXCLUDED(mu_);

  const absl::Duration interval_;
  const std::function<void()> flush_;
  absl::Mutex mu_;
  absl::CondVar cv_;  // with mu_: stopping
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_TUNING_PERIODIC_FLUSHER_H_
