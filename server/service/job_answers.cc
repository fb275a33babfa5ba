#include "server/service/job_answers.h"

#include <functional>
#include <utility>

#include "common/valid_key.h"
#include "server/service/wire_message.h"

namespace tunedb {
namespace {

// Heap bytes a string holds beyond its object (none within the small-string
// buffer).
int64_t HeapBytes(const std::string& s) {
  constexpr size_t kInline = 15;
  return s.capacity() > kInline ? static_cast<int64_t>(s.capacity()) + 1 : 0;
}

// A std::map node's header (colour and three links) before its value.
constexpr int64_t kNodeHeaderBytes = 32;

// A plan and an error text are the big parts of a result; the ranks agree
// on the config without them.
void StripResult(v1::AlgoResult* result) {
  result->clear_plan();
  result->clear_error();
}

}  // namespace

std::string JobAnswers::KeptAnswer(const v1::LookupResponse& response) {
  v1::LookupResponse kept;
  if (response.has_choice()) {
    *kept.mutable_choice() = response.choice();
    StripResult(kept.mutable_choice()->mutable_algo());
  }
  kept.set_record_id(response.record_id());
  kept.set_measured_at_us(response.measured_at_us());
  if (response.has_prediction()) {
    v1::Prediction* p = kept.mutable_prediction();
    p->set_confidence(response.prediction().confidence());
    p->set_distance(response.prediction().distance());
    for (const v1::AlgoResult& c : response.prediction().candidates()) {
      v1::AlgoResult* candidate = p->add_candidates();
      *candidate = c;
      StripResult(candidate);
    }
  }
  std::string out = DeterministicBytes(kept);
  while (out.size() > kMaxAnswerBytes && kept.has_prediction() &&
         kept.prediction().candidates_size() > 1) {
    kept.mutable_prediction()->mutable_candidates()->RemoveLast();
    out = DeterministicBytes(kept);
  }
  out.shrink_to_fit();
  return out;
}

absl::Status JobAnswers::Fix(const std::string& job, const std::string& slot,
                             absl::Status status,
                             v1::LookupResponse* response, absl::Time now) {
  // Two independent 64-bit hashes of the slot's text.
  const SlotId id{KeyTextHash(slot), std::hash<std::string>()(slot)};
  std::string answer = KeptAnswer(*response);
  absl::MutexLock lock(&mu_);
  Sweep(now);
  auto j = jobs_.find(job);
  if (j != jobs_.end()) {
    j->second.last_used = now;
    auto it = j->second.answers.find(id);
    if (it != j->second.answers.end()) {
      const Fixed& fixed = it->second;
      // The fresh answer agrees: it is given whole (with its record).
      if (status.code() == fixed.code && answer == fixed.answer) return status;
      response->Clear();
      response->ParseFromString(fixed.answer);
      return absl::Status(fixed.code, fixed.message);
    }
  }
  std::string message(status.message().substr(0, kMaxMessageBytes));
  message.shrink_to_fit();
  Keep(job, id, Fixed{status.code(), std::move(message), std::move(answer)},
       now);
  return status;
}

void JobAnswers::Keep(const std::string& job, SlotId slot, Fixed fixed,
                      absl::Time now) {
  const int64_t answer_bytes =
      static_cast<int64_t>(sizeof(std::pair<const SlotId, Fixed>)) +
      kNodeHeaderBytes + HeapBytes(fixed.message) + HeapBytes(fixed.answer);
  const bool new_job = jobs_.count(job) == 0;
  const int64_t job_bytes =
      new_job ? static_cast<int64_t>(sizeof(std::pair<const std::string, Job>)) +
                    kNodeHeaderBytes + HeapBytes(job)
              : 0;
  if (entries_ >= options_.max_entries ||
      bytes_ + answer_bytes + job_bytes > options_.max_bytes) {
    ++not_fixed_;
    return;
  }
  Job& j = jobs_[job];
  j.last_used = now;
  j.answers.emplace(slot, std::move(fixed));
  j.bytes += answer_bytes + job_bytes;
  ++entries_;
  bytes_ += answer_bytes + job_bytes;
}

void JobAnswers::Sweep(absl::Time now) {
  if (now - swept_ < absl::Minutes(1)) return;
  swept_ = now;
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    if (now - it->second.last_used > options_.idle_ttl) {
      entries_ -= static_cast<int64_t>(it->second.answers.size());
      bytes_ -= it->second.bytes;
      it = jobs_.erase(it);
    } else {
      ++it;
    }
  }
}

int64_t JobAnswers::jobs() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(jobs_.size());
}

int64_t JobAnswers::entries() const {
  absl::MutexLock lock(&mu_);
  return entries_;
}

int64_t JobAnswers::bytes() const {
  absl::MutexLock lock(&mu_);
  return bytes_;
}

int64_t JobAnswers::not_fixed() const {
  absl::MutexLock lock(&mu_);
  return not_fixed_;
}

}  // namespace tunedb
