// ClientOptions: how a tunedb::Client reaches the daemon, what it does on a
// cache miss, and how big its in-process cache is.
//
// Every field has a default that suits a training job talking to the local
// tunedbd over its Unix socket; the default miss policy never makes a launch
// wait for a search.
//
// Thread safety: a plain value. A Client copies it at creation.
#ifndef TUNEDB_CLIENT_OPTIONS_H_
#define TUNEDB_CLIENT_OPTIONS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

// What Client::Get does when the in-process cache has no answer.
enum class MissPolicy {
  // Answer from the cache only: a miss is Source::kNone at once, no RPC.
  // The cache is filled by Client::Prefetch or by another policy.
  kCacheOnly = 1,
  // Ask the daemon to Tune (search if nothing is stored) and wait at most
  // `tune_deadline`; past it, answer with the heuristic and keep waiting
  // for the search in the background.
  kTuneAndWait = 2,
  // Look the key up in the daemon (bounded by `lookup_deadline`); if nothing
  // is stored, answer with the heuristic now and ask the daemon to Tune in
  // the background. Later calls get the tuned answer once it has arrived.
  kBackground = 3,
};

// A heuristic choice for a problem the daemon cannot answer now (e.g. one
// cudnnGetConvolution*Algorithm_v7 call; see tunedb/cudnn_helpers.h). Return
// nullopt when there is none. Called on the launching thread, from Get, at
// most once per key per `negative_ttl`; it must be thread-safe.
using HeuristicFn = std::function<std::optional<AlgoResult>(
    const ProblemKey& key, const Constraints& constraints)>;

// TLS to a daemon on TCP (tunedbd --tls-cert). Used when `address` is a TCP
// target and ca_file or cert_file is set; a "unix:" address is always plain
// (the daemon's Unix socket has no TLS). Files are PEM, read at creation.
struct TlsClientOptions {
  // CA bundle that the daemon's certificate must chain to. Default: "".
  std::string ca_file;
  // Client certificate chain and key for a daemon that requires them
  // (tunedbd --tls-client-ca); both or neither. Default: "".
  std::string cert_file;
  std::string key_file;
  // The name the daemon's certificate must carry, when it differs from the
  // address's host (e.g. connecting by IP). Default: "" (the host).
  std::string server_name;
};

// A pin (docs/pins.md): one file holding every answer a program got, so
// that later runs get exactly the same ones.
enum class PinMode {
  kOff = 0,
  // Answer as without a pin, but fix each first answer per problem and
  // constraints for the life of the client (a background tune or an import
  // never changes an answer already given), and merge them into the file
  // on Client::WritePin and at destruction.
  kRecord = 1,
  // Answer from the file alone: no daemon, no database, no background
  // tune. A problem and constraints the pin lacks get Source::kNone, the
  // same in every process (the caller's own deterministic rule: the
  // preload's is cuDNN's first heuristic choice). The one thing a daemon
  // is asked, where one answers and the caller loads stored plans
  // (Constraints::loads_stored_plans): the stored plan of a pinned graph
  // config, once per key, so that it need not compile.
  kFollow = 2,
};

struct PinOptions {
  // The pin file. Default: "" (no pin; mode must then be kOff).
  std::string path;
  // Default: kOff.
  PinMode mode = PinMode::kOff;
  // kFollow: a pin made on another GPU model, cuDNN, CUDA runtime or driver
  // is followed anyway (Client::CheckPin still names the differences).
  // False: its answers are refused (Source::kNone, ClientStats::
  // pin_refused). Default: false.
  bool accept_mismatch = false;
  // The driver's CUDA version in this process (cudaDriverGetVersion),
  // written into a recorded pin and compared with a followed one; 0: not
  // known, not compared. Default: 0.
  int driver_version = 0;
  // Whether the program asks for deterministic algorithms only; a recorded
  // pin says so (PinFile::deterministic). Default: false.
  bool deterministic = false;
};

struct ClientOptions {
  // gRPC target of the daemon. Default: "unix:/run/tunedb/tunedb.sock".
  std::string address = "unix:/run/tunedb/tunedb.sock";

  // TLS for a TCP address. Default: none (plain).
  TlsClientOptions tls;

  // Deadline of a Lookup made on the launching thread (kBackground misses).
  // Zero skips that Lookup: every miss goes to the heuristic and the
  // background worker. Default: 20 ms.
  absl::Duration lookup_deadline = absl::Milliseconds(20);

  // Deadline of a Tune made on the launching thread (kTuneAndWait).
  // Default: 10 s.
  absl::Duration tune_deadline = absl::Seconds(10);

  // Deadline of a Tune made by the background worker (a miss of this
  // program, searched by the daemon only while no program uses the GPU).
  // A daemon that holds the search for an idle GPU answers at once (held):
  // the key is not asked for again, under any constraints, for
  // refresh_interval, and a lookup after the cached answer's negative_ttl
  // finds the record once stored. Otherwise the daemon keeps the search
  // when the call returns at its deadline, and the call is made again later
  // (joining that search, not counted as a failed attempt) until it is
  // answered or the client stops. Default: 2 s.
  absl::Duration background_tune_deadline = absl::Seconds(2);

