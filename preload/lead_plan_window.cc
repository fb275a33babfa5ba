#include "preload/lead_plan_window.h"

namespace tunedb::preload {

LeadPlanWindow& LeadPlanWindow::ThisThread() {
  // Trivially destructible: no thread-exit destructor runs for it.
  static thread_local LeadPlanWindow window;
  return window;
}

void LeadPlanWindow::PlanConfigSet(cudnnBackendDescriptor_t plan,
                                   uint64_t offer) {
  pending_plan_ = plan;
  pending_offer_ = offer;
}

LeadPlanWindow::Action LeadPlanWindow::Before(cudnnBackendDescriptor_t d) {
  lead_offer_ = 0;
  if (d != nullptr && d == pending_plan_ && pending_offer_ != 0) {
    const uint64_t offer = pending_offer_;
    pending_plan_ = nullptr;
    pending_offer_ = 0;
    if (offer == open_offer_) return Action::kFollower;
    open_offer_ = 0;
    lead_offer_ = offer;
    return Action::kLead;
  }
  if (d == pending_plan_) {
    pending_plan_ = nullptr;  // a plan of no offer
    pending_offer_ = 0;
  }
  open_offer_ = 0;
  return Action::kBuild;
}

void LeadPlanWindow::LeadBuilt(int64_t workspace) {
  if (lead_offer_ == 0) return;
  open_offer_ = lead_offer_;
  lead_offer_ = 0;
  lead_workspace_ = workspace;
}

}  // namespace tunedb::preload
