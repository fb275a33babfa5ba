// Records read from export files (docs/export-format.md), for the
// benchmarks that judge or serve stored records without a daemon's import.
//
// Thread safety: a pure function.
#ifndef TUNEDB_BENCH_RECORD_FILE_H_
#define TUNEDB_BENCH_RECORD_FILE_H_

#include <fstream>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "store/record_json.h"
#include "tunedb/record.h"

namespace tunedb::bench {

// Appends the records of `files` to `records`, counting the lines that are
// not records in `skipped`; false (with a message) where a file cannot be
// read.
inline bool ReadRecordFiles(const std::vector<std::string>& files,
                            std::vector<Record>* records, int* skipped) {
  for (const std::string& file : files) {
    std::ifstream in(file);
    if (!in) {
      std::cerr << "cannot read " << file << "\n";
      return false;
    }
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      absl::StatusOr<Record> r = RecordFromJson(line);
      if (r.ok()) {
        records->push_back(*std::move(r));
      } else {
        ++*skipped;
      }
    }
  }
  return true;
}

}  // namespace tunedb::bench

#endif  // TUNEDB_BENCH_RECORD_FILE_H_
