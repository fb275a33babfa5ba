#include "tuner/prewarm_runner.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "proto/convert.h"
#include "proto/grpc_status.h"
#include "tuner/interrupt.h"
#include "tuner/progress_bar.h"

namespace tunedb::tuner {
namespace {

using Clock = std::chrono::steady_clock;

std::string Detail(const PrewarmSummary& s) {
  return absl::StrCat(s.searched, " searched, ", s.hits, " hits, ", s.failed,
                      " failed");
}

void AddFailure(PrewarmSummary& s, const PrewarmItem& item,
                const std::string& error) {
  ++s.failed;
  s.failures.push_back({item.source, item.key.ToText(), error});
}

// Phase 1: which items still need a search.
absl::StatusOr<std::vector<size_t>> CheckStored(
    CliContext& ctx, v1::TuneDb::Stub* stub,
    const std::vector<PrewarmItem>& items, const PrewarmOptions& options,
    PrewarmSummary& s) {
  std::vector<size_t> todo;
  if (options.force || options.revalidate_older_driver) {
    for (size_t i = 0; i < items.size(); ++i) todo.push_back(i);
    return todo;
  }
  ProgressBar bar(ctx.err(), ctx.io().stderr_is_tty, "checking", items.size());
  if (!options.progress || items.size() < 64) bar.Silence();
  for (size_t i = 0; i < items.size(); ++i) {
    if (InterruptRequested()) {
      s.interrupted = true;
      s.not_sent += items.size() - i;
      break;
    }
    v1::LookupRequest request;
    ToProto(items[i].key.problem, request.mutable_problem());
    ToProto(items[i].key.device, request.mutable_device());
    v1::LookupResponse response;
    auto context = ctx.NewContext();
    grpc::Status status = stub->Lookup(context.get(), request, &response);
    if (status.ok()) {
      ++s.already_stored;
      s.search_ms_saved += response.record().search_ms();
    } else if (status.error_code() == grpc::StatusCode::NOT_FOUND) {
      todo.push_back(i);
    } else if (status.error_code() == grpc::StatusCode::UNAVAILABLE ||
               status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
      return FromGrpcStatus(status);
    } else {
      AddFailure(s, items[i], absl::StrCat("lookup: ", status.error_message()));
    }
    bar.Update(i + 1, absl::StrCat(s.already_stored, " stored"));
  }
  bar.Finish(absl::StrCat(s.already_stored, " stored"));
  return todo;
}

// Phase 2: streams the items at `todo` through one TuneBatch call, at most
// a window of them in flight, into the summary. A sender thread writes, the
// calling thread reads the answers, and a watchdog thread turns an interrupt
// into a stop (and, after the drain time, a cancel).
class BatchTuner {
 public:
  BatchTuner(CliContext& ctx, v1::TuneDb::Stub* stub,
             const std::vector<PrewarmItem>& items, std::vector<size_t> todo,
             const PrewarmOptions& options, PrewarmSummary& s)
      : ctx_(ctx),
        stub_(stub),
        items_(items),
        todo_(std::move(todo)),
        options_(options),
        s_(s),
        attempts_(todo_.size(), 0),
        max_window_(std::max(1, options.window)),
        window_(max_window_) {
    for (size_t p = 0; p < todo_.size(); ++p) queue_.push_back(p);
  }

  void Run();

 private:
  void SendLoop();
  void WatchLoop();
  // One answer, under mu_: counted, queued again (queue full) or a failure;
  // false if it answers no request of ours.
  bool OnAnswer(const v1::TuneBatchResponse& response);
  // After the stream: what was sent, unanswered and not sent, and why the
  // stream ended early if it did.
  void Tally(const grpc::Status& finish);

  CliContext& ctx_;
  v1::TuneDb::Stub* const stub_;
  const std::vector<PrewarmItem>& items_;
  const std::vector<size_t> todo_;
  const PrewarmOptions& options_;
  PrewarmSummary& s_;

  std::unique_ptr<grpc::ClientContext> context_;
  std::unique_ptr<
      grpc::ClientReaderWriter<v1::TuneBatchRequest, v1::TuneBatchResponse>>
      stream_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<size_t> queue_;  // positions in `todo_` still to send
  std::map<int64_t, size_t> index_to_pos_;  // stream index -> position
  std::vector<int> attempts_;
  int64_t next_index_ = 0;
  int inflight_ = 0;
  bool stop_sending_ = false;
  bool reader_done_ = false;
  Clock::time_point backoff_until_ = Clock::now();
  // In flight at most `window_`; halved when the daemon reports its queue
  // full, grown back by one per `window_` answers (one round trip).
  const int max_window_;
  int window_;
  int answers_at_window_ = 0;
  int64_t answered_ = 0;
};

void BatchTuner::SendLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    if (stop_sending_ || (queue_.empty() && inflight_ == 0)) break;
    if (inflight_ >= window_ || queue_.empty()) {
      cv_.wait(lock);  // for an answer (or a stop)
      continue;
    }
    if (Clock::now() < backoff_until_) {
      cv_.wait_until(lock, backoff_until_);  // the daemon's queue was full
      continue;
    }
    const size_t pos = queue_.front();
    queue_.pop_front();
    const int64_t index = next_index_++;
    index_to_pos_[index] = pos;
    ++inflight_;
    ++attempts_[pos];
    v1::TuneBatchRequest request;
    const ProblemKey& key = items_[todo_[pos]].key;
    ToProto(key.problem, request.mutable_request()->mutable_problem());
    ToProto(key.device, request.mutable_request()->mutable_device());
    request.mutable_request()->set_force(options_.force);
    request.mutable_request()->set_revalidate_from_cudnn(
        options_.revalidate_from_cudnn);
    request.mutable_request()->set_revalidate_older_driver(
        options_.revalidate_older_driver);
    request.set_expected_total(static_cast<int64_t>(todo_.size()));
    lock.unlock();
    const bool ok = stream_->Write(request);
    lock.lock();
    if (!ok) break;  // the stream is gone; Read() will end too
  }
  lock.unlock();
  stream_->WritesDone();
}

