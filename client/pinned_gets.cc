#include "client/pinned_gets.h"

#include <optional>
#include <type_traits>
#include <utility>

#include "absl/status/statusor.h"
#include "client/answer_values.h"
#include "common/config_identity.h"
#include "common/sealed_plan.h"

namespace tunedb {
namespace {

PinnedSource PinnedSourceOf(Source s) {
  switch (s) {
    case Source::kNone:
      return PinnedSource::kNone;
    case Source::kHeuristic:
      return PinnedSource::kHeuristic;
    case Source::kPredicted:
      return PinnedSource::kPredicted;
    default:
      return PinnedSource::kTuned;
  }
}

Answer AnswerOf(const PinEntry& e) {
  if (e.source == PinnedSource::kNone) return Answer{};
  return Answer{Source::kPinned, e.answer.algo, e.answer.math_type,
                e.answer.workspace_bytes};
}

EngineAnswer EngineAnswerOf(const PinEntry& e) {
  if (e.source == PinnedSource::kNone) return EngineAnswer{};
  return EngineAnswer{Source::kPinned, e.answer};
}

// Whether the pinned entry `e` is the answer `a` (a recording client's
// slot may have been pinned by another thread first).
bool SameAnswer(const PinEntry& e, const Answer& a) {
  if (!a.ok()) return e.source == PinnedSource::kNone;
  return e.source != PinnedSource::kNone && SameConfig(e.answer, ResultOf(a));
}

bool SameAnswer(const PinEntry& e, const EngineAnswer& a) {
  if (!a.ok()) return e.source == PinnedSource::kNone;
  return e.source != PinnedSource::kNone &&
         SameAlgoAndKnobs(e.answer, a.config);
}

}  // namespace

PinnedGets::PinnedGets(std::unique_ptr<PinnedAnswers> pin,
                       const ClientOptions& options, DaemonLink& link,
                       ClientCounters& counters)
    : pin_(std::move(pin)),
      options_(options),
      link_(link),
      counters_(counters) {}

Answer PinnedGets::Get(const ProblemKey& key, const Constraints& constraints,
                       absl::FunctionRef<Answer()> unpinned) {
  if (pin_->following()) return Follow<Answer>(key, constraints);
  if (std::optional<PinEntry> e = pin_->Find(key, constraints)) {
    counters_.Add(kPinnedAnswers);
    return AnswerOf(*e);
  }
  Answer a = unpinned();
  // A legacy answer is launched only if measured (the preload's rule): a
  // prediction is passed over for the caller's own choice, cuDNN's first
  // heuristic one, so that is what the run uses and what is pinned.
  if (a.source == Source::kPredicted) a = Answer{};
  AlgoResult given = ResultOf(a);
  // A deterministic-only slot's answer is a deterministic algorithm.
  given.deterministic = constraints.deterministic_only;
  const PinEntry e =
      pin_->Remember(key, constraints, PinnedSourceOf(a.source), given);
  return SameAnswer(e, a) ? a : AnswerOf(e);
}

EngineAnswer PinnedGets::GetEngine(
    const ProblemKey& key, const Constraints& constraints,
    absl::FunctionRef<EngineAnswer()> unpinned) {
  if (pin_->following()) return Follow<EngineAnswer>(key, constraints);
  EngineAnswer a = unpinned();
  // Recording (or a job): the slot's first answer stands. While it is the
  // live one, the live one is given, with its stored plan.
  const PinEntry e =
      pin_->Remember(key, constraints, PinnedSourceOf(a.source), a.config);
  if (SameAnswer(e, a)) return a;
  counters_.Add(kPinnedAnswers);
  a = EngineAnswerOf(e);
  WithStoredPlan(key, constraints, a);
  return a;
}

void PinnedGets::ClearPlans() {
  absl::MutexLock lock(&mu_);
  plans_.clear();
}

// The pinned answer, else none, counted as a miss (or a refusal: the pin is
// another device's). The daemon is never asked for the answer.
template <typename A>
A PinnedGets::Follow(const ProblemKey& key, const Constraints& constraints) {
  if (std::optional<PinEntry> e = pin_->Find(key, constraints)) {
    counters_.Add(kPinnedAnswers);
    if constexpr (std::is_same_v<A, Answer>) {
      return AnswerOf(*e);
    } else {
      EngineAnswer a = EngineAnswerOf(*e);
      WithStoredPlan(key, constraints, a);
      return a;
    }
  }
  counters_.Add(options_.pin.accept_mismatch ||
                        pin_->Mismatch(key.device).empty()
                    ? kPinMisses
                    : kPinRefused);
  counters_.Add(kNoneAnswers);
  return A{};
}

// Where a daemon holds the key's record, the pin gives the answer and the
// daemon only what compiling it would make (the plan is opened for this
// key and config, sealed_plan.h). The record is asked for once per key;
// without a daemon, the caller builds the config.
void PinnedGets::WithStoredPlan(const ProblemKey& key, const Constraints& c,
                                EngineAnswer& a) {
  if (!c.loads_stored_plans || !a.ok()) {
    a.config.plan.clear();
    return;
  }
  // The pin's own plan, sealed for this key and config, first.
  if (!a.config.plan.empty()) {
    if (UnsealPlan(key, a.config).ok()) return;
    counters_.Add(kPlansRefused);
  }
  if (options_.lookup_deadline <= absl::ZeroDuration()) return;
  const std::string text = key.ToText();
  std::vector<AlgoResult> with_plans;
  bool known = false;
  {
    absl::MutexLock lock(&mu_);
    auto it = plans_.find(text);
    if (it != plans_.end()) {
      with_plans = it->second;
      known = true;
    }
  }
  if (!known) {
    if (!link_.Ready()) return;
    counters_.Add(kDaemonCalls);
    absl::StatusOr<Record> record = Waited(counters_, [&] {
      return link_.StoredRecord(key, options_.lookup_deadline);
    });
    if (record.ok()) {
      for (AlgoResult& r : record->results) {
        if (!r.plan.empty()) with_plans.push_back(std::move(r));
      }
    } else if (!absl::IsNotFound(record.status())) {
      counters_.Add(kDaemonErrors);
      return;  // asked again next time
    }
    absl::MutexLock lock(&mu_);
    plans_[text] = with_plans;
  }
  for (const AlgoResult& r : with_plans) {
    if (r.algo != a.config.algo || r.knobs != a.config.knobs) continue;
    a.config.plan = r.plan;
    if (!UnsealPlan(key, a.config).ok()) counters_.Add(kPlansRefused);
    return;
  }
}

}  // namespace tunedb
