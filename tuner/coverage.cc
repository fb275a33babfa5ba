#include "tuner/coverage.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "proto/convert.h"
#include "tuner/format.h"
#include "tuner/record_stream.h"

namespace tunedb::tuner {
namespace {

// Whether a record of exactly `key` is stored (the key-hash index, then the
// key text, as two keys may share a hash).
absl::StatusOr<bool> IsStored(CliContext& ctx, const ProblemKey& key) {
  v1::Filter filter;
  (*filter.mutable_fields())["hash"] = key.HashText();
  const std::string text = key.ToText();
  bool found = false;
  absl::Status status =
      ForEachRecord(ctx, filter, 0, 0, [&](const v1::Record& r) {
        found = r.key_text() == text;
        return !found;
      });
  if (!status.ok()) return status;
  return found;
}

// The daemon's prediction for `key`, nullopt when it has none.
absl::StatusOr<std::optional<PredictedAnswer>> Prediction(
    CliContext& ctx, const ProblemKey& key) {
  v1::LookupRequest request;
  ToProto(key.problem, request.mutable_problem());
  ToProto(key.device, request.mutable_device());
  request.set_choice_only(true);
  request.set_predict(true);
  auto response = ctx.Call(&v1::TuneDb::Stub::Lookup, request);
  if (absl::IsNotFound(response.status())) return std::nullopt;
  if (!response.ok()) return response.status();
  // Stored meanwhile (a search finished): not a prediction.
  if (!response->has_prediction() ||
      response->prediction().candidates().empty()) {
    return std::nullopt;
  }
  auto first = FromProto(response->prediction().candidates(0));
  if (!first.ok()) return first.status();
  PredictedAnswer answer;
  answer.config = AlgoLabel(*first);
  answer.confidence = response->prediction().confidence();
  answer.distance = response->prediction().distance();
  return answer;
}

std::string PredictedText(const std::optional<PredictedAnswer>& p) {
  if (!p) return "-";
  return absl::StrFormat("%s (%.0f%%)", p->config, 100 * p->confidence);
}

}  // namespace

int64_t CoverageResult::predicted() const {
  return std::count_if(gaps.begin(), gaps.end(), [](const CoverageGap& g) {
    return g.predicted.has_value();
  });
}

absl::StatusOr<CoverageResult> CheckCoverage(
    CliContext& ctx, const DeviceKey& device,
    const std::vector<PrewarmItem>& items, bool predict) {
  CoverageResult result;
  result.device = device;
  result.problems = static_cast<int64_t>(items.size());
  for (const PrewarmItem& item : items) {
    absl::StatusOr<bool> stored = IsStored(ctx, item.key);
    if (!stored.ok()) return stored.status();
    if (*stored) {
      ++result.stored;
      continue;
    }
    CoverageGap gap{item, std::nullopt};
    if (predict) {
      auto predicted = Prediction(ctx, item.key);
      if (!predicted.ok()) return predicted.status();
      gap.predicted = *predicted;
    }
    result.gaps.push_back(std::move(gap));
  }
  return result;
}

nlohmann::json CoverageToJson(const CoverageResult& r) {
  nlohmann::json gaps = nlohmann::json::array();
  for (const CoverageGap& g : r.gaps) {
    nlohmann::json j = {{"source", g.item.source},
                        {"problem", g.item.key.problem.ToText()},
                        {"key", g.item.key.ToText()},
                        {"key_hash", g.item.key.HashText()},
                        {"predicted", nullptr}};
    if (g.predicted) {
      j["predicted"] = {{"config", g.predicted->config},
                        {"confidence", g.predicted->confidence},
                        {"distance", g.predicted->distance}};
    }
    gaps.push_back(std::move(j));
  }
  return {{"device", DeviceToJson(r.device)},
          {"problems", r.problems},
          {"stored", r.stored},
          {"not_stored", r.gaps.size()},
          {"predicted", r.predicted()},
          {"duplicates_dropped", r.duplicates},
          {"covered", r.covered()},
          {"gaps", gaps}};
}

void PrintCoverage(const CoverageResult& r, std::ostream& out) {
  if (!r.gaps.empty()) {
    Table t({"source", "op", "shape", "type", "layout", "predicted"});
    for (const CoverageGap& g : r.gaps) {
      const ConvProblem& p = g.item.key.problem;
      t.AddRow({g.item.source, std::string(ConvOpName(p.op)), ShapeSummary(p),
                TypeSummary(p), std::string(LayoutName(p.layout)),
                PredictedText(g.predicted)});
    }
    t.Print(out);
  }
  out << r.problems << " problems for " << r.device.gpu_model << " (cuDNN "
      << CudnnVersionText(r.device.cudnn_version) << "): " << r.stored
      << " tuned, " << r.gaps.size() << " not tuned";
  if (!r.gaps.empty()) {
    out << " (" << r.predicted()
        << " answered by a prediction until searched)";
  }
  out << "\n";
}

Table CoverageCsv(const CoverageResult& r) {
  Table t({"source", "key_hash", "op", "shape", "type", "layout",
           "predicted_config", "predicted_confidence", "key"});
  for (const CoverageGap& g : r.gaps) {
    const ConvProblem& p = g.item.key.problem;
    t.AddRow({g.item.source, g.item.key.HashText(),
              std::string(ConvOpName(p.op)), ShapeSummary(p), TypeSummary(p),
              std::string(LayoutName(p.layout)),
              g.predicted ? g.predicted->config : "",
              g.predicted ? absl::StrFormat("%.3f", g.predicted->confidence)
                          : "",
              g.item.key.ToText()});
  }
  return t;
}

}  // namespace tunedb::tuner
