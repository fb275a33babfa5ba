// What the search does when an algorithm fails on the device: a broken CUDA
// context (a sticky error) ends the search with the fatal UNAVAILABLE error
// (the worker must restart); any other failure marks that one result kFailed
// and the search goes on.
//
// Thread safety: stateless functions; they read the calling thread's CUDA
// error state.
#ifndef TUNEDB_SERVER_SEARCH_ALGO_FAILURE_H_
#define TUNEDB_SERVER_SEARCH_ALGO_FAILURE_H_

#include "absl/status/status.h"
#include "tunedb/record.h"

namespace tunedb {

// The fatal UNAVAILABLE error (IsFatalDeviceError) if the CUDA context is
// broken, else OK.
absl::Status CheckStickyError();

// After `why` failed a run of `r`: the fatal error if the context is broken;
// else marks `r` kFailed with why's message and returns OK.
absl::Status MarkFailed(AlgoResult& r, const absl::Status& why);

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SEARCH_ALGO_FAILURE_H_
