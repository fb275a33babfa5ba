#include "preload/loaded_plans.h"

namespace tunedb::preload {

LoadedPlans& LoadedPlans::Instance() {
  static LoadedPlans* const instance = new LoadedPlans();  // never destroyed
  return *instance;
}

void LoadedPlans::Add(cudnnBackendDescriptor_t plan,
                      cudnnBackendDescriptor_t config, cudnnHandle_t handle,
                      int64_t workspace) {
  std::lock_guard<std::mutex> lock(mu_);
  Plan& p = plans_[plan];
  p = Plan{};
  p.config = config;
  p.handle = handle;
  p.workspace = workspace;
  any_.store(true, std::memory_order_release);
}

std::optional<LoadedPlans::Plan> LoadedPlans::Find(
    cudnnBackendDescriptor_t plan) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = plans_.find(plan);
  if (it == plans_.end()) return std::nullopt;
  return it->second;
}

cudnnBackendDescriptor_t LoadedPlans::SetReplacement(
    cudnnBackendDescriptor_t plan, cudnnBackendDescriptor_t replacement) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = plans_.find(plan);
  if (it == plans_.end()) return replacement;  // destroyed meanwhile
  if (it->second.replacement != nullptr) return it->second.replacement;
  it->second.replacement = replacement;
  it->second.replacement_failed = replacement == nullptr;
  return replacement;
}

cudnnBackendDescriptor_t LoadedPlans::Forget(cudnnBackendDescriptor_t d) {
  std::lock_guard<std::mutex> lock(mu_);
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
