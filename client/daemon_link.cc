#include "client/daemon_link.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <random>

#include "client/answer_cache.h"
#include "proto/convert.h"
#include "proto/grpc_status.h"

namespace tunedb {
namespace {

int ClampMs(absl::Duration d) {
  return static_cast<int>(
      std::clamp<int64_t>(absl::ToInt64Milliseconds(d), 1, 1 << 30));
}

void SetDeadline(grpc::ClientContext* context, absl::Duration deadline) {
  context->set_deadline(std::chrono::system_clock::now() +
                        absl::ToChronoMicroseconds(deadline));
}

template <typename Response>
DaemonLink::Reply ReplyFrom(const grpc::Status& status,
                            const Response& response) {
  DaemonLink::Reply reply;
  reply.status = FromGrpcStatus(status);
  if (!status.ok()) return reply;
  reply.measured_at_us = response.record().measured_at_us();
  if (response.has_choice()) {
    absl::StatusOr<AlgoResult> algo = FromProto(response.choice().algo());
    if (algo.ok()) {
      reply.choice = *std::move(algo);
    } else {
      reply.status = absl::InternalError("daemon sent a malformed choice: " +
                                         algo.status().ToString());
    }
  }
  return reply;
}

// A Lookup's reply: ReplyFrom, with the record's time and whether the
// choice is a prediction.
DaemonLink::Reply LookupReply(const grpc::Status& status,
                              const v1::LookupResponse& response) {
  if (status.ok() && response.not_stored()) {  // miss_as_ok's miss
    return DaemonLink::Reply{absl::NotFoundError("nothing stored"),
                             std::nullopt, 0};
  }
  DaemonLink::Reply reply = ReplyFrom(status, response);
  reply.measured_at_us = response.measured_at_us();
  reply.predicted = reply.status.ok() && response.has_prediction();
  return reply;
}

// A Warm's entry as the Lookup it stands for and its reply; nullopt for
// one that cannot be read (a key or constraints that do not decode, a
// status other than OK and NOT_FOUND, a malformed choice).
std::optional<DaemonLink::WarmEntry> EntryFrom(const v1::WarmEntry& entry) {
  absl::StatusOr<ConvProblem> problem = FromProto(entry.request().problem());
  absl::StatusOr<DeviceKey> device = FromProto(entry.request().device());
  absl::StatusOr<Constraints> constraints =
      FromProto(entry.request().constraints());
  if (!problem.ok() || !device.ok() || !constraints.ok()) return std::nullopt;
  DaemonLink::WarmEntry out;
  out.key.problem = *std::move(problem);
  out.key.device = *std::move(device);
  out.constraints = *std::move(constraints);
  if (entry.code() == grpc::StatusCode::OK) {
    out.reply = LookupReply(grpc::Status::OK, entry.response());
    if (!out.reply.status.ok()) return std::nullopt;
  } else if (entry.code() == grpc::StatusCode::NOT_FOUND) {
    out.reply.status = absl::NotFoundError("nothing stored");
  } else {
    return std::nullopt;
  }
  return out;
}

}  // namespace

grpc::ChannelArguments DaemonLink::ChannelArgs(const ClientOptions& options) {
  grpc::ChannelArguments args;
  const int min_ms = ClampMs(options.reconnect_backoff_min);
  const int max_ms = std::max(min_ms, ClampMs(options.reconnect_backoff_max));
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, min_ms);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, min_ms);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, max_ms);
  return args;
}

DaemonLink::DaemonLink(const ClientOptions& options,
                       std::shared_ptr<grpc::Channel> channel)
    : options_(options), channel_(std::move(channel)) {
  stub_ = v1::TuneDb::NewStub(channel_);
}

DaemonLink::~DaemonLink() { Shutdown(); }

bool DaemonLink::Ready() const {
  return CoarseNowMs() >= retry_at_ms_.load(std::memory_order_relaxed);
}

void DaemonLink::UpdateBackoff(const absl::Status& status, bool deadline_means_down) {
  const absl::StatusCode code = status.code();
  const bool down =
      code == absl::StatusCode::kUnavailable ||
      code == absl::StatusCode::kResourceExhausted ||
      (deadline_means_down && code == absl::StatusCode::kDeadlineExceeded);
  if (code == absl::StatusCode::kCancelled) return;
  if (!down) {
    if (failures_.load(std::memory_order_relaxed) != 0) {
      failures_.store(0, std::memory_order_relaxed);
    }
    return;
  }
  const int failures = failures_.fetch_add(1, std::memory_order_relaxed) + 1;
  const double min_ms =
      absl::ToDoubleMilliseconds(options_.reconnect_backoff_min);
  const double max_ms = std::max(
      min_ms, absl::ToDoubleMilliseconds(options_.reconnect_backoff_max));
  double backoff =
      min_ms * static_cast<double>(1ull << std::min(failures - 1, 30));
  backoff = std::min(backoff, max_ms);
  thread_local std::minstd_rand rng(std::random_device{}());
  backoff *= std::uniform_real_distribution<double>(0.8, 1.2)(rng);
  retry_at_ms_.store(CoarseNowMs() + static_cast<int64_t>(backoff),
                     std::memory_order_relaxed);
}

bool DaemonLink::Begin(grpc::ClientContext* context) {
  absl::MutexLock lock(&mu_);
  if (shut_down_) return false;
  active_.insert(context);
  return true;
}

