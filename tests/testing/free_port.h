// FreeLoopbackPort: a TCP port of 127.0.0.1 that nothing listens on right
// now (the kernel's pick for port 0), for servers a test starts.
//
// Thread safety: a free function.
#ifndef TUNEDB_TESTS_TESTING_FREE_PORT_H_
#define TUNEDB_TESTS_TESTING_FREE_PORT_H_

namespace tunedb::testing_util {

// 0 if no port could be had.
int FreeLoopbackPort();

}  // namespace tunedb::testing_util

#endif  // TUNEDB_TESTS_TESTING_FREE_PORT_H_
