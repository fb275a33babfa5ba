#include "store/env.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>

namespace tunedb {
namespace {

class PosixEnv : public Env {
 public:
  bool FileExists(const std::string& path) override {
    struct stat st;
    return stat(path.c_str(), &st) == 0;
  }

  int64_t FileSize(const std::string& path) override {
    struct stat st;
    if (stat(path.c_str(), &st) != 0) return 0;
    return static_cast<int64_t>(st.st_size);
  }

  int WriteAccess(const std::string& path) override {
    return access(path.c_str(), W_OK) == 0 ? 0 : errno;
  }

  bool IsReadOnlyFileSystem(const std::string& folder) override {
    struct statvfs fs;
    return statvfs(folder.c_str(), &fs) == 0 && (fs.f_flag & ST_RDONLY) != 0;
  }

  int CreateFileWithMode(const std::string& path, unsigned mode) override {
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                        static_cast<mode_t>(mode));
    if (fd < 0) return errno;
    const int error = fchmod(fd, static_cast<mode_t>(mode)) == 0 ? 0 : errno;
    close(fd);
    return error;
  }
};

}  // namespace

Env* Env::Default() {
  static Env* const kDefault = new PosixEnv;
  return kDefault;
}

}  // namespace tunedb
