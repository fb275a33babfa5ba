// ConnectionPool: a fixed set of (read) connections lent one at a time.
//
// Acquire() hands out an idle connection, waiting while all are lent; the
// Lease returns it when destroyed. With SQLite's WAL journal, readers on
// their own connections never wait for the writer.
//
// Thread safety: thread-safe. A leased Database belongs to the lease holder
// until the Lease is destroyed. The pool must outlive its leases.
#ifndef TUNEDB_STORE_SQL_CONNECTION_POOL_H_
#define TUNEDB_STORE_SQL_CONNECTION_POOL_H_

#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "store/sql/database.h"

namespace tunedb::sql {

class ConnectionPool {
 public:
  class Lease {
   public:
    Lease(Lease&& other) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Lease& operator=(Lease&&) = delete;
    ~Lease();

    Database& operator*() const { return *db_; }
    Database* operator->() const { return db_; }

   private:
    friend class ConnectionPool;
    Lease(ConnectionPool* pool, Database* db) : pool_(pool), db_(db) {}

    ConnectionPool* pool_;
    Database* db_;
  };

  // `connections` must not be empty.
  explicit ConnectionPool(std::vector<std::unique_ptr<Database>> connections);
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  // Blocks until a connection is idle.
  Lease Acquire() ABSL_LOCKS_EXCLUDED(mu_);

  size_t size() const { return connections_.size(); }

 private:
  void Return(Database* db) ABSL_LOCKS_EXCLUDED(mu_);

  const std::vector<std::unique_ptr<Database>> connections_;
  absl::Mutex mu_;
  absl::CondVar idle_cv_;  // with mu_: idle_ is not empty
  std::vector<Database*> idle_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tunedb::sql

#endif  // TUNEDB_STORE_SQL_CONNECTION_POOL_H_
