// SearchRunner: runs one search on a device and stores its record. A search
// is a revalidation where it asks for one and its source record is found
// (re-timing the source's choices, revalidation.h), else, or where the
// revalidation cannot decide, a full search that loads the plans a stored
// record kept and skips configs far behind (search_again.h). The record is
// made from the result (ranking, where, when and how it was measured),
// stored (with its fleet outbox entry under a fleet), and reported (log,
// Options::on_search).
//
// Thread safety: thread-safe; each device's searches come from its worker.
#ifndef TUNEDB_SERVER_TUNING_SEARCH_RUNNER_H_
#define TUNEDB_SERVER_TUNING_SEARCH_RUNNER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/device_info.h"
#include "common/valid_key.h"
#include "server/finder/finder.h"
#include "server/tuning/pending_search.h"
#include "tunedb/record.h"

namespace tunedb {

class FleetSync;
class StoredRecords;

// One finished search, as SearchRunner::Options::on_search sees it.
struct SearchEvent {
  int device_index = 0;
  bool ok = false;      // searched and stored
  double total_ms = 0;  // wall time of Finder::Search
  SearchPhases phases;  // zeros where the finder does not fill them
};

class SearchRunner {
 public:
  struct Options {
    SearchOptions search;  // for each search
    std::string host;      // stored with each record
    double far_behind_factor = 0;  // search_again.h
    // Called after every search (metrics); must not block.
    std::function<void(const SearchEvent&)> on_search;
  };
  // All must outlive this; `fleet` null: no fleet database.
  SearchRunner(Options options, const std::vector<DeviceInfo>* devices,
               Finder* finder, StoredRecords* records, FleetSync* fleet);

  // Runs `request`'s search on device `index` and stores its record; the
  // record as stored, or why there is none (the fleet is told).
  absl::StatusOr<std::shared_ptr<const Record>> Run(
      int index, const SearchRequest& request);

  int64_t searches() const { return searches_.load(); }
  int64_t failures() const { return failures_.load(); }
  int64_t revalidated() const { return revalidated_.load(); }
  int64_t revalidation_full_searches() const {
    return revalidation_full_searches_.load();
  }
  double search_ms_total() const { return search_us_total_.load() / 1000.0; }

 private:
  // Where a search's record came from (Record::revalidated_from_cudnn and
  // revalidated_from_driver); zero and empty for a full search.
  struct Provenance {
    int from_cudnn = 0;
    std::string from_driver;
  };
  // The finder's search for `request` (see the class comment); *provenance
  // says where a revalidation's record came from.
  absl::StatusOr<SearchResult> Search(int index, const SearchRequest& request,
                                      Provenance* provenance);
  // The full search, handed what `stored` (null: nothing usable) kept.
  absl::StatusOr<SearchResult> SearchAgain(int index, const ValidKey& key,
                                           const Record* stored);
  // A revalidation of `key` on device `index` from `source` (null: none
  // found): its candidates re-timed and judged (revalidation.h). The result
  // where it stands, counted as revalidated; nullopt where the key needs a
  // full search, counted and logged with `from` naming the source ("cuDNN
  // 91400", "driver 575.57.08").
  absl::StatusOr<std::optional<SearchResult>> Revalidate(
      int index, const ValidKey& key, const Record* source,
      const std::string& from);
  // The record `key`'s problem has under cuDNN `from` in the store, else
  // (with a fleet) the fleet's record of it under `from` and the same CUDA
  // runtime; nullopt where there is none.
  std::optional<Record> RevalidationSourceOf(const ValidKey& key, int from);
  // The plans an earlier search of graph-API `key` kept in `record`, opened
  // (SearchOptions::stored_plans). None for legacy keys or plans that do
  // not open.
  std::vector<AlgoResult> StoredPlans(const ValidKey& key,
                                      const Record& record);
  // The record of `found`, a search of `key` on device `index` that took
  // `ms`.
  Record MakeRecord(int index, const ValidKey& key, SearchResult found,
                    double ms, const Provenance& provenance) const;
  // Stores `record` and logs the search; the record as stored.
  absl::StatusOr<std::shared_ptr<const Record>> Keep(
      int index, const ValidKey& key, Record record,
      const SearchPhases& phases, double ms);

  const Options options_;
  const std::vector<DeviceInfo>& devices_;
  Finder* const finder_;
  StoredRecords* const records_;
  FleetSync* const fleet_;
  std::atomic<int64_t> searches_{0}, failures_{0}, revalidated_{0},
      revalidation_full_searches_{0}, search_us_total_{0};
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_TUNING_SEARCH_RUNNER_H_
