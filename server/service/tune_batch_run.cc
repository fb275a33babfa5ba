#include "server/service/tune_batch_run.h"

#include <algorithm>
#include <utility>

#include "proto/grpc_status.h"

namespace tunedb {

TuneBatchRun::TuneBatchRun(int parallelism, TuneFn tune, WriteFn write)
    : tune_(std::move(tune)), write_(std::move(write)) {
  for (int i = 0; i < std::max(1, parallelism); ++i) {
    workers_.emplace_back([this] { Work(); });
  }
}

TuneBatchRun::~TuneBatchRun() { Finish(); }

void TuneBatchRun::Add(absl::StatusOr<v1::TuneRequest> request) {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](std::deque<Item>* queue) { return queue->size() < kMaxQueued; },
      &queue_));
  queue_.push_back(Item{received_++, std::move(request)});
}

void TuneBatchRun::Finish() {
  {
    absl::MutexLock lock(&mu_);
    reading_done_ = true;
  }
  for (std::thread& t : workers_) {
    if (t.joinable()) t.join();
  }
}

bool TuneBatchRun::HasWorkOrDone() const {
  return !queue_.empty() || reading_done_;
}

void TuneBatchRun::Work() {
  for (;;) {
    Item item;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &TuneBatchRun::HasWorkOrDone));
      if (queue_.empty()) return;
      item = std::move(queue_.front());
      queue_.pop_front();
    }
    Answer(item);
  }
}

void TuneBatchRun::Answer(const Item& item) {
  v1::TuneBatchResponse out;
  out.set_index(item.index);
  absl::Status s = item.request.status();
  if (s.ok()) s = tune_(*item.request, out.mutable_response());
  SetStatusFields(s, &out);
  if (!s.ok()) out.clear_response();
  absl::MutexLock write_lock(&write_mu_);
  {
    absl::MutexLock lock(&mu_);
    out.set_done(++done_);
    out.set_received(received_);
  }
  if (!write_failed_ && !write_(out)) write_failed_ = true;
}

}  // namespace tunedb
