#include "cudnn/plan_blob.h"

#include <gtest/gtest.h>

#include <string>

#include "nlohmann/json.hpp"

namespace tunedb {
namespace {

// The parts of cuDNN 9.19's serialized plan (schema 4) that name tensors,
// for a backward-filter convolution: x "1", dw "2", dy "3".
constexpr char kPlan[] = R"({"cudnnVersion":91900,"schemaVersion":4,
 "operationGraph":{"finalizeMode":"CONV_BWD_FILTER",
  "tensors":[{"name":"1","dim":[64,64,56,56]},{"name":"2","dim":[64,64,3,3]},
             {"name":"3","dim":[64,64,56,56]}],
  "nodes":[{"operation":"CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR",
            "X":"1","dW":"2","dY":"3"}]},
 "engine":{"engineId":70,"smVersion":900,"knobChoices":{"CUDNN_KNOB_TYPE_SPLIT_K_SLC":-1},
  "payload":{"kernels":[{"kernelName":"k","kernelParams":{"offsets":[
   {"value":0},{"value":320,"uid":3,"update_as":"tma_desc"},
   {"value":384,"uid":1,"update_as":"tma_desc"},
   {"value":448,"uid":2,"update_as":"pointer"}],"rawData":"QAAAAEAA"}}]}},
 "GPUProfile":{"multiProcessorCount":132}})";

const TensorIds kOurs{1, 2, 3};
const TensorIds kPyTorchs{'x', 'w', 'y'};

TEST(PlanBlobTest, RenumbersTheGraphsTensorsNodesAndKernelBindings) {
  absl::StatusOr<std::string> out = WithTensorIds(kPlan, kOurs, kPyTorchs);
  ASSERT_TRUE(out.ok()) << out.status();
  const nlohmann::json j = nlohmann::json::parse(*out);
  const auto& graph = j["operationGraph"];
  EXPECT_EQ(graph["tensors"][0]["name"], "120");
  EXPECT_EQ(graph["tensors"][1]["name"], "119");
  EXPECT_EQ(graph["tensors"][2]["name"], "121");
  EXPECT_EQ(graph["nodes"][0]["X"], "120");
  EXPECT_EQ(graph["nodes"][0]["dW"], "119");
  EXPECT_EQ(graph["nodes"][0]["dY"], "121");
  const auto& offsets =
      j["engine"]["payload"]["kernels"][0]["kernelParams"]["offsets"];
  EXPECT_EQ(offsets[1]["uid"], 121);
  EXPECT_EQ(offsets[2]["uid"], 120);
  EXPECT_EQ(offsets[3]["uid"], 119);
  // Everything else as it was, in its order.
  EXPECT_EQ(offsets[1]["value"], 320);
  EXPECT_EQ(j["engine"]["knobChoices"]["CUDNN_KNOB_TYPE_SPLIT_K_SLC"], -1);
  EXPECT_EQ(out->find("{\"cudnnVersion\":91900,\"schemaVersion\":4"), 0u);
}

TEST(PlanBlobTest, RenumberingBackGivesTheSamePlan) {
  absl::StatusOr<std::string> there = WithTensorIds(kPlan, kOurs, kPyTorchs);
  ASSERT_TRUE(there.ok());
  absl::StatusOr<std::string> back = WithTensorIds(*there, kPyTorchs, kOurs);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(nlohmann::json::parse(*back), nlohmann::json::parse(kPlan));
}

// kPlan with packed NHWC strides on its tensors, and x of batch `n`.
std::string PlanWithStrides(int64_t n) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(kPlan);
  auto& tensors = j["operationGraph"]["tensors"];
  tensors[0]["dim"] = {n, 64, 56, 56};
  tensors[0]["stride"] = {200704, 1, 3584, 64};
  tensors[1]["stride"] = {576, 1, 192, 64};
  tensors[2]["stride"] = {200704, 1, 3584, 64};
  return j.dump();
}

TensorLayouts PackedLayouts(int64_t n) {
  return {{{n, 64, 56, 56}, {200704, 1, 3584, 64}},
          {{64, 64, 3, 3}, {576, 1, 192, 64}},
          {{64, 64, 56, 56}, {200704, 1, 3584, 64}}};
}

TEST(PlanBlobTest, APlanIsGivenOnlyForTheCallersOwnDimsAndStrides) {
  TensorLayouts layouts = PackedLayouts(64);
  EXPECT_TRUE(WithTensorIds(PlanWithStrides(64), kOurs, kPyTorchs, &layouts)
                  .ok());
  // x is the second half of a 128-channel tensor's channels (a chunk, as
  // ShuffleNetV2's branches take): the plan would read it as packed.
  layouts.x.strides = {401408, 1, 7168, 128};
  absl::StatusOr<std::string> sliced =
      WithTensorIds(PlanWithStrides(64), kOurs, kPyTorchs, &layouts);
  EXPECT_EQ(sliced.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(sliced.status().message().find("tensor 120"), std::string::npos)
      << sliced.status();
  // Other dims are another problem.
  layouts = PackedLayouts(32);
  EXPECT_EQ(WithTensorIds(PlanWithStrides(64), kOurs, kPyTorchs, &layouts)
                .status()
                .code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(PlanBlobTest, AStrideAlongADimOfOneDoesNotMatter) {
  TensorLayouts layouts = PackedLayouts(1);
  layouts.x.strides[0] = 1;  // PyTorch's stride for a batch of one
  EXPECT_TRUE(
      WithTensorIds(PlanWithStrides(1), kOurs, kPyTorchs, &layouts).ok());
}

TEST(PlanBlobTest, APlanOfAnotherGraphOrNotAPlanIsRefused) {
  // A binding of a tensor the graph does not hold.
  std::string stranger = kPlan;
  stranger.replace(stranger.find("\"uid\":2"), 7, "\"uid\":7");
  EXPECT_EQ(WithTensorIds(stranger, kOurs, kPyTorchs).status().code(),
            absl::StatusCode::kInvalidArgument);
  // Ids that are not ours at all.
  EXPECT_FALSE(WithTensorIds(kPlan, TensorIds{4, 5, 6}, kPyTorchs).ok());
  EXPECT_FALSE(WithTensorIds("not json", kOurs, kPyTorchs).ok());
  EXPECT_FALSE(WithTensorIds("[1,2,3]", kOurs, kPyTorchs).ok());
  EXPECT_FALSE(WithTensorIds(R"({"engine":{}})", kOurs, kPyTorchs).ok());
  std::string cut = kPlan;
  cut.resize(cut.size() / 2);
  EXPECT_FALSE(WithTensorIds(cut, kOurs, kPyTorchs).ok());
}

TEST(PlanBlobTest, APlanWhoseKernelsTakeTmaDescriptorsIsNeverLoaded) {
  // kPlan is engine 70's, as cuDNN 9.19 wrote it: its loads faulted.
  EXPECT_EQ(CheckLoadable(kPlan).code(), absl::StatusCode::kFailedPrecondition);
  std::string pointers = kPlan;
  for (size_t at; (at = pointers.find("tma_desc")) != std::string::npos;) {
    pointers.replace(at, 8, "pointer");
  }
  EXPECT_TRUE(CheckLoadable(pointers).ok());
  EXPECT_EQ(CheckLoadable("not json").code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tunedb
