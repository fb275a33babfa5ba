// Store: the SQLite database of search records.
//
// One file per daemon (the CLI may open the same file too). WAL journal, an
// explicit synchronous level, a busy timeout, BEGIN IMMEDIATE for writes,
// prepared statements reused, schema version in PRAGMA user_version with
// forward migrations, an application_id, a bounded check at open (identity,
// schema, and each b-tree's root-to-edge pages: a damaged file is a clear
// error, never a crash or a silent reset; the full PRAGMA quick_check is
// QuickCheck(), run by `tunedb doctor --db`), periodic WAL checkpoints and a
// WAL kept below a size limit. Records with an older key-format version are
// never returned. Big writes (imports) are staged: see StagedImport.
//
// A row whose stored values cannot be read back as a Record (a damaged file
// whose structure still passes quick_check: a flipped byte in a key, an enum
// name, a type) is a BadRow. Get fails on it with DATA_LOSS; Query fails the
// same way, or reports it and goes on when the caller asks (bad_row); and
// QuarantineBadRows moves every such row out of the way.
//
// Thread safety: all methods are thread-safe. Writes are serialized on one
// connection; reads use a pool of read connections so readers never wait for
// the writer (WAL).
#ifndef TUNEDB_STORE_STORE_H_
#define TUNEDB_STORE_STORE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/report_data.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

// Selects records: every entry of `fields` (canonical key field name ->
// unescaped value, see KeyFields; or "hash" -> the key's 16-hex-digit
// HashText(), answered through the key-hash index) must match, and
// measured_at_us must lie in [since_us, until_us) where a zero bound is open.
//
// The key fields gpu, cudnn, op, in_type and layout are indexed (see
// IndexedFilterFields), as is "hash": a filter naming one of them reads only
// the records with that value. A filter of other fields only (n, c, in, ...)
// or of a time range only reads every record of the store.
struct RecordFilter {
  std::map<std::string, std::string> fields;
  int64_t since_us = 0;
  int64_t until_us = 0;
  // If set, the key's problem part (ConvProblem::ToText()) must be this:
  // the store compares it in SQL, before reading a row.
  std::string problem_text = "";
  // If set, results are read with their serialized plans empty, for a
  // reader that never hands a plan on (a prediction: a new shape or cuDNN
  // version builds its own). A graph record's plans are most of its bytes.
  bool without_plans = false;

  // A filter on every field of `key` (KeyFields) for which `leave_out` is
  // false: the records that differ from `key` only there. Where only device
  // fields are left out, problem_text is set too: read without parsing
  // every candidate row's key, and of exactly `key`'s problem (a legacy
  // key's fields, which name no api, no longer match a graph-API key).
  static RecordFilter OfKeyFieldsBut(
      const ProblemKey& key,
      const std::function<bool(const std::string&)>& leave_out);

  // INVALID_ARGUMENT for an unknown field name or a malformed hash.
  absl::Status Validate() const;
  // The "hash" field as the stored 64-bit value, if the filter has one
  // (call after Validate).
  std::optional<uint64_t> KeyHash() const;
  bool Matches(const Record& record) const;
  // True if the filter names an indexed field (see above).
  bool UsesIndex() const;
  bool empty() const {
    return fields.empty() && since_us == 0 && until_us == 0 &&
           problem_text.empty();
  }
};

// A stored record row that cannot be read back: its row id, its key text as
// stored (C-escaped, so it is printable ASCII even where the damage is) and
// what is wrong with it, e.g. "results[2].math_type is \"tensor_oq\"".
struct BadRow {
  int64_t id = 0;
  std::string key_text;
  std::string reason;
};

// One search result waiting in the fleet outbox (Store::PutForFleet): its
// outbox id and the record as it was stored.
struct OutboxEntry {
  int64_t id = 0;
  Record record;
};

// The name a client gave an import (ImportLine.import_id; empty: none) and
// the lines its stream carried, stored with its commit.
struct ImportTag {
  std::string id;
  int64_t lines = 0;
};