void DaemonLink::End(grpc::ClientContext* context) {
  absl::MutexLock lock(&mu_);
  active_.erase(context);
}

void DaemonLink::Shutdown() {
  absl::MutexLock lock(&mu_);
  shut_down_ = true;
  for (grpc::ClientContext* context : active_) context->TryCancel();
}

DaemonLink::Reply DaemonLink::Lookup(const ProblemKey& key,
                                     const Constraints& constraints,
                                     absl::Duration deadline,
                                     Predict predict) {
  v1::LookupRequest request;
  ToProto(key.problem, request.mutable_problem());
  ToProto(key.device, request.mutable_device());
  ToProto(constraints, request.mutable_constraints());
  request.set_choice_only(true);
  request.set_predict(predict == Predict::kAll);
  request.set_predict_from_other_versions(predict == Predict::kOtherVersions);
  request.set_job(options_.job_id);
  request.set_program(options_.program);
  request.set_miss_as_ok(true);  // an older daemon's NOT_FOUND reads the same
  v1::LookupResponse response;
  grpc::ClientContext context;
  SetDeadline(&context, deadline);
  if (!Begin(&context)) {
    return Reply{absl::CancelledError("client shut down"), std::nullopt, 0};
  }
  grpc::Status status = stub_->Lookup(&context, request, &response);
  End(&context);
  Reply reply = LookupReply(status, response);
  // A prediction from nearby shapes may first read the key's family from
  // a large store: past the deadline it is slow, not down (the daemon keeps
  // the family it read for the next miss).
  UpdateBackoff(reply.status,
                /*deadline_means_down=*/predict != Predict::kAll);
  return reply;
}

absl::StatusOr<std::vector<DaemonLink::WarmEntry>> DaemonLink::Warm(
    const DeviceKey& device, Predict predict, absl::Duration deadline) {
  v1::WarmRequest request;
  request.set_program(options_.program);
  ToProto(device, request.mutable_device());
  request.set_job(options_.job_id);
  request.set_predict(predict == Predict::kAll);
  request.set_predict_from_other_versions(predict == Predict::kOtherVersions);
  request.set_choice_only(true);
  v1::WarmResponse response;
  grpc::ClientContext context;
  SetDeadline(&context, deadline);
  if (!Begin(&context)) return absl::CancelledError("client shut down");
  grpc::Status status = stub_->Warm(&context, request, &response);
  End(&context);
  const absl::Status s = FromGrpcStatus(status);
  UpdateBackoff(s, /*deadline_means_down=*/false);
  if (!s.ok()) return s;
  std::vector<WarmEntry> entries;
  entries.reserve(response.entries_size());
  for (const v1::WarmEntry& entry : response.entries()) {
    if (std::optional<WarmEntry> e = EntryFrom(entry)) {
      entries.push_back(*std::move(e));
    }
  }
  return entries;
}

absl::StatusOr<Record> DaemonLink::StoredRecord(const ProblemKey& key,
                                                absl::Duration deadline) {
  v1::LookupRequest request;
  ToProto(key.problem, request.mutable_problem());
  ToProto(key.device, request.mutable_device());
  v1::LookupResponse response;
  grpc::ClientContext context;
  SetDeadline(&context, deadline);
  if (!Begin(&context)) return absl::CancelledError("client shut down");
  grpc::Status status = stub_->Lookup(&context, request, &response);
  End(&context);
  const absl::Status s = FromGrpcStatus(status);
  UpdateBackoff(s, /*deadline_means_down=*/true);
  if (!s.ok()) return s;
  return FromProto(response.record());
}

absl::Status DaemonLink::ReportCounters(
    const std::string& source, const std::map<std::string, int64_t>& counts,
    absl::Duration deadline) {
  v1::ReportCountersRequest request;
  request.set_source(source);
  for (const auto& [name, count] : counts) {
    (*request.mutable_counts())[name] = count;
  }
  v1::ReportCountersResponse response;
  grpc::ClientContext context;
  SetDeadline(&context, deadline);
  if (!Begin(&context)) return absl::CancelledError("client shut down");
  grpc::Status status = stub_->ReportCounters(&context, request, &response);
  End(&context);
  const absl::Status s = FromGrpcStatus(status);
  UpdateBackoff(s, /*deadline_means_down=*/true);
  return s;
}

DaemonLink::Reply DaemonLink::Tune(const ProblemKey& key,
                                   const Constraints& constraints,
                                   absl::Duration deadline, bool when_idle) {
  v1::TuneRequest request;
  request.set_when_idle(when_idle);
  request.set_return_if_held(when_idle);
  ToProto(key.problem, request.mutable_problem());
  ToProto(key.device, request.mutable_device());
  ToProto(constraints, request.mutable_constraints());
  v1::TuneResponse response;
  grpc::ClientContext context;
  SetDeadline(&context, deadline);
  if (!Begin(&context)) {
    return Reply{absl::CancelledError("client shut down"), std::nullopt, 0};
  }
  grpc::Status status = stub_->Tune(&context, request, &response);
  End(&context);
  Reply reply = ReplyFrom(status, response);
  reply.held = status.ok() && response.held();
  // A Tune past its deadline is a slow search, not a dead daemon.
  UpdateBackoff(reply.status, /*deadline_means_down=*/false);
  return reply;
}

}  // namespace tunedb
