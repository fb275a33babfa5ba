// GraphShadow (what the shim records from cudnnBackendSetAttribute) and
// ProblemFromShadow (the graph-API key's problem it makes of it), fed the
// attribute sequence PyTorch's cuDNN frontend path sets. No cuDNN is called:
// the descriptors are only addresses here, as the shim sees them.
#include "preload/graph_problem.h"

#include <cudnn.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "preload/graph_shadow.h"
#include "preload/lead_plan_window.h"

namespace tunedb::preload {
namespace {

// Distinct fake descriptor addresses.
cudnnBackendDescriptor_t Desc(uintptr_t id) {
  return reinterpret_cast<cudnnBackendDescriptor_t>(0x1000 + id * 16);
}

struct Tensor {
  std::vector<int64_t> dims, strides;
  int64_t alignment = 16;
  cudnnDataType_t type = CUDNN_DATA_HALF;
};

std::vector<int64_t> Packed(const std::vector<int64_t>& d, bool nhwc) {
  // d = N, C, H, W
  if (!nhwc) return {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1};
  return {d[1] * d[2] * d[3], 1, d[3] * d[1], d[1]};
}

class GraphShadowTest : public testing::Test {
 protected:
  void SetTensor(cudnnBackendDescriptor_t t, const Tensor& v) {
    shadow_.RecordAttribute(t, CUDNN_ATTR_TENSOR_DATA_TYPE,
                            CUDNN_TYPE_DATA_TYPE, 1, &v.type);
    shadow_.RecordAttribute(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64,
                            static_cast<int64_t>(v.dims.size()), v.dims.data());
    shadow_.RecordAttribute(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64,
                            static_cast<int64_t>(v.strides.size()),
                            v.strides.data());
    shadow_.RecordAttribute(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT,
                            CUDNN_TYPE_INT64, 1, &v.alignment);
  }
  void SetConv(cudnnBackendDescriptor_t c, std::vector<int64_t> pad,
               std::vector<int64_t> post, std::vector<int64_t> stride) {
    const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    const int64_t dims = static_cast<int64_t>(pad.size());
    const std::vector<int64_t> dilation(pad.size(), 1);
    shadow_.RecordAttribute(c, CUDNN_ATTR_CONVOLUTION_COMP_TYPE,
                            CUDNN_TYPE_DATA_TYPE, 1, &compute);
    shadow_.RecordAttribute(c, CUDNN_ATTR_CONVOLUTION_CONV_MODE,
                            CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
    shadow_.RecordAttribute(c, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS,
                            CUDNN_TYPE_INT64, 1, &dims);
    shadow_.RecordAttribute(c, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS,
                            CUDNN_TYPE_INT64, dims, pad.data());
    shadow_.RecordAttribute(c, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS,
                            CUDNN_TYPE_INT64, dims, post.data());
    shadow_.RecordAttribute(c, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES,
                            CUDNN_TYPE_INT64, dims, stride.data());
    shadow_.RecordAttribute(c, CUDNN_ATTR_CONVOLUTION_DILATIONS,
                            CUDNN_TYPE_INT64, dims, dilation.data());
  }
  void Link(cudnnBackendDescriptor_t from, cudnnBackendAttributeName_t name,
            cudnnBackendDescriptor_t to) {
    shadow_.RecordAttribute(from, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &to);
  }
  // Builds what PyTorch builds for a forward n8 c64 k32 28x28 3x3 pad 1
  // stride 2 convolution (x, y, w tensors, conv, node, graph, heuristics)
  // and returns the heuristics descriptor. `x_alignment` is x's alignment.
  cudnnBackendDescriptor_t ForwardGraph(bool nhwc, int64_t x_alignment = 16,
                                        std::vector<int64_t> post = {1, 1}) {
    Tensor x{{8, 64, 28, 28}, Packed({8, 64, 28, 28}, nhwc), x_alignment};
    Tensor y{{8, 32, 14, 14}, Packed({8, 32, 14, 14}, nhwc)};
    Tensor w{{32, 64, 3, 3}, Packed({32, 64, 3, 3}, nhwc)};
    SetTensor(Desc(1), x);
    SetTensor(Desc(2), y);
    SetTensor(Desc(3), w);
    SetConv(Desc(4), {1, 1}, post, {2, 2});
    Link(Desc(5), CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, Desc(1));
    Link(Desc(5), CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, Desc(2));
    Link(Desc(5), CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, Desc(3));
    Link(Desc(5), CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, Desc(4));
    Link(Desc(6), CUDNN_ATTR_OPERATIONGRAPH_OPS, Desc(5));
    Link(Desc(7), CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, Desc(6));
    const cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_INSTANT;
    shadow_.RecordAttribute(Desc(7), CUDNN_ATTR_ENGINEHEUR_MODE,
                            CUDNN_TYPE_HEUR_MODE, 1, &mode);
    return Desc(7);
  }
  absl::StatusOr<ConvProblem> ProblemOf(cudnnBackendDescriptor_t heur) {
    std::optional<ShadowHeuristics> h = shadow_.Heuristics(heur);
    if (!h) return absl::NotFoundError("not recorded");
    return ProblemFromShadow(*h);
  }

  GraphShadow shadow_;
};

TEST_F(GraphShadowTest, AFrameworksForwardGraphBecomesItsGraphApiProblem) {
  absl::StatusOr<ConvProblem> p = ProblemOf(ForwardGraph(/*nhwc=*/true));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->op, ConvOp::kForward);
  EXPECT_EQ(p->n, 8);
  EXPECT_EQ(p->c, 64);
  EXPECT_EQ(p->k, 32);
  EXPECT_EQ(p->input[0], 28);
  EXPECT_EQ(p->filter[1], 3);
  EXPECT_EQ(p->padding[0], 1);
  EXPECT_EQ(p->stride[1], 2);
  EXPECT_EQ(p->groups, 1);
  EXPECT_EQ(p->input_type, DataType::kHalf);
  EXPECT_EQ(p->compute_type, DataType::kFloat);
  EXPECT_EQ(p->layout, Layout::kNHWC);
  EXPECT_EQ(p->api, ConvApi::kGraph);
  EXPECT_EQ(p->alignment, 16);
}

TEST_F(GraphShadowTest, TheLayoutComesFromTheStrides) {
  absl::StatusOr<ConvProblem> p = ProblemOf(ForwardGraph(/*nhwc=*/false));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->layout, Layout::kNCHW);
}

TEST_F(GraphShadowTest, TheSmallestOperandAlignmentIsTheKeys) {
  absl::StatusOr<ConvProblem> p = ProblemOf(ForwardGraph(true, 4));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->alignment, 4);
  // Larger than 16 is capped (PyTorch reports up to 32).
  p = ProblemOf(ForwardGraph(true, 32));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->alignment, 16);
}

