// PreloadOptions: how libtunedb_preload.so behaves, read once from the
// environment of the program it is loaded into (`tunedb run` sets them).
//
//   TUNEDB_ADDRESS             daemon address (default: the client's,
//                              unix:/run/tunedb/tunedb.sock)
//   TUNEDB_PRELOAD             "off": answer nothing, pass every call through
//   TUNEDB_PRELOAD_LOG         off | summary (default) | calls: the one line
//                              of counters at exit; calls adds one line per
//                              handled call (stderr)
//   TUNEDB_PRELOAD_LOOKUP_MS   deadline of the daemon lookup on a cache miss
//                              (default 200: the first one also connects, and
//                              a miss costs the program a Find anyway)
//   TUNEDB_PRELOAD_DB          the daemon's database file, read when the
//                              daemon is down (default: none)
//   TUNEDB_PRELOAD_EXIT_WAIT_S at exit, wait up to this long for the
//                              background tunes this process asked for
//                              (default 0)
//   TUNEDB_PRELOAD_REPORT      "1": at exit, also add the counters to the
//                              daemon's (ReportCounters; `tunedb stats`),
//                              waiting at most 200 ms (default off)
//   TUNEDB_PRELOAD_GRAPH_CONFIGS for a graph whose record holds no
//                              universal config (interposer.h): how many
//                              engine configs its answer offers at least:
//                              tunedb's last choice is repeated to it,
//                              before the alternatives (default 10,
//                              PyTorch's torch.backends.cudnn.benchmark_limit:
//                              its benchmark then times only tunedb's
//                              choices, never cuDNN's fallback list; 1..64).
//                              A caller that asks for fewer gets the
//                              distinct ones.
//   TUNEDB_PRELOAD_MISSES_FILE a file each miss's key is appended to, one
//                              key text per line, instead of asking the
//                              daemon to tune it (`tunedb run --tune-after`
//                              tunes them once the program has exited;
//                              default: none, misses are tuned at once)
//   TUNEDB_PRELOAD_EMPTY_FALLBACK "off": a fallback-list query is always
//                              cuDNN's, and the choice is repeated as
//                              without a universal config (for a program
//                              whose own filters drop configs PyTorch's
//                              keep; default on)
//   TUNEDB_PRELOAD_STORED_PLANS "off": every plan is built; "on" (the
//                              default): a plan of an answered config whose
//                              search kept its serialized plan loads that
//                              plan instead of compiling
//   TUNEDB_PRELOAD_PREDICT     "on" (the default): a graph key never tuned
//                              is answered from the nearest tuned problems
//                              of its family, and tuned all the same
//                              (ClientOptions::predict_misses); "off": such
//                              a key is a miss, PyTorch's own benchmark
//   TUNEDB_PRELOAD_PREDICT_VERSIONS
//                              "off" (with TUNEDB_PRELOAD_PREDICT=off): a
//                              key stored only under another cuDNN version
//                              is not answered with that version's choice
//                              (ClientOptions::predict_from_other_versions;
//                              default on)
//   TUNEDB_PRELOAD_COMPILE_HORIZON  calls over which a runtime-compiled
//                              engine's build time is weighed (default
//                              10000; 0: not weighed)
//   TUNEDB_PIN                 a pin file (docs/pins.md; `tunedb run --pin`)
//   TUNEDB_PIN_MODE            record | follow (with TUNEDB_PIN): record
//                              every answer into the file at exit, or
//                              answer from the file alone (no daemon). In
//                              both, a problem without an answer gets
//                              cuDNN's first heuristic choice (legacy: its
//                              list in order; graph: its first config of
//                              each list), the same in every process
//   TUNEDB_PIN_MISMATCH        refuse (default) | warn: a followed pin made
//                              for another GPU model, cuDNN, CUDA runtime or
//                              driver, or one that cannot be read, stops
//                              the program (exit 78: kPinRefusedExitCode,
//                              common/pin_file.h)
//                              with the reason; warn follows a mismatched
//                              pin anyway and says how it differs
//   TUNEDB_PIN_DETERMINISTIC   "on": the program asks for deterministic
//                              algorithms only; a recorded pin says so
//   TUNEDB_JOB                 the job this process is a rank of (default:
//                              torchrun's TORCHELASTIC_RUN_ID unless
//                              "none"): the daemon answers the whole job
//                              alike (ClientOptions::job_id), and a miss
//                              gets cuDNN's first heuristic choice, as in a
//                              pinned run
//   TUNEDB_PROGRAM             the program this process runs (default: "cmd-"
//                              and 16 hex digits of the command line's
//                              digest, so the same command run again is the
//                              same program): every lookup names it, and
//                              its next run gets the answers to all of its
//                              keys in one Warm call at its first miss
//                              (ClientOptions::program; an invalid one is
//                              ignored, with the digest used instead)
//   TUNEDB_WARM                "off"/"0": no Warm call at the start
//                              (ClientOptions::warm_at_start; default on)
//   TUNEDB_PRELOAD_LEAD_PLAN_ONLY "off": every plan a caller builds from an
//                              answer with a universal config is built.
//                              Default on: once one plan of such an answer
//                              has built, the answer's other configs fail
//                              to build on that thread (NOT_SUPPORTED,
//                              without calling cuDNN) until it finalizes
//                              anything else, while the GPU has at least
//                              twice that plan's workspace free plus
//                              256 MiB; so a
//                              caller that builds and times every config it
//                              keeps (PyTorch's benchmark mode) builds and
//                              times the first it keeps, tunedb's choice.
//                              Also off while CUDNN_ERRATA_JSON_FILE is set
//                              (cudnn_frontend's errata may drop a plan after
//                              it built)
//
// Thread safety: a plain value.
#ifndef TUNEDB_PRELOAD_PRELOAD_OPTIONS_H_
#define TUNEDB_PRELOAD_PRELOAD_OPTIONS_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "tunedb/client_options.h"
#include "tunedb/record.h"

