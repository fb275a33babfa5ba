#include "store/report_scan.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/valid_key.h"
#include "store/sql/transaction.h"
#include "store/sqlite_store.h"

namespace tunedb {
namespace {

// The record rows, and the report's columns of their results, in id and
// rank order: two scans read side by side (a merge join: no lookup of a
// record's results by its id).
constexpr const char kScanRecords[] =
    "SELECT id, key_text, key_hash, gpu_model, cudnn_version,"
    " measured_at_us, driver_version, search_ms, served_count,"
    " revalidated_from, revalidated_from_driver"
    " FROM records WHERE key_version = ?1 AND id > ?2 AND id <= ?3"
    " ORDER BY id";
constexpr const char kScanResults[] =
    "SELECT record_id, rank, algo, math_type, status, workspace_bytes,"
    " launch_median_ms, launch_samples, gpu_median_ms, gpu_samples,"
    " behavior_notes, build_ms, heuristic_rank"
    " FROM results WHERE record_id > ?1 AND record_id <= ?2"
    " ORDER BY record_id, rank";
constexpr int kFirstResultColumn = 1;  // rank, in kScanResults
// Records per read transaction of a ReportWalk.
constexpr size_t kReportBatch = 4096;
constexpr const char kIdBounds[] = "SELECT MIN(id), MAX(id) FROM records";

// The record being read: its row's values and the results read so far.
// Reused from record to record (its buffers keep their capacity).
struct PendingRecord {
  int64_t id = 0;
  std::string key_text;
  std::string gpu_model;
  int64_t cudnn_version = 0;
  size_t problem_at = 0;  // where the problem's text starts in key_text
  std::string driver_version;
  std::string revalidated_from_driver;
  ReportRecord view;
  std::vector<AlgoResult> results;
  std::string problem;  // empty while readable
  // The key text's start for the last GPU model and its cuDNN version's
  // field, as ProblemKey::ToText writes them (a batch has few of each).
  std::string gpu_seen;
  std::string gpu_text;
  int64_t cudnn_seen = -1;
  std::string cudnn_text;
};

// "kv=<version> gpu=<model, escaped> ", the start of every key text of a
// device of `gpu_model`: DeviceKey::ToText's, up to its next field.
std::string KeyStart(const std::string& gpu_model) {
  DeviceKey device;
  device.gpu_model = gpu_model;
  const std::string text = device.ToText();
  return absl::StrCat("kv=", kKeyFormatVersion, " ",
                      text.substr(0, text.find(' ') + 1));
}

// A time: finite and not negative, else `problem` names it.
double Time(const sql::Statement& row, int column, absl::string_view name,
            std::string* problem) {
  const double value = row.ColumnDouble(column);
  if (problem->empty() && !(std::isfinite(value) && value >= 0)) {
    *problem = absl::StrCat(name, " is ", value);
  }
  return value;
}

// A count: not negative, else `problem` names it.
int64_t Count(const sql::Statement& row, int column, absl::string_view name,
              std::string* problem) {
  const int64_t value = row.ColumnInt64(column);
  if (problem->empty() && value < 0) {
    *problem = absl::StrCat(name, " is ", value, ", negative");
  }
  return value;
}

// The key text checked against its hash, and against the GPU model and
// cuDNN version columns beside it (it starts with their text), without
// parsing it. Empty when sound.
std::string ReadKey(const sql::Statement& row, PendingRecord& p) {
  p.key_text = row.ColumnText(1);
  if (static_cast<int64_t>(KeyTextHash(p.key_text)) != row.ColumnInt64(2)) {
    return "key_hash does not match key_text (one of them is damaged)";
  }
  p.gpu_model = row.ColumnText(3);
  p.cudnn_version = row.ColumnInt64(4);
  if (p.gpu_model != p.gpu_seen) {
    p.gpu_seen = p.gpu_model;
    p.gpu_text = KeyStart(p.gpu_model);
  }
  if (p.cudnn_version != p.cudnn_seen) {
    p.cudnn_seen = p.cudnn_version;
    p.cudnn_text = absl::StrCat(
        " cudnn=", CudnnVersionText(static_cast<int>(p.cudnn_version)), " ");
  }
  const size_t op = p.key_text.find(" op=");
  const size_t cudnn = p.key_text.find(p.cudnn_text);
  if (p.key_text.compare(0, p.gpu_text.size(), p.gpu_text) != 0 ||
      cudnn == std::string::npos || op == std::string::npos || cudnn > op) {
    return absl::StrCat("gpu_model \"", absl::CHexEscape(p.gpu_model),
                        "\" or cudnn_version ", p.cudnn_version,
                        " does not match key_text");
  }
  p.problem_at = op + 1;
  return std::string();
}

// Starts `p` on the record row `row` stands on.
void ReadHead(const sql::Statement& row, PendingRecord& p) {
  p.id = row.ColumnInt64(0);
  p.results.clear();
  p.problem = ReadKey(row, p);
  ReportRecord& v = p.view;
  v.measured_at_us = Count(row, 5, "measured_at_us", &p.problem);
  p.driver_version = row.ColumnText(6);
  v.search_ms = Time(row, 7, "search_ms", &p.problem);
  v.served_count = Count(row, 8, "served_count", &p.problem);
  v.revalidated_from_cudnn =
      static_cast<int>(Count(row, 9, "revalidated_from", &p.problem));
  p.revalidated_from_driver = row.ColumnText(10);
}

// Appends the result `row` stands on (its columns from kFirstResultColumn).
void ReadResult(const sql::Statement& row, PendingRecord& p) {
  AlgoResult& r = p.results.emplace_back();
  std::string problem;  // named without its "results[i]." until kept
  int c = kFirstResultColumn + 1;
  r.algo = static_cast<int>(row.ColumnInt64(c++));
  const std::string math = row.ColumnText(c++);
  const std::string status = row.ColumnText(c++);
  absl::StatusOr<MathType> math_type = ParseMathType(math);
  absl::StatusOr<AlgoStatus> algo_status = ParseAlgoStatus(status);
  if (!math_type.ok()) {
    problem = absl::StrCat("math_type \"", absl::CHexEscape(math),
                           "\" is unknown");
  } else if (!algo_status.ok()) {
    problem = absl::StrCat("status \"", absl::CHexEscape(status),
                           "\" is unknown");
  }
  r.math_type = math_type.value_or(MathType());
  r.status = algo_status.value_or(AlgoStatus());
  r.workspace_bytes = Count(row, c++, "workspace_bytes", &problem);
  r.launch.median_ms = Time(row, c++, "launch_median_ms", &problem);
  r.launch.samples = static_cast<int>(row.ColumnInt64(c++));
  r.gpu.median_ms = Time(row, c++, "gpu_median_ms", &problem);
  r.gpu.samples = static_cast<int>(row.ColumnInt64(c++));
  r.behavior_notes = static_cast<uint32_t>(row.ColumnInt64(c++));
  r.build_ms = Time(row, c++, "build_ms", &problem);
  r.heuristic_rank =
      static_cast<int>(Count(row, c++, "heuristic_rank", &problem));
  if (p.problem.empty() && !problem.empty()) {
    p.problem = absl::StrCat("results[", p.results.size() - 1, "].", problem);
  }
}

// Hands the finished record `p` to `visit`, or to `bad_row`.
bool Finish(PendingRecord& p,
            const std::function<bool(const ReportRecord&)>& visit,
            const std::function<bool(const BadRow&)>& bad_row) {
  if (!p.problem.empty()) {
    return bad_row(BadRow{p.id, absl::CHexEscape(p.key_text), p.problem});
  }
  ReportRecord& v = p.view;
  v.gpu_model = p.gpu_model;
  v.cudnn_version = static_cast<int>(p.cudnn_version);
  v.problem_text = absl::string_view(p.key_text).substr(p.problem_at);
  v.driver_version = p.driver_version;
  v.revalidated_from_driver = p.revalidated_from_driver;
  v.results = &p.results;
  return visit(v);
}

}  // namespace

absl::Status ScanReportRecords(
    sql::Database& db, size_t want, int64_t up_to,
    const std::function<bool(const ReportRecord&)>& visit,
    const std::function<bool(const BadRow&)>& bad_row, int64_t* cursor,
    bool* exhausted, bool* stopped) {
  ASSIGN_OR_RETURN(sql::Statement scan, db.GetCachedStatement(kScanRecords));
  scan.BindInt(1, kKeyFormatVersion);
  scan.BindInt64(2, *cursor);
  scan.BindInt64(3, up_to);
  ASSIGN_OR_RETURN(sql::Statement results,
                   db.GetCachedStatement(kScanResults));
  results.BindInt64(1, *cursor);
  results.BindInt64(2, up_to);
  ASSIGN_OR_RETURN(bool result, results.Step());
  *exhausted = false;
  *stopped = false;
  PendingRecord p;
  for (size_t found = 0; found < want; ++found) {
    ASSIGN_OR_RETURN(bool row, scan.Step());
    if (!row) {
      *exhausted = true;
      return absl::OkStatus();
    }
    ReadHead(scan, p);
    // Results of rows left out (another key version) are passed over.
    while (result && results.ColumnInt64(0) < p.id) {
      ASSIGN_OR_RETURN(result, results.Step());
    }
    while (result && results.ColumnInt64(0) == p.id) {
      ReadResult(results, p);
      ASSIGN_OR_RETURN(result, results.Step());
    }
    *cursor = p.id;
    if (!Finish(p, visit, bad_row)) {
      *stopped = true;
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

std::vector<std::pair<int64_t, int64_t>> ReportRanges(int64_t min_id,
                                                      int64_t max_id,
                                                      int parts) {
  constexpr int64_t kAbove = std::numeric_limits<int64_t>::max();
  if (min_id > max_id || parts <= 1) return {{0, kAbove}};
  const int64_t span = max_id - min_id + 1;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  int64_t after = 0;
  for (int i = 1; i < parts; ++i) {
    // min_id - 1 + span * i / parts, without overflow.
    const int64_t up_to =
        min_id - 1 + span / parts * i + span % parts * i / parts;
    ranges.push_back({after, std::max(after, up_to)});
    after = ranges.back().second;
  }
  ranges.push_back({after, kAbove});
  return ranges;
}

absl::Status SqliteStore::ReportWalkRange(int64_t after_id, int64_t up_to_id,
                                          const ReportPart& part,
                                          std::atomic<bool>& stop) {
  // A callback's false, or another part's, stops this part too.
  auto go_on = [&stop](bool more) {
    if (!more) stop.store(true);
    return more && !stop.load(std::memory_order_relaxed);
  };
  const auto visit = [&](const ReportRecord& r) {
    return go_on(!stop.load(std::memory_order_relaxed) && part.visit(r));
  };
  const auto bad_row = [&](const BadRow& row) {
    return go_on(!stop.load(std::memory_order_relaxed) && part.bad_row(row));
  };
  int64_t cursor = after_id;
  bool exhausted = false;
  bool stopped = false;
  while (!exhausted && !stopped && !stop.load()) {
    // Each batch in its own snapshot: writers go on between batches.
    RETURN_IF_ERROR(Read([&](sql::Database& db) -> absl::Status {
      sql::Transaction snapshot(&db, sql::Transaction::Kind::kDeferred);
      RETURN_IF_ERROR(snapshot.Begin());
      RETURN_IF_ERROR(ScanReportRecords(db, kReportBatch, up_to_id, visit,
                                        bad_row, &cursor, &exhausted,
                                        &stopped));
      return snapshot.Commit();
    }));
  }
  return absl::OkStatus();
}

absl::Status SqliteStore::ReportWalk(const std::vector<ReportPart>& parts) {
  if (parts.empty()) {
    return absl::InvalidArgumentError("a report walk needs a part");
  }
  int64_t min_id = 1, max_id = 0;
  RETURN_IF_ERROR(Read([&](sql::Database& db) -> absl::Status {
    ASSIGN_OR_RETURN(sql::Statement bounds, db.GetCachedStatement(kIdBounds));
    ASSIGN_OR_RETURN(bool row, bounds.Step());
    if (row && !bounds.ColumnIsNull(0)) {
      min_id = bounds.ColumnInt64(0);
      max_id = bounds.ColumnInt64(1);
    }
    return absl::OkStatus();
  }));
  // A range a read connection (the write connection alone: one) and a
  // hardware thread.
  const size_t connections = readers_ != nullptr ? readers_->size() : 1;
  const size_t threads = std::max(1u, std::thread::hardware_concurrency());
  const auto ranges = ReportRanges(
      min_id, max_id,
      static_cast<int>(std::min({parts.size(), connections, threads})));
  std::atomic<bool> stop{false};
  std::vector<absl::Status> status(ranges.size());
  auto walk = [&](size_t i) {
    status[i] = ReportWalkRange(ranges[i].first, ranges[i].second, parts[i],
                                stop);
    if (!status[i].ok()) stop.store(true);
  };
  std::vector<std::thread> others;
  for (size_t i = 1; i < ranges.size(); ++i) others.emplace_back(walk, i);
  walk(0);
  for (std::thread& t : others) t.join();
  for (const absl::Status& s : status) RETURN_IF_ERROR(s);
  return absl::OkStatus();
}

}  // namespace tunedb