TEST_F(GraphShadowTest, AnAlignmentBelowTheElementSizeIsRefused) {
  EXPECT_FALSE(ProblemOf(ForwardGraph(true, 1)).ok());
}

TEST_F(GraphShadowTest, AsymmetricPaddingIsRefused) {
  EXPECT_FALSE(ProblemOf(ForwardGraph(true, 16, {0, 0})).ok());
}

TEST_F(GraphShadowTest, TheRecordsAreCopiesSoDestroyedTensorsDoNotMatter) {
  cudnnBackendDescriptor_t heur = ForwardGraph(true);
  // The program destroys its tensors and reuses an address for another.
  Tensor other{{1, 1, 1, 1}, {1, 1, 1, 1}, 16, CUDNN_DATA_FLOAT};
  SetTensor(Desc(1), other);
  absl::StatusOr<ConvProblem> p = ProblemOf(heur);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->n, 8);
}

TEST_F(GraphShadowTest, ANewDescriptorAtAnOldAddressInheritsNothing) {
  ForwardGraph(true);
  // The convolution node is destroyed and cuDNN hands its address to a new
  // node of a kind the shadow does not record (a pointwise one, say).
  shadow_.Forget(Desc(5));
  Link(Desc(6), CUDNN_ATTR_OPERATIONGRAPH_OPS, Desc(5));
  Link(Desc(7), CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, Desc(6));
  std::optional<ShadowHeuristics> h = shadow_.Heuristics(Desc(7));
  ASSERT_TRUE(h.has_value());
  ASSERT_EQ(h->nodes.size(), 1u);
  EXPECT_EQ(h->nodes[0].kind, ShadowNode::kOther);
  EXPECT_FALSE(ProblemFromShadow(*h).ok());
}

