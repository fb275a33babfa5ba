#include "tuner/prewarm_runner.h"

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
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
  void SendLoop() ABSL_LOCKS_EXCLUDED(mu_);
  // Waits until an item may be sent and makes its request; false once
  // nothing more is to be sent.
  bool NextRequest(v1::TuneBatchRequest* request)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void WatchLoop() ABSL_LOCKS_EXCLUDED(mu_);
  // One answer: counted, queued again (queue full) or a failure; false if
  // it answers no request of ours.
  bool OnAnswer(const v1::TuneBatchResponse& response)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // After the stream: what was sent, unanswered and not sent, and why the
  // stream ended early if it did.
  void Tally(const grpc::Status& finish) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  CliContext& ctx_;
  v1::TuneDb::Stub* const stub_;
  const std::vector<PrewarmItem>& items_;
  const std::vector<size_t> todo_;
  const PrewarmOptions& options_;

  std::unique_ptr<grpc::ClientContext> context_;
  std::unique_ptr<
      grpc::ClientReaderWriter<v1::TuneBatchRequest, v1::TuneBatchResponse>>
      stream_;
  absl::Mutex mu_;
  // With mu_: an answer came (or the window grew), or a stop.
  absl::CondVar cv_;
  PrewarmSummary& s_ ABSL_GUARDED_BY(mu_);
  // Positions in `todo_` still to send.
  std::deque<size_t> queue_ ABSL_GUARDED_BY(mu_);
  // Stream index -> position.
  std::map<int64_t, size_t> index_to_pos_ ABSL_GUARDED_BY(mu_);
  std::vector<int> attempts_ ABSL_GUARDED_BY(mu_);
  int64_t next_index_ ABSL_GUARDED_BY(mu_) = 0;
  int inflight_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_sending_ ABSL_GUARDED_BY(mu_) = false;
  bool reader_done_ ABSL_GUARDED_BY(mu_) = false;
  Clock::time_point backoff_until_ ABSL_GUARDED_BY(mu_) = Clock::now();
  // In flight at most `window_`; halved when the daemon reports its queue
  // full, grown back by one per `window_` answers (one round trip).
  const int max_window_;
  int window_ ABSL_GUARDED_BY(mu_);
  int answers_at_window_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t answered_ ABSL_GUARDED_BY(mu_) = 0;
};

void BatchTuner::SendLoop() {
  while (true) {
    v1::TuneBatchRequest request;
    {
      absl::MutexLock lock(&mu_);
      if (!NextRequest(&request)) break;
    }
    if (!stream_->Write(request)) break;  // gone; Read() will end too
  }
  stream_->WritesDone();
}

bool BatchTuner::NextRequest(v1::TuneBatchRequest* request) {
  while (true) {
    if (stop_sending_ || (queue_.empty() && inflight_ == 0)) return false;
    if (inflight_ >= window_ || queue_.empty()) {
      cv_.Wait(&mu_);  // for an answer (or a stop)
      continue;
    }
    const Clock::time_point now = Clock::now();
    if (now < backoff_until_) {
      // The daemon's queue was full.
      cv_.WaitWithTimeout(&mu_, absl::FromChrono(backoff_until_ - now));
      continue;
    }
    const size_t pos = queue_.front();
    queue_.pop_front();
    const int64_t index = next_index_++;
    index_to_pos_[index] = pos;
    ++inflight_;
    ++attempts_[pos];
    const ProblemKey& key = items_[todo_[pos]].key;
    v1::TuneRequest* tune = request->mutable_request();
    ToProto(key.problem, tune->mutable_problem());
    ToProto(key.device, tune->mutable_device());
    tune->set_force(options_.force);
    tune->set_revalidate_from_cudnn(options_.revalidate_from_cudnn);
    tune->set_revalidate_older_driver(options_.revalidate_older_driver);
    request->set_expected_total(static_cast<int64_t>(todo_.size()));
    return true;
  }
}

// Watches for an interrupt: stops the sender, then cancels the call if the
// outstanding answers do not arrive within the drain time.
void BatchTuner::WatchLoop() {
  absl::MutexLock lock(&mu_);
  Clock::time_point cancel_at = Clock::time_point::max();
  while (!reader_done_) {
    cv_.WaitWithTimeout(&mu_, absl::Milliseconds(50));
    if (reader_done_) break;
    if (InterruptRequested() && !stop_sending_) {
      stop_sending_ = true;
      s_.interrupted = true;
      cancel_at = Clock::now() + absl::ToChronoMilliseconds(options_.drain);
      cv_.SignalAll();
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
  cv_.SignalAll();
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
    int64_t answered = 0;
    std::string detail;
    {
      absl::MutexLock lock(&mu_);
      if (!OnAnswer(response)) continue;  // not ours; ignore
      answered = answered_;
      detail = Detail(s_);
    }
    bar.Update(answered, detail);
  }
  {
    absl::MutexLock lock(&mu_);
    stop_sending_ = true;
    cv_.SignalAll();
  }
  sender.join();
  grpc::Status finish = stream_->Finish();
  {
    absl::MutexLock lock(&mu_);
    reader_done_ = true;
    cv_.SignalAll();
  }
  watchdog.join();
  absl::MutexLock lock(&mu_);  // the other threads are done
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
