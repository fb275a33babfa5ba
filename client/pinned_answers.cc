#include "client/pinned_answers.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/config_identity.h"

namespace tunedb {

absl::StatusOr<std::unique_ptr<PinnedAnswers>> PinnedAnswers::Open(
    const PinOptions& options) {
  if ((options.mode == PinMode::kOff) != options.path.empty()) {
    return absl::InvalidArgumentError(
        "ClientOptions.pin: a path needs a mode (record or follow), and a "
        "mode a path");
  }
  std::unique_ptr<PinnedAnswers> p(new PinnedAnswers(options));
  // Not shared yet: the lock only keeps the annotations whole.
  absl::MutexLock lock(&p->mu_);
  if (options.mode == PinMode::kRecord) {
    p->pin_.made_by = "tunedb run";
    p->pin_.deterministic = options.deterministic;
    p->pin_.driver_version = options.driver_version;
    return p;
  }
  absl::StatusOr<PinFile> pin = ReadPinFile(options.path);
  if (!pin.ok()) {
    return absl::Status(pin.status().code(),
                        absl::StrCat("pin: ", pin.status().message()));
  }
  p->pin_ = *std::move(pin);
  p->has_device_ = true;
  for (PinEntry& e : p->pin_.entries) {
    p->by_problem_[e.problem.ToText()].push_back(std::move(e));
  }
  p->pin_.entries.clear();
  return p;
}

std::unique_ptr<PinnedAnswers> PinnedAnswers::InMemory() {
  PinOptions options;
  options.mode = PinMode::kRecord;
  return std::unique_ptr<PinnedAnswers>(new PinnedAnswers(options));
}

std::optional<PinEntry> PinnedAnswers::Find(const ProblemKey& key,
                                            const Constraints& c) const {
  const std::string problem = key.problem.ToText();
  const PinSlot slot = PinSlot::Of(c);
  absl::MutexLock lock(&mu_);
  if (!has_device_) return std::nullopt;
  if (key.device != pin_.device && !options_.accept_mismatch) {
    return std::nullopt;
  }
  auto it = by_problem_.find(problem);
  if (it == by_problem_.end()) return std::nullopt;
  const PinEntry* near = nullptr;
  for (const PinEntry& e : it->second) {
    if (e.slot == slot) return e;
    PinSlot other = e.slot;
    other.max_workspace_bytes = slot.max_workspace_bytes;
    const bool fits = !c.max_workspace_bytes.has_value() ||
                      e.answer.workspace_bytes <= *c.max_workspace_bytes;
    if (near == nullptr && other == slot && fits) near = &e;
  }
  if (near == nullptr) return std::nullopt;
  return *near;
}

PinEntry PinnedAnswers::Remember(const ProblemKey& key, const Constraints& c,
                                 PinnedSource source,
                                 const AlgoResult& answer) {
  PinEntry entry;
  entry.problem = key.problem;
  entry.slot = PinSlot::Of(c);
  entry.source = source;
  if (source != PinnedSource::kNone) {
    entry.answer = PinnedAnswerOf(answer, key, c.launch_mode);
  }
  const std::string problem = key.problem.ToText();
  absl::MutexLock lock(&mu_);
  if (!has_device_) {
    pin_.device = key.device;
    has_device_ = true;
  }
  if (key.device != pin_.device) return entry;
  std::vector<PinEntry>& slots = by_problem_[problem];
  for (const PinEntry& e : slots) {
    if (e.slot == entry.slot) return e;
  }
  slots.push_back(entry);
  ++remembered_;
  if (key.problem.api != ConvApi::kGraph) ShareDeterminism(slots);
  return entry;
}

void PinnedAnswers::ShareDeterminism(std::vector<PinEntry>& slots) {
  for (const PinEntry& det : slots) {
    if (det.source == PinnedSource::kNone || !det.answer.deterministic) {
      continue;
    }
    for (PinEntry& e : slots) {
      if (e.source != PinnedSource::kNone &&
          SameAlgoAndKnobs(e.answer, det.answer)) {
        e.answer.deterministic = true;
      }
    }
  }
}

absl::Status PinnedAnswers::Write() {
  PinFile pin;
  {
    absl::MutexLock lock(&mu_);
    if (options_.mode != PinMode::kRecord || options_.path.empty() ||
        remembered_ == written_) {
      return absl::OkStatus();
    }
    pin = pin_;
    for (const auto& [problem, slots] : by_problem_) {
      pin.entries.insert(pin.entries.end(), slots.begin(), slots.end());
    }
  }
  absl::Status s = MergePinFile(options_.path, pin);
  if (s.ok()) {
    absl::MutexLock lock(&mu_);
    written_ = std::max(written_, pin.entries.size());
  }
  return s;
}

std::string PinnedAnswers::Mismatch(const DeviceKey& device) const {
  absl::MutexLock lock(&mu_);
  if (!has_device_) return "";
  return PinMismatch(pin_, device, options_.driver_version);
}

bool PinnedAnswers::unsealed() const {
  absl::MutexLock lock(&mu_);
  return following() && !pin_.sealed;
}

}  // namespace tunedb