TEST_F(GraphShadowTest, EveryHeuristicsDescriptorOfAnAnsweredGraphSeesItsMark) {
  const cudnnBackendDescriptor_t heur = ForwardGraph(true);
  std::optional<ShadowHeuristics> h = shadow_.Heuristics(heur);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->graph, Desc(6));
  EXPECT_FALSE(h->graph_answered);
  shadow_.MarkAnswered(Desc(6));
  // The fallback-list descriptor made afterwards for the same graph.
  Link(Desc(8), CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, Desc(6));
  const cudnnBackendHeurMode_t fallback = CUDNN_HEUR_MODE_FALLBACK;
  shadow_.RecordAttribute(Desc(8), CUDNN_ATTR_ENGINEHEUR_MODE,
                          CUDNN_TYPE_HEUR_MODE, 1, &fallback);
  h = shadow_.Heuristics(Desc(8));
  ASSERT_TRUE(h.has_value());
  EXPECT_TRUE(h->graph_answered);
  EXPECT_EQ(h->mode, CUDNN_HEUR_MODE_FALLBACK);
  EXPECT_TRUE(shadow_.Heuristics(heur)->graph_answered);
}

TEST_F(GraphShadowTest, AGraphCreatedAgainAtAnAnsweredAddressIsNotAnswered) {
  ForwardGraph(true);
  shadow_.MarkAnswered(Desc(6));
  // The graph is destroyed and a new one gets its address.
  shadow_.Forget(Desc(6));
  Link(Desc(6), CUDNN_ATTR_OPERATIONGRAPH_OPS, Desc(5));
  Link(Desc(8), CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, Desc(6));
  std::optional<ShadowHeuristics> h = shadow_.Heuristics(Desc(8));
  ASSERT_TRUE(h.has_value());
  EXPECT_TRUE(h->has_graph);
  EXPECT_FALSE(h->graph_answered);
  // Marking an address the shadow does not hold as a graph marks nothing.
  shadow_.MarkAnswered(Desc(9));
  shadow_.MarkAnswered(Desc(5));  // a node, not a graph
  Link(Desc(10), CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, Desc(5));
  EXPECT_FALSE(shadow_.Heuristics(Desc(10))->graph_answered);
}

TEST_F(GraphShadowTest, BackwardNodesKeyTheirOwnPass) {
  Tensor dx{{8, 64, 28, 28}, Packed({8, 64, 28, 28}, false)};
  Tensor dy{{8, 32, 14, 14}, Packed({8, 32, 14, 14}, false)};
  Tensor w{{32, 64, 3, 3}, Packed({32, 64, 3, 3}, false)};
  for (Tensor* t : {&dx, &dy, &w}) t->type = CUDNN_DATA_FLOAT;
  SetTensor(Desc(11), dx);
  SetTensor(Desc(12), dy);
  SetTensor(Desc(13), w);
  SetConv(Desc(14), {1, 1}, {1, 1}, {2, 2});
  Link(Desc(15), CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, Desc(11));
  Link(Desc(15), CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, Desc(12));
  Link(Desc(15), CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, Desc(13));
  Link(Desc(15), CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, Desc(14));
  Link(Desc(16), CUDNN_ATTR_OPERATIONGRAPH_OPS, Desc(15));
  Link(Desc(17), CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, Desc(16));
  absl::StatusOr<ConvProblem> p = ProblemOf(Desc(17));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->op, ConvOp::kBackwardData);
  EXPECT_EQ(p->c, 64);
  EXPECT_EQ(p->k, 32);
  EXPECT_EQ(p->input_type, DataType::kFloat);
  EXPECT_TRUE(p->allow_tf32);
}

