#include "server/service/server.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "proto/wire_limits.h"
#include "server/finder/simulated_finder.h"
#include "server/service/activated_listener.h"
#include "server/service/daemon_metrics.h"
#include "server/service/nvml_gpu_use.h"
#include "server/service/tunedb_service.h"
#include "server/worker/worker_supervisor.h"
#include "spdlog/spdlog.h"
#include "store/fleet/fleet_database.h"
#include "tunedb/version.h"

namespace tunedb {
namespace {

constexpr char kVersion[] = TUNEDB_VERSION_STRING;

// Removes a stale socket file left by a daemon that died; refuses to take
// over a socket that another process is still serving.
absl::Status PrepareSocketPath(const std::string& path) {
  std::error_code ec;
  std::filesystem::path p(path);
  if (p.has_parent_path()) {
    std::filesystem::create_directories(p.parent_path(), ec);
    if (ec) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot create the socket folder ",
                       p.parent_path().string(), ": ", ec.message()));
    }
  }
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return absl::OkStatus();
  if (!S_ISSOCK(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " exists and is not a socket"));
  }
  if (path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    return absl::InvalidArgumentError(
        absl::StrCat("socket path too long: ", path));
  }
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  bool live =
      connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  if (live) {
    return absl::FailedPreconditionError(
        absl::StrCat("another server is listening on ", path));
  }
  unlink(path.c_str());
  return absl::OkStatus();
}

// Stands in for the GPU finder on a host where no GPU can be used (no
// driver, no device): the daemon still serves stored records, and Tune
// fails with FAILED_PRECONDITION giving the reason.
class NoDeviceFinder final : public Finder {
 public:
  NoDeviceFinder(std::string name, std::string reason)
      : name_(std::move(name)), reason_(std::move(reason)) {}
  std::string Name() const override { return name_; }
  absl::StatusOr<std::vector<DeviceInfo>> Devices() override {
    return std::vector<DeviceInfo>();
  }
  absl::StatusOr<SearchResult> Search(int, const ConvProblem&,
                                      const SearchOptions&) override {
    return absl::FailedPreconditionError(
        absl::StrCat("no GPU to search on: ", reason_));
  }

 private:
  std::string name_;
  std::string reason_;
};

absl::StatusOr<std::unique_ptr<Finder>> MakeFinder(
    const ServerOptions& options) {
  if (options.finder == "simulated") {
    ASSIGN_OR_RETURN(
        SimulatedFinder::Options o,
        SimulatedFinder::Options::Parse(options.simulated_options));
    return std::unique_ptr<Finder>(new SimulatedFinder(o));
  }
  if (options.finder == "cudnn" || options.finder == "simulated-workers") {
    WorkerSupervisor::Options o;
    o.worker_path = options.worker_path;  // "": next to this executable
    o.library_dirs = options.cudnn_library_dirs;
    o.worker_finder = options.finder == "cudnn" ? "cudnn" : "simulated";
    o.simulated_options = options.simulated_options;
    absl::StatusOr<std::unique_ptr<WorkerSupervisor>> supervisor =
        WorkerSupervisor::Create(o);
    if (!supervisor.ok()) {
      if (supervisor.status().code() == absl::StatusCode::kInvalidArgument) {
        return supervisor.status();
      }
      spdlog::warn("no GPU search workers: {}; serving stored records only",
                   supervisor.status().ToString());
      return std::unique_ptr<Finder>(new NoDeviceFinder(
          o.worker_finder, std::string(supervisor.status().message())));
    }
    return std::unique_ptr<Finder>(std::move(*supervisor));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown finder '", options.finder,
                   "' (expected cudnn, simulated or simulated-workers)"));
}

// The credentials of the TCP listener (null without one), once the options
// name something to listen on; warns about TCP without TLS and about TLS
// files that no listener uses.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ListenerCredentials(
    const ServerOptions& options) {
  if (options.unix_socket.empty() && options.tcp_address.empty() &&
      options.activated_sockets.empty()) {
    return absl::InvalidArgumentError(
        "neither a Unix socket nor a TCP address to listen on");
  }
  std::shared_ptr<grpc::ServerCredentials> tcp_credentials;
  if (!options.tcp_address.empty()) {
    ASSIGN_OR_RETURN(tcp_credentials,
                     TcpServerCredentials(options.tls, options.insecure_tcp));
    if (options.insecure_tcp) {
      spdlog::warn(
          "listening on TCP {} without TLS (--insecure-tcp): anyone who can "
          "reach the port can read and fill the database",
          options.tcp_address);
    }
  } else if (!options.tls.cert_file.empty() ||
             !options.tls.client_ca_file.empty()) {
    spdlog::warn("TLS files given but no --listen: the Unix socket is plain");
  }
  return tcp_credentials;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Server>> Server::BuildAndStart(
    const ServerOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<Finder> finder, MakeFinder(options));
  return BuildAndStart(options, std::move(finder));
}

