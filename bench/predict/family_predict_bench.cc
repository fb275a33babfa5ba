// family_predict_bench: what a predicted miss costs once its family is
// read (FamilyCache warm), at a family of --records records: PredictFrom
// over the whole family (before: every record's distance, then a sort) and
// ShapeIndex::Predict (reading only the records near the key's shape). It
// checks that both give the same answer for every miss, and prints each
// figure with its reference (issue 50: a miss in a family of a 200,000
// record store took 7 ms; the target is 2 ms at 1,000,000 records).
//
//   family_predict_bench [--records N] [--misses M] [--store FILE
//                        [--migrate]]
//
// --store also writes the family to a new SQLite store FILE and times, for
// the family and for a new one, the old first read of a family (the whole
// family through the device fields' indexes) and a cold prediction
// (FamilyCache with nothing kept: the store's index of shapes,
// Store::FamilyNear), each answer checked against the warm one; then the
// first prediction of the store opened again. --migrate then makes FILE a
// version 11 file (no index of shapes) and times its migration.
//
// The family is the worst case: every record of the store in one family,
// shapes drawn at random (n 1-256, c and k 3-2048, input 7-512 square).
// Memory: about 1 KB a record.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/time/time.h"
#include "server/tuning/family_cache.h"
#include "server/tuning/shape_index.h"
#include "server/tuning/shape_predictor.h"
#include "tunedb/problem.h"
#include "tunedb/record.h"
#include "store/sql/database.h"
#include "store/sql/store_schema.h"
#include "store/store.h"

namespace tunedb {
namespace {

using Clock = std::chrono::steady_clock;

constexpr double kBeforeMs = 7.0;  // issue 50, 200,000 records, warm
constexpr double kTargetMs = 2.0;  // issue 50, 1,000,000 records

double Ms(Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

// This thread's CPU time, ms: what a call cost without the time the
// scheduler gave other processes (the machine is shared).
double CpuMs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

ProblemKey BaseKey() {
  ProblemKey key;
  key.device.gpu_model = "NVIDIA H100 80GB HBM3";
  key.device.cudnn_version = 91900;
  key.device.cc_major = 9;
  key.device.sm_count = 132;
  key.device.cuda_runtime_version = 13000;
  key.problem.op = ConvOp::kForward;
  key.problem.spatial_dims = 2;
  key.problem.n = 1;
  key.problem.c = 64;
  key.problem.k = 64;
  key.problem.input = {56, 56, 0};
  key.problem.filter = {3, 3, 0};
  key.problem.padding = {1, 1, 0};
  key.problem.stride = {1, 1, 0};
  key.problem.dilation = {1, 1, 0};
  key.problem.groups = 1;
  return key;
}

struct ShapeDraw {
  std::mt19937 rng{2026};
  std::uniform_int_distribution<int64_t> n{1, 256}, ck{3, 2048},
      in{7, 512};
  ProblemKey Next() {
    ProblemKey key = BaseKey();
    key.problem.n = n(rng);
    key.problem.c = ck(rng);
    key.problem.k = ck(rng);
    key.problem.input[0] = key.problem.input[1] = in(rng);
    return key;
  }
};

std::shared_ptr<const Record> Tuned(const ProblemKey& key, int algo) {
  Record r;
  r.key = key;
  r.measured_at_us = 1'700'000'000'000'000;
  r.host = "bench";
  r.finder = "simulated";
  r.driver_version = "580.65.06";
  r.timing_version = kCurrentTimingVersion;
  AlgoResult fast;
  fast.algo = algo;
  fast.status = AlgoStatus::kOk;
  fast.launch = {0.5, 0.01, 5};
  fast.workspace_bytes = 1 << 20;
  AlgoResult slow = fast;
  slow.algo = 100 + algo;
  slow.launch = {1.0, 0.01, 5};
  r.results = {fast, slow};
  return std::make_shared<const Record>(std::move(r));
}

bool Same(const std::optional<Prediction>& a,
          const std::optional<Prediction>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  if (a->candidates.size() != b->candidates.size()) return false;
  for (size_t i = 0; i < a->candidates.size(); ++i) {
    if (ConfigIdOf(a->candidates[i]) != ConfigIdOf(b->candidates[i])) {
      return false;
    }
  }
  return a->sources == b->sources && a->distance == b->distance &&
         a->confidence == b->confidence;
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * v.size()))];
}

// Wall and CPU times of calls, ms.
struct Times {
  std::vector<double> wall, cpu;
};

