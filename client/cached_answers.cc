#include "client/cached_answers.h"

#include "client/answer_values.h"

namespace tunedb {

CachedAnswers::CachedAnswers(const ClientOptions& options)
    : refresh_interval_(options.refresh_interval),
      negative_ttl_(options.negative_ttl) {
  if (options.cache_capacity > 0) {
    cache_ = std::make_unique<AnswerCache>(options.cache_capacity);
  }
}

CacheSlot CachedAnswers::MakeSlot(const ProblemKey& key,
                                  const Constraints& c) {
  CacheSlot slot;
  if (cache_ == nullptr) return slot;
  const int device = devices_.Intern(key.device);
  if (device != 0 && PackKey(device, key.problem, c, &slot.packed)) {
    slot.packable = true;
    slot.hash = slot.packed.Hash();
  }
  return slot;
}

void CachedAnswers::PutTuned(const CacheSlot& slot, const AlgoResult& choice,
                             int64_t measured_at_us) {
  if (cache_ == nullptr || !slot.packable) return;
  const int64_t deadline =
      refresh_interval_ > absl::ZeroDuration()
          ? DeadlineAfter(CoarseNowMs(), refresh_interval_)
          : kNever;
  cache_->Insert(slot.packed, slot.hash,
                 CacheValueFrom(CacheValue::kTuned, choice, deadline),
                 measured_at_us);
}

void CachedAnswers::PutProvisional(const CacheSlot& slot,
                                   CacheValue::Kind kind,
                                   const AlgoResult& choice) {
  if (cache_ == nullptr || !slot.packable) return;
  const int64_t deadline = DeadlineAfter(CoarseNowMs(), negative_ttl_);
  CacheValue v;
  if (kind == CacheValue::kNone) {
    v.kind = kind;
    v.deadline_ms = deadline;
  } else {
    v = CacheValueFrom(kind, choice, deadline);
  }
  cache_->Insert(slot.packed, slot.hash, v, 0, /*keep_tuned=*/true);
}

void CachedAnswers::RearmRefresh(const CacheSlot& slot) {
  if (cache_ == nullptr || !slot.packable) return;
  // Re-read the entry through the normal path and write it back.
  CacheValue v;
  bool unused = false;
  if (!cache_->Lookup(slot.packed, slot.hash, CoarseNowMs(), &v, &unused) ||
      v.kind != CacheValue::kTuned) {
    return;
  }
  std::optional<int64_t> measured = cache_->MeasuredAt(slot.packed, slot.hash);
  v.deadline_ms = DeadlineAfter(CoarseNowMs(), refresh_interval_);
  cache_->Insert(slot.packed, slot.hash, v, measured.value_or(0));
}

std::optional<int64_t> CachedAnswers::MeasuredAt(const CacheSlot& slot) {
  if (cache_ == nullptr || !slot.packable) return std::nullopt;
  return cache_->MeasuredAt(slot.packed, slot.hash);
}

void CachedAnswers::Clear() {
  if (cache_ != nullptr) cache_->Clear();
}

int64_t CachedAnswers::evictions() const {
  return cache_ != nullptr ? cache_->evictions() : 0;
}

int64_t CachedAnswers::size() const {
  return cache_ != nullptr ? cache_->size() : 0;
}

}  // namespace tunedb