namespace tunedb::preload {

enum class LogLevel { kOff = 0, kSummary = 1, kCalls = 2 };


struct PreloadOptions {
  // False with TUNEDB_PRELOAD=off. Default: true.
  bool enabled = true;
  // Default: kSummary.
  LogLevel log = LogLevel::kSummary;
  // The client: kBackground misses, no heuristic (a miss passes through),
  // lookups of at most 200 ms.
  ClientOptions client;
  // Default: 0 s.
  double exit_wait_s = 0;
  // Default: 10.
  int graph_configs = 10;
  // Default: false.
  bool report = false;
  // Where misses' keys go instead of a background tune (client.tune_misses
  // is then false). Default: "" (tune them).
  std::string misses_file;
  // Whether the fallback list of a graph answered with a universal config
  // is answered empty (interposer.h). Default: true.
  bool empty_fallback = true;
  // Whether an answer with a universal config is marked lead-only
  // (GraphAnswer::lead_only). Default: true, false with
  // CUDNN_ERRATA_JSON_FILE set.
  bool lead_plan_only = true;
  // Whether answered configs carry their stored plans (GraphAnswer::plans).
  // Default: true (TUNEDB_PRELOAD_STORED_PLANS=off turns it off).
  bool stored_plans = true;
  // The calls over which a runtime-compiled engine's build time is repaid
  // (Constraints::compile_horizon_calls; 0: not weighed). Default: 10,000
  // (kDefaultCompileHorizonCalls); TUNEDB_PRELOAD_COMPILE_HORIZON.
  int64_t compile_horizon_calls = kDefaultCompileHorizonCalls;
  // The pin is in client.pin (path, mode, accept_mismatch, deterministic).
  // A TUNEDB_PIN_MODE or TUNEDB_PIN_MISMATCH that cannot be read, or a mode
  // without TUNEDB_PIN: refuses the pin ("" if none).
  std::string pin_problem;
  // Settings that could not be read, for the exit line ("" if none).
  std::string problems;
};

// The options from the current environment.
PreloadOptions PreloadOptionsFromEnv();

// The program a command line names when TUNEDB_PROGRAM is not set: "cmd-"
// and 16 hex digits of its FNV-1a digest (`command_line` as
// /proc/self/cmdline holds it, each argument ended by a NUL).
std::string ProgramOfCommandLine(absl::string_view command_line);

}  // namespace tunedb::preload

#endif  // TUNEDB_PRELOAD_PRELOAD_OPTIONS_H_
