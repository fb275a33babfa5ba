// FleetStore: the records and search leases of the fleet database, the
// PostgreSQL tier that daemons of one GPU model and cuDNN version share
// (docs/fleet.md).
//
// Records: one row per key and host (fleet_records), with the key's indexed
// columns and the record itself as its export-format line
// (store/record_json.h), so fields added to records need no fleet change.
// A host's newer measurement of a key replaces its own older one; other
// hosts' rows stay. The answer for a key is the first row by the conflict
// rule (kFleetConflictRule): current timing first, then verified, then more
// timed repeats, then the later measurement, then the host name.
//
// Leases: fleet_leases holds, per key, who searches it and until when.
// TryClaim takes a key that is free or whose lease expired; the holder
// renews while its search runs and Publish releases it.
//
// Thread safety: all methods are thread-safe.
#ifndef TUNEDB_STORE_FLEET_FLEET_STORE_H_
#define TUNEDB_STORE_FLEET_FLEET_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "store/store.h"
#include "tunedb/record.h"

namespace tunedb {

class FleetDatabase;
struct FleetOptions;

// The order in which a key's measurements answer, as SQL (first wins).
inline constexpr const char kFleetConflictRule[] =
    "timing_version DESC, verified DESC, repeats DESC, measured_at_us DESC, "
    "host ASC";

// Rows of fleet_records per transaction of FleetStore::ReportWalk.
inline constexpr int kFleetReportBatchRows = 1000;

// What TryClaim found.
struct FleetClaim {
  bool claimed = false;  // the caller holds the lease now
  std::string holder;    // who holds it (the caller when claimed)
  absl::Duration remaining;  // until the lease expires
};

// Counts for `tunedb stats` and doctor.
struct FleetSummary {
  int64_t records = 0;  // rows: one per key and host
  int64_t keys = 0;     // distinct keys
  int64_t leases = 0;   // live (unexpired) leases
};

class FleetStore {
 public:
  // Connects and migrates (FleetDatabase::Open).
  static absl::StatusOr<std::unique_ptr<FleetStore>> Open(
      const FleetOptions& options);
  explicit FleetStore(std::shared_ptr<FleetDatabase> db);
  ~FleetStore();

  // The answer for `key` under the conflict rule (served_count and id 0),
  // or nullopt.
  absl::StatusOr<std::optional<Record>> Get(const ProblemKey& key);
  // Every host's measurement of `key`, in the order of the conflict rule.
  absl::StatusOr<std::vector<Record>> Measurements(const ProblemKey& key);
  // The texts of the keys the fleet has records of for GPU model
  // `gpu_model`, under any compute capability, SM count, cuDNN and CUDA
  // version, each once, in text order (a daemon's revalidation on start
  // plans from them).
  absl::StatusOr<std::vector<std::string>> KeyTextsOfModel(
      const std::string& gpu_model);

  // Stores each record as its host's measurement of its key (kept where the
  // host's stored one is newer), and releases the leases `holder` holds on
  // those keys, in one transaction.
  absl::Status Publish(const std::vector<Record>& records,
                       const std::string& holder);

  // Takes the lease on `key` for `lease` if nobody else holds a live one.
  absl::StatusOr<FleetClaim> TryClaim(const ProblemKey& key,
                                      const std::string& holder,
                                      absl::Duration lease);
  // Extends the leases `holder` still holds on these keys; returns how many
  // it still held.
  absl::StatusOr<int64_t> Renew(const std::vector<std::string>& key_texts,
                                const std::string& holder,
                                absl::Duration lease);
  // Gives up `holder`'s lease on `key` (a search that failed).
  absl::Status Release(const std::string& key_text, const std::string& holder);

  absl::StatusOr<FleetSummary> Summary();

  // The read made for the fleet's report (`tunedb report --fleet`): every
  // host's record (one row per key and host), in the order of the table's
  // primary key (key text, then host), `batch_rows` rows per transaction
  // (each batch its own snapshot: a record published during the walk may or
  // may not be read). Only the key, the host and the body are read, and
  // each body parsed (served_count 0: the fleet keeps none) and handed to
  // `visit` with its host; a row whose body does not parse, or names
  // another key or host than its row, goes to `bad_row` (id 0, its key
  // text, the host and the reason). Stops where either returns false. The
  // database's error otherwise (UNAVAILABLE naming it where unreachable).
  absl::Status ReportWalk(
      const std::function<bool(const std::string& host, const Record& record)>&
          visit,
      const std::function<bool(const BadRow&)>& bad_row,
      int batch_rows = kFleetReportBatchRows);

  // The database without its password (FleetDatabase::display).
  const std::string& display() const;
  const std::shared_ptr<FleetDatabase>& database() const { return db_; }

 private:
  // The key's rows in conflict-rule order (only the first with first_only).
  absl::StatusOr<std::vector<Record>> Read(const ProblemKey& key,
                                           bool first_only);

  const std::shared_ptr<FleetDatabase> db_;
};

}  // namespace tunedb

#endif  // TUNEDB_STORE_FLEET_FLEET_STORE_H_