// Median, p99 and max of `ms` (wall and CPU time), with the median against
// the reference figures: the target, the warm prediction and the old first
// read.
void PrintCold(const char* what, const Times& ms, double warm_ms,
               double old_read_ms) {
  const double median = Percentile(ms.wall, 0.5);
  std::printf("  %-30s %7.3f ms %6.3f ms %6.3f ms\n", what, median,
              Percentile(ms.wall, 0.99), Percentile(ms.wall, 1.0));
  std::printf("  %-30s %7.3f ms %6.3f ms %6.3f ms\n", "  its CPU time",
              Percentile(ms.cpu, 0.5), Percentile(ms.cpu, 0.99),
              Percentile(ms.cpu, 1.0));
  std::printf("    median: %.3fx the target (%.0f ms), %.1fx the warm "
              "prediction, 1/%.0f of the old first read (%.0f ms)\n",
              median / kTargetMs, kTargetMs, median / warm_ms,
              old_read_ms / median, old_read_ms);
}

// Writes `family` to a new store at `path` (20,000 records a commit).
std::unique_ptr<Store> WriteStore(const ShapeIndex::Records& family,
                                  const std::string& path) {
  Store::Options options;
  options.path = path;
  options.synchronous = "NORMAL";
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(options);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
    return nullptr;
  }
  const Clock::time_point t = Clock::now();
  std::vector<Record> batch;
  for (size_t i = 0; i < family.size(); ++i) {
    batch.push_back(*family[i]);
    if (batch.size() == 20000 || i + 1 == family.size()) {
      const absl::Status put = (*store)->PutAll(batch);
      if (!put.ok()) {
        std::fprintf(stderr, "%s\n", put.ToString().c_str());
        return nullptr;
      }
      batch.clear();
    }
  }
  std::printf("  written to the store (imports of 20,000): %.1f s\n",
              Ms(Clock::now() - t) / 1000);
  return *std::move(store);
}

// The old first read of a family (FamilyCache::Indexed: the whole family
// through the device fields' indexes, at most 65,536 records kept), of
// `key`'s family; its time in ms.
double OldRead(Store* store, const char* name, const ProblemKey& key) {
  FamilyCache cache(store, absl::Seconds(10), 65536);
  const Clock::time_point t = Clock::now();
  absl::StatusOr<std::shared_ptr<const ShapeIndex>> read = cache.Indexed(key);
  const double ms = Ms(Clock::now() - t);
  std::printf("  old first read of %s (%zu records): %.0f ms\n", name,
              read.ok() ? (*read)->records().size() : 0, ms);
  return ms;
}

// Cold predictions (FamilyCache::Predict with nothing kept: the store's
// index of shapes) of `keys`, each timed and checked against the warm
// answer of `index` (none, for keys of a family nothing is stored of:
// null); the times, or nullopt if an answer differs.
std::optional<Times> ColdPredictions(Store* store, const ShapeIndex* index,
                                    const std::vector<ProblemKey>& keys) {
  Times ms;
  for (const ProblemKey& key : keys) {
    FamilyCache cache(store, absl::ZeroDuration(), 65536);
    const double cpu = CpuMs();
    const Clock::time_point t = Clock::now();
    absl::StatusOr<std::optional<Prediction>> got =
        cache.Predict(key, Constraints(), 3);
    ms.wall.push_back(Ms(Clock::now() - t));
    ms.cpu.push_back(CpuMs() - cpu);
    const std::optional<Prediction> want =
        index == nullptr ? std::nullopt
                         : index->Predict(key, Constraints(), 3);
    if (!got.ok() || !Same(want, *got)) {
      std::fprintf(stderr, "the cold answer for %s differs\n",
                   key.ToText().c_str());
      return std::nullopt;
    }
  }
  return ms;
}

// Times the first prediction of a store opened again (SQLite's page cache
// empty; the file system's is not).
void FirstAfterOpen(const std::string& path, const ShapeIndex& index,
                    const ProblemKey& key) {
  Store::Options options;
  options.path = path;
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(options);
  if (!store.ok()) return;
  const std::optional<Times> first =
      ColdPredictions(store->get(), &index, {key});
  if (first) {
    std::printf("  the first prediction of the store opened again: %.3f ms\n",
                first->wall[0]);
  }
}

// Makes `path` a version 11 file again (no index of shapes) and times its
// migration to the current version as the store opens it.
int Migrate(const std::string& path, int64_t records) {
  {
    absl::StatusOr<std::unique_ptr<sql::Database>> db = sql::Database::Open(
        path, sql::Database::Mode::kReadWrite, /*busy_timeout_ms=*/5000);
    if (!db.ok() ||
        !(*db)->Execute("DROP TRIGGER record_shapes_delete;"
                        " DROP TABLE record_shapes; PRAGMA user_version = 11;"
                        " PRAGMA wal_checkpoint(TRUNCATE);")
             .ok()) {
      return 1;
    }
  }
  Store::Options options;
  options.path = path;
  const Clock::time_point t = Clock::now();
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(options);
  if (!store.ok()) return 1;
  std::printf("  migration 11 -> %d of %lld records (the index of shapes "
              "built): %.1f s\n",
              kStoreSchemaVersion, static_cast<long long>(records),
              Ms(Clock::now() - t) / 1000);
  return 0;
}

