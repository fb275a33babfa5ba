// TakeSystemdSockets: the listening sockets systemd passed to tunedbd by
// socket activation (a tunedbd.socket unit; LISTEN_FDS/LISTEN_PID, read with
// sd_listen_fds), taken out of the environment so that the workers do not
// inherit them.
//
// Thread safety: call once, from main, before other threads start.
#ifndef TUNEDB_SERVER_SERVICE_SYSTEMD_SOCKETS_H_
#define TUNEDB_SERVER_SERVICE_SYSTEMD_SOCKETS_H_

#include <vector>

#include "absl/status/statusor.h"

namespace tunedb {

// The descriptors (empty when not socket-activated). INVALID_ARGUMENT if one
// is not a listening Unix stream socket: TCP is served with --listen, which
// needs TLS, never from an activated socket.
absl::StatusOr<std::vector<int>> TakeSystemdSockets();

}  // namespace tunedb

#endif  // TUNEDB_SERVER_SERVICE_SYSTEMD_SOCKETS_H_
