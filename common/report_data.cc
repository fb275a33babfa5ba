#include "common/report_data.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string_view>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "common/record_labels.h"
#include "common/record_results.h"

namespace tunedb {
namespace {

constexpr int64_t kUsPerDay = int64_t{86400} * 1000 * 1000;
// Groups ReportAggregator::GroupOf finds without a map lookup.
constexpr size_t kGroupsSeen = 8;
// The fixed point of the aggregator's sums of times: 2^-24 ms (60 ps) a
// unit; a record's time is rounded to it once.
constexpr double kMsUnits = 16777216.0;

absl::int128 ToUnits(double ms) {
  return absl::int128(std::nearbyint(ms * kMsUnits));
}

double ToMs(absl::int128 units) {
  return static_cast<double>(units) / kMsUnits;
}

// A (GPU model, cuDNN version, problem) as one number: the parts' hashes
// combined, with nothing concatenated (it is made for every record).
uint64_t ChoiceKey(absl::string_view gpu, int cudnn,
                   absl::string_view problem) {
  const auto hash = [](absl::string_view s) {
    return std::hash<std::string_view>()(std::string_view(s.data(), s.size()));
  };
  uint64_t key = hash(gpu);
  key = key * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(cudnn);
  return key * 0x9e3779b97f4a7c15ULL + hash(problem);
}

// A result's config as AlgoLabel names it (the algorithm and its math
// type), as one number.
uint64_t ConfigKey(const AlgoResult& r) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(r.algo)) << 8) |
         static_cast<uint64_t>(r.math_type);
}

int RankBucket(int rank) {
  if (rank <= 0) return 5;
  if (rank <= 3) return rank - 1;
  return rank < 10 ? 3 : 4;
}

int GainBucket(double gain) {
  static constexpr double kUpper[] = {1.02, 1.1, 1.25, 1.5, 2.0};
  for (int i = 0; i < 5; ++i) {
    if (gain < kUpper[i]) return i;
  }
  return 5;
}

// The order of the largest workspaces: larger first, then the earlier
// record.
template <typename Ranked>
bool RanksBefore(const Ranked& a, const Ranked& b) {
  if (a.use.workspace_bytes != b.use.workspace_bytes) {
    return a.use.workspace_bytes > b.use.workspace_bytes;
  }
  return a.order < b.order;
}

// The heuristic's first choice among the record's results that ran.
const AlgoResult* HeuristicFirst(const std::vector<AlgoResult>& results) {
  for (const AlgoResult& a : results) {
    if (a.status == AlgoStatus::kOk && a.heuristic_rank == 1) return &a;
  }
  return nullptr;
}

}  // namespace

const std::array<const char*, kRankBuckets>& RankBucketNames() {
  static const std::array<const char*, kRankBuckets> names = {
      "1st", "2nd", "3rd", "4th-9th", "10th+", "not offered"};
  return names;
}

const std::array<const char*, kGainBuckets>& GainBucketNames() {
  static const std::array<const char*, kGainBuckets> names = {
      "<1.02x", "1.02-1.1x", "1.1-1.25x", "1.25-1.5x", "1.5-2x", ">=2x"};
  return names;
}

void ReportAggregator::SetPlannedProblems(
    std::vector<std::string> models, const std::vector<ConvProblem>& problems) {
  data_.models = std::move(models);
  for (const ConvProblem& p : problems) {
    planned_.emplace(p.ToText(), static_cast<int>(planned_.size()));
  }
  data_.planned = static_cast<int64_t>(planned_.size());
}

void ReportAggregator::Add(const Record& r) {
  const std::string problem = r.key.problem.ToText();
  ReportRecord view;
  view.gpu_model = r.key.device.gpu_model;
  view.cudnn_version = r.key.device.cudnn_version;
  view.problem_text = problem;
  view.driver_version = r.driver_version;
  view.measured_at_us = r.measured_at_us;
  view.served_count = r.served_count;
  view.search_ms = r.search_ms;
  view.revalidated_from_cudnn = r.revalidated_from_cudnn;
  view.revalidated_from_driver = r.revalidated_from_driver;
  view.results = &r.results;
  Add(view);
}

