#include "server/tuning/search_runner.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/record_results.h"
#include "common/sealed_plan.h"
#include "common/status_macros.h"
#include "server/tuning/fleet_sync.h"
#include "server/tuning/revalidation.h"
#include "server/tuning/search_again.h"
#include "server/tuning/stored_records.h"
#include "server/tuning/tune_mode.h"
#include "spdlog/spdlog.h"

namespace tunedb {

SearchRunner::SearchRunner(Options options,
                           const std::vector<DeviceInfo>* devices,
                           Finder* finder, StoredRecords* records,
                           FleetSync* fleet)
    : options_(std::move(options)),
      devices_(*devices),
      finder_(finder),
      records_(records),
      fleet_(fleet) {}

absl::StatusOr<std::shared_ptr<const Record>> SearchRunner::Run(
    int index, const SearchRequest& request) {
  const absl::Time start = absl::Now();
  Provenance provenance;
  absl::StatusOr<SearchResult> found = Search(index, request, &provenance);
  const double ms = absl::ToDoubleMilliseconds(absl::Now() - start);
  absl::StatusOr<std::shared_ptr<const Record>> result;
  SearchPhases phases;
  if (!found.ok()) {
    failures_.fetch_add(1, std::memory_order_relaxed);
    spdlog::warn("search on device {} failed: {} (key {})", index,
                 found.status().ToString(), request.key.HashText());
    result = absl::Status(
        found.status().code(),
        absl::StrCat("search on device ", index, " (",
                     devices_[index].key.gpu_model,
                     ") failed: ", found.status().message()));
  } else {
    search_us_total_.fetch_add(static_cast<int64_t>(ms * 1000),
                               std::memory_order_relaxed);
    phases = found->phases;
    result = Keep(index, request.key,
                  MakeRecord(index, request.key, *std::move(found), ms,
                             provenance),
                  phases, ms);
  }
  if (options_.on_search) {
    SearchEvent event;
    event.device_index = index;
    event.ok = result.ok();
    event.total_ms = ms;
    event.phases = phases;
    options_.on_search(event);
  }
  if (!result.ok() && fleet_ != nullptr) fleet_->SearchFailed(request.key);
  return result;
}

Record SearchRunner::MakeRecord(int index, const ValidKey& key,
                                SearchResult found, double ms,
                                const Provenance& provenance) const {
  const DeviceInfo& device = devices_[index];
  Record record;
  record.key = key.key();
  record.results = std::move(found.results);
  SortResults(record.results);
  SealPlans(record.key, record.results);
  record.measured_at_us = absl::ToUnixMicros(absl::Now());
  record.host = options_.host;
  record.gpu_uuid = device.uuid;
  record.driver_version = device.driver_version;
  record.finder = finder_->Name();
  record.repeats = found.repeats;
  record.workspace_cap_bytes = found.workspace_cap_bytes;
  record.search_ms = ms;
  record.verified = found.verified;
  record.timing_version = TimingVersionOf(record.results);
  record.revalidated_from_cudnn = provenance.from_cudnn;
  record.revalidated_from_driver = provenance.from_driver;
  return record;
}

absl::StatusOr<std::shared_ptr<const Record>> SearchRunner::Keep(
    int index, const ValidKey& key, Record record, const SearchPhases& p,
    double ms) {
  const bool revalidated = record.revalidated_from_cudnn != 0 ||
                           !record.revalidated_from_driver.empty();
  absl::StatusOr<std::shared_ptr<const Record>> stored =
      records_->PutSearched(key, std::move(record), fleet_ != nullptr);
  if (!stored.ok()) {
    // A search whose result could not be stored failed (a full disk must
    // not look like success in Stats).
    failures_.fetch_add(1, std::memory_order_relaxed);
    spdlog::error("storing a search result failed: {}",
                  stored.status().ToString());
    return absl::Status(
        stored.status().code(),
        absl::StrCat("the search ran but its result could not be stored: ",
                     stored.status().message()));
  }
  searches_.fetch_add(1, std::memory_order_relaxed);
  if (revalidated) revalidated_.fetch_add(1, std::memory_order_relaxed);
  if (fleet_ != nullptr) fleet_->Wake();
  spdlog::info(
      "searched {} on device {} in {:.1f} ms ({} algorithms; setup {:.0f}, "
      "find {:.0f} (heuristics {:.0f}), screen {:.0f}, retime {:.0f}, "
      "verify {:.0f} ms; {} stored plans loaded)",
      key.HashText(), index, ms, (*stored)->results.size(), p.setup_ms,
      p.find_ms, p.heuristics_ms, p.screen_ms, p.retime_ms, p.verify_ms,
      p.plans_loaded);
  return stored;
}

absl::StatusOr<SearchResult> SearchRunner::Search(int index,
                                                  const SearchRequest& request,
                                                  Provenance* provenance) {
  *provenance = Provenance();
  if (request.revalidate_from != 0) {
    std::optional<Record> source =
        RevalidationSourceOf(request.key, request.revalidate_from);
    ASSIGN_OR_RETURN(
        std::optional<SearchResult> retimed,
        Revalidate(index, request.key, source ? &*source : nullptr,
                   absl::StrCat("cuDNN ", request.revalidate_from)));
    if (retimed) {
      provenance->from_cudnn = request.revalidate_from;
      return *std::move(retimed);
    }
  }
  absl::StatusOr<std::shared_ptr<const Record>> stored =
      records_->Get(request.key);
  std::shared_ptr<const Record> record = stored.ok() ? *stored : nullptr;
  if (RetimesOlderDriver(request.revalidate_older_driver, record.get(),
                         devices_[index].driver_version)) {
    // A stale record's times are not re-timed: searched in full, as any.
    if (!record->stale()) {
      ASSIGN_OR_RETURN(
          std::optional<SearchResult> retimed,
          Revalidate(index, request.key, record.get(),
                     absl::StrCat("driver ", record->driver_version)));
      if (retimed) {
        provenance->from_driver = record->driver_version;
        return *std::move(retimed);
      }
    }
    // The full search makes the old driver's plans again: none handed on.
    record = nullptr;
  }
  return SearchAgain(index, request.key, record.get());
}

absl::StatusOr<SearchResult> SearchRunner::SearchAgain(int index,
                                                       const ValidKey& key,
                                                       const Record* stored) {
  SearchOptions search = options_.search;
  if (stored != nullptr) {
    search.stored_plans = StoredPlans(key, *stored);
    // Under another driver the stored timings may not hold.
    if (stored->driver_version == devices_[index].driver_version) {
      search.far_behind = FarBehind(*stored, options_.far_behind_factor,
                                    search.first_choices);
    }
  }
  absl::StatusOr<SearchResult> found =
      finder_->Search(index, key.problem(), search);
  if (found.ok()) {
    CarryFarBehind(search.far_behind, found->workspace_cap_bytes,
                   found->results);
  }
  return found;
}

absl::StatusOr<std::optional<SearchResult>> SearchRunner::Revalidate(
    int index, const ValidKey& key, const Record* source,
    const std::string& from) {
  SearchOptions search = options_.search;
  if (source != nullptr) search.retime_only = RevalidationCandidates(*source);
  if (search.retime_only.empty()) {
    revalidation_full_searches_.fetch_add(1, std::memory_order_relaxed);
    spdlog::info("revalidating {} from {}: nothing that ran is stored under "
                 "it; searching in full",
                 key.HashText(), from);
    return std::nullopt;
  }
  ASSIGN_OR_RETURN(SearchResult found,
                   finder_->Search(index, key.problem(), search));
  const RevalidationVerdict verdict = JudgeRevalidation(*source, found.results);
  // Counted as revalidated once its record is stored (Keep).
  if (verdict.outcome != RevalidationVerdict::Outcome::kFullSearch) {
    return found;
  }
  revalidation_full_searches_.fetch_add(1, std::memory_order_relaxed);
  spdlog::info("revalidating {} from {}: {}; searching in full",
               key.HashText(), from, verdict.why);
  return std::nullopt;
}

std::optional<Record> SearchRunner::RevalidationSourceOf(const ValidKey& key,
                                                         int from) {
  absl::StatusOr<std::vector<Record>> others =
      records_->OtherVersions(key, /*with_plans=*/true);
  if (!others.ok()) {
    spdlog::warn("revalidating {}: its records of other versions cannot be "
                 "read here ({})",
                 key.HashText(), others.status().ToString());
  } else if (const Record* source =
                 RevalidationSource(key.key(), from, *others)) {
    return *source;
  }
  // A fleet host that never held the old version's records: the fleet's
  // record of the same problem under it (same CUDA runtime), if any.
  if (fleet_ == nullptr) return std::nullopt;
  ProblemKey old = key.key();
  old.device.cudnn_version = from;
  absl::StatusOr<ValidKey> old_key = ValidKey::Make(old);
  if (!old_key.ok()) return std::nullopt;
  return fleet_->Fetch(*old_key);
}

std::vector<AlgoResult> SearchRunner::StoredPlans(const ValidKey& key,
                                                  const Record& record) {
  std::vector<AlgoResult> plans;
  if (key.problem().api != ConvApi::kGraph) return plans;
  for (const AlgoResult& r : record.results) {
    if (r.plan.empty()) continue;
    AlgoResult p;
    p.algo = r.algo;
    p.knobs = r.knobs;
    p.plan = r.plan;
    p.build_ms = r.build_ms;  // what the search that loads it would not pay
    if (UnsealPlan(key.key(), p).ok()) plans.push_back(std::move(p));
  }
  return plans;
}

}  // namespace tunedb
