// The multi-node recipe of docs/fleet.md ("A job over many nodes") as a
// test: two tunedbd processes standing for two nodes (simulated finder, a
// SQLite file each) on one real PostgreSQL fleet database, and the ranks of
// one torchrun job, half on each node's daemon, asking as the preload does:
// a Lookup that names the job, then, on a miss, a Tune for the database.
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/barrier.h"
#include "gtest/gtest.h"
#include "tests/server/daemon_process.h"
#include "tests/testing/postgres_test.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_values.h"

namespace tunedb {
namespace {

using testing_util::DaemonProcess;
using testing_util::ProtoProblem;
using testing_util::TempDir;

constexpr int kNodes = 2;
constexpr int kRanksPerNode = 2;
// The job's convolutions, as ProtoProblem(n).
const std::vector<int64_t> kBatches = {8, 16, 32};

// What one rank was answered for one key: the algorithm, or -1 for
// NOT_FOUND (the preload then takes cuDNN's first heuristic choice, the same
// in every rank).
using Answers = std::map<int64_t, int>;

class FleetMultinodeTest : public testing_util::PostgresTest {
 protected:
  // Each node's daemon on the fleet database: --host-name node-I, searches
  // of `slow_ms`.
  void StartNodes(int slow_ms) {
    for (int i = 0; i < kNodes; ++i) {
      nodes_.push_back(std::make_unique<DaemonProcess>(
          dirs_[i], std::vector<std::string>{
                        "--finder", "simulated", "--simulated",
                        absl::StrCat("slow_ms=", slow_ms), "--host-name",
                        absl::StrCat("node-", i), "--fleet", url_,
                        "--fleet-lease", "2"}));
    }
    for (auto& node : nodes_) stubs_.push_back(node->Connect());
  }

  v1::TuneDb::Stub* Node(int i) { return stubs_[i].get(); }

  // A Lookup of ProtoProblem(n) as rank of `job`: the algorithm, or -1 on
  // NOT_FOUND (another error fails the test).
  static int Lookup(v1::TuneDb::Stub* stub, const std::string& job,
                    int64_t n) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(10));
    v1::LookupRequest req;
    *req.mutable_problem() = ProtoProblem(n);
    ToProto(testing_util::TestDevice(), req.mutable_device());
    req.set_job(job);
    v1::LookupResponse resp;
    const grpc::Status s = stub->Lookup(&ctx, req, &resp);
    if (s.error_code() == grpc::StatusCode::NOT_FOUND) return -1;
    EXPECT_TRUE(s.ok()) << s.error_message();
    return s.ok() ? resp.choice().algo().algo() : -2;
  }

  // Every rank of `job` (kRanksPerNode on each node, started together as
  // torchrun starts them): each key looked up and, on a miss, tuned (the
  // preload's background tune, here awaited). Each rank's answers, rank r
  // on node r % kNodes.
  std::vector<Answers> RunJob(const std::string& job) {
    const int ranks = kNodes * kRanksPerNode;
    std::vector<Answers> answers(ranks);
    absl::Barrier* start = new absl::Barrier(ranks);
    std::vector<std::thread> threads;
    for (int r = 0; r < ranks; ++r) {
      threads.emplace_back([&, r] {
        v1::TuneDb::Stub* stub = Node(r % kNodes);
        if (start->Block()) delete start;
        std::vector<int64_t> missed;
        for (int64_t n : kBatches) {
          answers[r][n] = Lookup(stub, job, n);
          if (answers[r][n] == -1) missed.push_back(n);
        }
        for (int64_t n : missed) {
          v1::TuneResponse tuned;
          EXPECT_TRUE(testing_util::Tune(stub, n, &tuned).ok());
        }
      });
    }
    for (auto& t : threads) t.join();
    return answers;
  }

  int64_t Searches() {
    int64_t searches = 0;
    for (auto& stub : stubs_) {
      grpc::ClientContext ctx;
      v1::StatsResponse stats;
      EXPECT_TRUE(stub->Stats(&ctx, v1::StatsRequest(), &stats).ok());
      searches += stats.searches();
    }
    return searches;
  }

  TempDir dirs_[kNodes];
  std::vector<std::unique_ptr<DaemonProcess>> nodes_;
  std::vector<std::unique_ptr<v1::TuneDb::Stub>> stubs_;
};

TEST_F(FleetMultinodeTest, AJobsRanksOnTwoNodesAgreeAndTheFleetSearchesEachKeyOnce) {
  // Searches far longer than the ranks' first lookups take: every node's
  // first lookup of a key comes before its search ends, as in a job whose
  // ranks start together.
  StartNodes(/*slow_ms=*/1000);
  const std::vector<Answers> first = RunJob("torchelastic-run-1");
  for (size_t r = 1; r < first.size(); ++r) {
    EXPECT_EQ(first[r], first[0]) << "rank " << r << " disagrees with rank 0";
  }
  // Every rank missed (nothing was stored) and asked for a search; the fleet
  // ran one per key, on one node or the other.
  for (int64_t n : kBatches) EXPECT_EQ(first[0].at(n), -1) << "n=" << n;
  EXPECT_EQ(Searches(), static_cast<int64_t>(kBatches.size()));

  // The job's later steps (and ranks that start late, on either node) keep
  // the job's first answers, though the keys are stored now.
  for (int r = 0; r < kNodes * kRanksPerNode; ++r) {
    for (int64_t n : kBatches) {
      EXPECT_EQ(Lookup(Node(r % kNodes), "torchelastic-run-1", n), -1)
          << "rank " << r << " n=" << n;
    }
  }

  // The next job: every rank on both nodes is answered with the fleet's
  // record, with no further search.
  const std::vector<Answers> next = RunJob("torchelastic-run-2");
  for (size_t r = 0; r < next.size(); ++r) {
    EXPECT_EQ(next[r], next[0]) << "rank " << r << " disagrees with rank 0";
  }
  for (int64_t n : kBatches) EXPECT_GE(next[0].at(n), 0) << "n=" << n;
  EXPECT_EQ(Searches(), static_cast<int64_t>(kBatches.size()));
}

TEST_F(FleetMultinodeTest, KeysStoredBeforeTheJobAreAnsweredAlikeOnBothNodes) {
  StartNodes(/*slow_ms=*/20);
  // A prewarm (or an earlier job) on node 0 only.
  std::map<int64_t, int> stored;
  for (int64_t n : kBatches) {
    v1::TuneResponse tuned;
    ASSERT_TRUE(testing_util::Tune(Node(0), n, &tuned).ok());
    ASSERT_TRUE(tuned.searched());
    stored[n] = tuned.choice().algo().algo();
  }
  // Node 1 reads them from the fleet database when its ranks first ask
  // (the record reaches PostgreSQL through node 0's outbox: wait for it).
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (int64_t n : kBatches) {
    while (Lookup(Node(1), "", n) == -1 &&
           std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  const std::vector<Answers> answers = RunJob("slurm-4242");
  for (size_t r = 0; r < answers.size(); ++r) {
    EXPECT_EQ(answers[r], stored) << "rank " << r << " on node " << r % kNodes;
  }
  EXPECT_EQ(Searches(), static_cast<int64_t>(kBatches.size()));
}

}  // namespace
}  // namespace tunedb
