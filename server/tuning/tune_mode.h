// TuneMode: how a Tune searches where it must (SearchWhen, force,
// revalidations), and the rules on it every room applies the same way:
// CheckRevalidateOlderDriver (which modes may be combined) and
// RetimesOlderDriver (which record a revalidate_older_driver Tune re-times).
// Header only: the service's request validation uses it without linking the
// core.
//
// Thread safety: plain values and pure functions.
#ifndef TUNEDB_SERVER_TUNING_TUNE_MODE_H_
#define TUNEDB_SERVER_TUNING_TUNE_MODE_H_

#include <string>

#include "absl/status/status.h"
#include "common/driver_version.h"
#include "tunedb/record.h"

namespace tunedb {

// When a Tune's search may run.
enum class SearchWhen {
  kNow,       // as soon as its device's queue reaches it
  kWhenIdle,  // a program's miss: only while no other program uses the GPU
};

// How a Tune searches where it must.
struct TuneMode {
  // Search even if a record exists. Default: no.
  bool force = false;
  SearchWhen when = SearchWhen::kNow;
  // A revalidation (revalidation.h): re-time the choices stored for the
  // problem under this other cuDNN version (cuDNN's encoding, e.g. 91400)
  // instead of searching in full, where they decide; a full search where
  // they do not, or where nothing is stored for it. 0: a full search.
  int revalidate_from_cudnn = 0;
  // A revalidation after a driver upgrade (revalidation.h): where the key's
  // stored record was measured under an older driver than the serving
  // device's (RetimesOlderDriver), re-time its choices instead of serving
  // it, and store the result as the key's record
  // (Record::revalidated_from_driver); a full search where they do not
  // decide. A record under the same or a newer driver, or whose driver text
  // cannot be read, is served as stored; a key with nothing stored is an
  // ordinary miss (asked of the fleet, if any, whose older driver's record
  // is re-timed; else searched in full). Not
  // with force or revalidate_from_cudnn (CheckRevalidateOlderDriver).
  // Default: no.
  bool revalidate_older_driver = false;
  // With kWhenIdle: answer at once (TuneAnswer::held) once the search is
  // held back until the GPU is idle, instead of waiting for it up to the
  // deadline; it still runs and is stored. A program then asks its other
  // misses without waiting seconds for each. Default: no.
  bool return_if_held = false;
};

// INVALID_ARGUMENT naming revalidate_older_driver where `mode` sets it with
// force or revalidate_from_cudnn (it re-times the key's own record, which
// they do not); OK otherwise. The one copy of the rule: Tune checks it, and
// so does the service's validation of a request.
inline absl::Status CheckRevalidateOlderDriver(const TuneMode& mode) {
  if (mode.revalidate_older_driver &&
      (mode.force || mode.revalidate_from_cudnn != 0)) {
    return absl::InvalidArgumentError(
        "revalidate_older_driver: not with force or revalidate_from_cudnn "
        "(it re-times the key's own record, which they do not)");
  }
  return absl::OkStatus();
}

// Whether a Tune that asks to revalidate_older_driver re-times `record`
// (null: nothing stored) on a device running driver `serving`: it was
// measured under an older driver (DriverIsOlder, common/driver_version.h).
// The one copy of the rule: such a record is not served as it is.
inline bool RetimesOlderDriver(bool revalidate_older_driver,
                               const Record* record,
                               const std::string& serving) {
  return revalidate_older_driver && record != nullptr &&
         DriverIsOlder(record->driver_version, serving);
}

}  // namespace tunedb

#endif  // TUNEDB_SERVER_TUNING_TUNE_MODE_H_
