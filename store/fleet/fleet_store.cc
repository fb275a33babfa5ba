#include "store/fleet/fleet_store.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "store/fleet/fleet_database.h"
#include "store/record_json.h"

namespace tunedb {
namespace {

constexpr const char kUpsert[] =
    "INSERT INTO fleet_records(key_text, host, key_hash, gpu_model, "
    "cudnn_version, measured_at_us, verified, repeats, timing_version, body) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) "
    "ON CONFLICT (key_text, host) DO UPDATE SET "
    "key_hash = excluded.key_hash, gpu_model = excluded.gpu_model, "
    "cudnn_version = excluded.cudnn_version, "
    "measured_at_us = excluded.measured_at_us, verified = excluded.verified, "
    "repeats = excluded.repeats, timing_version = excluded.timing_version, "
    "body = excluded.body, published_at = now() "
    "WHERE fleet_records.measured_at_us <= excluded.measured_at_us";
constexpr const char kKeysOfModel[] =
    "SELECT DISTINCT key_text FROM fleet_records WHERE gpu_model = $1 "
    "ORDER BY key_text";
constexpr const char kReleaseLease[] =
    "DELETE FROM fleet_leases WHERE key_text = $1 AND holder = $2";
constexpr const char kClaim[] =
    "INSERT INTO fleet_leases(key_text, holder, expires_at) "
    "VALUES ($1, $2, now() + $3 * interval '1 millisecond') "
    "ON CONFLICT (key_text) DO UPDATE SET holder = excluded.holder, "
    "expires_at = excluded.expires_at "
    "WHERE fleet_leases.expires_at < now() "
    "OR fleet_leases.holder = excluded.holder "
    "RETURNING holder";
constexpr const char kHolder[] =
    "SELECT holder, GREATEST(0, EXTRACT(EPOCH FROM expires_at - now()) * "
    "1000)::bigint FROM fleet_leases WHERE key_text = $1";
constexpr const char kRenew[] =
    "UPDATE fleet_leases SET expires_at = now() + $3 * interval "
    "'1 millisecond' WHERE key_text = $1 AND holder = $2";
// The report's read: a batch after the last row read, in primary-key order.
constexpr const char kReportFirst[] =
    "SELECT key_text, host, body FROM fleet_records ORDER BY key_text, host "
    "LIMIT $1";
constexpr const char kReportNext[] =
    "SELECT key_text, host, body FROM fleet_records "
    "WHERE (key_text, host) > ($1, $2) ORDER BY key_text, host LIMIT $3";

std::string MeasurementsSql(bool first_only) {
  return absl::StrCat(
      "SELECT body FROM fleet_records WHERE key_hash = $1 AND key_text = $2 "
      "ORDER BY ",
      kFleetConflictRule, first_only ? " LIMIT 1" : "");
}

// The rows' bodies as records; INTERNAL naming the key and host for a row
// that does not parse (a newer writer's format, damage).
absl::StatusOr<std::vector<Record>> ParseBodies(const pqxx::result& rows,
                                                const std::string& key_text) {
  std::vector<Record> records;
  for (const auto& row : rows) {
    absl::StatusOr<Record> record = RecordFromJson(row[0].c_str());
    if (!record.ok()) {
      return absl::DataLossError(
          absl::StrCat("fleet record of ", key_text,
                       " cannot be read: ", record.status().message()));
    }
    record->served_count = 0;
    records.push_back(*std::move(record));
  }
  return records;
}

int64_t Millis(absl::Duration d) { return absl::ToInt64Milliseconds(d); }

// One row of the report's read (key text, host, body) to `visit`, or to
// `bad_row` where its body does not parse or is another key's or host's;
// what the one called returns.
bool VisitReportRow(
    const pqxx::row& row,
    const std::function<bool(const std::string&, const Record&)>& visit,
    const std::function<bool(const BadRow&)>& bad_row) {
  const std::string key_text = row[0].c_str();
  const std::string host = row[1].c_str();
  absl::StatusOr<Record> record = RecordFromJson(row[2].c_str());
  std::string reason;
  if (!record.ok()) {
    reason = std::string(record.status().message());
  } else if (record->key.ToText() != key_text) {
    reason = "its body is the record of another key";
  } else if (record->host != host) {
    reason = absl::StrCat("its body is the record of host ", record->host);
  }
  if (!reason.empty()) {
    return bad_row(BadRow{0, key_text, absl::StrCat("host ", host, ": ",
                                                     reason)});
  }
  record->served_count = 0;
  return visit(host, *record);
}

}  // namespace

absl::StatusOr<std::unique_ptr<FleetStore>> FleetStore::Open(
    const FleetOptions& options) {
  ASSIGN_OR_RETURN(std::shared_ptr<FleetDatabase> db,
                   FleetDatabase::Open(options));
  return std::make_unique<FleetStore>(std::move(db));
}

FleetStore::FleetStore(std::shared_ptr<FleetDatabase> db)
    : db_(std::move(db)) {}
FleetStore::~FleetStore() = default;

const std::string& FleetStore::display() const { return db_->display(); }

absl::StatusOr<std::optional<Record>> FleetStore::Get(const ProblemKey& key) {
  ASSIGN_OR_RETURN(std::vector<Record> records, Read(key, true));
  if (records.empty()) return std::nullopt;
  return std::move(records.front());
}

absl::StatusOr<std::vector<Record>> FleetStore::Measurements(
    const ProblemKey& key) {
  return Read(key, false);
}

absl::StatusOr<std::vector<std::string>> FleetStore::KeyTextsOfModel(
    const std::string& gpu_model) {
  std::vector<std::string> key_texts;
  RETURN_IF_ERROR(db_->Run([&](pqxx::work& txn) {
    for (const auto& row : txn.exec_params(kKeysOfModel, gpu_model)) {
      key_texts.emplace_back(row[0].c_str());
    }
  }));
  return key_texts;
}

absl::StatusOr<std::vector<Record>> FleetStore::Read(const ProblemKey& key,
                                                     bool first_only) {
  const std::string key_text = key.ToText();
  pqxx::result rows;
  RETURN_IF_ERROR(db_->Run([&](pqxx::work& txn) {
    rows = txn.exec_params(MeasurementsSql(first_only),
                           static_cast<int64_t>(key.Hash()), key_text);
  }));
  return ParseBodies(rows, key_text);
}

absl::Status FleetStore::Publish(const std::vector<Record>& records,
                                 const std::string& holder) {
  if (records.empty()) return absl::OkStatus();
  return db_->Run([&](pqxx::work& txn) {
    for (const Record& record : records) {
      Record body = record;
      body.id = 0;
      body.served_count = 0;
      const std::string key_text = record.key.ToText();
      txn.exec_params(kUpsert, key_text, record.host,
                      static_cast<int64_t>(record.key.Hash()),
                      record.key.device.gpu_model,
                      record.key.device.cudnn_version, record.measured_at_us,
                      record.verified, record.repeats, record.timing_version,
                      RecordToJson(body));
      txn.exec_params(kReleaseLease, key_text, holder);
    }
  });
}

absl::StatusOr<FleetClaim> FleetStore::TryClaim(const ProblemKey& key,
                                                const std::string& holder,
                                                absl::Duration lease) {
  FleetClaim claim;
  const std::string key_text = key.ToText();
  RETURN_IF_ERROR(db_->Run([&](pqxx::work& txn) {
    pqxx::result won = txn.exec_params(kClaim, key_text, holder, Millis(lease));
    if (!won.empty()) {
      claim.claimed = true;
      claim.holder = holder;
      claim.remaining = lease;
      return;
    }
    pqxx::result held = txn.exec_params(kHolder, key_text);
    if (!held.empty()) {
      claim.holder = held[0][0].c_str();
      claim.remaining = absl::Milliseconds(held[0][1].as<int64_t>());
    }
  }));
  return claim;
}

absl::StatusOr<int64_t> FleetStore::Renew(
    const std::vector<std::string>& key_texts, const std::string& holder,
    absl::Duration lease) {
  int64_t held = 0;
  if (key_texts.empty()) return held;
  RETURN_IF_ERROR(db_->Run([&](pqxx::work& txn) {
    for (const std::string& key_text : key_texts) {
      held += txn.exec_params(kRenew, key_text, holder, Millis(lease))
                  .affected_rows();
    }
  }));
  return held;
}

absl::Status FleetStore::Release(const std::string& key_text,
                                 const std::string& holder) {
  return db_->Run(
      [&](pqxx::work& txn) { txn.exec_params(kReleaseLease, key_text, holder); });
}

absl::StatusOr<FleetSummary> FleetStore::Summary() {
  FleetSummary summary;
  RETURN_IF_ERROR(db_->Run([&](pqxx::work& txn) {
    pqxx::result r = txn.exec(
        "SELECT (SELECT COUNT(*) FROM fleet_records), "
        "(SELECT COUNT(DISTINCT key_text) FROM fleet_records), "
        "(SELECT COUNT(*) FROM fleet_leases WHERE expires_at >= now())");
    summary.records = r[0][0].as<int64_t>();
    summary.keys = r[0][1].as<int64_t>();
    summary.leases = r[0][2].as<int64_t>();
  }));
  return summary;
}

absl::Status FleetStore::ReportWalk(
    const std::function<bool(const std::string&, const Record&)>& visit,
    const std::function<bool(const BadRow&)>& bad_row, int batch_rows) {
  batch_rows = std::max(batch_rows, 1);
  std::string after_key;
  std::string after_host;
  for (bool first = true;; first = false) {
    pqxx::result rows;
    RETURN_IF_ERROR(db_->Run([&](pqxx::work& txn) {
      rows = first ? txn.exec_params(kReportFirst, batch_rows)
                   : txn.exec_params(kReportNext, after_key, after_host,
                                     batch_rows);
    }));
    for (const auto& row : rows) {
      if (!VisitReportRow(row, visit, bad_row)) return absl::OkStatus();
    }
    if (static_cast<int>(rows.size()) < batch_rows) return absl::OkStatus();
    after_key = rows.back()[0].c_str();
    after_host = rows.back()[1].c_str();
  }
}

}  // namespace tunedb
