#include "store/sql/connection_pool.h"

#include <utility>

namespace tunedb::sql {

ConnectionPool::Lease::Lease(Lease&& other) noexcept
    : pool_(std::exchange(other.pool_, nullptr)),
      db_(std::exchange(other.db_, nullptr)) {}

ConnectionPool::Lease::~Lease() {
  if (pool_ != nullptr) pool_->Return(db_);
}

ConnectionPool::ConnectionPool(
    std::vector<std::unique_ptr<Database>> connections)
    : connections_(std::move(connections)) {
  for (const auto& db : connections_) idle_.push_back(db.get());
}

ConnectionPool::Lease ConnectionPool::Acquire() {
  absl::MutexLock lock(&mu_);
  while (idle_.empty()) idle_cv_.Wait(&mu_);
  Database* db = idle_.back();
  idle_.pop_back();
  return Lease(this, db);
}

void ConnectionPool::Return(Database* db) {
  {
    absl::MutexLock lock(&mu_);
    idle_.push_back(db);
  }
  idle_cv_.Signal();
}

}  // namespace tunedb::sql
