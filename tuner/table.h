// Table: aligned text tables for people and CSV for scripts.
//
// Thread safety: not thread-safe; build and print on one thread.
#ifndef TUNEDB_TUNER_TABLE_H_
#define TUNEDB_TUNER_TABLE_H_

#include <ostream>
#include <string>
#include <vector>

namespace tunedb::tuner {

class Table {
 public:
  // A column whose name ends in ">" (e.g. "ms>") is right-aligned (numbers);
  // the ">" is not printed.
  explicit Table(std::vector<std::string> columns);

  void AddRow(std::vector<std::string> cells);
  size_t rows() const { return rows_.size(); }

  // Columns padded to their widest cell, two spaces apart, a header line
  // and a rule under it; no trailing spaces.
  void Print(std::ostream& out) const;
  // RFC 4180 CSV: header then rows; cells with , " or newline are quoted.
  void PrintCsv(std::ostream& out) const;

 private:
  std::vector<std::string> headers_;
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

// A two-column "name  value" listing (stats, summaries).
void PrintKeyValues(std::ostream& out,
                    const std::vector<std::pair<std::string, std::string>>& kv);

// One CSV cell, quoted if needed.
std::string CsvEscape(const std::string& cell);

}  // namespace tunedb::tuner

#endif  // TUNEDB_TUNER_TABLE_H_
