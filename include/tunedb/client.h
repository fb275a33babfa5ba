// Client: the tuned cuDNN convolution algorithm for a problem, fetched from
// the tunedb daemon and cached in process, ready before every conv launch.
//
//   tunedb::ClientOptions options;             // defaults: local daemon,
//   options.heuristic = MyHeuristic;           // background tuning on a miss
//   auto client = tunedb::Client::Create(options).value();
//   tunedb::Answer a = client->Get(key, constraints);
//   if (a.ok()) { /* run algorithm a.algo with a.math_type */ }
//
// A cache hit takes no lock and allocates nothing. A miss follows
// ClientOptions::miss_policy. Get never throws and never waits past the
// deadline its policy sets: a daemon that is down, slow or restarting costs
// at most one deadline, then the client answers from the heuristic while it
// backs off and reconnects.
//
// Thread safety: every method is thread-safe. Get is meant to be called
// concurrently from many threads.
#ifndef TUNEDB_CLIENT_H_
#define TUNEDB_CLIENT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tunedb/client_options.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

// Where an answer came from.
enum class Source {
  kNone = 0,       // no answer: the caller picks its own algorithm
  kCache = 1,      // a tuned answer from the in-process cache
  kDaemon = 2,     // a tuned answer just fetched from the daemon
  kHeuristic = 3,  // the heuristic's choice (the daemon had nothing yet,
                   // or could not be reached in time)
  kDatabase = 4,   // a tuned answer read from the daemon's database file
                   // (ClientOptions::db_path) while the daemon was down
  kPredicted = 5,  // predicted from the nearest tuned problems of the
                   // key's family (ClientOptions::predict_misses); not
                   // measured for this shape
  kPinned = 6,     // from the pin (ClientOptions::pin): the answer a run
                   // that recorded it got
};
std::string_view SourceName(Source s);  // "none", "cache", ...

// The algorithm to launch.
struct Answer {
  Source source = Source::kNone;
  int algo = -1;  // cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t value
  MathType math_type = MathType::kDefault;
  int64_t workspace_bytes = 0;

  bool ok() const { return source != Source::kNone; }
  // True for kCache, kDaemon and kDatabase: the answer comes from a
  // measured search.
  bool tuned() const {
    return source == Source::kCache || source == Source::kDaemon ||
           source == Source::kDatabase;
  }
};

// The engine config to build, for a graph-API key (api=graph): the tuned
// one (engine global index, knobs, notes, workspace and, where the search
// kept it, cuDNN's serialized plan: only one that is whole and was stored
// for this key and config), or none: the caller then builds from
// cuDNN's heuristic as it would without tunedb.
struct EngineAnswer {
  // kCache, kDaemon, kDatabase, kPredicted or kNone.
  Source source = Source::kNone;
  AlgoResult config;              // meaningful when ok()
  bool ok() const { return source != Source::kNone; }
};

