#include "common/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"

namespace tunedb {
namespace {

// The error of a failed system call on `path`, by errno.
absl::Status ErrnoStatus(const std::string& what, const std::string& path) {
  const int e = errno;
  const std::string text = absl::StrCat(what, " ", path, ": ", std::strerror(e));
  switch (e) {
    case ENOENT:
      return absl::NotFoundError(text);
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
      return absl::ResourceExhaustedError(text);
    case EACCES:
    case EPERM:
    case EROFS:
      return absl::PermissionDeniedError(text);
    default:
      return absl::InternalError(text);
  }
}

// "a directory", "a FIFO", ... for a file type other than regular.
const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

absl::Status NotRegular(const std::string& path, mode_t mode) {
  return absl::FailedPreconditionError(
      absl::StrCat(path, " is ", KindOf(mode), ", not a regular file"));
}

std::string FolderOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Writes all of `text` to `fd`.
bool WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

absl::StatusOr<std::string> ReadRegularFile(const std::string& path,
                                            int64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO without a writer does not wait.
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("cannot read", path);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    absl::Status s = ErrnoStatus("cannot read", path);
    close(fd);
    return s;
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return NotRegular(path, st.st_mode);
  }
  if (st.st_size > max_bytes) {
    close(fd);
    return absl::ResourceExhaustedError(
        absl::StrCat(path, " is ", st.st_size, " bytes, over the bound of ",
                     max_bytes));
  }
  std::string text;
  std::vector<char> buffer(1 << 16);
  while (true) {
    const ssize_t n = read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      absl::Status s = ErrnoStatus("cannot read", path);
      close(fd);
      return s;
    }
    if (n == 0) break;
    text.append(buffer.data(), static_cast<size_t>(n));
    if (static_cast<int64_t>(text.size()) > max_bytes) {  // grew meanwhile
      close(fd);
      return absl::ResourceExhaustedError(absl::StrCat(
          path, " is over the bound of ", max_bytes, " bytes"));
    }
  }
  close(fd);
  return text;
}

absl::StatusOr<std::string> LinkTarget(const std::string& path) {
  std::string at = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st;
    if (lstat(at.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return at;
    std::vector<char> buffer(static_cast<size_t>(st.st_size) + 256);
    const ssize_t n = readlink(at.c_str(), buffer.data(), buffer.size());
    if (n < 0) return ErrnoStatus("cannot read the link", at);
    std::string to(buffer.data(), static_cast<size_t>(n));
    if (to.empty() || to[0] != '/') to = absl::StrCat(FolderOf(at), "/", to);
    at = std::move(to);
  }
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": too many levels of symbolic links"));
}

absl::Status ReplaceRegularFile(const std::string& path,
                                const std::string& text) {
  absl::StatusOr<std::string> target = LinkTarget(path);
  if (!target.ok()) return target.status();
  struct stat st;
  if (stat(target->c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    return NotRegular(*target, st.st_mode);
  }
  const std::string tmp = absl::StrCat(*target, ".tmp.", getpid());
  const int fd = open(tmp.c_str(),
                      O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
                      0644);
  if (fd < 0) return ErrnoStatus("cannot write", *target);
  if (!WriteAll(fd, text) || fsync(fd) != 0) {
    absl::Status s = ErrnoStatus("cannot write", *target);
    close(fd);
    unlink(tmp.c_str());
    return s;
  }
  if (close(fd) != 0) {
    absl::Status s = ErrnoStatus("cannot write", *target);
    unlink(tmp.c_str());
    return s;
  }
  if (rename(tmp.c_str(), target->c_str()) != 0) {
    absl::Status s = ErrnoStatus("cannot replace", *target);
    unlink(tmp.c_str());
    return s;
  }
  return absl::OkStatus();
}

}  // namespace tunedb
