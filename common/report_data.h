// ReportData: what `tunedb report` shows, aggregated from a stream of
// records so that a database of millions of records makes a page of a fixed
// size: per device and cuDNN version the records, served counts and search
// time saved; the saving by the day the records were stored, and (from the
// store's served days, SetServedDays) by the day answers were served and
// by week and program; where the
// stored choice sits in cuDNN's heuristic ranking and how much faster it is
// than the heuristic's first choice; what the latest revalidation changed;
// the largest workspaces. ReportAggregator builds it one record at a time:
// the daemon next to its store (the Report rpc, which answers it as JSON:
// common/report_json.h), or `tunedb report` from an older daemon's Query
// stream; the CLI renders the page from it either way. A walk split into
// id ranges aggregates each range apart and merges them in id order
// (ReportAggregator::Merge): the aggregate is the one walk's, exactly (its
// sums of times are kept in fixed point, so their grouping does not change
// them; ties among the largest workspaces go to the earlier record).
//
// Thread safety: ReportAggregator is not thread-safe; ReportData is a value.
#ifndef TUNEDB_COMMON_REPORT_DATA_H_
#define TUNEDB_COMMON_REPORT_DATA_H_

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/numeric/int128.h"
#include "absl/strings/string_view.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

// Buckets of the stored choice's heuristic rank: 1, 2, 3, 4-9, 10+, not
// offered by the heuristic (rank 0).
inline constexpr int kRankBuckets = 6;
// Buckets of the stored choice's speed-up over the heuristic's first choice
// (its cost / the choice's): < 1.02 (the heuristic's own), 1.02-1.1,
// 1.1-1.25, 1.25-1.5, 1.5-2, >= 2.
inline constexpr int kGainBuckets = 6;
const std::array<const char*, kRankBuckets>& RankBucketNames();
const std::array<const char*, kGainBuckets>& GainBucketNames();

// One GPU model under one cuDNN version.
struct DeviceGroup {
  std::string gpu_model;
  int cudnn_version = 0;
  int64_t records = 0;
  int64_t unsupported = 0;  // no algorithm ran
  int64_t served = 0;       // sum of served counts
  double saved_ms = 0;      // sum of served count x search time
  double search_ms = 0;     // sum of search times
  int64_t revalidated = 0;  // records made by a revalidation
  // Problems of the report's models (`--model`) stored here; -1: no models.
  int64_t planned_stored = -1;
};

// The saving of the records stored on one day (UTC).
struct DaySaving {
  int64_t day = 0;  // days since the epoch
  int64_t records = 0;
  double saved_ms = 0;
};

// Answers served on one UTC day, as the daemon's flushes counted them
// (served_days), and the search time they saved.
struct ServedDay {
  int64_t day = 0;  // days since the epoch
  int64_t served = 0;
  double saved_ms = 0;
};

// A program's answers in one week (Monday to Sunday, UTC): one of the
// week's programs with the most time saved. "" is the Lookups that named
// no program.
struct WeekProgram {
  int64_t week = 0;  // the week's Monday, days since the epoch
  std::string program;
  int64_t served = 0;
  double saved_ms = 0;
};

// Programs listed a week, and weeks listed (the newest served day's week
// and those before it).
inline constexpr size_t kWeekProgramsListed = 10;
inline constexpr int64_t kWeeksListed = 12;

// A row of the store's served days: one day's answers to one program.
struct ServedDayProgram {
  int64_t day = 0;
  std::string program;
  int64_t served = 0;
  double saved_ms = 0;
};

// A stored choice with a large workspace, and the cheapest choice without
// any workspace.
struct WorkspaceUse {
  std::string gpu_model;
  int cudnn_version = 0;
  std::string problem;  // ShapeSummary, op and type
  std::string config;   // AlgoLabel
  int64_t workspace_bytes = 0;
  double ms = 0;
  double no_workspace_ms = -1;  // -1: nothing runs without workspace
  int64_t served = 0;
};

// The records one revalidation made (a GPU model, from one cuDNN version
// or driver to another), compared with the older records of the same
// problems where the database still holds them.
struct RevalidationChange {
  std::string gpu_model;
  std::string from;  // "cuDNN 9.14.0" or "driver 575.57.08"
  std::string to;
  int64_t records = 0;
  int64_t latest_us = 0;  // the newest record's measurement time
  int64_t compared = 0;   // with the older record found
  int64_t changed = 0;    // another choice than the older record's
  int64_t slower = 0;     // choice's cost > 1.05 x the older one's
};

// A stored row that could not be read, skipped by the report (the store's
// BadRow, as the report carries it).
struct UnreadableRow {
  int64_t id = 0;
  std::string key_text;  // as stored, C-escaped
  std::string reason;
};

// One host of a fleet's report and the records it holds there.
struct HostRecords {
  std::string host;
  int64_t records = 0;
};

// Unreadable rows a report lists at most (it counts them all).
inline constexpr size_t kUnreadableRowsListed = 100;

struct ReportData {
  int64_t records = 0;
  double saved_ms = 0;
  int64_t served = 0;
  std::vector<DeviceGroup> groups;  // by GPU model, then cuDNN version
  std::vector<DaySaving> days;      // in day order
  // Answers served by day and by week and program (the store's served
  // days: set by the daemon's report, not the aggregator; empty for a
  // fleet, an older daemon or a database that has counted none yet).
  std::vector<ServedDay> served_days;       // in day order
  std::vector<WeekProgram> week_programs;   // newest week first
  std::array<int64_t, kRankBuckets> ranks{};
  std::array<int64_t, kGainBuckets> gains{};
  int64_t gains_unknown = 0;  // no heuristic first choice measured
  std::vector<RevalidationChange> revalidations;  // latest first
  std::vector<WorkspaceUse> workspaces;           // largest first
  std::vector<std::string> models;  // --model names; empty: none asked
  int64_t planned = 0;              // their problems per device
  int64_t unreadable = 0;           // stored rows skipped: not readable
  std::vector<UnreadableRow> unreadable_rows;  // the first listed of them
  // A fleet's report (every host's records in its database; set by the
  // reader of the fleet, not the aggregator): the database without its
  // password, and each host's records by host name. "": one store's.
  std::string fleet;
  std::vector<HostRecords> hosts;
};

