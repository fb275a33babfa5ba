// FlipByte: damages a file the way a bad sector or a stray write does, one
// byte at a time, for tests of what a damaged database does. The caller picks
// bytes inside a stored value, so the file's structure (and PRAGMA
// quick_check) stays sound.
//
// Thread safety: free functions; the file must not be open for writing.
#ifndef TUNEDB_TESTS_TESTING_FILE_BYTES_H_
#define TUNEDB_TESTS_TESTING_FILE_BYTES_H_

#include <cstddef>
#include <string>

namespace tunedb::testing_util {

// XORs with `mask` the byte at `offset` into the one occurrence of `needle` in
// the file at `path`. False (with a test failure saying why) if the file
// cannot be read or written or `needle` does not occur exactly once.
bool FlipByte(const std::string& path, const std::string& needle, size_t offset,
              unsigned char mask = 0x01);

}  // namespace tunedb::testing_util

#endif  // TUNEDB_TESTS_TESTING_FILE_BYTES_H_