void ReportAggregator::Add(const ReportRecord& r) {
  const int cudnn = r.cudnn_version;
  GroupSums& sums = GroupOf(r.gpu_model, cudnn);
  DeviceGroup& g = sums.group;
  const ExactMs saved =
      ToUnits(static_cast<double>(r.served_count) * r.search_ms);
  ++g.records;
  g.served += r.served_count;
  sums.saved += saved;
  sums.search += ToUnits(r.search_ms);
  ++data_.records;
  data_.served += r.served_count;
  saved_ += saved;
  DaySums& day = days_[r.measured_at_us / kUsPerDay];
  ++day.records;
  day.saved += saved;
  const AlgoResult* best = ChooseFrom(*r.results, Constraints());
  if (best == nullptr) ++g.unsupported;
  if (r.revalidated_from_cudnn != 0 || !r.revalidated_from_driver.empty()) {
    ++g.revalidated;
  }
  AddChoice(r, best);
  if (best) AddWorkspace(r, *best);
}

ReportAggregator::GroupSums& ReportAggregator::GroupOf(
    absl::string_view gpu_model, int cudnn_version) {
  for (const GroupSeen& seen : groups_seen_) {
    if (seen.cudnn_version == cudnn_version && seen.gpu_model == gpu_model) {
      return *seen.group;
    }
  }
  GroupSums& group = groups_[{std::string(gpu_model), cudnn_version}];
  if (groups_seen_.size() == kGroupsSeen) groups_seen_.pop_back();
  groups_seen_.insert(groups_seen_.begin(),
                      {std::string(gpu_model), cudnn_version, &group});
  return group;
}

void ReportAggregator::AddUnreadable(UnreadableRow row) {
  ++data_.unreadable;
  if (data_.unreadable_rows.size() < kUnreadableRowsListed) {
    data_.unreadable_rows.push_back(std::move(row));
  }
}

void ReportAggregator::AddChoice(const ReportRecord& r,
                                 const AlgoResult* best) {
  const absl::string_view gpu = r.gpu_model;
  const int cudnn = r.cudnn_version;
  const absl::string_view problem = r.problem_text;
  if (!planned_.empty()) {
    auto it = planned_.find(std::string(problem));
    if (it != planned_.end()) {
      std::vector<bool>& seen = planned_seen_[{std::string(gpu), cudnn}];
      seen.resize(planned_.size());
      seen[it->second] = true;
    }
  }
  if (best == nullptr) return;
  const uint64_t self = ChoiceKey(gpu, cudnn, problem);
  choices_.push_back(
      {self, ConfigKey(*best), best->cost(LaunchMode::kDirect).median_ms});
  ++data_.ranks[RankBucket(best->heuristic_rank)];
  if (const AlgoResult* first = HeuristicFirst(*r.results);
      first != nullptr && best->cost(LaunchMode::kDirect).median_ms > 0) {
    ++data_.gains[GainBucket(first->cost(LaunchMode::kDirect).median_ms /
                             best->cost(LaunchMode::kDirect).median_ms)];
  } else {
    ++data_.gains_unknown;
  }
  const bool by_cudnn = r.revalidated_from_cudnn != 0;
  if (!by_cudnn && r.revalidated_from_driver.empty()) return;
  std::string from = by_cudnn ? absl::StrCat("cuDNN ", CudnnVersionText(
                                                           r.revalidated_from_cudnn))
                              : absl::StrCat("driver ", r.revalidated_from_driver);
  std::string to = by_cudnn ? absl::StrCat("cuDNN ", CudnnVersionText(cudnn))
                            : absl::StrCat("driver ", r.driver_version);
  auto [it, added] = change_index_.try_emplace(
      {std::string(gpu), from, to}, changes_.size());
  if (added) changes_.push_back({std::string(gpu), from, to});
  RevalidationChange& change = changes_[it->second];
  ++change.records;
  change.latest_us = std::max(change.latest_us, r.measured_at_us);
  // A driver revalidation replaces the key's own record: nothing to compare.
  revalidated_.push_back(
      {it->second, self,
       by_cudnn ? ChoiceKey(gpu, r.revalidated_from_cudnn, problem) : 0});
}