// The Monday (days since the epoch) of the week of `day`.
int64_t WeekOfDay(int64_t day);

// Sets data->served_days (each day's sums, in day order) and
// data->week_programs (of the kWeeksListed weeks up to the newest row's,
// newest week first, each week's kWeekProgramsListed programs with the
// most time saved, most first) from `rows`.
void SetServedDays(const std::vector<ServedDayProgram>& rows,
                   ReportData* data);

// What the aggregator reads of one record: a Record's parts as views, so
// that a store's read made for the report (Store::ReportWalk) hands its rows
// over without parsing the key. `problem_text` is ConvProblem::ToText's
// text; it is parsed only for a record whose workspace enters the largest.
struct ReportRecord {
  absl::string_view gpu_model;
  int cudnn_version = 0;
  absl::string_view problem_text;
  absl::string_view driver_version;
  int64_t measured_at_us = 0;
  int64_t served_count = 0;
  double search_ms = 0;
  int revalidated_from_cudnn = 0;
  absl::string_view revalidated_from_driver;
  // The fields Choose reads: status, workspace, timings, build time and
  // notes, heuristic rank, algorithm and math type.
  const std::vector<AlgoResult>* results = nullptr;
};

class ReportAggregator {
 public:
  // Keeps the `top_workspaces` largest workspaces.
  explicit ReportAggregator(size_t top_workspaces = 20)
      : top_workspaces_(top_workspaces) {}
  // Not copied: it keeps pointers into its own maps.
  ReportAggregator(const ReportAggregator&) = delete;
  ReportAggregator& operator=(const ReportAggregator&) = delete;

  // The problems of `--model` (problem texts, device-free): each group
  // counts those it stores.
  void SetPlannedProblems(std::vector<std::string> models,
                          const std::vector<ConvProblem>& problems);

  void Add(const Record& record);
  void Add(const ReportRecord& record);
  // A stored row skipped because it cannot be read: counted, and listed
  // while fewer than kUnreadableRowsListed are.
  void AddUnreadable(UnreadableRow row);
  // Adds what `later` aggregated, the records of a walk that all come after
  // this one's (the next id range), made with the same top_workspaces and
  // planned problems: the result is what one aggregator fed both walks in
  // order would hold. `later` is spent.
  void Merge(ReportAggregator& later);
  // The aggregate; the aggregator is spent.
  ReportData Finish();

 private:
  // A sum of milliseconds in fixed point (kMsUnits a millisecond): exact,
  // so the sum of merged parts is the sum of the whole.
  using ExactMs = absl::int128;
  // A group's counts, its sums of times exact.
  struct GroupSums {
    DeviceGroup group;
    ExactMs saved = 0;
    ExactMs search = 0;
  };
  struct DaySums {
    int64_t records = 0;
    ExactMs saved = 0;
  };
  // A workspace among the largest, with the order of its record among
  // those added (ties go to the earlier record).
  struct RankedWorkspace {
    int64_t order = 0;
    WorkspaceUse use;
  };
  // Keeps `w` if it is among the top_workspaces_ largest so far.
  void OfferWorkspace(RankedWorkspace w);
  void MergeRevalidations(ReportAggregator& later);
  // A record's choice, for the revalidation comparison.
  struct ChoiceSeen {
    uint64_t key = 0;     // ChoiceKey of its GPU model, cuDNN and problem
    uint64_t config = 0;  // its algorithm and math type (ConfigKey)
    double ms = 0;
  };
  void AddChoice(const ReportRecord& r, const AlgoResult* best);
  void AddWorkspace(const ReportRecord& r, const AlgoResult& best);
  void CompareRevalidations();
  // groups_'s entry, through the few looked up last (no string is made
  // for most records).
  GroupSums& GroupOf(absl::string_view gpu_model, int cudnn_version);

  const size_t top_workspaces_;
  ReportData data_;
  ExactMs saved_ = 0;  // data_.saved_ms, exact
  std::map<std::pair<std::string, int>, GroupSums> groups_;
  struct GroupSeen {
    std::string gpu_model;
    int cudnn_version = 0;
    GroupSums* group = nullptr;
  };
  std::vector<GroupSeen> groups_seen_;  // at most kGroupsSeen
  std::map<int64_t, DaySums> days_;
  // Each record's choice, in record order (a later one of a key replaces
  // an earlier): looked up by key only at Finish, and only where a
  // revalidation asks (no map of a million entries kept while walking).
  std::vector<ChoiceSeen> choices_;
  // Revalidated records: their group key and the key of their source.
  struct Revalidated {
    size_t change = 0;  // index into changes_
    uint64_t self = 0;
    uint64_t source = 0;
  };
  std::vector<Revalidated> revalidated_;
  std::map<std::tuple<std::string, std::string, std::string>, size_t>
      change_index_;
  std::vector<RevalidationChange> changes_;
  std::unordered_map<std::string, int> planned_;  // problem text -> index
  std::map<std::pair<std::string, int>, std::vector<bool>> planned_seen_;
  // A heap whose front ranks last (smallest workspace, latest record).
  std::vector<RankedWorkspace> workspaces_;
};

}  // namespace tunedb

#endif  // TUNEDB_COMMON_REPORT_DATA_H_