// The store half of the bench (--store): see the file comment.
int StoreReads(const ShapeIndex& index, const std::vector<ProblemKey>& misses,
               double warm_ms, const std::string& path, bool migrate) {
  std::unique_ptr<Store> store = WriteStore(index.records(), path);
  if (store == nullptr) return 1;
  std::vector<ProblemKey> fresh = misses;
  for (ProblemKey& key : fresh) {
    key.problem.stride = {2, 2, 0};  // a family nothing is stored of
  }
  const double old_stored = OldRead(store.get(), "the stored family",
                                    index.records()[0]->key);
  const double old_new = OldRead(store.get(), "a new family", fresh[0]);
  const std::optional<Times> stored =
      ColdPredictions(store.get(), &index, misses);
  const std::optional<Times> created =
      ColdPredictions(store.get(), nullptr, fresh);
  if (!stored || !created) return 1;
  std::printf("  cold predictions (the store's index of shapes), %zu misses"
              " each:\n  %-30s %9s %9s %9s\n",
              misses.size(), "", "median", "p99", "max");
  PrintCold("the stored family", *stored, warm_ms, old_stored);
  PrintCold("a new family", *created, warm_ms, old_new);
  std::printf("  cold answers that differ from the warm ones: 0 of %zu\n",
              2 * misses.size());
  store.reset();
  FirstAfterOpen(path, index, misses[0]);
  return migrate ? Migrate(path, static_cast<int64_t>(index.records().size()))
                 : 0;
}

int Run(int64_t records, int misses, const std::string& store, bool migrate) {
  ShapeDraw draw;
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> algo(0, 7);
  ShapeIndex::Records family;
  family.reserve(records);
  for (int64_t i = 0; i < records; ++i) {
    family.push_back(Tuned(draw.Next(), algo(rng)));
  }
  const Clock::time_point built = Clock::now();
  const ShapeIndex index(family);
  const double build_ms = Ms(Clock::now() - built);

  std::vector<ProblemKey> keys;
  std::vector<double> before, after;
  int differ = 0;
  for (int i = 0; i < misses; ++i) {
    keys.push_back(draw.Next());
    const ProblemKey& key = keys.back();
    Clock::time_point t = Clock::now();
    const std::optional<Prediction> want =
        PredictFrom(key, family, Constraints(), 3);
    before.push_back(Ms(Clock::now() - t));
    t = Clock::now();
    const std::optional<Prediction> got = index.Predict(key, Constraints(), 3);
    after.push_back(Ms(Clock::now() - t));
    if (!Same(want, got)) ++differ;
  }
  std::printf("family of %lld records, %d misses, 3 neighbours\n",
              static_cast<long long>(records), misses);
  std::printf("  index build (once per family read): %.1f ms\n", build_ms);
  std::printf("  %-34s %9s %9s\n", "", "median", "p99");
  std::printf("  %-34s %7.3f ms %6.3f ms\n", "PredictFrom, whole family",
              Percentile(before, 0.5), Percentile(before, 0.99));
  std::printf("  %-34s %7.3f ms %6.3f ms\n", "ShapeIndex::Predict (warm)",
              Percentile(after, 0.5), Percentile(after, 0.99));
  std::printf("  speed-up (median): %.0fx\n",
              Percentile(before, 0.5) / Percentile(after, 0.5));
  std::printf("  reference: issue 50, %.0f ms at 200,000 records (warm); "
              "target %.0f ms at 1,000,000: p99 is %.3fx the target\n",
              kBeforeMs, kTargetMs, Percentile(after, 0.99) / kTargetMs);
  std::printf("  answers that differ: %d of %d\n", differ, misses);
  if (differ != 0) return 1;
  return store.empty() ? 0
                       : StoreReads(index, keys, Percentile(after, 0.5), store,
                                    migrate);
}

}  // namespace
}  // namespace tunedb

int main(int argc, char** argv) {
  int64_t records = 200000;
  int misses = 200;
  std::string store;
  bool migrate = false;
  for (int i = 1; i < argc; ++i) {
    bool ok = true;
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    if (std::strcmp(argv[i], "--migrate") == 0) {
      migrate = true;
    } else if (value == nullptr) {
      ok = false;
    } else if (std::strcmp(argv[i], "--records") == 0) {
      ok = absl::SimpleAtoi(value, &records);
      ++i;
    } else if (std::strcmp(argv[i], "--misses") == 0) {
      ok = absl::SimpleAtoi(value, &misses);
      ++i;
    } else if (std::strcmp(argv[i], "--store") == 0) {
      store = value;
      ++i;
    } else {
      ok = false;
    }
    if (!ok) {
      std::fprintf(stderr,
                   "usage: family_predict_bench [--records N] [--misses M]"
                   " [--store FILE [--migrate]]\n");
      return 2;
    }
  }
  if (records < 1 || misses < 1) return 2;
  return tunedb::Run(records, misses, store, migrate);
}
