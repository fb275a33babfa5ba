// Shared pieces of the client benchmarks: a reporter that keeps every run so
// main() can print each figure as a ratio to its reference, the in-process
// daemon, and a set of ResNet-50-like convolution keys.
#ifndef TUNEDB_BENCH_CLIENT_BENCH_UTIL_H_
#define TUNEDB_BENCH_CLIENT_BENCH_UTIL_H_

#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <filesystem>
#include <functional>
#include <map>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "server/service/server.h"
#include "tunedb/problem.h"

namespace tunedb::bench {

// Console output as usual, plus every run kept by name.
class KeepingReporter : public benchmark::ConsoleReporter {
 public:
  // Plain text (no colours), counters as table columns.
  KeepingReporter() : ConsoleReporter(OO_Tabular) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) runs_[r.benchmark_name()] = r;
    ConsoleReporter::ReportRuns(runs);
  }
  // nullptr if there is no run of that name.
  const Run* Find(const std::string& name) const {
    auto it = runs_.find(name);
    return it == runs_.end() ? nullptr : &it->second;
  }
  // The first run name that starts with `prefix` and ends with `suffix`.
  std::string NameLike(const std::string& prefix,
                       const std::string& suffix) const {
    for (const auto& [name, run] : runs_) {
      if (name.rfind(prefix, 0) == 0 && name.size() >= suffix.size() &&
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) ==
              0) {
        return name;
      }
    }
    return "";
  }
  double Counter(const std::string& name, const std::string& counter) const {
    const Run* r = Find(name);
    if (r == nullptr) return 0;
    auto it = r->counters.find(counter);
    return it == r->counters.end() ? 0 : static_cast<double>(it->second);
  }
  double RealTimeNs(const std::string& name) const {
    const Run* r = Find(name);
    if (r == nullptr) return 0;
    return r->GetAdjustedRealTime() *
           (r->time_unit == benchmark::kNanosecond    ? 1
            : r->time_unit == benchmark::kMicrosecond ? 1e3
            : r->time_unit == benchmark::kMillisecond ? 1e6
                                                      : 1e9);
  }

 private:
  std::map<std::string, Run> runs_;
};

// A folder directly under /tmp (Unix socket paths stay short).
inline std::string MakeTempDir() {
  std::string pattern = "/tmp/tunedb-bench-XXXXXX";
  char* made = mkdtemp(pattern.data());
  return made ? made : "/tmp";
}

// The in-process daemon with the simulated finder and a store file beside
// its socket (SOCKET.db, new: an older one is removed, then `fill` may
// store records in it), as a real daemon has.
inline std::unique_ptr<Server> StartDaemon(
    const std::string& socket,
    const std::function<void(const std::string& db)>& fill = nullptr) {
  for (const char* suffix : {".db", ".db-wal", ".db-shm"}) {
    std::remove((socket + suffix).c_str());
  }
  if (fill) fill(socket + ".db");
  ServerOptions options;
  options.unix_socket = socket;
  options.store.path = socket + ".db";
  options.finder = "simulated";
  absl::StatusOr<std::unique_ptr<Server>> server =
      Server::BuildAndStart(options);
  if (!server.ok()) {
    fprintf(stderr, "daemon: %s\n", server.status().ToString().c_str());
    exit(1);
  }
  return *std::move(server);
}

// 2-D convolutions of a ResNet-50 forward and backward pass at batch 32 and
// 64: 2 batches x 3 ops x 8 layers = 48 keys.
inline std::vector<ProblemKey> ResNetKeys(const DeviceKey& device) {
  struct Layer {
    int64_t c, k, hw, r, stride, pad;
  };
  const Layer layers[] = {{3, 64, 224, 7, 2, 3},   {64, 64, 56, 1, 1, 0},
                          {64, 64, 56, 3, 1, 1},   {64, 256, 56, 1, 1, 0},
                          {128, 128, 28, 3, 1, 1}, {256, 256, 14, 3, 1, 1},
                          {512, 512, 7, 3, 1, 1},  {1024, 2048, 14, 1, 2, 0}};
  std::vector<ProblemKey> keys;
  for (int64_t n : {32, 64}) {
    for (ConvOp op :
         {ConvOp::kForward, ConvOp::kBackwardData, ConvOp::kBackwardFilter}) {
      for (const Layer& l : layers) {
        ProblemKey key;
        key.device = device;
        ConvProblem& p = key.problem;
        p.op = op;
        p.n = n;
        p.c = l.c;
        p.k = l.k;
        p.input = {l.hw, l.hw, 0};
        p.filter = {l.r, l.r, 0};
        p.padding = {l.pad, l.pad, 0};
        p.stride = {l.stride, l.stride, 0};
        p.dilation = {1, 1, 0};
        keys.push_back(key);
      }
    }
  }
  return keys;
}

}  // namespace tunedb::bench

#endif  // TUNEDB_BENCH_CLIENT_BENCH_UTIL_H_