void ReportAggregator::AddWorkspace(const ReportRecord& r,
                                    const AlgoResult& best) {
  if (best.workspace_bytes <= 0) return;
  // This record is the latest: a tie with the smallest kept stays out.
  if (workspaces_.size() == top_workspaces_ &&
      workspaces_.front().use.workspace_bytes >= best.workspace_bytes) {
    return;
  }
  RankedWorkspace ranked;
  ranked.order = data_.records - 1;  // Add counted this record
  WorkspaceUse& use = ranked.use;
  use.gpu_model = std::string(r.gpu_model);
  use.cudnn_version = r.cudnn_version;
  // Parsed only here: few records enter the largest.
  absl::StatusOr<ConvProblem> p = ConvProblem::Parse(r.problem_text);
  use.problem = p.ok() ? absl::StrCat(ConvOpName(p->op), " ", ShapeSummary(*p),
                                      " ", TypeSummary(*p))
                       : std::string(r.problem_text);
  use.config = AlgoLabel(best);
  use.workspace_bytes = best.workspace_bytes;
  use.ms = best.cost(LaunchMode::kDirect).median_ms;
  use.served = r.served_count;
  Constraints none;
  none.max_workspace_bytes = 0;
  if (const AlgoResult* free = ChooseFrom(*r.results, none)) {
    use.no_workspace_ms = free->cost(LaunchMode::kDirect).median_ms;
  }
  OfferWorkspace(std::move(ranked));
}

void ReportAggregator::OfferWorkspace(RankedWorkspace w) {
  if (top_workspaces_ == 0) return;
  const auto before = RanksBefore<RankedWorkspace>;
  if (workspaces_.size() == top_workspaces_) {
    if (!before(w, workspaces_.front())) return;
    std::pop_heap(workspaces_.begin(), workspaces_.end(), before);
    workspaces_.pop_back();
  }
  workspaces_.push_back(std::move(w));
  std::push_heap(workspaces_.begin(), workspaces_.end(), before);
}

void ReportAggregator::Merge(ReportAggregator& later) {
  for (auto& [key, theirs] : later.groups_) {
    GroupSums& ours = groups_[key];
    DeviceGroup& g = ours.group;
    g.records += theirs.group.records;
    g.unsupported += theirs.group.unsupported;
    g.served += theirs.group.served;
    g.revalidated += theirs.group.revalidated;
    ours.saved += theirs.saved;
    ours.search += theirs.search;
  }
  for (const auto& [day, theirs] : later.days_) {
    DaySums& ours = days_[day];
    ours.records += theirs.records;
    ours.saved += theirs.saved;
  }
  for (auto& [key, theirs] : later.planned_seen_) {
    std::vector<bool>& ours = planned_seen_[key];
    ours.resize(planned_.size());
    for (size_t i = 0; i < theirs.size() && i < ours.size(); ++i) {
      if (theirs[i]) ours[i] = true;
    }
  }
  for (size_t i = 0; i < kRankBuckets; ++i) {
    data_.ranks[i] += later.data_.ranks[i];
  }
  for (size_t i = 0; i < kGainBuckets; ++i) {
    data_.gains[i] += later.data_.gains[i];
  }
  data_.gains_unknown += later.data_.gains_unknown;
  MergeRevalidations(later);
  for (RankedWorkspace& w : later.workspaces_) {
    w.order += data_.records;  // later's records come after ours
    OfferWorkspace(std::move(w));
  }
  data_.records += later.data_.records;
  data_.served += later.data_.served;
  saved_ += later.saved_;
  data_.unreadable += later.data_.unreadable;
  for (UnreadableRow& row : later.data_.unreadable_rows) {
    if (data_.unreadable_rows.size() == kUnreadableRowsListed) break;
    data_.unreadable_rows.push_back(std::move(row));
  }
}

// The later walk's choices and revalidations follow ours (a later choice
// of a key replaces an earlier one at Finish), their changes in the order
// they were first seen.
void ReportAggregator::MergeRevalidations(ReportAggregator& later) {
  choices_.insert(choices_.end(), later.choices_.begin(),
                  later.choices_.end());
  std::vector<size_t> index(later.changes_.size());
  for (size_t i = 0; i < later.changes_.size(); ++i) {
    const RevalidationChange& theirs = later.changes_[i];
    auto [it, added] = change_index_.try_emplace(
        {theirs.gpu_model, theirs.from, theirs.to}, changes_.size());
    if (added) changes_.push_back({theirs.gpu_model, theirs.from, theirs.to});
    RevalidationChange& ours = changes_[it->second];
    ours.records += theirs.records;
    ours.latest_us = std::max(ours.latest_us, theirs.latest_us);
    index[i] = it->second;
  }
  for (Revalidated r : later.revalidated_) {
    r.change = index[r.change];
    revalidated_.push_back(r);
  }
}

