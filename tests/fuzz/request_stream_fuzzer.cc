// Fuzz target: whole request streams, message by message, as the service
// reads them (server/service/import_session.cc, tune_batch_run.cc,
// wire_message.h). The first byte picks the stream (even: an Import, odd: a
// TuneBatch); the rest is a sequence of messages, each a 2-byte
// little-endian length and that many bytes (a last short one is cut).
// Properties:
//  - Import: all or nothing. The stream is committed exactly when it ended
//    whole with no rejected line, and then the store holds the distinct keys
//    of its lines; otherwise it holds nothing. Every message is counted as a
//    line, a bad one is rejected by its number.
//  - TuneBatch: every item is answered once, by its index, in any order; an
//    item that does not parse is INVALID_ARGUMENT, and only such an item.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "google/protobuf/stubs/logging.h"
#include "server/finder/simulated_finder.h"
#include "server/service/import_session.h"
#include "server/service/request_validation.h"
#include "server/service/tune_batch_run.h"
#include "server/service/wire_message.h"
#include "server/tuning/tuning_core.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using namespace tunedb;  // NOLINT(build/namespaces): a fuzz target's file

[[maybe_unused]] const bool kProtobufQuiet =
    (google::protobuf::SetLogHandler(nullptr), true);

constexpr int64_t kMaxLines = 64;

std::vector<std::string> Messages(const uint8_t* data, size_t size) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at + 2 <= size && out.size() < 256) {
    const size_t length = data[at] | (static_cast<size_t>(data[at + 1]) << 8);
    at += 2;
    const size_t take = std::min(length, size - at);
    out.emplace_back(reinterpret_cast<const char*>(data + at), take);
    at += take;
  }
  return out;
}

grpc::ByteBuffer Buffer(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

// One in-memory store and core for every input (a core starts threads).
struct World {
  World() {
    Store::Options so;
    so.path = ":memory:";
    store = *Store::Open(so);
    finder = std::make_unique<SimulatedFinder>(SimulatedFinder::Options());
    core = *TuningCore::Create(TuningCore::Options(), store.get(),
                               finder.get());
  }
  int64_t Records() {
    int64_t n = 0;
    FUZZ_CHECK(store
                   ->Query(RecordFilter(), 0, 0,
                           [&](const Record&) {
                             ++n;
                             return true;
                           })
                   .ok());
    return n;
  }
  std::unique_ptr<Store> store;
  std::unique_ptr<SimulatedFinder> finder;
  std::unique_ptr<TuningCore> core;
};

World& TheWorld() {
  static World* world = new World();
  return *world;
}

// The keys the lines would store, if every one is good; nullopt otherwise.
std::optional<std::set<std::string>> GoodKeys(
    const std::vector<std::string>& messages) {
  std::set<std::string> keys;
  for (const std::string& m : messages) {
    v1::ImportLine line;
    if (!line.ParseFromString(m)) return std::nullopt;
    absl::StatusOr<Record> record = ValidateImportLine(line);
    if (!record.ok()) return std::nullopt;
    keys.insert(record->key.ToText());
  }
  return keys;
}

void Import(const std::vector<std::string>& messages) {
  World& world = TheWorld();
  absl::StatusOr<std::unique_ptr<Store::StagedImport>> staged =
      world.core->BeginImport();
  FUZZ_CHECK(staged.ok());
  ImportSession session(*world.core, *std::move(staged), kMaxLines);
  absl::Status taken = absl::OkStatus();
  for (const std::string& m : messages) {
    grpc::ByteBuffer buffer = Buffer(m);
    taken = session.Take(&buffer);
    if (!taken.ok()) break;
  }
  v1::ImportResponse response;
  absl::Status finished =
      taken.ok() ? session.Finish(/*cancelled=*/false, &response) : taken;
  const std::optional<std::set<std::string>> keys = GoodKeys(messages);
  const int64_t stored = world.Records();
  if (finished.ok() && response.rejected() == 0) {
    FUZZ_CHECK(keys.has_value());
    FUZZ_CHECK(stored == static_cast<int64_t>(keys->size()));
    FUZZ_CHECK(response.lines() == static_cast<int64_t>(messages.size()));
  } else {
    FUZZ_CHECK(stored == 0);
    if (finished.ok()) {
      FUZZ_CHECK(response.rejected() > 0);
      FUZZ_CHECK(response.imported() == 0);
      for (const auto& r : response.rejects()) {
        FUZZ_CHECK(r.line() >= 1 &&
                   r.line() <= static_cast<int64_t>(messages.size()));
      }
    }
  }
  if (stored > 0) {
    RecordFilter all;
    FUZZ_CHECK(world.core->Invalidate(all).ok());
  }
}

void TuneBatch(const std::vector<std::string>& messages) {
  std::mutex mu;
  std::vector<int> answered(messages.size(), 0);
  std::vector<int> codes(messages.size(), -1);
  {
    TuneBatchRun run(
        3,
        [](const v1::TuneRequest& in, v1::TuneResponse*) {
          return ValidateTune(in).status();
        },
        [&](const v1::TuneBatchResponse& out) {
          std::lock_guard<std::mutex> lock(mu);
          FUZZ_CHECK(out.index() >= 0 &&
                     out.index() < static_cast<int64_t>(messages.size()));
          ++answered[out.index()];
          codes[out.index()] = out.code();
          FUZZ_CHECK(out.done() >= 1 && out.done() <= out.received());
          return true;
        });
    for (size_t i = 0; i < messages.size(); ++i) {
      grpc::ByteBuffer buffer = Buffer(messages[i]);
      v1::TuneBatchRequest in;
      absl::Status parsed =
          ParseWireMessage(&buffer, static_cast<int64_t>(i) + 1, &in);
      if (parsed.ok()) {
        run.Add(std::move(*in.mutable_request()));
      } else {
        run.Add(parsed);
      }
    }
    run.Finish();
  }
  for (size_t i = 0; i < messages.size(); ++i) {
    FUZZ_CHECK(answered[i] == 1);
    v1::TuneBatchRequest in;
    if (!in.ParseFromString(messages[i])) {
      FUZZ_CHECK(codes[i] == static_cast<int>(absl::StatusCode::kInvalidArgument));
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::vector<std::string> messages = Messages(data + 1, size - 1);
  if (data[0] % 2 == 0) {
    Import(messages);
  } else {
    TuneBatch(messages);
  }
  return 0;
}
