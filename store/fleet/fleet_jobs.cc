#include "store/fleet/fleet_jobs.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "store/fleet/fleet_database.h"

namespace tunedb {
namespace {

constexpr const char kInsert[] =
    "INSERT INTO fleet_jobs(batch, device_text, key_text, revalidate_from) "
    "VALUES ($1, $2, $3, $4) ON CONFLICT (batch, key_text) DO NOTHING";
constexpr const char kOtherKind[] =
    "SELECT COUNT(*) FROM fleet_jobs WHERE batch = $1 AND revalidate_from <> $2";
constexpr const char kRequeueFailed[] =
    "UPDATE fleet_jobs SET state = 'queued', attempts = 0, error = '', "
    "holder = '' WHERE batch = $1 AND state = 'failed'";
// $1: the devices as a text array literal.
constexpr const char kClaim[] =
    "UPDATE fleet_jobs SET state = 'running', holder = $2, "
    "lease_expires_at = now() + $3 * interval '1 millisecond', "
    "attempts = attempts + 1 "
    "WHERE id = (SELECT id FROM fleet_jobs WHERE device_text = ANY($1::text[]) "
    "AND (state = 'queued' OR (state = 'running' AND lease_expires_at < now())) "
    "ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) "
    "RETURNING id, batch, key_text, attempts, revalidate_from";
constexpr const char kRenew[] =
    "UPDATE fleet_jobs SET lease_expires_at = now() + $3 * interval "
    "'1 millisecond' WHERE id = $1 AND holder = $2 AND state = 'running'";
constexpr const char kDone[] =
    "UPDATE fleet_jobs SET state = 'done', searched = $3, error = '', "
    "finished_at = now() WHERE id = $1 AND holder = $2 AND state = 'running'";
constexpr const char kFailed[] =
    "UPDATE fleet_jobs SET state = CASE WHEN attempts >= $4 THEN 'failed' "
    "ELSE 'queued' END, error = $3, finished_at = now() "
    "WHERE id = $1 AND holder = $2 AND state = 'running'";
constexpr const char kProgress[] =
    "SELECT state, COUNT(*), COUNT(*) FILTER (WHERE searched) FROM fleet_jobs "
    "WHERE batch = $1 GROUP BY state";
constexpr const char kErrors[] =
    "SELECT error FROM fleet_jobs WHERE batch = $1 AND state = 'failed' "
    "ORDER BY id LIMIT 5";

// A PostgreSQL array literal of texts: {"a","b"} with \ and " escaped.
std::string TextArray(const std::vector<std::string>& values) {
  std::vector<std::string> quoted;
  for (const std::string& v : values) {
    std::string q = "\"";
    for (char c : v) {
      if (c == '"' || c == '\\') q += '\\';
      q += c;
    }
    quoted.push_back(q + "\"");
  }
  return absl::StrCat("{", absl::StrJoin(quoted, ","), "}");
}

int64_t Millis(absl::Duration d) { return absl::ToInt64Milliseconds(d); }

}  // namespace

absl::StatusOr<std::unique_ptr<FleetJobs>> FleetJobs::Open(
    const FleetOptions& options) {
  ASSIGN_OR_RETURN(std::shared_ptr<FleetDatabase> db,
                   FleetDatabase::Open(options));
  return std::make_unique<FleetJobs>(std::move(db));
}

FleetJobs::FleetJobs(std::shared_ptr<FleetDatabase> db) : db_(std::move(db)) {}
FleetJobs::~FleetJobs() = default;

const std::string& FleetJobs::display() const { return db_->display(); }

absl::StatusOr<FleetEnqueued> FleetJobs::Enqueue(
    const std::string& batch, const std::vector<ProblemKey>& keys,
    int revalidate_from) {
  FleetEnqueued enqueued;
  bool other_kind = false;
  RETURN_IF_ERROR(db_->Run([&](pqxx::work& txn) {
    // A batch is one kind of job: its name must not add searches to
    // revalidations, or revalidations from another version.
    other_kind = txn.exec_params(kOtherKind, batch, revalidate_from)[0][0]
                     .as<int64_t>() > 0;
    if (other_kind) return;
    for (const ProblemKey& key : keys) {
      enqueued.added += txn.exec_params(kInsert, batch, key.device.ToText(),
                                        key.ToText(), revalidate_from)
                            .affected_rows();
    }
    enqueued.requeued = txn.exec_params(kRequeueFailed, batch).affected_rows();
  }));
  if (other_kind) {
    return absl::FailedPreconditionError(absl::StrCat(
        "fleet batch ", batch, " holds jobs of another kind (",
        revalidate_from == 0 ? "revalidations" : "searches or revalidations "
                                                 "from another version",
        "); name another batch"));
  }
  return enqueued;
}

absl::StatusOr<std::optional<FleetJob>> FleetJobs::Claim(
    const std::vector<std::string>& device_texts, const std::string& holder,
    absl::Duration lease) {
  pqxx::result rows;
  RETURN_IF_ERROR(db_->Run([&](pqxx::work& txn) {
    rows = txn.exec_params(kClaim, TextArray(device_texts), holder,
                           Millis(lease));
  }));
  if (rows.empty()) return std::nullopt;
  FleetJob job;
  job.id = rows[0][0].as<int64_t>();
  job.batch = rows[0][1].c_str();
  job.attempts = rows[0][3].as<int>();
  job.revalidate_from = rows[0][4].as<int>();
  absl::StatusOr<ProblemKey> key = ProblemKey::Parse(rows[0][2].c_str());
  if (!key.ok()) {
    // A job no daemon can run: fail it for good, so it is not claimed again.
    absl::Status bad = absl::InvalidArgumentError(
        absl::StrCat("fleet job ", job.id, " has a bad key: ",
                     key.status().message()));
    RETURN_IF_ERROR(Finish(job, holder, false, bad, 0));
    return bad;
  }
  job.key = *std::move(key);
  return job;
}

absl::Status FleetJobs::Renew(const std::vector<int64_t>& ids,
                              const std::string& holder, absl::Duration lease) {
  if (ids.empty()) return absl::OkStatus();
  return db_->Run([&](pqxx::work& txn) {
    for (int64_t id : ids) txn.exec_params(kRenew, id, holder, Millis(lease));
  });
}

absl::Status FleetJobs::Finish(const FleetJob& job, const std::string& holder,
                               bool searched, const absl::Status& error,
                               int max_attempts) {
  return db_->Run([&](pqxx::work& txn) {
    if (error.ok()) {
      txn.exec_params(kDone, job.id, holder, searched);
    } else {
      txn.exec_params(kFailed, job.id, holder, error.ToString(), max_attempts);
    }
  });
}

absl::StatusOr<FleetBatchProgress> FleetJobs::Progress(
    const std::string& batch) {
  FleetBatchProgress progress;
  RETURN_IF_ERROR(db_->Run([&](pqxx::work& txn) {
    for (const auto& row : txn.exec_params(kProgress, batch)) {
      const std::string state = row[0].c_str();
      const int64_t count = row[1].as<int64_t>();
      if (state == "queued") progress.queued = count;
      if (state == "running") progress.running = count;
      if (state == "done") {
        progress.done = count;
        progress.searched = row[2].as<int64_t>();
      }
      if (state == "failed") progress.failed = count;
    }
    for (const auto& row : txn.exec_params(kErrors, batch)) {
      progress.errors.push_back(row[0].c_str());
    }
  }));
  return progress;
}

}  // namespace tunedb
