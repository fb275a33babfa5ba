// SystemdNotifier: tunedbd's side of systemd's notify protocol (sd_notify,
// for Type=notify units): READY=1 once it serves, STATUS= lines, WATCHDOG=1
// pings when the unit sets WatchdogSec= and STOPPING=1 on drain. Without
// NOTIFY_SOCKET in the environment (not started by systemd) every call does
// nothing.
//
// Thread safety: not thread-safe; tunedbd's main thread owns it.
#ifndef TUNEDB_SERVER_SERVICE_SYSTEMD_NOTIFIER_H_
#define TUNEDB_SERVER_SERVICE_SYSTEMD_NOTIFIER_H_

#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace tunedb {

class SystemdNotifier {
 public:
  struct Options {
    // Fewest time between two STATUS= lines; a change within it is sent
    // when it has passed. Default 1 s.
    absl::Duration min_status_interval = absl::Seconds(1);
  };

  explicit SystemdNotifier(const Options& options);

  // The watchdog interval systemd asked for (WATCHDOG_USEC), zero if none.
  // Ping at least twice per interval.
  absl::Duration watchdog_interval() const { return watchdog_; }

  // READY=1 with a first STATUS= line.
  void Ready(const std::string& status);
  // STATUS=`status` if it differs from the last one sent and
  // min_status_interval has passed since; call again to send a held change.
  void Status(const std::string& status, absl::Time now = absl::Now());
  // WATCHDOG=1, when the watchdog is on.
  void Watchdog();
  // STOPPING=1 with a last STATUS= line.
  void Stopping(const std::string& status);

 private:
  void Send(const std::string& message);

  const Options options_;
  absl::Duration watchdog_;
  std::string sent_status_;
  absl::Time sent_at_ = absl::InfinitePast();
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SERVICE_SYSTEMD_NOTIFIER_H_