// Counters since creation (each read is a consistent-enough snapshot).
struct ClientStats {
  int64_t gets = 0;            // Get calls
  int64_t hits = 0;            // answered by the cache (any kind of entry)
  int64_t misses = 0;          // took the miss path
  int64_t daemon_calls = 0;    // Lookup/Tune RPCs made (both threads)
  int64_t daemon_answers = 0;  // Gets answered kDaemon
  int64_t daemon_errors = 0;   // RPCs that failed (down, slow, refused)
  int64_t daemon_skipped = 0;  // RPCs not made because of reconnect backoff
  int64_t daemon_wait_us = 0;  // callers' time in those RPCs (not the
                               // background thread's) and on the Warm
  int64_t warm_keys = 0;     // answers the Warm at start brought
                             // (ClientOptions::warm_at_start)
  int64_t warm_answers = 0;  // misses it answered, without a Lookup
  int64_t warm_wait_us = 0;  // callers' time waiting for it (also in
                             // daemon_wait_us)
  int64_t fallbacks = 0;       // Gets answered kHeuristic
  int64_t none_answers = 0;    // Gets answered kNone
  int64_t background_enqueued = 0;  // background Tunes/re-checks queued
  int64_t background_dropped = 0;   // ... dropped, the queue being full
  int64_t background_tunes = 0;     // background Tunes that succeeded
  int64_t background_held = 0;      // ... that the daemon holds until the
                                    // GPU is idle (stored for later lookups)
  int64_t database_answers = 0;     // Gets answered kDatabase
  bool database_open = false;       // ClientOptions::db_path is open
  int64_t refreshes = 0;            // cached entries replaced by a newer record
  int64_t plans_refused = 0;  // stored plans cut short, edited or another's
  int64_t predicted_answers = 0;  // Gets and GetEngines answered kPredicted
  int64_t pinned_answers = 0;  // answered kPinned (or a pinned "none")
  int64_t pin_misses = 0;      // kFollow: problems the pin lacks
  int64_t pin_refused = 0;     // kFollow: refused for another device
  bool pin_unsealed = false;   // kFollow: the pin was written before pins
                               // carried digests, so an edit of its answers
                               // cannot be told (docs/pins.md)
  int64_t evictions = 0;            // entries evicted to stay within capacity
  int64_t cache_entries = 0;        // entries in the cache now
};

class Client {
 public:
  // Fails only on invalid options (INVALID_ARGUMENT) or an unreadable TLS
  // file (FAILED_PRECONDITION); the daemon need not be running.
  static absl::StatusOr<std::unique_ptr<Client>> Create(
      const ClientOptions& options);

  virtual ~Client();

  // The algorithm for `key` under `constraints`. Never blocks past the
  // deadline of the miss policy; never throws.
  virtual Answer Get(const ProblemKey& key,
                     const Constraints& constraints = {}) = 0;

  // The tuned engine config for a graph-API `key`, for code that builds
  // cuDNN graphs itself (once per graph, not per launch: answers are cached
  // in process, under a lock). Misses follow the miss policy as Get does,
  // never answering from a heuristic (kNone instead). A legacy key gets
  // kNone. Never throws.
  virtual EngineAnswer GetEngine(const ProblemKey& key,
                                 const Constraints& constraints = {}) = 0;

  // Asks the daemon, in the background, to Tune `key` and caches the answer
  // (for kCacheOnly users). False if the request was dropped (queue full)
  // or is already queued.
  virtual bool Prefetch(const ProblemKey& key,
                        const Constraints& constraints = {}) = 0;

  // Waits until the background queue is empty and idle, or `timeout`
  // passes; true if idle. For tests and orderly shutdown.
  virtual bool WaitForBackground(absl::Duration timeout) = 0;

  // Adds `counts` to the daemon's counters of client programs (Stats'
  // `reported`, `tunedb stats`), as "source.name"; source and names are 1
  // to 32 of [a-z0-9_], counts >= 0, at most 64 names. Waits at most
  // `deadline`. The daemon's refusal (INVALID_ARGUMENT), or UNAVAILABLE /
  // DEADLINE_EXCEEDED.
  virtual absl::Status ReportCounters(
      const std::string& source, const std::map<std::string, int64_t>& counts,
      absl::Duration deadline) = 0;

  // Drops every cached entry (a pin's answers stay).
  virtual void ClearCache() = 0;

  // PinMode::kRecord: merges the answers given so far into the pin file
  // (common/pin_file.h: the file's answers win); also done at destruction.
  // OK with nothing to write or without a recorded pin.
  virtual absl::Status WritePin() = 0;

  // PinMode::kFollow: FAILED_PRECONDITION naming how the pin's GPU model,
  // cuDNN, CUDA runtime or driver differ from `device` (and
  // PinOptions::driver_version); OK when they agree or without a followed
  // pin.
  virtual absl::Status CheckPin(const DeviceKey& device) const = 0;

  virtual ClientStats Stats() const = 0;

  // Whether the daemon is believed reachable (false while backing off).
  virtual bool DaemonReachable() const = 0;

 protected:
  Client() = default;

 private:
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
};

}  // namespace tunedb

#endif  // TUNEDB_CLIENT_H_
