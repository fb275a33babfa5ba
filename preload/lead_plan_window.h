// LeadPlanWindow: the calling thread's view of the plans it builds from a
// lead-only answer (GraphAnswer::lead_only), for cudnnBackendFinalize
// (plan_exports.cc). cudnn_frontend's cudnnGetPlan builds a plan of every
// config a caller kept, one after another on one thread, before anything
// else is finalized; PyTorch's benchmark-off path builds one plan and then
// runs it (a variant pack is finalized) before it builds the next. So:
//
//   - the shim tells it when a plan descriptor is set to a config of an
//     offer (PlanConfigSet; offer 0: a config of none);
//   - Before(d) says what to do with the finalize of `d`: the first plan of
//     an offer builds (kLead: then LeadBuilt with its workspace opens the
//     window); a later plan of the same offer while the window is open may
//     be left unbuilt (kFollower); anything else builds, and any finalize
//     that is not a plan of the open offer closes the window.
//
// A caller that goes on to run its plan, or throws a built plan away and
// builds the next one after finalizing anything else, therefore builds
// every plan it asks for.
//
// Thread safety: one per thread (ThisThread); no locks.
#ifndef TUNEDB_PRELOAD_LEAD_PLAN_WINDOW_H_
#define TUNEDB_PRELOAD_LEAD_PLAN_WINDOW_H_

#include <cudnn.h>

#include <cstdint>

namespace tunedb::preload {

class LeadPlanWindow {
 public:
  enum class Action {
    kBuild,     // cuDNN's own finalize, nothing to note
    kLead,      // build; if it built, LeadBuilt opens the window
    kFollower,  // a later plan of the open offer: may be left unbuilt
  };

  // The calling thread's window.
  static LeadPlanWindow& ThisThread();

  // Plan descriptor `plan` was set to an engine config of offer `offer`
  // (0: of no offer).
  void PlanConfigSet(cudnnBackendDescriptor_t plan, uint64_t offer);

  // Before cudnnBackendFinalize(d).
  Action Before(cudnnBackendDescriptor_t d);

  // The plan Before just called kLead built and needs `workspace` bytes.
  void LeadBuilt(int64_t workspace);

  // The workspace of the open window's lead (meaningful after kFollower).
  int64_t lead_workspace() const { return lead_workspace_; }

 private:
  cudnnBackendDescriptor_t pending_plan_ = nullptr;
  uint64_t pending_offer_ = 0;
  uint64_t open_offer_ = 0;  // 0: no window
  uint64_t lead_offer_ = 0;  // the offer of the last kLead, until LeadBuilt
  int64_t lead_workspace_ = 0;
};

}  // namespace tunedb::preload

#endif  // TUNEDB_PRELOAD_LEAD_PLAN_WINDOW_H_