  // What a miss does. Default: kBackground.
  MissPolicy miss_policy = MissPolicy::kBackground;

  // kBackground: whether a miss also asks the daemon to Tune in the
  // background. False: it is only looked up, and the program has the
  // problem tuned some other way, later (`tunedb run --tune-after` tunes
  // what its command missed once the command has exited, so no search
  // shares the GPU with it). Default: true.
  bool tune_misses = true;

  // kBackground: whether a miss asks the daemon for a prediction from the
  // nearest tuned problems of its family (Lookup's `predict`), answered
  // Source::kPredicted; the key itself is still tuned in the background
  // (with tune_misses). Get caches it for negative_ttl, as a provisional
  // answer a tuned one replaces; GetEngine keeps it for the process, like a
  // tuned answer. Default: false (the preload sets it: docs/graph-api.md,
  // "Keys never tuned", has what it was measured to give).
  bool predict_misses = false;

  // kBackground: whether a miss is answered, like predict_misses but
  // alone, with the same problem's choice under another cuDNN version of
  // the GPU model where one is stored: after an upgrade, until the daemon
  // has revalidated the key (docs/revalidation.md). Default: true.
  bool predict_from_other_versions = true;

  // How this program launches its convolutions, for every Get and Prefetch:
  // when set, it replaces Constraints::launch_mode (a program that captures
  // CUDA graphs sets kGraph once here instead of in every call). nullopt:
  // each call's Constraints decide (their default is kDirect). Default:
  // nullopt.
  std::optional<LaunchMode> launch_mode;

  // Heuristic answers for misses; empty means none (a miss the daemon
  // cannot answer is then Source::kNone). Default: empty.
  HeuristicFn heuristic;

  // Entries held in the in-process cache; the least recently used of a
  // cache set is evicted past it. 0 disables the cache (every Get takes
  // the miss path). Default: 4096.
  int64_t cache_capacity = 4096;

  // How long an answer that is not a tuned one (the daemon had nothing, or
  // was unreachable, so the heuristic or "none" was cached) is kept before
  // the daemon is asked again. Default: 5 s.
  absl::Duration negative_ttl = absl::Seconds(5);

  // A tuned entry used after this age is re-checked with the daemon in the
  // background, and replaced if the stored record changed (a new search or
  // an import). Zero disables re-checks. Default: 60 s.
  absl::Duration refresh_interval = absl::Seconds(60);

  // After a failed RPC the daemon is not called again for a backoff that
  // starts at `reconnect_backoff_min` and doubles per consecutive failure
  // up to `reconnect_backoff_max`; misses meanwhile go to the heuristic.
  // Defaults: 100 ms and 10 s.
  absl::Duration reconnect_backoff_min = absl::Milliseconds(100);
  absl::Duration reconnect_backoff_max = absl::Seconds(10);

  // Background requests (Tunes and re-checks) waiting for the worker; more
  // are dropped (counted in ClientStats::background_dropped). Default: 256.
  int background_queue_capacity = 256;

  // The daemon's SQLite database file, read directly (read-only) when the
  // daemon cannot be reached: a miss then answers from a stored record
  // (Source::kDatabase) before falling back to the heuristic. The file is
  // opened by the background worker, never on the launching thread; ""
  // disables it. Default: "".
  std::string db_path;

  // A pin to record or follow. Default: none (PinOptions{}).
  PinOptions pin;

  // The job this process belongs to (its ranks and workers share the id:
  // 1 to 128 of [A-Za-z0-9._:@/-]). Every Lookup carries it, and the daemon
  // answers the whole job with the job's first answer per key and
  // constraints; this client likewise keeps each first answer for its life
  // (as PinMode::kRecord does, without a file). Background tunes still
  // teach the database, for the next job. With a job or a pin, a Get takes
  // a lock and formats the key (about a microsecond) before its answer.
  // Default: "" (no job).
  std::string job_id;

  // The program this process runs (the same characters and length as
  // job_id; the preload's is TUNEDB_PROGRAM or a digest of the command
  // line). Every Lookup carries it, and the daemon remembers each
  // program's keys and constraints, so that the program's next run can ask
  // for all of their answers in one Warm call (warm_at_start). Default: ""
  // (nothing remembered, no Warm).
  std::string program;

  // With a program and kBackground: the first miss starts one Warm call in
  // the background, for the device of its key, with the job and the
  // predictions a Lookup of this client asks for. Its answers then answer
  // this client's misses without a Lookup (ClientStats::warm_answers); a
  // miss while the Warm is in flight waits for it at most lookup_deadline
  // after its start (all misses together), then looks up as before; a
  // failed Warm (an older daemon) leaves every miss as before. Default:
  // true.
  bool warm_at_start = true;
};

}  // namespace tunedb

#endif  // TUNEDB_CLIENT_OPTIONS_H_
