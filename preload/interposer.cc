#include "preload/interposer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/pin_file.h"
#include "cudnn/conv_pass_traits.h"
#include "preload/real_cudnn.h"
#include "tunedb/cudnn_helpers.h"

namespace tunedb::preload {
namespace {

bool Same(const Answer& a, const Answer& b) {
  return a.algo == b.algo && a.math_type == b.math_type;
}

Decision PassThrough(Outcome o) {
  Decision d;
  d.outcome = o;
  return d;
}

TunedChoice ChoiceOf(const Answer& a, std::optional<bool> deterministic) {
  TunedChoice t;
  t.algo = a.algo;
  t.math = ToCudnn(a.math_type);
  t.workspace_bytes = a.workspace_bytes;
  t.deterministic = deterministic;
  return t;
}

}  // namespace

Interposer& Interposer::Instance() {
  // Never destroyed: intercepted calls may come from other threads while
  // the process exits.
  static Interposer* const instance = new Interposer();
  return *instance;
}

Interposer::Interposer() : options_(PreloadOptionsFromEnv()), pid_(getpid()) {
  static RealFunction<decltype(&cudnnGetVersion)> get_version(
      "cudnnGetVersion");
  if (auto f = get_version.get()) cudnn_version_ = static_cast<int>(f());
  device_ = std::make_unique<CurrentDevice>(cudnn_version_);
  if (options_.enabled) {
    ClientOptions client_options = options_.client;
    if (pinned()) {
      if (!options_.pin_problem.empty()) RefusePin(options_.pin_problem);
      client_options.pin.driver_version = device_->DriverVersion();
    }
    absl::StatusOr<std::unique_ptr<Client>> client =
        Client::Create(client_options);
    if (client.ok()) {
      client_ = *std::move(client);
    } else if (pinned()) {
      RefusePin(std::string(client.status().message()));
    }
  }
  std::atexit(&Interposer::AtExit);
}

void Interposer::RefusePin(const std::string& why) {
  std::fprintf(stderr,
               "tunedb preload: %s; stopping the program (exit %d): a pinned "
               "run gets its pin's answers or none (TUNEDB_PIN_MISMATCH=warn "
               "follows a pin of another device anyway)\n",
               why.c_str(), kPinRefusedExitCode);
  std::fflush(stderr);
  std::_Exit(kPinRefusedExitCode);
}

void Interposer::CheckPinOnce(const DeviceKey& device) {
  if (options_.client.pin.mode != PinMode::kFollow || client_ == nullptr) {
    return;
  }
  std::call_once(pin_checked_, [&] {
    const absl::Status s = client_->CheckPin(device);
    if (s.ok()) return;
    if (!options_.client.pin.accept_mismatch) {
      RefusePin(std::string(s.message()));
    }
    std::fprintf(stderr, "tunedb preload: warning: %s; following it anyway\n",
                 std::string(s.message()).c_str());
  });
}

std::string Interposer::PinAtExit() {
  if (client_ == nullptr) return "";
  if (!pinned()) {
    return options_.client.job_id.empty()
               ? ""
               : absl::StrCat("; job ", options_.client.job_id);
  }
  const PinOptions& pin = options_.client.pin;
  const ClientStats stats = client_->Stats();
  if (pin.mode == PinMode::kRecord) {
    const absl::Status s = client_->WritePin();
    return s.ok() ? absl::StrCat("; pin ", pin.path, " recorded")
                  : absl::StrCat("; pin ", pin.path,
                                 " NOT recorded: ", s.message());
  }
  std::string line = absl::StrCat(
      "; pin ", pin.path, " followed: ", stats.pinned_answers,
      " answers from it, ", stats.pin_misses, " problems not in it",
      stats.pin_refused > 0
          ? absl::StrCat(", ", stats.pin_refused, " refused (another device)")
          : "");
  if (stats.pin_unsealed) {
    PinFile unsealed;  // as the client read it: the one warning text
    unsealed.sealed = false;
    absl::StrAppend(&line, "; unsealed: ",
                    UnsealedPinWarning(unsealed, pin.path));
  }
  return line;
}

bool Interposer::Usable(ConvOp op, const Answer& a) {
  if (a.tuned()) return true;
  if (a.source != Source::kPinned || a.algo < 0) return false;
  switch (op) {
    case ConvOp::kForward:
      return a.algo < PassTraits<ConvOp::kForward>::kAlgoCount;
    case ConvOp::kBackwardData:
      return a.algo < PassTraits<ConvOp::kBackwardData>::kAlgoCount;
    case ConvOp::kBackwardFilter:
      return a.algo < PassTraits<ConvOp::kBackwardFilter>::kAlgoCount;
  }
  return false;
}

void Interposer::AppendMissKey(const ProblemKey& key) {
  if (options_.misses_file.empty()) return;
  std::string line = key.ToText() + "\n";
  absl::MutexLock lock(&misses_mu_);
  if (!misses_noted_.insert(line).second) return;
  const int fd = open(options_.misses_file.c_str(),
                      O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return;
  // One write: O_APPEND keeps lines of processes sharing the file whole.
  (void)!write(fd, line.data(), line.size());
  close(fd);
}

void Interposer::AtExit() {
  Interposer& self = Instance();
  if (getpid() != self.pid_) return;  // a forked child: not our counters
  if (self.client_ != nullptr && self.options_.exit_wait_s > 0) {
    self.client_->WaitForBackground(absl::Seconds(self.options_.exit_wait_s));
  }
  std::string reported = self.PinAtExit();
  if (self.options_.report && self.client_ != nullptr &&
      self.counters_.Total() > 0) {
    const absl::Status s = self.client_->ReportCounters(
        "preload", self.counters_.Counts(), absl::Milliseconds(200));
    absl::StrAppend(&reported, s.ok() ? "; reported to the daemon"
                                      : absl::StrCat("; not reported: ",
                                                     s.message()));
  }
  if (self.options_.log == LogLevel::kOff) return;
  std::string line = self.counters_.Summary(self.options_.client.address,
                                            !self.options_.misses_file.empty());
  line += reported;
  if (self.client_ != nullptr) {
    const ClientStats stats = self.client_->Stats();
    absl::StrAppend(&line, "; ", stats.daemon_wait_us / 1000,
                    " ms waited on the daemon; program ",
                    self.options_.client.program, ", ", stats.warm_answers,
                    " answers from the warm call");
  }
  if (!self.options_.problems.empty()) {
    absl::StrAppend(&line, "; settings: ", self.options_.problems);
  }
  std::fprintf(stderr, "%s\n", line.c_str());
}

Decision Interposer::Decide(const ConvCall& call) {
  try {
    return LookUpDecision(call);
  } catch (...) {
    return PassThrough(Outcome::kInternalError);
  }
}

std::optional<Outcome> Interposer::Unavailable() const {
  if (!options_.enabled) return Outcome::kDisabled;
  // The perf structs' layout is cuDNN 9's (the headers this was built with).
  if (cudnn_version_ / 10000 != CUDNN_MAJOR) return Outcome::kCudnnVersion;
  if (client_ == nullptr) return Outcome::kInternalError;
  if (getpid() != pid_) return Outcome::kForked;
  return std::nullopt;
}

std::optional<ProblemKey> Interposer::KeyOnDevice(ConvProblem problem) {
  absl::StatusOr<DeviceKey> device = device_->Get();
  if (!device.ok()) return std::nullopt;
  if (pinned()) CheckPinOnce(*device);
  ProblemKey key;
  key.problem = std::move(problem);
  key.device = *std::move(device);
  return key;
}

Outcome Interposer::MissOutcome(const ProblemKey& key) {
  if (deterministic_misses()) {
    if (options_.client.pin.mode != PinMode::kFollow) AppendMissKey(key);
    return Outcome::kPinMiss;
  }
  if (!client_->DaemonReachable()) return Outcome::kDaemonDown;
  AppendMissKey(key);
  return Outcome::kMiss;
}

Decision Interposer::LookUpDecision(const ConvCall& call) {
  if (const std::optional<Outcome> why = Unavailable()) {
    return PassThrough(*why);
  }
  absl::StatusOr<ConvProblem> problem =
      ProblemFromDescriptors(call.op, call.x, call.w, call.conv, call.y);
  if (!problem.ok()) {
    // Under a pin or a job: cuDNN's heuristic list, as a miss.
    return PassThrough(deterministic_misses() ? Outcome::kPinMiss
                                              : Outcome::kUnsupported);
  }
  const std::optional<ProblemKey> key = KeyOnDevice(*std::move(problem));
  if (!key.has_value()) return PassThrough(Outcome::kNoDevice);
  const std::string key_text =
      options_.log == LogLevel::kCalls ? key->ToText() : std::string();

  Constraints fastest_c;
  if (call.workspace_limit.has_value()) {
    fastest_c.max_workspace_bytes = static_cast<int64_t>(
        std::min<size_t>(*call.workspace_limit, INT64_MAX));
  }
  Answer fastest = client_->Get(*key, fastest_c);
  if (!Usable(call.op, fastest)) {
    Decision d = PassThrough(MissOutcome(*key));
    d.key_text = key_text;
    return d;
  }
  Constraints deterministic_c = fastest_c;
  deterministic_c.deterministic_only = true;
  Answer deterministic = client_->Get(*key, deterministic_c);
  fastest.workspace_bytes = WorkspaceOn(call, key->device, fastest_c, fastest);
  const bool has_deterministic = Usable(call.op, deterministic);
  if (has_deterministic) {
    deterministic.workspace_bytes =
        WorkspaceOn(call, key->device, deterministic_c, deterministic);
  }
  Decision d = PassThrough(Outcome::kHit);
  d.key_text = key_text;
  if (!has_deterministic) {
    // No deterministic choice fits (or none is known yet): the heuristic's
    // flag for the fastest stands.
    d.tuned.push_back(ChoiceOf(fastest, std::nullopt));
  } else if (Same(fastest, deterministic)) {
    d.tuned.push_back(ChoiceOf(fastest, true));
  } else {
    // The fastest overall is not the fastest deterministic one, so it is
    // not deterministic.
    d.tuned.push_back(ChoiceOf(fastest, false));
    d.tuned.push_back(ChoiceOf(deterministic, true));
  }
  return d;
}

int64_t Interposer::WorkspaceOn(const ConvCall& call, const DeviceKey& device,
                                const Constraints& c, const Answer& a) {
  // ChooseAlgo answers from the client's cache here (the answer is cached),
  // and sizes the workspace with cuDNN for the answer's algorithm and math
  // type on descriptors of the same problem.
  absl::StatusOr<CudnnAlgo> chosen =
      ChooseAlgo(*client_, call.handle, device, call.op, call.x, call.w,
                 call.conv, call.y, c);
  if (!chosen.ok() || chosen->source == Source::kHeuristic ||
      chosen->math_type != ToCudnn(a.math_type)) {
    return a.workspace_bytes;
  }
  return std::max<int64_t>(a.workspace_bytes,
                           static_cast<int64_t>(chosen->workspace_bytes));
}

void Interposer::Record(const ConvCall& call, Outcome outcome, int first_algo,
                        const std::string& key_text) {
  counters_.Count(outcome);
  if (options_.log != LogLevel::kCalls) return;
  std::string line = absl::StrCat("tunedb preload: ", ConvOpName(call.op), " ",
                                  OutcomeName(outcome));
  if (outcome == Outcome::kHit) absl::StrAppend(&line, " algo=", first_algo);
  if (!key_text.empty()) absl::StrAppend(&line, " ", key_text);
  std::fprintf(stderr, "%s\n", line.c_str());
}

}  // namespace tunedb::preload
