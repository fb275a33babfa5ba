#include "server/tuning/periodic_flusher.h"

#include <utility>

namespace tunedb {

PeriodicFlusher::PeriodicFlusher(absl::Duration interval,
                                 std::function<void()> flush)
    : interval_(interval), flush_(std::move(flush)) {
  thread_ = std::thread([this] { Loop(); });
}

PeriodicFlusher::~PeriodicFlusher() { Stop(); }

void PeriodicFlusher::Stop() {
  bool first = false;
  {
    absl::MutexLock lock(&mu_);
    first = !stopping_;
    stopping_ = true;
  }
  if (first) {
    cv_.SignalAll();
    thread_.join();
  }
  flush_();
}

void PeriodicFlusher::Loop() {
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    cv_.WaitWithTimeout(&mu_, interval_);
    if (stopping_) break;
    mu_.Unlock();
    flush_();
    mu_.Lock();
  }
}

}  // namespace tunedb