absl::StatusOr<std::unique_ptr<Server>> Server::BuildAndStart(
    const ServerOptions& options, std::unique_ptr<Finder> finder) {
  ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> tcp_credentials,
                   ListenerCredentials(options));
  std::unique_ptr<Server> server(new Server());
  server->options_ = options;
  if (!options.activated_sockets.empty()) {
    server->options_.unix_socket.clear();  // systemd's sockets replace it
  }
  server->finder_ = std::move(finder);
  RETURN_IF_ERROR(server->OpenStore());
  RETURN_IF_ERROR(server->StartCore());
  RETURN_IF_ERROR(server->StartGrpc(options, std::move(tcp_credentials)));
  RETURN_IF_ERROR(server->StartHealthServer());
  server->SetHealth(true);
  server->LogStarted();
  return server;
}

absl::Status Server::OpenStore() {
  if (options_.store.path != ":memory:") {
    std::filesystem::path parent =
        std::filesystem::path(options_.store.path).parent_path();
    std::error_code ec;
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  }
  ASSIGN_OR_RETURN(store_, Store::Open(options_.store));
  return StartFleet();
}

GpuUse* Server::WatchGpuUse() {
  if (options_.miss_searches != "when-idle") {
    spdlog::info("programs' misses are searched at once (--miss-searches {})",
                 options_.miss_searches);
    return nullptr;
  }
  if (options_.finder != "cudnn") return nullptr;  // no GPU to watch
  absl::StatusOr<std::unique_ptr<NvmlGpuUse>> nvml =
      NvmlGpuUse::Create(options_.busy_percent);
  if (!nvml.ok()) {
    spdlog::warn("cannot see which programs use the GPUs ({}): programs' "
                 "misses are searched at once",
                 std::string(nvml.status().message()));
    return nullptr;
  }
  gpu_use_ = *std::move(nvml);
  return gpu_use_.get();
}

absl::Status Server::StartCore() {
  TuningCore::Options core_options = options_.core;
  // One given in the options (tests) is kept.
  if (core_options.gpu_use == nullptr) core_options.gpu_use = WatchGpuUse();
  if (!options_.metrics_address.empty()) {
    DaemonMetrics::Options metrics_options;
    metrics_options.address = options_.metrics_address;
    metrics_options.version = kVersion;
    ASSIGN_OR_RETURN(metrics_, DaemonMetrics::Create(metrics_options));
    core_options.on_search =
        [metrics = metrics_.get(),
         chained = options_.core.on_search](const SearchEvent& event) {
          metrics->ObserveSearch(event);
          if (chained) chained(event);
        };
  }
  ASSIGN_OR_RETURN(core_, TuningCore::Create(core_options, store_.get(),
                                             finder_.get(), fleet_.get()));
  if (fleet_ && options_.fleet_jobs) {
    fleet_job_runner_ = std::make_unique<FleetJobRunner>(
        options_.fleet_job_runner, fleet_jobs_.get(), fleet_.get(),
        core_.get());
  }
  if (options_.revalidate_on_start && !core_->devices().empty()) {
    revalidator_ = std::make_unique<BackgroundRevalidator>(
        options_.revalidation, store_.get(), core_.get(), fleet_.get());
  }
  TuneDbService::Options service_options;
  service_options.version = kVersion;
  service_options.job_answers = options_.job_answers;
  service_options.fleet_store = fleet_store_.get();
  service_ = std::make_unique<TuneDbService>(core_.get(), service_options);
  if (metrics_) {
    absl::Status serving = metrics_->Serve(
        core_.get(), dynamic_cast<const WorkerSupervisor*>(finder_.get()),
        &service_->job_answers());
    if (!serving.ok()) {
      core_->Shutdown(absl::ZeroDuration());
      return serving;
    }
  }
  return absl::OkStatus();
}

absl::Status Server::StartGrpc(
    const ServerOptions& options,
    std::shared_ptr<grpc::ServerCredentials> tcp_credentials) {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  if (!options.activated_sockets.empty()) {
    activated_ =
        ActivatedListener::Register(options.activated_sockets, builder);
  } else if (!options.unix_socket.empty()) {
    RETURN_IF_ERROR(PrepareSocketPath(options.unix_socket));
    builder.AddListeningPort("unix:" + options.unix_socket,
                             grpc::InsecureServerCredentials());
  }
  if (!options.tcp_address.empty()) {
    builder.AddListeningPort(options.tcp_address, tcp_credentials, &tcp_port_);
  }
  builder.RegisterService(service_.get());
  builder.SetMaxReceiveMessageSize(kDaemonMaxReceiveBytes);
  grpc_server_ = builder.BuildAndStart();
  if (!grpc_server_) {
    core_->Shutdown(absl::ZeroDuration());
    return absl::UnavailableError(absl::StrCat(
        "could not listen on ", options.unix_socket.empty()
                                    ? options.tcp_address
                                    : "unix:" + options.unix_socket));
  }
  if (activated_) {
    activated_->Start();
    spdlog::info(
        "socket activation: serving {} socket(s) from systemd (unix:{}); "
        "--socket is not used",
        options.activated_sockets.size(), activated_->path());
  } else if (!options.unix_socket.empty() &&
             chmod(options.unix_socket.c_str(), 0660) != 0) {
    spdlog::warn("chmod 0660 {} failed: {}", options.unix_socket,
                 std::strerror(errno));
  }
  return absl::OkStatus();
}

