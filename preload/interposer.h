// Interposer: the decision behind every intercepted legacy cuDNN call: read
// the problem back from the caller's descriptors, ask the tunedb client
// (its in-process cache, else one bounded daemon lookup; a miss asks the
// daemon to tune in the background) and say whether the call is answered
// from tunedb (the tuned choices) or passed through to cuDNN, and why.
//
// One process-wide instance, made on the first intercepted call and never
// destroyed (calls may come until the very end of the process); at exit it
// writes the counters' line (PreloadOptions::log) and optionally waits for
// background tunes. Nothing here throws: every failure is an Outcome that
// passes the call through, and Decide and AnswerGraph make one of an
// allocation failure too (the one thing the standard library throws).
//
// The graph half (AnswerGraph, interposer_graph.cc) answers the results of
// an engine-heuristics descriptor the same way, keyed on the graph-API
// problem of its graph (graph_problem.h), with tunedb's engine configs
// finalized on the caller's own descriptors: the fastest stored config,
// then the fastest without cuDNN's DOWN_CONVERT_INPUTS note (which PyTorch
// always drops), then, fastest first, the fastest without that note for
// each of PyTorch's stricter filters: deterministic; for fp32 without
// tensor cores (TF32 off); both; and both without workspace (the universal
// config). So a caller's own filter keeps one whenever the record holds
// such a config, and the first it keeps is the fastest it keeps. A
// fallback-list query (mode FALLBACK) on a graph whose answer held the
// universal config gets no configs (AnswerFallback), so a caller that builds
// and times both lists (PyTorch's benchmark mode) builds and times tunedb's
// configs only; without a universal config the fallback list is cuDNN's and the
// choices are repeated to PreloadOptions::graph_configs entries instead, so
// that such a caller's limit is reached before it. An answer with the universal
// config is also lead-only (GraphAnswer::lead_only): once the caller built
// one plan of it, the shim fails the builds of its other configs until the
// caller finalizes anything else, while the GPU has room for that plan
// (plan_exports.cc), so such a caller times tunedb's choice alone (or, when
// its filter dropped that, the first config it kept).
//
// Both halves run the same steps: key -> tunedb's choices (a miss passes)
// -> what the caller gets. The graph half's steps after the key are in
// graph_offer.h: candidates from a source (the stored record; CandidatesFor
// takes the first source that has any), those that finalize on a copy of
// the caller's graph, their order, the caller's descriptors filled. Each
// returns its result as a value; what a thread carries from one query to
// the next is its GraphQueryMemory.
//
// Thread safety: thread-safe; Decide is called concurrently.
#ifndef TUNEDB_PRELOAD_INTERPOSER_H_
#define TUNEDB_PRELOAD_INTERPOSER_H_

#include <cudnn.h>
#include <sys/types.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "cudnn/backend_graph.h"
#include "preload/conv_call.h"
#include "preload/current_device.h"
#include "preload/graph_call.h"
#include "preload/graph_offer.h"
#include "preload/preload_counters.h"
#include "preload/preload_options.h"
#include "tunedb/client.h"
#include "tunedb/problem.h"

namespace tunedb::preload {

class Interposer {
 public:
  static Interposer& Instance();

  Decision Decide(const ConvCall& call);
  // Counts a call's final outcome (a hit can still end as a pass-through,
  // e.g. kHeuristicFailed) and logs it at LogLevel::kCalls.
  void Record(const ConvCall& call, Outcome outcome, int first_algo,
              const std::string& key_text = "");

  // A heuristics descriptor's results (graph_call.h), answered from tunedb
  // or passed through; counts fill queries (not count queries).
  GraphAnswer AnswerGraph(const GraphCall& call);

  // What the shim did with a plan (plan_exports.cc: left an alternative of
  // a lead-only answer unbuilt, loaded a stored plan, or found one refused):
  // counts it and logs it at LogLevel::kCalls.
  // `why` (refusals): the reason, logged after the event.
  void RecordPlan(PlanEvent event, absl::string_view why = "");

  const PreloadCounters& counters() const { return counters_; }

 private:
  Interposer();
  Interposer(const Interposer&) = delete;
  Interposer& operator=(const Interposer&) = delete;

  static void AtExit();

  // Whether the program runs under a pin (TUNEDB_PIN or TUNEDB_PIN_MODE).
  bool pinned() const {
    return !options_.client.pin.path.empty() || !options_.pin_problem.empty();
  }
  // Whether a miss gets cuDNN's first heuristic choice, the same in every
  // process: under a pin or a job id.
  bool deterministic_misses() const {
    return pinned() || !options_.client.job_id.empty();
  }
  // Stops the program: its pin cannot be followed because of `why`
  // (kPinRefusedExitCode).
  [[noreturn]] static void RefusePin(const std::string& why);
  // On the first key of a followed pin: a pin of another device is refused
  // (RefusePin), or with TUNEDB_PIN_MISMATCH=warn named once on stderr.
  void CheckPinOnce(const DeviceKey& device);
  // The pin's part of the exit line ("" without a pin), naming a followed
  // pin written before pins carried digests (UnsealedPinWarning); writes a
  // recorded pin.
  std::string PinAtExit();
  // Whether the client's answer `a` for `op` can be given: a tuned one, or
  // a pinned one naming one of the pass's algorithms.
  static bool Usable(ConvOp op, const Answer& a);

