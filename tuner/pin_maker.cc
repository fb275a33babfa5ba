#include "tuner/pin_maker.h"

#include <optional>
#include <vector>

#include "common/caller_filters.h"

namespace tunedb::tuner {
namespace {

// The constraints the preload asks a record with (interposer.cc,
// interposer_graph.cc).
std::vector<Constraints> SlotsOf(const ConvProblem& p) {
  std::vector<Constraints> out;
  if (p.api == ConvApi::kGraph) {
    for (const CallerFilter& f : FrameworkFilters(p.input_type)) {
      out.push_back(f.constraints);
    }
    return out;
  }
  Constraints fastest;
  Constraints deterministic;
  deterministic.deterministic_only = true;
  return {fastest, deterministic};
}

}  // namespace

PinMaker::PinMaker(const DeviceKey& device, bool deterministic) {
  pin_.device = device;
  pin_.deterministic = deterministic;
  pin_.made_by = "tunedb pin make";
}

void PinMaker::Add(const Record& record) {
  ++problems_;
  for (const Constraints& c : SlotsOf(record.key.problem)) {
    std::optional<AlgoResult> choice = Choose(record, c);
    if (!choice.has_value()) continue;
    PinEntry e;
    e.problem = record.key.problem;
    e.slot = PinSlot::Of(c);
    e.source = PinnedSource::kTuned;
    e.answer = PinnedAnswerOf(*choice, record.key, c.launch_mode);
    pin_.entries.push_back(std::move(e));
  }
}

}  // namespace tunedb::tuner
