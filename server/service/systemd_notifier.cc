#include "server/service/systemd_notifier.h"

#include <systemd/sd-daemon.h>

#include <cstdint>
#include <cstring>

#include "spdlog/spdlog.h"

namespace tunedb {

SystemdNotifier::SystemdNotifier(const Options& options)
    : options_(options), watchdog_(absl::ZeroDuration()) {
  uint64_t usec = 0;
  if (sd_watchdog_enabled(/*unset_environment=*/0, &usec) > 0) {
    watchdog_ = absl::Microseconds(static_cast<int64_t>(usec));
  }
}

void SystemdNotifier::Send(const std::string& message) {
  const int rc = sd_notify(/*unset_environment=*/0, message.c_str());
  if (rc < 0) {
    spdlog::warn("sd_notify failed: {}", std::strerror(-rc));
  }
}

void SystemdNotifier::Ready(const std::string& status) {
  Send("READY=1\nSTATUS=" + status);
  sent_status_ = status;
  sent_at_ = absl::Now();
}

void SystemdNotifier::Status(const std::string& status, absl::Time now) {
  if (status == sent_status_ || now - sent_at_ < options_.min_status_interval) {
    return;
  }
  Send("STATUS=" + status);
  sent_status_ = status;
  sent_at_ = now;
}

void SystemdNotifier::Watchdog() {
  if (watchdog_ > absl::ZeroDuration()) Send("WATCHDOG=1");
}

void SystemdNotifier::Stopping(const std::string& status) {
  Send("STOPPING=1\nSTATUS=" + status);
  sent_status_ = status;
  sent_at_ = absl::Now();
}

}  // namespace tunedb
