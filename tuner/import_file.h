// ImportFile: the file `tunedb import` streams, read line by line and never
// held whole in memory. Standard input ("-") is first copied to an unlinked
// temporary file, so it can be counted before it is sent, like a file.
//
// Blank lines are not sent; the n-th line sent ("sent line" n, 1-based) is
// the n-th non-blank line of the file.
//
// Thread safety: not thread-safe; one thread uses an ImportFile.
#ifndef TUNEDB_TUNER_IMPORT_FILE_H_
#define TUNEDB_TUNER_IMPORT_FILE_H_

#include <cstdint>
#include <fstream>
#include <functional>
#include <istream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tunedb::tuner {

class ImportFile {
 public:
  // What one pass over the file found.
  struct Shape {
    int64_t lines = 0;          // lines to send (non-blank)
    int64_t longest_bytes = 0;  // the longest of them
    int64_t longest_line = 0;   // its line number in the file
  };

  // Opens `path`, or copies `in` to a temporary file for "-".
  // INVALID_ARGUMENT naming the file if it cannot be read.
  static absl::StatusOr<std::unique_ptr<ImportFile>> Open(
      const std::string& path, std::istream& in);

  // Counts the lines to send (one pass; nothing is kept).
  absl::StatusOr<Shape> Measure();
  // Calls `send` with each line to send, in order, until it returns false.
  absl::Status ForEachLine(const std::function<bool(const std::string&)>& send);
  // The file line number of each of `sent_lines` (1-based sent-line
  // numbers); numbers past the end map to themselves.
  absl::StatusOr<std::map<int64_t, int64_t>> FileLines(
      const std::vector<int64_t>& sent_lines);

  // The name for messages: the path, or "<stdin>".
  const std::string& name() const { return name_; }

 private:
  ImportFile(std::string name, std::string path)
      : name_(std::move(name)), path_(std::move(path)) {}
  // Calls `visit(line, file_line)` for each line to send from the start.
  absl::Status Scan(
      const std::function<bool(const std::string&, int64_t)>& visit);

  std::string name_;
  std::string path_;
  // The copy of standard input: kept open, its name already removed.
  std::unique_ptr<std::fstream> spool_;
};

}  // namespace tunedb::tuner

#endif  // TUNEDB_TUNER_IMPORT_FILE_H_
