#include "server/tuning/record_cache.h"

namespace tunedb {

RecordCache::Entry RecordCache::Find(const std::string& key_text) {
  absl::MutexLock lock(&mu_);
  auto it = index_.find(key_text);
  if (it == index_.end()) return {};
  lru_.splice(lru_.begin(), lru_, it->second);
  return {true, it->second->second};
}

uint64_t RecordCache::generation() const {
  absl::MutexLock lock(&mu_);
  return generation_;
}

void RecordCache::Put(const std::string& key_text,
                      std::shared_ptr<const Record> record) {
  absl::MutexLock lock(&mu_);
  ++generation_;
  Insert(key_text, std::move(record));
}

void RecordCache::PutRead(const std::string& key_text,
                          std::shared_ptr<const Record> record,
                          uint64_t read_at) {
  absl::MutexLock lock(&mu_);
  if (generation_ != read_at) return;  // written since: the read may be old
  Insert(key_text, std::move(record));
}

void RecordCache::Insert(const std::string& key_text,
                         std::shared_ptr<const Record> record) {
  if (capacity_ == 0) return;
  auto it = index_.find(key_text);
  if (it != index_.end()) {
    it->second->second = std::move(record);
    lru_.splice(lru_.begin(), lru_, it->second);
    return;
  }
  lru_.emplace_front(key_text, std::move(record));
  index_[key_text] = lru_.begin();
  if (lru_.size() > capacity_) {
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
}

void RecordCache::Clear() {
  absl::MutexLock lock(&mu_);
  ++generation_;
  index_.clear();
  lru_.clear();
}

size_t RecordCache::size() const {
  absl::MutexLock lock(&mu_);
  return lru_.size();
}

}  // namespace tunedb
