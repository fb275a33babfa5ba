// FUZZ_CHECK: the property checks of the fuzz targets. A failed check prints
// what failed and aborts, which libFuzzer reports as a crash (and saves the
// input) and which fails a replay test.
#ifndef TUNEDB_TESTS_FUZZ_FUZZ_CHECK_H_
#define TUNEDB_TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(condition)                                                  \
  do {                                                                         \
    if (!(condition)) {                                                        \
      std::fprintf(stderr, "%s:%d: property failed: %s\n", __FILE__, __LINE__, \
                   #condition);                                                \
      std::abort();                                                            \
    }                                                                          \
  } while (0)

#endif  // TUNEDB_TESTS_FUZZ_FUZZ_CHECK_H_
