// family_predict_bench: what a predicted miss costs once its family is
// read (FamilyCache warm), at a family of --records records: PredictFrom
// over the whole family (before: every record's distance, then a sort) and
// ShapeIndex::Predict (reading only the records near the key's shape). It
// checks that both give the same answer for every miss, and prints each
// figure with its reference (issue 50: a miss in a family of a 200,000
// record store took 7 ms; the target is 2 ms at 1,000,000 records).
//
//   family_predict_bench [--records N] [--misses M] [--store FILE]
//
// --store also writes the family to a new SQLite store FILE and times the
// first read of a family from it (FamilyCache, a cold cache), for the
// family and for a new one: the part of a miss this does not bound yet.
//
// The family is the worst case: every record of the store in one family,
// shapes drawn at random (n 1-256, c and k 3-2048, input 7-512 square).
// Memory: about 1 KB a record.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
#include "store/store.h"

namespace tunedb {
namespace {

using Clock = std::chrono::steady_clock;

constexpr double kBeforeMs = 7.0;  // issue 50, 200,000 records, warm
constexpr double kTargetMs = 2.0;  // issue 50, 1,000,000 records

double Ms(Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
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

// Writes `family` to a new store at `path` and prints how long the first
// read of a family takes.
int ColdReads(const ShapeIndex::Records& family, const std::string& path) {
  Store::Options options;
  options.path = path;
  options.synchronous = "NORMAL";
  absl::StatusOr<std::unique_ptr<Store>> store = Store::Open(options);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
    return 1;
  }
  std::vector<Record> batch;
  for (size_t i = 0; i < family.size(); ++i) {
    batch.push_back(*family[i]);
    if (batch.size() == 20000 || i + 1 == family.size()) {
      const absl::Status put = (*store)->PutAll(batch);
      if (!put.ok()) {
        std::fprintf(stderr, "%s\n", put.ToString().c_str());
        return 1;
      }
      batch.clear();
    }
  }
  ProblemKey fresh = family[0]->key;
  fresh.problem.stride = {2, 2, 0};  // a family nothing is stored of
  for (const auto& [name, key] :
       {std::make_pair("the stored family", family[0]->key),
        std::make_pair("a new family", fresh)}) {
    FamilyCache cache(store->get(), absl::Seconds(10), 65536);
    const Clock::time_point t = Clock::now();
    absl::StatusOr<std::shared_ptr<const ShapeIndex>> read =
        cache.Indexed(key);
    if (!read.ok()) return 1;
    std::printf("  first read of %s from the store (%zu records): %.0f ms\n",
                name, (*read)->records().size(), Ms(Clock::now() - t));
  }
  return 0;
}

int Run(int64_t records, int misses, const std::string& store) {
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

  std::vector<double> before, after;
  int differ = 0;
  for (int i = 0; i < misses; ++i) {
    const ProblemKey key = draw.Next();
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
  std::printf("  %-34s %7.3f ms %6.3f ms\n", "ShapeIndex::Predict",
              Percentile(after, 0.5), Percentile(after, 0.99));
  std::printf("  speed-up (median): %.0fx\n",
              Percentile(before, 0.5) / Percentile(after, 0.5));
  std::printf("  reference: issue 50, %.0f ms at 200,000 records (warm); "
              "target %.0f ms at 1,000,000: p99 is %.3fx the target\n",
              kBeforeMs, kTargetMs, Percentile(after, 0.99) / kTargetMs);
  std::printf("  answers that differ: %d of %d\n", differ, misses);
  if (differ != 0) return 1;
  return store.empty() ? 0 : ColdReads(family, store);
}

}  // namespace
}  // namespace tunedb

int main(int argc, char** argv) {
  int64_t records = 200000;
  int misses = 200;
  std::string store;
  for (int i = 1; i + 1 < argc; i += 2) {
    bool ok = true;
    if (std::strcmp(argv[i], "--records") == 0) {
      ok = absl::SimpleAtoi(argv[i + 1], &records);
    } else if (std::strcmp(argv[i], "--misses") == 0) {
      ok = absl::SimpleAtoi(argv[i + 1], &misses);
    } else if (std::strcmp(argv[i], "--store") == 0) {
      store = argv[i + 1];
    } else {
      ok = false;
    }
    if (!ok) {
      std::fprintf(stderr,
                   "usage: family_predict_bench [--records N] [--misses M]"
                   " [--store FILE]\n");
      return 2;
    }
  }
  if (records < 1 || misses < 1) return 2;
  return tunedb::Run(records, misses, store);
}
