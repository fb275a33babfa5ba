// Helpers of the server suites on top of tunedb_testing: problems as the
// wire carries them, loopback TCP sockets, and reading a daemon's log file.
// A free port is tests/testing/free_port.h.
#ifndef TUNEDB_TESTS_SERVER_TEST_UTIL_H_
#define TUNEDB_TESTS_SERVER_TEST_UTIL_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "proto/convert.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_values.h"
#include "tunedb/v1/tunedb.pb.h"

namespace tunedb::testing_util {

// TestProblem(n, c, k) as a wire message.
inline v1::ConvProblem ProtoProblem(int64_t n, int64_t c = 64, int64_t k = 64) {
  v1::ConvProblem out;
  ToProto(TestProblem(n, c, k), &out);
  return out;
}

// A TCP socket bound to 127.0.0.1 on a port the kernel picks, listening
// when `listen_too`; its port in *port. The caller closes it.
inline int LoopbackSocket(bool listen_too, int* port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  if (listen_too) {
    EXPECT_EQ(listen(fd, 16), 0);
  }
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  *port = ntohs(addr.sin_port);
  return fd;
}

// The whole text of a file ("" if it cannot be read).
inline std::string ReadTextFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace tunedb::testing_util

#endif  // TUNEDB_TESTS_SERVER_TEST_UTIL_H_