  // Why every call passes through before its key is read (disabled,
  // another cuDNN major version, no client, a forked child), or nullopt.
  std::optional<Outcome> Unavailable() const;
  // `problem` on the current device; nullopt without one (kNoDevice).
  std::optional<ProblemKey> KeyOnDevice(ConvProblem problem);
  // A key nothing is stored for: kPinMiss under a pin or a job
  // (deterministic_misses: answered with cuDNN's first heuristic choice;
  // unless the pin is followed, it is still tuned),
  // else kMiss (AppendMissKey) while the daemon is reachable, else
  // kDaemonDown.
  Outcome MissOutcome(const ProblemKey& key);
  // A miss of `key`: with PreloadOptions::misses_file, its key text is
  // appended there (once per process; one write of one line, so processes
  // sharing the file do not interleave), else nothing (the client already
  // asked the daemon to tune it).
  void AppendMissKey(const ProblemKey& key) ABSL_LOCKS_EXCLUDED(misses_mu_);

  // Decide without its guard: key, stored choices, decision. Only an
  // allocation failure can throw.
  Decision LookUpDecision(const ConvCall& call);
  // The workspace the tuned answer `a` (for `c`) needs with this cuDNN: the
  // larger of the stored one and cuDNN's own size for it.
  int64_t WorkspaceOn(const ConvCall& call, const DeviceKey& device,
                      const Constraints& c, const Answer& a);

  // One heuristics query's outcome: what the shim gets, and what
  // RecordGraph counts and logs.
  struct GraphResult {
    GraphAnswer answer;  // not answered: the call passes through
    Outcome outcome = Outcome::kInternalError;
    ConvOp op = ConvOp::kForward;
    int engine = -1;       // the first config given, for kHit
    std::string key_text;  // at LogLevel::kCalls
    // Passes the call through because of `why`.
    GraphResult& Pass(Outcome why) {
      answer = GraphAnswer{};
      outcome = why;
      return *this;
    }
  };
  // A mode-FALLBACK query: no configs on a graph marked answered, else
  // cuDNN's (not counted, as before the graph half).
  GraphAnswer AnswerFallback(const GraphCall& call, GraphQueryMemory& memory);
  // AnswerGraph for modes INSTANT, A and B: the key, then AnswerKey. Only
  // an allocation failure before the key can throw.
  GraphResult AnswerHeuristics(const GraphCall& call, GraphQueryMemory& memory);
  // The rest of the pipeline for `key`, `r` holding its pass and key text:
  // configs (the count query's, else CandidatesFor) -> those that finalize
  // on a copy of the caller's graph (CheckOnGraph) -> the count
  // (CountAnswer) or the caller's descriptors filled (FillAnswer). Only an
  // allocation failure can throw.
  GraphResult AnswerKey(const GraphCall& call, const ProblemKey& key,
                        GraphQueryMemory& memory, GraphResult r);
  // The configs tunedb has for `key`, from the first ConfigSource that has
  // any (StoredConfigs is the one source today); empty: a miss.
  std::vector<TunedEngine> CandidatesFor(const ProblemKey& key);
  using ConfigSource =
      std::vector<TunedEngine> (Interposer::*)(const ProblemKey& key);
  // A source: the configs the stored record gives for graph-API `key`,
  // fastest first (empty on a miss): the choices, then the alternatives
  // (above), the one every filter keeps with no workspace `universal`.
  std::vector<TunedEngine> StoredConfigs(const ProblemKey& key);
  // A count query: how many configs FillAnswer would give; `memory` keeps
  // `checked` for the fill query that follows.
  GraphResult CountAnswer(const GraphCall& call, CheckedConfigs checked,
                          GraphQueryMemory& memory, GraphResult r);
  // A fill query: the caller's descriptors filled with `checked` in
  // OfferOrder, then cuDNN's own list if it asks for more; `graph` (the
  // copy they were finalized on) is kept.
  GraphResult FillAnswer(const GraphCall& call, const CheckedConfigs& checked,
                         BackendDescriptor graph, GraphResult r)
      ABSL_LOCKS_EXCLUDED(kept_mu_);
  void RecordGraph(const GraphResult& r);

  // The graph copies answered configs were finalized on, kept for the life
  // of the process: cuDNN may refer to them from the caller's configs and
  // plans. At most kMaxKeptGraphs (a few KB each); past that, calls pass.
  static constexpr size_t kMaxKeptGraphs = 1 << 16;
  absl::Mutex misses_mu_;
  std::unordered_set<std::string> misses_noted_ ABSL_GUARDED_BY(misses_mu_);
  absl::Mutex kept_mu_;
  std::vector<BackendDescriptor> kept_graphs_ ABSL_GUARDED_BY(kept_mu_);

  const PreloadOptions options_;
  const pid_t pid_;
  std::once_flag pin_checked_;
  // The loaded cuDNN's version, 0 if unknown.
  int cudnn_version_ = 0;
  std::unique_ptr<CurrentDevice> device_;
  std::unique_ptr<Client> client_;  // null if it could not be created
  PreloadCounters counters_;
};

}  // namespace tunedb::preload

#endif  // TUNEDB_PRELOAD_INTERPOSER_H_
