// DatabaseFallback: the daemon's database file (ClientOptions::db_path),
// read directly while the daemon cannot be reached: the stored choice for a
// key under the caller's constraints. The file is opened read-only by the
// client's background thread (MaybeOpen), retried at most every
// kRetryMs until it opens; until then there is nothing to read.
//
// Thread safety: Find and open() are thread-safe (they read the opened
// store through an atomic pointer); MaybeOpen and waiting() belong to one
// thread (the background worker).
#ifndef TUNEDB_CLIENT_DATABASE_FALLBACK_H_
#define TUNEDB_CLIENT_DATABASE_FALLBACK_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "store/store.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

class DatabaseFallback {
 public:
  // How often MaybeOpen retries a file that did not open.
  static constexpr int64_t kRetryMs = 5000;

  // A stored choice and when its record was measured.
  struct Choice {
    AlgoResult choice;
    int64_t measured_at_us = 0;
  };

  // `db_path` empty: no database, never open.
  explicit DatabaseFallback(std::string db_path);
  ~DatabaseFallback();

  // Whether there is a file to open that is not open yet.
  bool waiting() const { return !db_path_.empty() && store_ == nullptr; }
  // Opens the file read-only if waiting() and the last try was kRetryMs
  // ago or more.
  void MaybeOpen();

  bool open() const {
    return database_.load(std::memory_order_acquire) != nullptr;
  }
  // The choice under `constraints` of the stored record for `key`, if the
  // file is open and has one that fits.
  std::optional<Choice> Find(const ProblemKey& key,
                             const Constraints& constraints) const;

 private:
  const std::string db_path_;
  // The worker's: the store and when it may next try to open it.
  std::unique_ptr<Store> store_;
  int64_t retry_ms_ = 0;
  // What readers load: store_ once it is open.
  std::atomic<Store*> database_{nullptr};
};

}  // namespace tunedb

#endif  // TUNEDB_CLIENT_DATABASE_FALLBACK_H_
