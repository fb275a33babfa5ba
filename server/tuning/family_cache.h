// Predictions from the nearest tuned shapes of a key's family
// (shape_predictor.h): read from the store's index of shapes, the records
// near the key's shape only (Store::FamilyNear), or from a family kept in
// memory, ordered by shape (ShapeIndex), where the store's search read it
// whole; so a prediction on a Lookup miss never reads every record of a
// large family, cold or warm; and,
// kept the same way, the cuDNN versions stored, so a miss asks for a
// problem's records under other versions only where there can be some.
// Plans are left out of the copies.
//
// Thread safety: thread-safe (one mutex; the store is read outside it).
#ifndef TUNEDB_SERVER_TUNING_FAMILY_CACHE_H_
#define TUNEDB_SERVER_TUNING_FAMILY_CACHE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/prediction.h"
#include "server/tuning/shape_index.h"
#include "store/store.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"

namespace tunedb {

class FamilyCache {
 public:
  using Records = std::vector<std::shared_ptr<const Record>>;

  // A family read from `store` is kept for `ttl`, at most `max_records` of
  // it (the first the store gives).
  FamilyCache(Store* store, absl::Duration ttl, int max_records)
      : store_(store), ttl_(ttl), max_records_(max_records) {}

  // The prediction for `key` from the nearest tuned shapes of its family
  // (PredictNearest: PredictFrom's answer over the whole family): from the
  // family kept here if it was read within the ttl, else from the store's
  // index of shapes (Store::FamilyNear), which reads only the records near
  // `key`'s shape, whatever the family's size. A family that search read
  // whole (none of it near) is kept, up to max_records. Errors: the
  // store's.
  absl::StatusOr<std::optional<Prediction>> Predict(
      const ProblemKey& key, const Constraints& constraints, int neighbours);

  // The stored records of `key`'s family (FamilyText), `key` included if
  // stored, read whole from the store (at most max_records). Errors: the
  // store's.
  absl::StatusOr<std::shared_ptr<const Records>> Family(const ProblemKey& key);
  // The same, ordered by shape for a prediction.
  absl::StatusOr<std::shared_ptr<const ShapeIndex>> Indexed(
      const ProblemKey& key);

  // Whether the store may hold records of a cuDNN version other than
  // `key`'s (it holds some other version, as read within the last ttl).
  // Errors: the store's.
  absl::StatusOr<bool> MayHoldOtherVersions(const ProblemKey& key);

  // A record of `key`'s family was stored: read the family again next
  // time (`key`'s version counts as stored).
  void Forget(const ProblemKey& key);
  // Records were imported or deleted: read every family again.
  void Clear();

 private:
  struct Entry {
    absl::Time loaded;
    std::shared_ptr<const ShapeIndex> family;
  };
  // `key`'s family as the store holds it now.
  absl::StatusOr<std::shared_ptr<const ShapeIndex>> Read(
      const ProblemKey& key);
  // The family kept under `family` if read within the ttl, else null.
  std::shared_ptr<const ShapeIndex> Kept(const std::string& family)
      ABSL_LOCKS_EXCLUDED(mu_);

  Store* const store_;
  const absl::Duration ttl_;
  const int max_records_;
  absl::Mutex mu_;
  std::map<std::string, Entry> families_ ABSL_GUARDED_BY(mu_);
  // Bumped by Clear: a versions read that started before one is not kept.
  int64_t clears_ ABSL_GUARDED_BY(mu_) = 0;
  // Bumped by Forget and Clear: a family read that started before one is
  // not kept.
  int64_t changes_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time versions_loaded_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  std::vector<int> versions_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tunedb

#endif  // TUNEDB_SERVER_TUNING_FAMILY_CACHE_H_
