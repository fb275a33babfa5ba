#include "tuner/table.h"

#include <algorithm>

namespace tunedb::tuner {

Table::Table(std::vector<std::string> columns) {
  for (std::string& c : columns) {
    const bool right = !c.empty() && c.back() == '>';
    if (right) c.pop_back();
    right_.push_back(right);
    headers_.push_back(std::move(c));
  }
}

void Table::AddRow(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

void Table::Print(std::ostream& out) const {
  std::vector<size_t> width(headers_.size());
  for (size_t i = 0; i < headers_.size(); ++i) width[i] = headers_[i].size();
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size(); ++i) {
      width[i] = std::max(width[i], row[i].size());
    }
  }
  auto print_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      const std::string pad(width[i] - row[i].size(), ' ');
      if (i > 0) line += "  ";
      line += right_[i] ? pad + row[i] : row[i] + pad;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  };
  print_row(headers_);
  std::vector<std::string> rule;
  for (size_t w : width) rule.push_back(std::string(w, '-'));
  print_row(rule);
  for (const auto& row : rows_) print_row(row);
}

std::string CsvEscape(const std::string& cell) {
  if (cell.find_first_of(",\"\n\r") == std::string::npos) return cell;
  std::string out = "\"";
  for (char c : cell) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

void Table::PrintCsv(std::ostream& out) const {
  auto print_row = [&](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size(); ++i) {
      if (i > 0) out << ",";
      out << CsvEscape(row[i]);
    }
    out << "\n";
  };
  print_row(headers_);
  for (const auto& row : rows_) print_row(row);
}

void PrintKeyValues(
    std::ostream& out,
    const std::vector<std::pair<std::string, std::string>>& kv) {
  size_t width = 0;
  for (const auto& [k, v] : kv) width = std::max(width, k.size());
  for (const auto& [k, v] : kv) {
    out << k << std::string(width - k.size() + 2, ' ') << v << "\n";
  }
}

}  // namespace tunedb::tuner
