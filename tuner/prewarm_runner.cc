#include "tuner/prewarm_runner.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
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
  if (options.force) {
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

}  // namespace

absl::StatusOr<PrewarmSummary> RunPrewarm(CliContext& ctx,
                                          const std::vector<PrewarmItem>& items,
                                          const PrewarmOptions& options) {
  auto stub_or = ctx.Stub();
  if (!stub_or.ok()) return stub_or.status();
  v1::TuneDb::Stub* stub = *stub_or;
  PrewarmSummary s;
  s.shapes = static_cast<int64_t>(items.size());

  auto todo_or = CheckStored(ctx, stub, items, options, s);
  if (!todo_or.ok()) return todo_or.status();
  std::vector<size_t> todo = std::move(*todo_or);
  if (options.limit > 0 && static_cast<int64_t>(todo.size()) > options.limit) {
    s.not_sent += static_cast<int64_t>(todo.size()) - options.limit;
    todo.resize(options.limit);
  }
  if (s.interrupted) {
    s.not_sent += static_cast<int64_t>(todo.size());
    return s;
  }
  if (todo.empty()) return s;

  ProgressBar bar(ctx.err(), ctx.io().stderr_is_tty, "tuning",
                  static_cast<int64_t>(todo.size()));
  if (!options.progress) bar.Silence();

  auto context = ctx.NewStreamContext();
  auto stream = stub->TuneBatch(context.get());

  std::mutex mu;
  std::condition_variable cv;
  std::deque<size_t> queue;  // positions in `todo` still to send
  for (size_t p = 0; p < todo.size(); ++p) queue.push_back(p);
  std::map<int64_t, size_t> index_to_pos;  // stream index -> position
  std::vector<int> attempts(todo.size(), 0);
  int64_t next_index = 0;
  int inflight = 0;
  bool stop_sending = false;
  bool reader_done = false;
  Clock::time_point backoff_until = Clock::now();
  // In flight at most `window`; halved when the daemon reports its queue
  // full, grown back by one per `window` answers (one round trip).
  const int max_window = std::max(1, options.window);
  int window = max_window;
  int answers_at_window = 0;

  std::thread sender([&] {
    std::unique_lock<std::mutex> lock(mu);
    while (true) {
      if (stop_sending || (queue.empty() && inflight == 0)) break;
      if (inflight >= window || queue.empty()) {
        cv.wait(lock);  // for an answer (or a stop)
        continue;
      }
      if (Clock::now() < backoff_until) {
        cv.wait_until(lock, backoff_until);  // the daemon's queue was full
        continue;
      }
      const size_t pos = queue.front();
      queue.pop_front();
      const int64_t index = next_index++;
      index_to_pos[index] = pos;
      ++inflight;
      ++attempts[pos];
      v1::TuneBatchRequest request;
      const ProblemKey& key = items[todo[pos]].key;
      ToProto(key.problem, request.mutable_request()->mutable_problem());
      ToProto(key.device, request.mutable_request()->mutable_device());
      request.mutable_request()->set_force(options.force);
      request.set_expected_total(static_cast<int64_t>(todo.size()));
      lock.unlock();
      const bool ok = stream->Write(request);
      lock.lock();
      if (!ok) break;  // the stream is gone; Read() will end too
    }
    lock.unlock();
    stream->WritesDone();
  });

  // Watches for an interrupt: stops the sender, then cancels the call if
  // the outstanding answers do not arrive within the drain time.
  std::thread watchdog([&] {
    std::unique_lock<std::mutex> lock(mu);
    Clock::time_point cancel_at = Clock::time_point::max();
    while (!reader_done) {
      cv.wait_for(lock, std::chrono::milliseconds(50));
      if (reader_done) break;
      if (InterruptRequested() && !stop_sending) {
        stop_sending = true;
        s.interrupted = true;
        cancel_at = Clock::now() + absl::ToChronoMilliseconds(options.drain);
        cv.notify_all();
      }
      if (Clock::now() >= cancel_at) {
        context->TryCancel();
        cancel_at = Clock::time_point::max();
      }
    }
  });

  int64_t answered = 0;
  v1::TuneBatchResponse response;
  while (stream->Read(&response)) {
    std::unique_lock<std::mutex> lock(mu);
    auto it = index_to_pos.find(response.index());
    if (it == index_to_pos.end()) continue;  // not ours; ignore
    const size_t pos = it->second;
    index_to_pos.erase(it);
    --inflight;
    const PrewarmItem& item = items[todo[pos]];
    const absl::Status answer = StatusFromFields(response);
    if (!absl::IsResourceExhausted(answer) && ++answers_at_window >= window) {
      window = std::min(max_window, window + 1);
      answers_at_window = 0;
    }
    if (answer.ok()) {
      const v1::TuneResponse& r = response.response();
      if (r.searched()) {
        ++s.searched;
        s.search_ms_spent += r.record().search_ms();
      } else {
        ++s.hits;
      }
      s.search_ms_saved += r.record().search_ms();
      ++answered;
    } else if (absl::IsResourceExhausted(answer) &&
               (attempts[pos] <= options.max_retries || stop_sending)) {
      // The daemon's queue is full: try again later (after an interrupt it
      // stays queued and is reported as not sent).
      queue.push_back(pos);
      window = std::max(1, window / 2);
      answers_at_window = 0;
      backoff_until = Clock::now() + std::chrono::milliseconds(
                                         std::min(1000, 100 * attempts[pos]));
    } else {
      AddFailure(s, item,
                 absl::StrCat(
                     response.message().empty() ? "error" : response.message(),
                     " (code ", response.code(), ")"));
      ++answered;
    }
    cv.notify_all();
    lock.unlock();
    bar.Update(answered, Detail(s));
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    stop_sending = true;
    cv.notify_all();
  }
  sender.join();
  grpc::Status finish = stream->Finish();
  {
    std::lock_guard<std::mutex> lock(mu);
    reader_done = true;
    cv.notify_all();
  }
  watchdog.join();
  bar.Finish(Detail(s));

  // Sent: reached the daemon and not waiting to be retried.
  for (size_t pos : queue) attempts[pos] = 0;
  for (int a : attempts) s.sent += a > 0 ? 1 : 0;
  s.unanswered = static_cast<int64_t>(index_to_pos.size());
  s.not_sent += static_cast<int64_t>(queue.size());
  if (!finish.ok() &&
      !(s.interrupted && finish.error_code() == grpc::StatusCode::CANCELLED)) {
    s.stream_status = FromGrpcStatus(finish);
  }
  return s;
}

}  // namespace tunedb::tuner
