// Hit path of tunedb::Client::Get against a PyTorch-style algorithm cache,
// in the same run.
//
// The reference is PyTorch's cuDNN BenchmarkCache
// (aten/src/ATen/native/cudnn/Conv_v7.cpp): a std::mutex around a
// std::unordered_map keyed by the plain ConvolutionParams struct, hashed by
// ParamsHash (FNV-1a over the struct's bytes) and compared with memcmp. A
// second reference uses the same map and mutex with a word-at-a-time hash,
// so the lock's cost is seen apart from the hash's.
//
// Goals: one thread, tunedb's time per Get <= 1.0x the reference's time per
// lookup; two threads, tunedb's throughput >= 1.5x the reference's.
// Every Get is a hit on a tuned entry (48 ResNet-50 keys, fetched from the
// in-process daemon with the simulated finder before timing).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "bench_util.h"
#include "tunedb/client.h"

namespace tunedb::bench {
namespace {

// PyTorch's ConvolutionParams (max_dim = 3), field for field.
struct ConvolutionParams {
  int8_t device_id;
  int32_t data_type;
  int input_size[5];
  uint8_t input_dim;
  int8_t memory_format;
  int weight_size[5];
  int padding[3];
  int stride[3];
  int dilation[3];
  int64_t groups;
  bool deterministic;
  bool allow_tf32;
};

struct AlgoPerf {  // what PyTorch caches: cudnnConvolutionFwdAlgoPerf_t
  int algo;
  int status;
  float time;
  size_t memory;
  int determinism;
  int math_type;
  int reserved[3];
};

// PyTorch's ParamsHash and ParamsEqual.
struct ParamsHash {
  size_t operator()(const ConvolutionParams& params) const {
    auto ptr = reinterpret_cast<const uint8_t*>(&params);
    uint32_t value = 0x811C9DC5;
    for (size_t i = 0; i < sizeof(ConvolutionParams); ++i) {
      value ^= ptr[i];
      value *= 0x01000193;
    }
    return static_cast<size_t>(value);
  }
};
struct ParamsEqual {
  bool operator()(const ConvolutionParams& a,
                  const ConvolutionParams& b) const {
    return std::memcmp(&a, &b, sizeof(ConvolutionParams)) == 0;
  }
};
// The stronger reference's hash: 8 bytes at a time.
struct WordHash {
  size_t operator()(const ConvolutionParams& params) const {
    uint64_t words[sizeof(ConvolutionParams) / 8];
    std::memcpy(words, &params, sizeof(words));
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (uint64_t w : words) {
      h = (h ^ w) * 0xff51afd7ed558ccdull;
      h ^= h >> 29;
    }
    return h;
  }
};

template <typename Hash>
struct BenchmarkCache {
  std::mutex mutex;
  std::unordered_map<ConvolutionParams, AlgoPerf, Hash, ParamsEqual> map;