absl::Status Server::StartHealthServer() {
  if (options_.health_address.empty()) return absl::OkStatus();
  // Its own server, holding only the default health service, whose status
  // follows the main server's (SetHealth when started and in Shutdown).
  grpc::ServerBuilder probe;
  probe.AddListeningPort(options_.health_address,
                         grpc::InsecureServerCredentials(), &health_port_);
  health_server_ = probe.BuildAndStart();
  if (!health_server_) {
    Shutdown(absl::ZeroDuration());
    return absl::UnavailableError(absl::StrCat(
        "could not listen on ", options_.health_address, " (health probes)"));
  }
  return absl::OkStatus();
}

void Server::LogStarted() const {
  spdlog::info(
      "tunedbd {} listening on {} (finder: {}, {} device(s), "
      "database {})",
      kVersion, address(), finder_->Name(), core_->devices().size(),
      options_.store.path);
  for (const DeviceInfo& d : core_->devices()) {
    spdlog::info("  device {}: {}", d.ordinal, d.key.ToText());
  }
  if (metrics_) {
    spdlog::info("metrics on http://{}/metrics",
                 DaemonMetrics::ListenAddress(options_.metrics_address));
  }
}

absl::Status Server::StartFleet() {
  if (options_.fleet.url.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::shared_ptr<FleetDatabase> db,
                   FleetDatabase::Create(options_.fleet));
  absl::Status schema = db->EnsureSchema();
  if (absl::IsUnavailable(schema) || absl::IsDeadlineExceeded(schema)) {
    // A database that is down must not keep the hosts from serving: the
    // daemon starts, searches locally, and connects when it can.
    spdlog::warn("fleet: {}; starting without it and retrying",
                 schema.ToString());
  } else if (!schema.ok()) {
    // Wrong credentials, a newer schema, a bad URL: a configuration error.
    return schema;
  }
  fleet_store_ = std::make_unique<FleetStore>(db);
  fleet_jobs_ = std::make_unique<FleetJobs>(db);
  fleet_ = std::make_unique<FleetSync>(options_.fleet_sync, fleet_store_.get(),
                                       store_.get());
  spdlog::info("fleet database {} (lease {}, holder {})", db->display(),
               absl::FormatDuration(options_.fleet_sync.lease),
               fleet_->holder());
  return absl::OkStatus();
}

Server::~Server() { Shutdown(absl::ZeroDuration()); }

std::string Server::address() const {
  if (activated_) return "unix:" + activated_->path();
  if (!options_.unix_socket.empty()) return "unix:" + options_.unix_socket;
  std::string host =
      options_.tcp_address.substr(0, options_.tcp_address.rfind(':'));
  if (host.empty() || host == "0.0.0.0" || host == "[::]") host = "127.0.0.1";
  return absl::StrCat(host, ":", tcp_port_);
}

void Server::Shutdown(absl::Duration drain) {
  if (shut_down_) return;
  shut_down_ = true;
  spdlog::info("shutting down (drain {})", absl::FormatDuration(drain));
  if (service_) service_->StopAccepting();
  SetHealth(false);
  if (activated_) activated_->Stop();
  // Fleet jobs stop claiming first (a job running now is left to its lease).
  if (fleet_job_runner_) fleet_job_runner_->Stop();
  if (revalidator_) revalidator_->Stop();
  // Searches first: waiters get their answer (or UNAVAILABLE) so the calls
  // blocked on them can finish before gRPC's deadline cancels them.
  if (core_) core_->Shutdown(drain);
  // The last outbox drain; what cannot be published waits for the next run.
  if (fleet_) fleet_->Stop();
  if (grpc_server_) {
    grpc_server_->Shutdown(absl::ToChronoTime(absl::Now() + drain));
    grpc_server_->Wait();
  }
  if (health_server_) {
    health_server_->Shutdown(absl::ToChronoTime(absl::Now()));
    health_server_->Wait();
  }
  if (store_) {
    absl::Status s = store_->Checkpoint();
    if (!s.ok()) spdlog::warn("final checkpoint failed: {}", s.ToString());
  }
  activated_.reset();  // closes systemd's sockets; their files stay
  metrics_.reset();    // its scrapes read the core and the service
  fleet_job_runner_.reset();
  revalidator_.reset();
  core_.reset();
  fleet_.reset();
  fleet_jobs_.reset();
  fleet_store_.reset();
  store_.reset();
  if (!options_.unix_socket.empty()) unlink(options_.unix_socket.c_str());
  spdlog::info("stopped");
}

void Server::SetHealth(bool serving) {
  for (grpc::Server* s : {grpc_server_.get(), health_server_.get()}) {
    grpc::HealthCheckServiceInterface* health =
        s ? s->GetHealthCheckService() : nullptr;
    if (health) health->SetServingStatus(serving);
  }
}

void Server::Wait() {
  if (grpc_server_) grpc_server_->Wait();
}

}  // namespace tunedb
