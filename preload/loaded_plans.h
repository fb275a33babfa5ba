// LoadedPlans: the program's execution plans that the shim loaded from a
// stored plan instead of building them (plan_exports.cc), so that one that
// fails to run is replaced by the same engine config built by cuDNN
// (execute_exports.cc): a stored plan may load and still not run
// (docs/preload.md, "Stored plans"), and a program whose other configs were
// left unbuilt (the lead-plan window) would otherwise have no plan left to
// run.
//
// Thread safety: thread-safe; Any() is one atomic load, the rest take one
// mutex.
#ifndef TUNEDB_PRELOAD_LOADED_PLANS_H_
#define TUNEDB_PRELOAD_LOADED_PLANS_H_

#include <cudnn.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>

#include "absl/base/thread_annotations.h"
#include "preload/shim_mutex.h"

namespace tunedb::preload {

class LoadedPlans {
 public:
  struct Plan {
    cudnnBackendDescriptor_t config = nullptr;  // the program's engine config
    int64_t workspace = -1;  // what the loaded plan said it needs
    // The same config built by cuDNN, once the loaded plan failed to run;
    // owned here.
    cudnnBackendDescriptor_t replacement = nullptr;
    bool replacement_failed = false;  // a build was tried and failed
  };

  static LoadedPlans& Instance();

  // Whether any plan was ever loaded (every other execute passes straight
  // through).
  bool Any() const { return any_.load(std::memory_order_acquire); }

  // Plan `plan` of `config` was loaded from its stored form. Returns the
  // replacement of an earlier plan at the same address that was never
  // forgotten, for the caller to destroy; null if none.
  cudnnBackendDescriptor_t Add(cudnnBackendDescriptor_t plan,
                               cudnnBackendDescriptor_t config,
                               int64_t workspace) ABSL_LOCKS_EXCLUDED(mu_);

  // What is known of `plan`; nullopt if it was not loaded.
  std::optional<Plan> Find(cudnnBackendDescriptor_t plan) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // The replacement of loaded plan `plan`: the one built before, else
  // build(what is known of it), once (a null result is remembered as a
  // failed build; *built_now says this call tried). Null if `plan` was not
  // loaded or has no replacement. The build runs under the lock, so the
  // program's engine config cannot be forgotten (destroyed) meanwhile.
  using BuildFn = std::function<cudnnBackendDescriptor_t(const Plan&)>;
  cudnnBackendDescriptor_t Replace(cudnnBackendDescriptor_t plan,
                                   const BuildFn& build, bool* built_now)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Forgets `plan` (destroyed by the program) and returns its replacement,
  // for the caller to destroy; null if none. A destroyed engine config
  // leaves the plans loaded for it without a way to build them again.
  cudnnBackendDescriptor_t Forget(cudnnBackendDescriptor_t d)
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  std::atomic<bool> any_{false};
  // A ShimMutex (std::mutex): the shim has no absl::Mutex (shim_mutex.h).
  mutable ShimMutex mu_;
  std::unordered_map<cudnnBackendDescriptor_t, Plan> plans_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace tunedb::preload

#endif  // TUNEDB_PRELOAD_LOADED_PLANS_H_
