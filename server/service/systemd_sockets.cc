#include "server/service/systemd_sockets.h"

#include <fcntl.h>
#include <sys/socket.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "systemd/sd-daemon.h"

namespace tunedb {

absl::StatusOr<std::vector<int>> TakeSystemdSockets() {
  const int n = sd_listen_fds(/*unset_environment=*/1);
  if (n < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("sd_listen_fds: ", std::strerror(-n)));
  }
  std::vector<int> fds;
  for (int fd = SD_LISTEN_FDS_START; fd < SD_LISTEN_FDS_START + n; ++fd) {
    if (sd_is_socket_unix(fd, SOCK_STREAM, /*listening=*/1, nullptr, 0) <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "socket activation passed descriptor ", fd,
          ", which is not a listening Unix stream socket; tunedbd.socket may "
          "only use ListenStream=/path (TCP needs --listen with TLS)"));
    }
    fcntl(fd, F_SETFD, FD_CLOEXEC);  // the workers must not inherit it
    fds.push_back(fd);
  }
  return fds;
}

}  // namespace tunedb