// What a committed import stored, as ImportStatus reports it.
struct ImportReceipt {
  int64_t imported = 0;
  int64_t lines = 0;
  int64_t committed_at_us = 0;
};

// One Lookup a program made (LookupRequest.program): the program's name,
// the device key's text, the request as the daemon wrote it (opaque bytes
// to the store) and when it was last asked (Unix µs).
struct ProgramKey {
  std::string program;
  std::string device;
  std::string request;
  int64_t last_asked_us = 0;
};

// What the store keeps of one program: its rows, their requests' bytes, and
// when it last asked any of them (Unix µs).
struct ProgramTotals {
  std::string program;
  int64_t keys = 0;
  int64_t bytes = 0;
  int64_t last_asked_us = 0;
};

// ALREADY_EXISTS: an import named `id` committed before (`receipt`), so
// nothing is imported again under that name.
absl::Status ImportAlreadyCommitted(const std::string& id,
                                    const ImportReceipt& receipt);

// The key fields a filter finds through an index, besides "hash".
const std::vector<std::string>& IndexedFilterFields();

// A record's answers not yet added to the store: `count` answers of record
// `id` to `program` ("" where the Lookup named none).
struct ServedCount {
  ServedCount(int64_t id, int64_t count, std::string program = "")
      : id(id), count(count), program(std::move(program)) {}
  int64_t id = 0;
  int64_t count = 0;
  std::string program;
};

class Store {
 public:
  // An import in progress (Store::BeginImport). Add() writes the records to a
  // staging database (a private temporary file beside SQLite's other
  // temporary files, never the store's own file) in batches as they come,
  // so memory stays bounded however long the import; Commit() then stores
  // every staged record in one transaction, all or nothing, and checkpoints
  // the WAL. Destroying an import that was not committed discards what it
  // staged, and the store is left as it was.
  //
  // Thread safety: one thread at a time per import; imports on one store
  // may run in parallel. The store must outlive its imports.
  class StagedImport {
   public:
    virtual ~StagedImport() = default;
    // Validates and stages `record`; a later record with the same key
    // replaces it. After an error the import can only be discarded.
    virtual absl::Status Add(const Record& record) = 0;
    // Records added so far.
    virtual int64_t added() const = 0;
    // Stores every staged record (inserting or replacing, as Put), in one
    // transaction, and returns how many were added. May be called once.
    // With a tag that names the import, its receipt (FindImport) is written
    // in the same transaction; ALREADY_EXISTS, storing nothing, when an
    // import of that name committed before.
    virtual absl::StatusOr<int64_t> Commit(const ImportTag& tag) = 0;
    absl::StatusOr<int64_t> Commit() { return Commit(ImportTag{}); }
  };

  struct Options {
    // Database file; ":memory:" gives a private in-memory database (tests).
    std::string path = "tunedb.db";
    // Open without writing (CLI inspection, client fallback). Default false.
    bool read_only = false;
    // Permissions of a database file the store creates, whatever the umask;
    // SQLite gives its WAL and shared-memory files the same. Default 0660,
    // the daemon socket's: its owner and group (a client reading the file
    // directly, ClientOptions::db_path, needs the group). An existing file
    // keeps its own.
    unsigned file_mode = 0660;
    // SQLite busy timeout for locks held by other processes. Default 5 s.
    int busy_timeout_ms = 5000;
    // PRAGMA synchronous: "FULL" (default: an acknowledged write survives
    // power loss) or "NORMAL" (survives process crashes only).
    std::string synchronous = "FULL";
    // Run PRAGMA wal_checkpoint(PASSIVE) after this many writes. Default 256.
    int checkpoint_every_writes = 256;
    // After a write that leaves the WAL larger than this, checkpoint it and
    // truncate it (TRUNCATE); also SQLite's journal_size_limit, so a WAL
    // that could not be truncated then shrinks back to this at its next
    // reset. 0: no limit. Default 64 MiB.
    int64_t checkpoint_wal_bytes = int64_t{64} << 20;
    // Read connections kept open. Default 4.
    int read_connections = 4;
  };

