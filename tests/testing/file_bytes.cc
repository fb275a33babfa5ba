#include "tests/testing/file_bytes.h"

#include <fstream>
#include <iterator>

#include "gtest/gtest.h"

namespace tunedb::testing_util {

bool FlipByte(const std::string& path, const std::string& needle, size_t offset,
              unsigned char mask) {
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      ADD_FAILURE() << "cannot read " << path;
      return false;
    }
    bytes.assign(std::istreambuf_iterator<char>(in),
                 std::istreambuf_iterator<char>());
  }
  const size_t at = bytes.find(needle);
  if (at == std::string::npos ||
      bytes.find(needle, at + 1) != std::string::npos ||
      offset >= needle.size()) {
    ADD_FAILURE() << "\"" << needle << "\" does not occur exactly once in "
                  << path << " (or the offset is past it)";
    return false;
  }
  std::fstream file(path, std::ios::binary | std::ios::in | std::ios::out);
  file.seekp(static_cast<std::streamoff>(at + offset));
  file.put(static_cast<char>(bytes[at + offset] ^ static_cast<char>(mask)));
  file.close();
  if (!file) {
    ADD_FAILURE() << "cannot write " << path;
    return false;
  }
  return true;
}

}  // namespace tunedb::testing_util
