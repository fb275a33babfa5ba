// PinnedGets: Client::Get and GetEngine with a pin (ClientOptions::pin,
// docs/pins.md). Following a pin, the answer is the pinned one, else none
// (counted as a pin miss, or a refusal for another device's pin), and the
// daemon is asked at most for the stored plan of a pinned engine config
// (once per key). Recording, a slot's first answer stands: the usual
// path's answer is given and pinned, unless the slot already holds one; a
// legacy prediction is not given (the caller's own choice is what a run
// uses, and is pinned as none).
//
// Thread safety: thread-safe. The parts passed to the constructor must
// outlive it.
#ifndef TUNEDB_CLIENT_PINNED_GETS_H_
#define TUNEDB_CLIENT_PINNED_GETS_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"
#include "client/client_counters.h"
#include "client/daemon_link.h"
#include "client/pinned_answers.h"
#include "tunedb/client.h"
#include "tunedb/client_options.h"

namespace tunedb {

class PinnedGets {
 public:
  PinnedGets(std::unique_ptr<PinnedAnswers> pin, const ClientOptions& options,
             DaemonLink& link, ClientCounters& counters);

  PinnedAnswers& answers() { return *pin_; }
  const PinnedAnswers& answers() const { return *pin_; }

  // Get with the pin, the constraints final; `unpinned` gives the usual
  // path's answer (called only while recording).
  Answer Get(const ProblemKey& key, const Constraints& constraints,
             absl::FunctionRef<Answer()> unpinned);
  // GetEngine with the pin, for a graph-API key, the constraints final.
  EngineAnswer GetEngine(const ProblemKey& key, const Constraints& constraints,
                         absl::FunctionRef<EngineAnswer()> unpinned);

  // Forgets the stored plans fetched for pinned configs.
  void ClearPlans() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // A followed pin's answer (Answer or EngineAnswer).
  template <typename A>
  A Follow(const ProblemKey& key, const Constraints& constraints);
  // A pinned engine config `a` with its stored plan, for a caller that
  // loads plans.
  void WithStoredPlan(const ProblemKey& key, const Constraints& c,
                      EngineAnswer& a) ABSL_LOCKS_EXCLUDED(mu_);

  const std::unique_ptr<PinnedAnswers> pin_;
  const ClientOptions& options_;
  DaemonLink& link_;
  ClientCounters& counters_;

  absl::Mutex mu_;
  // The keys of pinned engine configs: their records' results that kept a
  // plan, by key text.
  std::map<std::string, std::vector<AlgoResult>> plans_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tunedb

#endif  // TUNEDB_CLIENT_PINNED_GETS_H_