void ReportAggregator::CompareRevalidations() {
  if (revalidated_.empty()) return;
  // The keys asked about, then each one's latest choice.
  std::unordered_map<uint64_t, const ChoiceSeen*> latest;
  for (const Revalidated& r : revalidated_) {
    if (r.source == 0) continue;
    latest.emplace(r.self, nullptr);
    latest.emplace(r.source, nullptr);
  }
  for (const ChoiceSeen& choice : choices_) {
    auto it = latest.find(choice.key);
    if (it != latest.end()) it->second = &choice;
  }
  for (const Revalidated& r : revalidated_) {
    if (r.source == 0) continue;
    const ChoiceSeen* source = latest[r.source];
    const ChoiceSeen* now = latest[r.self];
    if (source == nullptr || now == nullptr) continue;
    RevalidationChange& change = changes_[r.change];
    ++change.compared;
    if (now->config != source->config) ++change.changed;
    if (now->ms > 1.05 * source->ms) ++change.slower;
  }
}

ReportData ReportAggregator::Finish() {
  CompareRevalidations();
  data_.saved_ms = ToMs(saved_);
  for (auto& [key, sums] : groups_) {
    DeviceGroup& group = data_.groups.emplace_back(sums.group);
    if (!planned_.empty()) {
      const std::vector<bool>& seen = planned_seen_[key];
      group.planned_stored = std::count(seen.begin(), seen.end(), true);
    }
    group.gpu_model = key.first;
    group.cudnn_version = key.second;
    group.saved_ms = ToMs(sums.saved);
    group.search_ms = ToMs(sums.search);
  }
  for (const auto& [day, sums] : days_) {
    data_.days.push_back({day, sums.records, ToMs(sums.saved)});
  }
  data_.revalidations = changes_;
  std::stable_sort(data_.revalidations.begin(), data_.revalidations.end(),
                   [](const RevalidationChange& a, const RevalidationChange& b) {
                     return a.latest_us > b.latest_us;
                   });
  std::sort(workspaces_.begin(), workspaces_.end(),
            RanksBefore<RankedWorkspace>);
  for (RankedWorkspace& w : workspaces_) {
    data_.workspaces.push_back(std::move(w.use));
  }
  return std::move(data_);
}

int64_t WeekOfDay(int64_t day) {
  // Day 0, 1970-01-01, was a Thursday: day 4 a Monday.
  const int64_t since_monday = ((day - 4) % 7 + 7) % 7;
  return day - since_monday;
}

void SetServedDays(const std::vector<ServedDayProgram>& rows,
                   ReportData* data) {
  data->served_days.clear();
  data->week_programs.clear();
  if (rows.empty()) return;
  std::map<int64_t, ServedDay> days;
  int64_t newest = rows.front().day;
  for (const ServedDayProgram& row : rows) newest = std::max(newest, row.day);
  const int64_t first_week = WeekOfDay(newest) - 7 * (kWeeksListed - 1);
  // week -> program -> sums
  std::map<int64_t, std::map<std::string, WeekProgram>> weeks;
  for (const ServedDayProgram& row : rows) {
    ServedDay& day = days[row.day];
    day.day = row.day;
    day.served += row.served;
    day.saved_ms += row.saved_ms;
    const int64_t week = WeekOfDay(row.day);
    if (week < first_week) continue;
    WeekProgram& p = weeks[week][row.program];
    p.week = week;
    p.program = row.program;
    p.served += row.served;
    p.saved_ms += row.saved_ms;
  }
  for (const auto& [day, sums] : days) data->served_days.push_back(sums);
  for (auto w = weeks.rbegin(); w != weeks.rend(); ++w) {
    std::vector<WeekProgram> programs;
    for (auto& [name, p] : w->second) programs.push_back(std::move(p));
    // Most saved first; ties by name, so the order is the same every time.
    std::sort(programs.begin(), programs.end(),
              [](const WeekProgram& a, const WeekProgram& b) {
                if (a.saved_ms != b.saved_ms) return a.saved_ms > b.saved_ms;
                return a.program < b.program;
              });
    if (programs.size() > kWeekProgramsListed) {
      programs.resize(kWeekProgramsListed);
    }
    for (WeekProgram& p : programs) {
      data->week_programs.push_back(std::move(p));
    }
  }
}

}  // namespace tunedb