// Watches for an interrupt: stops the sender, then cancels the call if the
// outstanding answers do not arrive within the drain time.
void BatchTuner::WatchLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  Clock::time_point cancel_at = Clock::time_point::max();
  while (!reader_done_) {
    cv_.wait_for(lock, std::chrono::milliseconds(50));
    if (reader_done_) break;
    if (InterruptRequested() && !stop_sending_) {
      stop_sending_ = true;
      s_.interrupted = true;
      cancel_at = Clock::now() + absl::ToChronoMilliseconds(options_.drain);
      cv_.notify_all();
    }
    if (Clock::now() >= cancel_at) {
      context_->TryCancel();
      cancel_at = Clock::time_point::max();
    }
  }
}

bool BatchTuner::OnAnswer(const v1::TuneBatchResponse& response) {
  auto it = index_to_pos_.find(response.index());
  if (it == index_to_pos_.end()) return false;
  const size_t pos = it->second;
  index_to_pos_.erase(it);
  --inflight_;
  const absl::Status answer = StatusFromFields(response);
  if (!absl::IsResourceExhausted(answer) && ++answers_at_window_ >= window_) {
    window_ = std::min(max_window_, window_ + 1);
    answers_at_window_ = 0;
  }
  if (answer.ok()) {
    const v1::TuneResponse& r = response.response();
    if (r.searched()) {
      ++s_.searched;
      s_.search_ms_spent += r.record().search_ms();
    } else {
      ++s_.hits;
    }
    s_.search_ms_saved += r.record().search_ms();
    ++answered_;
    if (options_.on_answer) options_.on_answer(todo_[pos], r);
  } else if (absl::IsResourceExhausted(answer) &&
             (attempts_[pos] <= options_.max_retries || stop_sending_)) {
    // The daemon's queue is full: try again later (after an interrupt it
    // stays queued and is reported as not sent).
    queue_.push_back(pos);
    window_ = std::max(1, window_ / 2);
    answers_at_window_ = 0;
    backoff_until_ = Clock::now() + std::chrono::milliseconds(
                                        std::min(1000, 100 * attempts_[pos]));
  } else {
    AddFailure(
        s_, items_[todo_[pos]],
        absl::StrCat(response.message().empty() ? "error" : response.message(),
                     " (code ", response.code(), ")"));
    ++answered_;
  }
  cv_.notify_all();
  return true;
}

void BatchTuner::Tally(const grpc::Status& finish) {
  // Sent: reached the daemon and not waiting to be retried.
  for (size_t pos : queue_) attempts_[pos] = 0;
  for (int a : attempts_) s_.sent += a > 0 ? 1 : 0;
  s_.unanswered = static_cast<int64_t>(index_to_pos_.size());
  s_.not_sent += static_cast<int64_t>(queue_.size());
  if (!finish.ok() &&
      !(s_.interrupted && finish.error_code() == grpc::StatusCode::CANCELLED)) {
    s_.stream_status = FromGrpcStatus(finish);
  }
}

void BatchTuner::Run() {
  ProgressBar bar(ctx_.err(), ctx_.io().stderr_is_tty, "tuning",
                  static_cast<int64_t>(todo_.size()));
  if (!options_.progress) bar.Silence();
  context_ = ctx_.NewStreamContext();
  stream_ = stub_->TuneBatch(context_.get());
  std::thread sender([this] { SendLoop(); });
  std::thread watchdog([this] { WatchLoop(); });
  v1::TuneBatchResponse response;
  while (stream_->Read(&response)) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!OnAnswer(response)) continue;  // not ours; ignore
    lock.unlock();
    bar.Update(answered_, Detail(s_));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_sending_ = true;
    cv_.notify_all();
  }
  sender.join();
  grpc::Status finish = stream_->Finish();
  {
    std::lock_guard<std::mutex> lock(mu_);
    reader_done_ = true;
    cv_.notify_all();
  }
  watchdog.join();
  bar.Finish(Detail(s_));
  Tally(finish);
}

}  // namespace

absl::StatusOr<PrewarmSummary> RunPrewarm(CliContext& ctx,
                                          const std::vector<PrewarmItem>& items,
                                          const PrewarmOptions& options) {
  auto stub = ctx.Stub();
  if (!stub.ok()) return stub.status();
  PrewarmSummary s;
  s.shapes = static_cast<int64_t>(items.size());

  auto todo = CheckStored(ctx, *stub, items, options, s);
  if (!todo.ok()) return todo.status();
  if (options.limit > 0 && static_cast<int64_t>(todo->size()) > options.limit) {
    s.not_sent += static_cast<int64_t>(todo->size()) - options.limit;
    todo->resize(options.limit);
  }
  if (s.interrupted) {
    s.not_sent += static_cast<int64_t>(todo->size());
    return s;
  }
  if (todo->empty()) return s;
  BatchTuner(ctx, *stub, items, *std::move(todo), options, s).Run();
  return s;
}

}  // namespace tunedb::tuner
