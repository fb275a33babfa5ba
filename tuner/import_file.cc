#include "tuner/import_file.h"

#include <unistd.h>

#include <cstdlib>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace tunedb::tuner {

absl::StatusOr<std::unique_ptr<ImportFile>> ImportFile::Open(
    const std::string& path, std::istream& in) {
  if (path != "-") {
    std::ifstream probe(path);
    if (!probe) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot open '", path, "'"));
    }
    return std::unique_ptr<ImportFile>(new ImportFile(path, path));
  }
  const char* tmpdir = std::getenv("TMPDIR");
  std::string name =
      absl::StrCat(tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp",
                   "/tunedb-import-XXXXXX");
  const int fd = mkstemp(name.data());
  if (fd < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot make a temporary file for <stdin> in ", name));
  }
  close(fd);
  auto file = std::unique_ptr<ImportFile>(new ImportFile("<stdin>", name));
  file->spool_ = std::make_unique<std::fstream>(
      name, std::ios::in | std::ios::out | std::ios::trunc | std::ios::binary);
  // Removed at once: the open stream keeps it, and nothing is left behind.
  unlink(name.c_str());
  if (!*file->spool_) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot write a temporary file for <stdin> in ", name));
  }
  std::string line;
  while (std::getline(in, line)) *file->spool_ << line << '\n';
  if (!file->spool_->flush()) {
    return absl::InvalidArgumentError(
        "cannot copy <stdin> to a temporary file (disk full?)");
  }
  return file;
}

absl::Status ImportFile::Scan(
    const std::function<bool(const std::string&, int64_t)>& visit) {
  std::ifstream file;
  std::istream* in = spool_.get();
  if (in == nullptr) {
    file.open(path_);
    if (!file) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot open '", path_, "'"));
    }
    in = &file;
  } else {
    spool_->clear();
    spool_->seekg(0);
  }
  std::string line;
  int64_t number = 0;
  while (std::getline(*in, line)) {
    ++number;
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    if (!visit(line, number)) break;
  }
  if (in->bad()) {
    return absl::InvalidArgumentError(
        absl::StrCat("reading '", name_, "' failed"));
  }
  return absl::OkStatus();
}

absl::StatusOr<ImportFile::Shape> ImportFile::Measure() {
  Shape shape;
  absl::Status status = Scan([&](const std::string& line, int64_t number) {
    ++shape.lines;
    if (static_cast<int64_t>(line.size()) > shape.longest_bytes) {
      shape.longest_bytes = static_cast<int64_t>(line.size());
      shape.longest_line = number;
    }
    return true;
  });
  if (!status.ok()) return status;
  return shape;
}

absl::Status ImportFile::ForEachLine(
    const std::function<bool(const std::string&)>& send) {
  return Scan([&](const std::string& line, int64_t) { return send(line); });
}

absl::StatusOr<std::map<int64_t, int64_t>> ImportFile::FileLines(
    const std::vector<int64_t>& sent_lines) {
  std::map<int64_t, int64_t> found;
  for (int64_t sent : sent_lines) found[sent] = sent;
  if (found.empty()) return found;
  const int64_t last = found.rbegin()->first;
  int64_t sent = 0;
  absl::Status status = Scan([&](const std::string&, int64_t number) {
    ++sent;
    auto it = found.find(sent);
    if (it != found.end()) it->second = number;
    return sent < last;
  });
  if (!status.ok()) return status;
  return found;
}

}  // namespace tunedb::tuner
