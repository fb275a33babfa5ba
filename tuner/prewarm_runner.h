// PrewarmRunner: tunes a list of problems through the daemon — asks Lookup
// first and skips what is stored (unless forced), then streams the rest
// through one TuneBatch call with a bounded number in flight, drawing
// progress, and stops cleanly on interrupt: it stops sending, waits up to
// `drain` for the answers still outstanding, cancels the rest, and reports.
// Because every finished search is stored by the daemon, re-running the
// same prewarm resumes where it stopped.
//
// Thread safety: Run() is called once, from one thread; it uses a sender
// thread and a watchdog thread internally.
#ifndef TUNEDB_TUNER_PREWARM_RUNNER_H_
#define TUNEDB_TUNER_PREWARM_RUNNER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "tunedb/problem.h"
#include "tunedb/v1/tunedb.pb.h"
#include "tuner/cli_context.h"

namespace tunedb::tuner {

struct PrewarmItem {
  ProblemKey key;      // device and problem
  std::string source;  // where it came from ("resnet50/conv1 fwd")
};

struct PrewarmOptions {
  bool force = false;  // search again even if stored
  int64_t limit = 0;   // send at most this many (0 = all)
  // Requests in flight; halved when the daemon answers "queue full"
  // (RESOURCE_EXHAUSTED; the item is retried after a back-off of 0.1 s per
  // attempt, at most 1 s), grown back by one per round trip.
  int window = 8;
  absl::Duration drain = absl::Seconds(30);  // wait for answers on interrupt
  bool progress = true;
  int max_retries = 10;  // per item, for RESOURCE_EXHAUSTED (queue full)
  // Each TuneRequest's revalidate_from_cudnn (`tunedb revalidate`); 0: none.
  int revalidate_from_cudnn = 0;
  // Each TuneRequest's revalidate_older_driver (`tunedb revalidate
  // --driver`): the items are stored keys to re-time, so every one is sent
  // (no Lookup first, as with force). Default: no.
  bool revalidate_older_driver = false;
  // Called with the item's index and its answer, for every item answered OK
  // through TuneBatch (not for those found stored first), on the thread
  // that runs RunPrewarm. Default: none.
  std::function<void(size_t, const v1::TuneResponse&)> on_answer;
};

struct PrewarmFailure {
  std::string source;
  std::string key;
  std::string error;
};

struct PrewarmSummary {
  int64_t shapes = 0;          // unique problems planned
  int64_t already_stored = 0;  // skipped after Lookup
  int64_t sent = 0;            // sent through TuneBatch
  int64_t searched = 0;        // answers that ran a search
  int64_t hits = 0;            // answers served from the database
  int64_t failed = 0;
  int64_t not_sent = 0;        // left for later (limit or interrupt)
  int64_t unanswered = 0;      // sent but cancelled before answering
  double search_ms_spent = 0;  // search_ms of the searches this run
  double search_ms_saved = 0;  // sum of search_ms over all stored records
                               // of the planned problems
  bool interrupted = false;
  // Why the TuneBatch stream ended early, if it did (e.g. the daemon went
  // away); OK otherwise.
  absl::Status stream_status;
  std::vector<PrewarmFailure> failures;
};

// Runs the prewarm; an error status only when the daemon cannot be used at
// all (per-problem failures are in the summary).
absl::StatusOr<PrewarmSummary> RunPrewarm(CliContext& ctx,
                                          const std::vector<PrewarmItem>& items,
                                          const PrewarmOptions& options);

}  // namespace tunedb::tuner

#endif  // TUNEDB_TUNER_PREWARM_RUNNER_H_
