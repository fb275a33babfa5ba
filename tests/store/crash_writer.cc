// Helper of store_crash_test: opens a file store and puts TestRecord(n) for
// n = first, first + 1, ... forever, printing n on its own line (flushed)
// after each Put returns. The test kills it with SIGKILL at a random point and
// checks that every printed record survived.
//
// Usage: tunedb_store_crash_writer <database path> <first n>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "store/store.h"
#include "tests/store/store_test_util.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <database path> <first n>\n", argv[0]);
    return 2;
  }
  tunedb::Store::Options options;
  options.path = argv[1];
  options.synchronous = "FULL";
  options.checkpoint_every_writes = 8;
  absl::StatusOr<std::unique_ptr<tunedb::Store>> store =
      tunedb::Store::Open(options);
  if (!store.ok()) {
    std::fprintf(stderr, "open: %s\n", store.status().ToString().c_str());
    return 1;
  }
  for (long n = std::atol(argv[2]);; ++n) {
    absl::StatusOr<int64_t> id =
        (*store)->Put(tunedb::store_test::TestRecord(n));
    if (!id.ok()) {
      std::fprintf(stderr, "put %ld: %s\n", n, id.status().ToString().c_str());
      return 1;
    }
    std::printf("%ld\n", n);
    std::fflush(stdout);
  }
}