  // Opens (creating and migrating if needed) and runs the bounded check (a
  // few pages per table and index, independent of the number of records).
  // FAILED_PRECONDITION for a file that is not a tunedb database, is
  // damaged where the check reads, has a newer schema than this build
  // understands, or cannot be written because its file system is read-only;
  // PERMISSION_DENIED where the file or its folder may not be written (the
  // message names the path and the cause).
  static absl::StatusOr<std::unique_ptr<Store>> Open(const Options& options);

  virtual ~Store() = default;

  // The record for `key`, or nullopt. DATA_LOSS naming the row id if its
  // row cannot be read (see BadRow).
  virtual absl::StatusOr<std::optional<Record>> Get(const ProblemKey& key) = 0;

  // Inserts or replaces the record for record.key (served_count is kept on
  // replace). Returns the row id. Durable when it returns.
  virtual absl::StatusOr<int64_t> Put(const Record& record) = 0;

  // Put, and in the same transaction adds the record to the fleet outbox
  // (docs/fleet.md), so a stored search result is never lost to the fleet.
  virtual absl::StatusOr<int64_t> PutForFleet(const Record& record) = 0;
  // The oldest `limit` outbox entries; rows that cannot be read back are
  // dropped (and logged by the caller through `dropped`).
  virtual absl::StatusOr<std::vector<OutboxEntry>> ReadOutbox(
      int limit, int64_t* dropped) = 0;
  // Removes published entries from the outbox.
  virtual absl::Status RemoveFromOutbox(const std::vector<int64_t>& ids) = 0;
  // Entries waiting in the outbox.
  virtual absl::StatusOr<int64_t> OutboxSize() = 0;

  // Puts every record in one transaction: all or nothing (a StagedImport).
  virtual absl::Status PutAll(const std::vector<Record>& records) = 0;

  // Starts a staged import (see StagedImport). FAILED_PRECONDITION on a
  // read-only store; UNAVAILABLE while too many imports run at once.
  virtual absl::StatusOr<std::unique_ptr<StagedImport>> BeginImport() = 0;

  // The receipt of the committed import named `id` (ImportTag), or nullopt
  // when none committed under that name (receipts are kept
  // kImportReceiptDays, store/import_receipts_sql.h).
  virtual absl::StatusOr<std::optional<ImportReceipt>> FindImport(
      const std::string& id) = 0;

  // The Lookups programs made (store/program_keys_sql.h): keeps each row (a
  // row kept already takes the later last_asked_us), then forgets each
  // written program's rows past its newest `max_keys_per_program`, in one
  // transaction; returns the written programs' totals after it.
  virtual absl::StatusOr<std::vector<ProgramTotals>> PutProgramKeys(
      const std::vector<ProgramKey>& rows, int64_t max_keys_per_program) = 0;
  // The rows of `program` on `device`, the most recently asked first, at
  // most `limit` (<= 0: all).
  virtual absl::StatusOr<std::vector<ProgramKey>> ReadProgramKeys(
      const std::string& program, const std::string& device,
      int64_t limit) = 0;
  // Every program's totals, in one pass over the rows.
  virtual absl::StatusOr<std::vector<ProgramTotals>> ProgramKeyTotals() = 0;
  // Forgets every row of `programs`.
  virtual absl::Status ForgetPrograms(
      const std::vector<std::string>& programs) = 0;

  // Calls `visit` for matching records with id > after_id in id order, at
  // most `limit` (<= 0: no limit) times, or until `visit` returns false.
  // DATA_LOSS naming the row id at the first row that cannot be read.
  absl::Status Query(const RecordFilter& filter, int64_t after_id, int limit,
                     const std::function<bool(const Record&)>& visit) {
    return Query(filter, after_id, limit, visit, nullptr);
  }

  // As above, but a row that cannot be read goes to `bad_row` (when it is
  // set) in its place in id order, and counts towards `limit`: the query
  // goes on while `bad_row` returns true. A bad row is reported when the
  // filter selects it or, where its key is the damaged part, when the
  // filter's indexed fields (IndexedFilterFields, hash, time range) do.
  virtual absl::Status Query(
      const RecordFilter& filter, int64_t after_id, int limit,
      const std::function<bool(const Record&)>& visit,
      const std::function<bool(const BadRow&)>& bad_row) = 0;

