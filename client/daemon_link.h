// DaemonLink: the client's gRPC channel to tunedbd, with the reconnect
// backoff that keeps a dead daemon from being called on every miss.
//
// After an RPC fails for a reason that says the daemon is unreachable or
// overloaded (UNAVAILABLE, DEADLINE_EXCEEDED of a Lookup,
// RESOURCE_EXHAUSTED), Ready() is false for a backoff that starts at
// options.reconnect_backoff_min and doubles per consecutive failure up to
// reconnect_backoff_max (with +-20% jitter); any answer from the daemon
// resets it. The channel's own reconnect backoff is set to the same bounds,
// and RPCs fail fast instead of waiting for a connection.
//
// Thread safety: every method is thread-safe. Shutdown() cancels RPCs in
// flight and makes later ones fail with CANCELLED.
#ifndef TUNEDB_CLIENT_DAEMON_LINK_H_
#define TUNEDB_CLIENT_DAEMON_LINK_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/support/channel_arguments.h"
#include "tunedb/client_options.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"
#include "tunedb/v1/tunedb.grpc.pb.h"

namespace tunedb {

class DaemonLink {
 public:
  // What a Lookup or Tune returned.
  struct Reply {
    absl::Status status;               // the RPC's status
    std::optional<AlgoResult> choice;  // OK: the choice, if one fits
    int64_t measured_at_us = 0;        // OK: the record's
    bool predicted = false;  // OK: `choice` is a prediction (no record)
    bool held = false;  // OK: a when-idle search held until the GPU is idle
  };

  // `channel` is the daemon's (see CreateDaemonChannel); `options` give the
  // backoff bounds.
  DaemonLink(const ClientOptions& options,
             std::shared_ptr<grpc::Channel> channel);
  // The channel arguments a DaemonLink wants (its reconnect backoff).
  static grpc::ChannelArguments ChannelArgs(const ClientOptions& options);
  ~DaemonLink();

  // False while backing off after a failure.
  bool Ready() const;
  // Consecutive failures so far (0 once the daemon answers).
  int failures() const { return failures_.load(std::memory_order_relaxed); }
  // When the backoff ends, on CoarseNowMs()'s clock.
  int64_t retry_at_ms() const {
    return retry_at_ms_.load(std::memory_order_relaxed);
  }

  // Which predictions may answer a Lookup miss (Reply::predicted).
  enum class Predict {
    kNone,
    kOtherVersions,  // the same problem under another cuDNN version
    kAll,            // that, or the nearest tuned problems of its family
  };
  Reply Lookup(const ProblemKey& key, const Constraints& constraints,
               absl::Duration deadline, Predict predict = Predict::kNone);
  // One answer of a Warm: the Lookup it stands for and that Lookup's reply
  // (OK, or NOT_FOUND for a key with nothing stored).
  struct WarmEntry {
    ProblemKey key;
    Constraints constraints;
    Reply reply;
  };
  // The Warm rpc: the answers to the Lookups options.program made before,
  // of keys on `device`, each as a Lookup of this client would get it now
  // (options.job_id, `predict`, the choice only). An entry that cannot be
  // read is left out. A Warm past its deadline is slow, not down.
  absl::StatusOr<std::vector<WarmEntry>> Warm(const DeviceKey& device,
                                              Predict predict,
                                              absl::Duration deadline);
  // `when_idle`: the key is this program's own miss, searched only while
  // no program uses the GPU (TuneRequest.when_idle); the reply comes at
  // once, `held`, once the daemon holds the search back for that
  // (TuneRequest.return_if_held).
  Reply Tune(const ProblemKey& key, const Constraints& constraints,
             absl::Duration deadline, bool when_idle = false);
  // The whole stored record of `key` (a Lookup that keeps the record; no
  // job, no prediction): for the stored plans of a followed pin's configs.
  absl::StatusOr<Record> StoredRecord(const ProblemKey& key,
                                      absl::Duration deadline);
  // The ReportCounters rpc.
  absl::Status ReportCounters(const std::string& source,
                              const std::map<std::string, int64_t>& counts,
                              absl::Duration deadline);

  // Cancels RPCs in flight; later RPCs fail with CANCELLED at once.
  void Shutdown();

  // The channel, for callers that make other RPCs on it (benchmarks).
  std::shared_ptr<grpc::Channel> channel() const { return channel_; }

 private:
  // Registers `context` for cancellation; false after Shutdown().
  bool Begin(grpc::ClientContext* context);
  void End(grpc::ClientContext* context);
  // Updates the backoff from an RPC's outcome.
  void UpdateBackoff(const absl::Status& status, bool deadline_means_down);

  const ClientOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::TuneDb::Stub> stub_;
  std::atomic<int> failures_{0};
  std::atomic<int64_t> retry_at_ms_{0};

  absl::Mutex mu_;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  std::set<grpc::ClientContext*> active_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tunedb

#endif  // TUNEDB_CLIENT_DAEMON_LINK_H_
