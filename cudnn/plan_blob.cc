#include "cudnn/plan_blob.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"

namespace tunedb {
namespace {

using Json = nlohmann::ordered_json;

// Where cuDNN 9's serialized plan (schema 4) names a tensor by its id:
//   operationGraph.tensors[].name          "1" (text)
//   operationGraph.nodes[].X, W, Y, dX, dW, dY   "1" (text)
//   engine.payload ... kernelParams.offsets[].uid   1 (a number)
class Renumbering {
 public:
  Renumbering(const TensorIds& from, const TensorIds& to,
              const TensorLayouts* layouts)
      : from_(from), to_(to), layouts_(layouts) {}

  absl::Status Run(Json& plan) {
    Json* graph = Find(plan, "operationGraph");
    if (graph == nullptr) return Bad("has no operationGraph");
    if (Json* tensors = Find(*graph, "tensors"); tensors && tensors->is_array()) {
      for (Json& t : *tensors) {
        if (Json* name = Find(t, "name")) {
          RETURN_IF_ERROR(Text(*name));
          RETURN_IF_ERROR(Fits(t));
        }
      }
    }
    if (Json* nodes = Find(*graph, "nodes"); nodes && nodes->is_array()) {
      for (Json& n : *nodes) {
        for (const char* operand : {"X", "W", "Y", "dX", "dW", "dY"}) {
          if (Json* v = Find(n, operand)) RETURN_IF_ERROR(Text(*v));
        }
      }
    }
    if (Json* engine = Find(plan, "engine")) RETURN_IF_ERROR(Uids(*engine));
    if (replaced_ == 0) return Bad("names none of its graph's tensor ids");
    return absl::OkStatus();
  }

 private:
  static Json* Find(Json& j, const char* key) {
    if (!j.is_object()) return nullptr;
    auto it = j.find(key);
    return it == j.end() ? nullptr : &*it;
  }
  static absl::Status Bad(absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("the plan ", why));
  }

  std::optional<int64_t> Map(int64_t id) const {
    if (id == from_.x) return to_.x;
    if (id == from_.w) return to_.w;
    if (id == from_.y) return to_.y;
    return std::nullopt;
  }

  // A tensor id written as text.
  absl::Status Text(Json& v) {
    int64_t id = 0;
    if (!v.is_string() || !absl::SimpleAtoi(v.get<std::string>(), &id)) {
      return Bad("names a tensor by something other than its id");
    }
    const std::optional<int64_t> to = Map(id);
    if (!to) {
      return Bad(absl::StrCat("names tensor id ", id, ", not one of its graph's"));
    }
    v = absl::StrCat(*to);
    ++replaced_;
    return absl::OkStatus();
  }

  // Whether renumbered tensor `t` has the caller's layout for its id.
  absl::Status Fits(const Json& t) const {
    if (layouts_ == nullptr) return absl::OkStatus();
    const int64_t id = std::stoll(t["name"].get<std::string>());
    const TensorLayout& want = id == to_.x   ? layouts_->x
                               : id == to_.w ? layouts_->w
                                             : layouts_->y;
    const auto list = [&](const char* key) {
      std::vector<int64_t> out;
      auto it = t.find(key);
      if (it == t.end() || !it->is_array()) return out;
      for (const Json& v : *it) {
        if (v.is_number_integer()) out.push_back(v.get<int64_t>());
      }
      return out;
    };
    const std::vector<int64_t> dims = list("dim");
    const std::vector<int64_t> strides = list("stride");
    bool fits = dims == want.dims && strides.size() == want.strides.size();
    for (size_t i = 0; fits && i < dims.size(); ++i) {
      fits = dims[i] == 1 || strides[i] == want.strides[i];
    }
    if (fits) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrCat(
        "the plan's tensor ", id, " has dims [", absl::StrJoin(dims, ","),
        "] strides [", absl::StrJoin(strides, ","), "], the caller's [",
        absl::StrJoin(want.dims, ","), "] strides [",
        absl::StrJoin(want.strides, ","), "]"));
  }

  // Every number under a "uid" key, anywhere below `j`.
  absl::Status Uids(Json& j) {
    if (j.is_object()) {
      for (auto& [k, v] : j.items()) {
        if (k == "uid" && v.is_number_integer()) {
          const std::optional<int64_t> to = Map(v.get<int64_t>());
          if (!to) {
            return Bad(absl::StrCat("binds tensor id ", v.get<int64_t>(),
                                    ", not one of its graph's"));
          }
          v = *to;
          ++replaced_;
        } else {
          RETURN_IF_ERROR(Uids(v));
        }
      }
    } else if (j.is_array()) {
      for (Json& v : j) RETURN_IF_ERROR(Uids(v));
    }
    return absl::OkStatus();
  }

  const TensorIds& from_;
  const TensorIds& to_;
  const TensorLayouts* layouts_;
  int replaced_ = 0;
};

}  // namespace

namespace {

bool TakesTmaDescriptor(const Json& j) {
  if (j.is_object()) {
    auto it = j.find("update_as");
    if (it != j.end() && it->is_string() && *it == "tma_desc") return true;
  }
  if (j.is_object() || j.is_array()) {
    for (const Json& v : j) {
      if (TakesTmaDescriptor(v)) return true;
    }
  }
  return false;
}

}  // namespace

absl::Status CheckLoadable(absl::string_view plan) {
  const Json j = Json::parse(plan.begin(), plan.end(), nullptr, false);
  if (j.is_discarded()) {
    return absl::InvalidArgumentError("the plan is not JSON");
  }
  if (TakesTmaDescriptor(j)) {
    return absl::FailedPreconditionError(
        "a kernel of the plan takes a TMA descriptor, which faults once "
        "loaded: built instead");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> WithTensorIds(absl::string_view plan,
                                          const TensorIds& from,
                                          const TensorIds& to,
                                          const TensorLayouts* layouts) {
  Json j = Json::parse(plan.begin(), plan.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError("the plan is not a JSON object");
  }
  if (absl::Status s = Renumbering(from, to, layouts).Run(j); !s.ok()) {
    return s;
  }
  return j.dump();
}

}  // namespace tunedb
