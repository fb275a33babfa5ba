// Env: what the store asks of the file system, behind an interface a test
// can replace (after LevelDB's Env). SqliteStore reaches the file system
// directly only through an Env; SQLite's own file access is not routed here.
//
// Env::Default() is the process's real (POSIX) file system. A replacement
// Env must outlive every store opened with it.
//
// Thread safety: implementations must be thread-safe; the default one is.
#ifndef TUNEDB_STORE_ENV_H_
#define TUNEDB_STORE_ENV_H_

#include <cstdint>
#include <string>

namespace tunedb {

class Env {
 public:
  virtual ~Env() = default;

  // The real file system. Never null; never destroyed.
  static Env* Default();

  // True if something exists at `path`.
  virtual bool FileExists(const std::string& path) = 0;
  // The size of the file at `path` in bytes; 0 if it is absent or cannot be
  // read.
  virtual int64_t FileSize(const std::string& path) = 0;
  // 0 if this process may write `path` (a file or a folder); otherwise the
  // errno that says why not (EROFS, EACCES, ENOENT, ...).
  virtual int WriteAccess(const std::string& path) = 0;
  // True if `folder` lies on a file system mounted read-only; false where it
  // cannot be told.
  virtual bool IsReadOnlyFileSystem(const std::string& folder) = 0;
  // Creates an empty file at `path` with permissions `mode`, whatever the
  // umask, unless something exists there: 0, EEXIST, or the errno that says
  // why it could not be made.
  virtual int CreateFileWithMode(const std::string& path, unsigned mode) = 0;
};

}  // namespace tunedb

#endif  // TUNEDB_STORE_ENV_H_