TEST_F(GraphShadowTest, AGraphOfTwoNodesIsNotAProblem) {
  ForwardGraph(true);
  // The graph's ops: the convolution and a node the shadow does not know
  // (a pointwise bias, say).
  const cudnnBackendDescriptor_t ops[] = {Desc(5), Desc(20)};
  shadow_.RecordAttribute(Desc(6), CUDNN_ATTR_OPERATIONGRAPH_OPS,
                          CUDNN_TYPE_BACKEND_DESCRIPTOR, 2, ops);
  Link(Desc(7), CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, Desc(6));
  std::optional<ShadowHeuristics> h = shadow_.Heuristics(Desc(7));
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->nodes.size(), 2u);
  EXPECT_FALSE(ProblemFromShadow(*h).ok());
}

TEST_F(GraphShadowTest, AnUnknownGraphOrDescriptorIsNotRecorded) {
  // Heuristics on a graph the shadow never saw.
  Link(Desc(30), CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, Desc(31));
  std::optional<ShadowHeuristics> h = shadow_.Heuristics(Desc(30));
  ASSERT_TRUE(h.has_value());
  EXPECT_FALSE(h->has_graph);
  EXPECT_FALSE(ProblemFromShadow(*h).ok());
  EXPECT_FALSE(shadow_.Heuristics(Desc(99)).has_value());
  // A tensor is not a heuristics descriptor.
  EXPECT_FALSE(shadow_.Heuristics(Desc(1)).has_value());
}

TEST_F(GraphShadowTest, OnlyTheAttributesItNeedsAreRecorded) {
  EXPECT_TRUE(GraphShadow::Records(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT));
  EXPECT_TRUE(
      GraphShadow::Records(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW));
  EXPECT_FALSE(GraphShadow::Records(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS));
  EXPECT_FALSE(GraphShadow::Records(CUDNN_ATTR_EXECUTION_PLAN_HANDLE));
}

TEST_F(GraphShadowTest, AnOffersConfigsKnowTheirOfferUntilTheAddressIsNew) {
  EXPECT_FALSE(shadow_.HasOffers());
  const cudnnBackendDescriptor_t first[] = {Desc(40), Desc(41)};
  const cudnnBackendDescriptor_t second[] = {Desc(42)};
  const uint64_t a = shadow_.MarkOffer(first, 2);
  const uint64_t b = shadow_.MarkOffer(second, 1);
  EXPECT_TRUE(shadow_.HasOffers());
  EXPECT_NE(a, 0u);
  EXPECT_NE(a, b);
  EXPECT_EQ(shadow_.MarksOf(Desc(40)).offer, a);
  EXPECT_EQ(shadow_.MarksOf(Desc(41)).offer, a);
  EXPECT_EQ(shadow_.MarksOf(Desc(42)).offer, b);
  EXPECT_EQ(shadow_.MarksOf(Desc(43)).offer, 0u);
  // A new descriptor at a config's address is of no offer.
  shadow_.Forget(Desc(41));
  EXPECT_EQ(shadow_.MarksOf(Desc(41)).offer, 0u);
  // Nor is a tensor.
  ForwardGraph(true);
  EXPECT_EQ(shadow_.MarksOf(Desc(1)).offer, 0u);
}

TEST_F(GraphShadowTest, AConfigKnowsItsStoredPlanUntilTheAddressIsNew) {
  EXPECT_FALSE(shadow_.HasPlans());
  const cudnnBackendDescriptor_t configs[] = {Desc(40), Desc(41), Desc(42)};
  auto plan = std::make_shared<const std::string>("{\"plan\":1}");
  // Marking only configs without a plan marks nothing.
  shadow_.MarkPlans(configs, {nullptr, nullptr}, 2, nullptr);
  EXPECT_FALSE(shadow_.HasPlans());
  shadow_.MarkPlans(configs, {nullptr, plan}, 3, nullptr);  // fewer plans than n
  EXPECT_TRUE(shadow_.HasPlans());
  EXPECT_EQ(shadow_.MarksOf(Desc(40)).plan, nullptr);
  EXPECT_EQ(shadow_.MarksOf(Desc(41)).plan, plan);
  EXPECT_EQ(shadow_.MarksOf(Desc(42)).plan, nullptr);
  // An offer marked on the same config keeps its plan, and the other way.
  const uint64_t offer = shadow_.MarkOffer(configs, 2);
  EXPECT_EQ(shadow_.MarksOf(Desc(41)).offer, offer);
  EXPECT_EQ(shadow_.MarksOf(Desc(41)).plan, plan);
  shadow_.Forget(Desc(41));
  EXPECT_EQ(shadow_.MarksOf(Desc(41)).plan, nullptr);
}

