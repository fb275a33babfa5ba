// TempDir: a fresh folder directly under /tmp for one test, removed with its
// contents by the destructor. It stays under /tmp (not $TMPDIR) so that Unix
// socket paths inside it stay well below their 108-byte limit.
//
// Thread safety: owned by one test; path() and File() are const.
#ifndef TUNEDB_TESTS_TESTING_TEMP_DIR_H_
#define TUNEDB_TESTS_TESTING_TEMP_DIR_H_

#include <string>

namespace tunedb::testing_util {

class TempDir {
 public:
  // A failure to create the folder fails the test (ADD_FAILURE); path() is
  // then empty and nothing is removed.
  TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();

  const std::string& path() const { return path_; }
  // path() + "/" + name.
  std::string File(const std::string& name) const;

 private:
  std::string path_;
};

}  // namespace tunedb::testing_util

#endif  // TUNEDB_TESTS_TESTING_TEMP_DIR_H_