  // Where one part of a report walk goes: its records to `visit`, its
  // rows whose read parts are damaged to `bad_row` (both required).
  struct ReportPart {
    std::function<bool(const ReportRecord&)> visit;
    std::function<bool(const BadRow&)> bad_row;
  };

  // Every current-version record's parts that the report reads
  // (common/report_data.h): a read made for the report
  // (store/report_scan.h): two scans side by side, no parse of the key's
  // problem part; a batch of records per snapshot, never the write lock. The ids are
  // split into consecutive ranges, at most one a part, a read connection
  // and a hardware thread each (fewer where the store has fewer): range i
  // goes to parts[i], in id order, on a thread of its own (parts[0] on the
  // caller's), so every record of parts[i] comes before those of
  // parts[i + 1], and a part past the ranges gets nothing. Each part's
  // callbacks run on one thread; those of different parts at once. Until a
  // callback returns false, which stops every part.
  virtual absl::Status ReportWalk(const std::vector<ReportPart>& parts) = 0;
  // The walk in one part: every record to `visit`, in id order.
  absl::Status ReportWalk(const std::function<bool(const ReportRecord&)>& visit,
                          const std::function<bool(const BadRow&)>& bad_row) {
    return ReportWalk(std::vector<ReportPart>{{visit, bad_row}});
  }

  // The records of `key`'s family (common/shape_family.h) whose shapes lie
  // within ShapeDistance `radius` of its shape, `key`'s own included: the
  // nearest `limit` of them (by distance, then id; limit <= 0: all), in id
  // order, with their plans left empty; rows that cannot be read are left
  // out. *more: records within `radius` were (or may have been) left out.
  // Read through the index of stored shapes (a box query of an R*Tree,
  // store/sql/record_shapes.h), not the family: the cost follows the
  // records near the shape and `limit`, not the family's size.
  virtual absl::StatusOr<std::vector<Record>> FamilyNear(
      const ProblemKey& key, double radius, int limit, bool* more) = 0;

  // Deletes matching records; returns how many.
  virtual absl::StatusOr<int64_t> Delete(const RecordFilter& filter) = 0;

  // Moves every record row that cannot be read (and its results) into the
  // quarantine tables (quarantined_records, quarantined_results: the stored
  // values untouched, with the reason and the time), in one transaction.
  // Returns the rows moved.
  virtual absl::StatusOr<std::vector<BadRow>> QuarantineBadRows() = 0;

  // Adds to served_count of the given record ids (batched by the caller),
  // and, in the same transaction, to the answers served on this UTC day by
  // program (served_days: store/served_days_sql.h), whose rows older than
  // 400 days it drops. An unknown id is left out.
  virtual absl::Status AddServed(const std::vector<ServedCount>& counts) = 0;
  // The answers served from UTC day `since_day` (days since the epoch) on,
  // by day and program, summed over GPU models and cuDNN versions; in day,
  // then program order.
  virtual absl::StatusOr<std::vector<ServedDayProgram>> ServedDays(
      int64_t since_day) = 0;

  // Number of records of the current key-format version.
  virtual absl::StatusOr<int64_t> Count() = 0;
  // The cuDNN versions (cuDNN's encoding) the stored records are of, each
  // once, ascending.
  virtual absl::StatusOr<std::vector<int>> CudnnVersions() = 0;

  // Main file plus WAL, bytes (0 for :memory:).
  virtual int64_t SizeBytes() const = 0;

  // The full PRAGMA quick_check (reads the whole file: seconds for a
  // million records); FAILED_PRECONDITION with SQLite's message if not ok.
  virtual absl::Status QuickCheck() = 0;

  // Checkpoints the WAL (TRUNCATE) — called at clean shutdown.
  virtual absl::Status Checkpoint() = 0;

  virtual const std::string& path() const = 0;
};

}  // namespace tunedb

#endif  // TUNEDB_STORE_STORE_H_