TEST_F(GraphShadowTest, ANodeKeepsItsTensorsUniqueIds) {
  // x, y, w (Desc 1, 2, 3) numbered before they are linked, as PyTorch does.
  const int64_t ids[] = {120, 121, 119};
  for (int i = 0; i < 3; ++i) {
    shadow_.RecordAttribute(Desc(i + 1), CUDNN_ATTR_TENSOR_UNIQUE_ID,
                            CUDNN_TYPE_INT64, 1, &ids[i]);
  }
  std::optional<ShadowHeuristics> h = shadow_.Heuristics(ForwardGraph(true));
  ASSERT_TRUE(h.has_value());
  ASSERT_EQ(h->nodes.size(), 1u);
  EXPECT_EQ(h->nodes[0].x.uid, 120);
  EXPECT_EQ(h->nodes[0].y.uid, 121);
  EXPECT_EQ(h->nodes[0].w.uid, 119);
}

// LeadPlanWindow, the calling thread's sequence of plan builds.
class LeadPlanWindowTest : public ::testing::Test {
 protected:
  using Action = LeadPlanWindow::Action;
  // Plan `plan` set to a config of `offer`, then the action for its build.
  Action Plan(uintptr_t plan, uint64_t offer) {
    window_.PlanConfigSet(Desc(plan), offer);
    return window_.Before(Desc(plan));
  }
  LeadPlanWindow window_;
};

TEST_F(LeadPlanWindowTest,
       AfterAnOffersFirstPlanBuiltItsNextPlansAreFollowers) {
  EXPECT_EQ(Plan(50, 7), Action::kLead);
  window_.LeadBuilt(1024);
  EXPECT_EQ(Plan(51, 7), Action::kFollower);
  EXPECT_EQ(window_.lead_workspace(), 1024);
  EXPECT_EQ(Plan(52, 7), Action::kFollower);
  // Another offer's plan leads its own.
  EXPECT_EQ(Plan(53, 8), Action::kLead);
}

TEST_F(LeadPlanWindowTest, ALeadThatDidNotBuildLeavesTheNextPlanTheLead) {
  EXPECT_EQ(Plan(50, 7), Action::kLead);  // its build failed: no LeadBuilt
  EXPECT_EQ(Plan(51, 7), Action::kLead);
  window_.LeadBuilt(0);
  EXPECT_EQ(Plan(52, 7), Action::kFollower);
}

TEST_F(LeadPlanWindowTest, AnyOtherFinalizeClosesTheWindow) {
  EXPECT_EQ(Plan(50, 7), Action::kLead);
  window_.LeadBuilt(0);
  // The caller ran its plan (a variant pack) before building the next.
  EXPECT_EQ(window_.Before(Desc(60)), Action::kBuild);
  EXPECT_EQ(Plan(51, 7), Action::kLead);
  // A plan of no offer closes it too, and builds.
  window_.LeadBuilt(0);
  EXPECT_EQ(Plan(52, 0), Action::kBuild);
  EXPECT_EQ(Plan(53, 7), Action::kLead);
}

TEST_F(LeadPlanWindowTest, OnlyThePlanLastSetToAConfigIsAPlanOfItsOffer) {
  window_.PlanConfigSet(Desc(50), 7);
  window_.PlanConfigSet(Desc(51), 0);  // a later plan of no offer
  EXPECT_EQ(window_.Before(Desc(50)), Action::kBuild);
  EXPECT_EQ(window_.Before(Desc(51)), Action::kBuild);
  // A LeadBuilt without a kLead opens nothing.
  window_.LeadBuilt(0);
  EXPECT_EQ(Plan(52, 7), Action::kLead);
}

}  // namespace
}  // namespace tunedb::preload
