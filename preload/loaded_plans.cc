#include "preload/loaded_plans.h"

namespace tunedb::preload {

LoadedPlans& LoadedPlans::Instance() {
  static LoadedPlans* const instance = new LoadedPlans();  // never destroyed
  return *instance;
}

cudnnBackendDescriptor_t LoadedPlans::Add(cudnnBackendDescriptor_t plan,
                                          cudnnBackendDescriptor_t config,
                                          int64_t workspace) {
  ShimMutexLock lock(&mu_);
  Plan& p = plans_[plan];
  cudnnBackendDescriptor_t stale = p.replacement;
  p = Plan{};
  p.config = config;
  p.workspace = workspace;
  any_.store(true, std::memory_order_release);
  return stale;
}

std::optional<LoadedPlans::Plan> LoadedPlans::Find(
    cudnnBackendDescriptor_t plan) const {
  ShimMutexLock lock(&mu_);
  auto it = plans_.find(plan);
  if (it == plans_.end()) return std::nullopt;
  return it->second;
}

cudnnBackendDescriptor_t LoadedPlans::Replace(cudnnBackendDescriptor_t plan,
                                              const BuildFn& build,
                                              bool* built_now) {
  *built_now = false;
  ShimMutexLock lock(&mu_);
  auto it = plans_.find(plan);
  if (it == plans_.end()) return nullptr;
  Plan& p = it->second;
  if (p.replacement == nullptr && !p.replacement_failed) {
    *built_now = true;
    p.replacement = build(p);
    p.replacement_failed = p.replacement == nullptr;
  }
  return p.replacement;
}

cudnnBackendDescriptor_t LoadedPlans::Forget(cudnnBackendDescriptor_t d) {
  ShimMutexLock lock(&mu_);
  for (auto& [plan, p] : plans_) {
    if (p.config == d) p.config = nullptr;
  }
  auto it = plans_.find(d);
  if (it == plans_.end()) return nullptr;
  cudnnBackendDescriptor_t replacement = it->second.replacement;
  plans_.erase(it);
  return replacement;
}

}  // namespace tunedb::preload
