// The tunedb-worker program a test starts: $TUNEDB_WORKER_PATH when set (the
// GPU suite points it at the bundle's), else the build's own, which the
// including test target passes as the TUNEDB_WORKER_PATH definition.
//
// Thread safety: reads the environment; call before starting threads.
#ifndef TUNEDB_TESTS_TESTING_WORKER_PATH_H_
#define TUNEDB_TESTS_TESTING_WORKER_PATH_H_

#include <cstdlib>
#include <string>

namespace tunedb {

inline std::string WorkerPath() {
  const char* env = std::getenv("TUNEDB_WORKER_PATH");
  return env != nullptr ? env : TUNEDB_WORKER_PATH;
}

}  // namespace tunedb

#endif  // TUNEDB_TESTS_TESTING_WORKER_PATH_H_
