// LoadedPlans: the program's execution plans that the shim loaded from a
// stored plan instead of building them (plan_exports.cc), so that one that
// fails to run is replaced by the same engine config built by cuDNN
// (execute_exports.cc): a stored plan may load and still not run
// (docs/preload.md, "Stored plans"), and a program whose other configs were
// left unbuilt (the lead-plan window) would otherwise have no plan left to
// run.
//
// Thread safety: thread-safe; Any() is one atomic load.
#ifndef TUNEDB_PRELOAD_LOADED_PLANS_H_
#define TUNEDB_PRELOAD_LOADED_PLANS_H_

#include <cudnn.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>

namespace tunedb::preload {

class LoadedPlans {
 public:
  struct Plan {
    cudnnBackendDescriptor_t config = nullptr;  // the program's engine config
    cudnnHandle_t handle = nullptr;             // the one it loaded with
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

  // Plan `plan` of `config` was loaded from its stored form.
  void Add(cudnnBackendDescriptor_t plan, cudnnBackendDescriptor_t config,
           cudnnHandle_t handle, int64_t workspace);

  // What is known of `plan`; nullopt if it was not loaded.
  std::optional<Plan> Find(cudnnBackendDescriptor_t plan) const;

  // The built replacement of `plan` (null: the build failed). Returns the
  // replacement to use: `replacement`, or one another thread set first (the
  // caller then destroys its own).
  cudnnBackendDescriptor_t SetReplacement(cudnnBackendDescriptor_t plan,
                                          cudnnBackendDescriptor_t replacement);

  // Forgets `plan` (destroyed by the program) and returns its replacement,
  // for the caller to destroy; null if none. A destroyed engine config
  // leaves the plans loaded for it without a way to build them again.
  cudnnBackendDescriptor_t Forget(cudnnBackendDescriptor_t d);

 private:
  std::atomic<bool> any_{false};
  mutable std::mutex mu_;
  std::unordered_map<cudnnBackendDescriptor_t, Plan> plans_;  // GUARDED_BY(mu_)
};

}  // namespace tunedb::preload

#endif  // TUNEDB_PRELOAD_LOADED_PLANS_H_
