// PinMaker: a pin (common/pin_file.h) made from stored records instead of a
// program's run (`tunedb pin make`): for each problem, the answer the
// preload would give a warm program, per slot it asks (legacy: fastest and
// deterministic, any workspace; graph: one per framework filter,
// caller_filters.h), chosen as the client chooses (Choose, the default
// compile horizon, stored plans not loaded).
//
// Thread safety: a plain value, used on one thread.
#ifndef TUNEDB_TUNER_PIN_MAKER_H_
#define TUNEDB_TUNER_PIN_MAKER_H_

#include <cstdint>
#include <string>

#include "common/pin_file.h"
#include "tunedb/record.h"

namespace tunedb::tuner {

class PinMaker {
 public:
  PinMaker(const DeviceKey& device, bool deterministic);

  // Pins `record`'s answers (its key's device must be the pin's).
  void Add(const Record& record);
  // A problem nothing is stored for: not pinned (a run gets cuDNN's first
  // heuristic choice for it), counted.
  void AddMissing() { ++missing_; }

  const PinFile& pin() const { return pin_; }
  int64_t problems() const { return problems_; }
  int64_t missing() const { return missing_; }

 private:
  PinFile pin_;
  int64_t problems_ = 0;
  int64_t missing_ = 0;
};

}  // namespace tunedb::tuner

#endif  // TUNEDB_TUNER_PIN_MAKER_H_