  bool find(const ConvolutionParams& params, AlgoPerf* results) {
    std::lock_guard<std::mutex> guard(mutex);
    auto it = map.find(params);
    if (it == map.end()) return false;
    *results = it->second;
    return true;
  }
  void insert(const ConvolutionParams& params, const AlgoPerf& results) {
    std::lock_guard<std::mutex> guard(mutex);
    map[params] = results;
  }
};

ConvolutionParams ToParams(const ProblemKey& key) {
  ConvolutionParams p;
  std::memset(&p, 0, sizeof(p));  // PyTorch memsets too (padding bytes)
  const ConvProblem& c = key.problem;
  p.device_id = 0;
  p.data_type = static_cast<int32_t>(c.input_type);
  p.input_dim = static_cast<uint8_t>(c.spatial_dims + 2);
  p.input_size[0] = static_cast<int>(c.n);
  p.input_size[1] = static_cast<int>(c.c);
  p.weight_size[0] = static_cast<int>(c.k);
  p.weight_size[1] = static_cast<int>(c.c / c.groups);
  for (int i = 0; i < c.spatial_dims; ++i) {
    p.input_size[2 + i] = static_cast<int>(c.input[i]);
    p.weight_size[2 + i] = static_cast<int>(c.filter[i]);
    p.padding[i] = static_cast<int>(c.padding[i]);
    p.stride[i] = static_cast<int>(c.stride[i]);
    p.dilation[i] = static_cast<int>(c.dilation[i]);
  }
  p.memory_format = static_cast<int8_t>(c.layout);
  p.groups = c.groups;
  p.deterministic = false;
  p.allow_tf32 = c.allow_tf32;
  return p;
}

// State shared by the benchmarks, set up in main() before any runs.
struct World {
  std::vector<ProblemKey> keys;
  std::unique_ptr<Client> client;
  // PyTorch keeps one cache per op (fwd, bwd data, bwd filter).
  std::vector<ConvolutionParams> params;
  std::vector<int> op_index;
  BenchmarkCache<ParamsHash> pytorch[3];
  BenchmarkCache<WordHash> word_hash[3];
};
World* world = nullptr;

void BM_TunedbClientGet(benchmark::State& state) {
  const std::vector<ProblemKey>& keys = world->keys;
  Client& client = *world->client;
  const Constraints none;
  size_t i = static_cast<size_t>(state.thread_index()) * 7;
  int64_t wrong = 0;
  for (auto _ : state) {
    Answer a = client.Get(keys[i % keys.size()], none);
    wrong += a.source != Source::kCache;
    benchmark::DoNotOptimize(a);
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
  if (wrong != 0) state.SkipWithError("a Get was not a cache hit");
}

template <typename Hash>
void RunReference(benchmark::State& state, BenchmarkCache<Hash>* caches) {
  const std::vector<ConvolutionParams>& params = world->params;
  const std::vector<int>& op = world->op_index;
  size_t i = static_cast<size_t>(state.thread_index()) * 7;
  int64_t missing = 0;
  for (auto _ : state) {
    const size_t k = i % params.size();
    AlgoPerf perf;
    missing += !caches[op[k]].find(params[k], &perf);
    benchmark::DoNotOptimize(perf);
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
  if (missing != 0) state.SkipWithError("a reference lookup missed");
}

void BM_PyTorchStyleCache(benchmark::State& state) {
  RunReference(state, world->pytorch);
}
void BM_MutexMapWordHash(benchmark::State& state) {
  RunReference(state, world->word_hash);
}

BENCHMARK(BM_TunedbClientGet)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK(BM_PyTorchStyleCache)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK(BM_MutexMapWordHash)->Threads(1)->Threads(2)->UseRealTime();

void SetUp() {
  world = new World();
  const std::string dir = MakeTempDir();
  std::unique_ptr<Server> server = StartDaemon(dir + "/hit.sock");
  world->keys = ResNetKeys(server->core().devices().at(0).key);
  ClientOptions options;
  options.address = server->address();
  options.miss_policy = MissPolicy::kCacheOnly;
  options.refresh_interval = absl::ZeroDuration();
  world->client = Client::Create(options).value();
  for (const ProblemKey& key : world->keys) world->client->Prefetch(key);
  if (!world->client->WaitForBackground(absl::Seconds(120))) {
    fprintf(stderr, "prefetch did not finish\n");
    exit(1);
  }
  for (const ProblemKey& key : world->keys) {
    Answer a = world->client->Get(key);
    if (a.source != Source::kCache) {
      fprintf(stderr, "key not cached after prefetch: %s\n",
              key.ToText().c_str());
      exit(1);
    }
    const ConvolutionParams params = ToParams(key);
    const int op = static_cast<int>(key.problem.op) - 1;
    AlgoPerf perf{};
    perf.algo = a.algo;
    perf.memory = static_cast<size_t>(a.workspace_bytes);
    perf.math_type = static_cast<int>(a.math_type);
    world->params.push_back(params);
    world->op_index.push_back(op);
    world->pytorch[op].insert(params, perf);
    world->word_hash[op].insert(params, perf);
  }
  // Hits need no daemon: stop it so nothing else runs during timing.
  server->Shutdown(absl::Seconds(1));
}

}  // namespace
}  // namespace tunedb::bench

int main(int argc, char** argv) {
  using tunedb::bench::KeepingReporter;
  benchmark::Initialize(&argc, argv);
  tunedb::bench::SetUp();
  KeepingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);

  auto t = [&](const char* name, int threads) {
    return reporter.RealTimeNs(std::string(name) +
                               "/real_time/threads:" + std::to_string(threads));
  };
  auto rate = [&](const char* name, int threads) {
    return reporter.Counter(
        std::string(name) + "/real_time/threads:" + std::to_string(threads),
        "items_per_second");
  };
  const double t1 = t("BM_TunedbClientGet", 1);
  const double r1 = t("BM_PyTorchStyleCache", 1);
  const double w1 = t("BM_MutexMapWordHash", 1);
  const double q2 = rate("BM_TunedbClientGet", 2);
  const double p2 = rate("BM_PyTorchStyleCache", 2);
  const double v2 = rate("BM_MutexMapWordHash", 2);
  if (t1 <= 0 || r1 <= 0 || q2 <= 0 || p2 <= 0) {
    fprintf(stderr, "missing runs; nothing to compare\n");
    return 1;
  }
  printf("\nSummary (same run):\n");
  printf(
      "  1 thread : tunedb Get %.1f ns, PyTorch-style %.1f ns -> %.2fx its "
      "time (goal <= 1.0x: %s)\n",
      t1, r1, t1 / r1, t1 / r1 <= 1.0 ? "met" : "NOT met");
  if (w1 > 0) {
    printf("             word-hash mutex map %.1f ns -> %.2fx its time\n", w1,
           t1 / w1);
  }
  printf(
      "  2 threads: tunedb %.1f M Get/s, PyTorch-style %.1f M/s -> %.2fx "
      "its throughput (goal >= 1.5x: %s)\n",
      q2 / 1e6, p2 / 1e6, q2 / p2, q2 / p2 >= 1.5 ? "met" : "NOT met");
  if (v2 > 0) {
    printf(
        "             word-hash mutex map %.1f M/s -> %.2fx its throughput\n",
        v2 / 1e6, q2 / v2);
  }
  benchmark::Shutdown();
  return 0;
}
