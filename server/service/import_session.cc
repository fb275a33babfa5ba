#include "server/service/import_session.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "proto/wire_limits.h"
#include "server/service/request_validation.h"
#include "server/service/wire_message.h"
#include "spdlog/spdlog.h"

namespace tunedb {

ImportSession::ImportSession(TuningCore& core,
                             std::unique_ptr<Store::StagedImport> staged,
                             int64_t max_lines)
    : core_(core), staged_(std::move(staged)), max_lines_(max_lines) {}

absl::Status ImportSession::Take(grpc::ByteBuffer* message) {
  ++lines_;
  if (lines_ > max_lines_) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "import is larger than ", max_lines_, " lines; split the file"));
  }
  v1::ImportLine line;
  absl::Status parsed = ParseWireMessage(message, lines_, &line);
  if (!parsed.ok()) {
    Reject(parsed.message());
    return absl::OkStatus();
  }
  if (lines_ == 1) RETURN_IF_ERROR(TakeHeader(line));
  absl::StatusOr<Record> record = ValidateImportLine(line);
  if (!record.ok()) {
    Reject(record.status().message());
    return absl::OkStatus();
  }
  if (rejected_ > 0) return absl::OkStatus();  // nothing more is staged
  absl::Status staged = staged_->Add(*record);
  if (staged.code() == absl::StatusCode::kInvalidArgument) {
    Reject(staged.message());
    return absl::OkStatus();
  }
  return staged;
}

absl::Status ImportSession::TakeHeader(const v1::ImportLine& first) {
  ASSIGN_OR_RETURN(ImportHeader header,
                   ValidateImportHeader(first, max_lines_));
  expected_ = header.expected_lines;
  import_id_ = std::move(header.import_id);
  if (import_id_.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::optional<ImportReceipt> earlier,
                   core_.store().FindImport(import_id_));
  if (!earlier.has_value()) return absl::OkStatus();
  return ImportAlreadyCommitted(import_id_, *earlier);
}

void ImportSession::Reject(absl::string_view reason) {
  if (++rejected_ > kMaxImportRejectsListed) return;
  v1::ImportResponse::Reject* out = rejects_.add_rejects();
  out->set_line(lines_);
  out->set_reason(std::string(reason));
}

absl::Status ImportSession::Finish(bool cancelled,
                                   v1::ImportResponse* response) {
  // gRPC ends the reads the same way for a finished stream and a broken one
  // (the client gone, a message over the size limit): only one that
  // delivered what it announced, and was not cancelled, is imported.
  if (cancelled || (expected_ > 0 && lines_ != expected_)) {
    spdlog::warn("import stream broke after {} lines; nothing imported",
                 lines_);
    return absl::CancelledError(absl::StrCat(
        "the import stream broke after ", lines_,
        " lines, before its end; nothing was imported"));
  }
  *response = std::move(rejects_);
  response->set_lines(lines_);
  response->set_rejected(rejected_);
  if (rejected_ > 0) {
    response->set_imported(0);  // all or nothing: a bad file imports nothing
    return absl::OkStatus();
  }
  const absl::Time commit_start = absl::Now();
  ASSIGN_OR_RETURN(int64_t stored,
                   core_.CommitImport(*staged_, ImportTag{import_id_, lines_}));
  response->set_imported(stored);
  spdlog::info("imported {} records{} (commit {:.1f} s)", stored,
               import_id_.empty() ? "" : absl::StrCat(" as ", import_id_),
               absl::ToDoubleSeconds(absl::Now() - commit_start));
  return absl::OkStatus();
}

}  // namespace tunedb
