#include "server/service/activated_listener.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "grpcpp/security/server_credentials.h"
#include "spdlog/spdlog.h"

namespace tunedb {

std::unique_ptr<ActivatedListener> ActivatedListener::Register(
    const std::vector<int>& fds, grpc::ServerBuilder& builder) {
  std::unique_ptr<ActivatedListener> listener(new ActivatedListener());
  listener->fds_ = fds;
  for (int fd : fds) {
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    listener->acceptors_.push_back(
        builder.experimental().AddExternalConnectionAcceptor(
            grpc::ServerBuilder::experimental_type::ExternalConnectionType::
                FROM_FD,
            grpc::InsecureServerCredentials()));
  }
  return listener;
}

ActivatedListener::~ActivatedListener() {
  Stop();
  for (int fd : fds_) close(fd);
}

void ActivatedListener::Start() {
  if (thread_.joinable()) return;
  if (pipe2(stop_pipe_, O_CLOEXEC) != 0) {
    spdlog::error("socket activation: pipe failed: {}", std::strerror(errno));
    return;
  }
  thread_ = std::thread([this] { AcceptLoop(); });
}

void ActivatedListener::Stop() {
  if (thread_.joinable()) {
    const char byte = 1;
    while (write(stop_pipe_[1], &byte, 1) < 0 && errno == EINTR) {
    }
    thread_.join();
  }
  for (int& fd : stop_pipe_) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
}

std::string ActivatedListener::path() const {
  if (fds_.empty()) return "";
  sockaddr_un addr{};
  socklen_t len = sizeof(addr);
  if (getsockname(fds_[0], reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
      addr.sun_family != AF_UNIX || len <= offsetof(sockaddr_un, sun_path)) {
    return "";
  }
  return std::string(
      addr.sun_path,
      strnlen(addr.sun_path, len - offsetof(sockaddr_un, sun_path)));
}

void ActivatedListener::AcceptLoop() {
  std::vector<pollfd> polled;
  for (int fd : fds_) polled.push_back({fd, POLLIN, 0});
  polled.push_back({stop_pipe_[0], POLLIN, 0});
  while (true) {
    if (poll(polled.data(), polled.size(), -1) < 0) {
      if (errno == EINTR) continue;
      spdlog::error("socket activation: poll failed: {}", std::strerror(errno));
      return;
    }
    if (polled.back().revents != 0) return;  // Stop()
    for (size_t i = 0; i < fds_.size(); ++i) {
      if (polled[i].revents == 0) continue;
      while (true) {
        const int conn =
            accept4(fds_[i], nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (conn < 0) {
          if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            spdlog::warn("socket activation: accept failed: {}",
                         std::strerror(errno));
          }
          break;
        }
        grpc::experimental::ExternalConnectionAcceptor::NewConnectionParameters
            p;
        p.listener_fd = fds_[i];
        p.fd = conn;
        acceptors_[i]->HandleNewConnection(&p);
      }
    }
  }
}

}  // namespace tunedb
