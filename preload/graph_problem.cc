#include "preload/graph_problem.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "tunedb/conv_shape.h"
#include "tunedb/cudnn_types.h"

namespace tunedb::preload {
namespace {

// Whether `strides` are the packed strides of `dims` in that order
// (channels-first) or with the channels innermost, ignoring dimensions of
// size 1 (their stride does not address anything).
bool PackedIn(const std::vector<int64_t>& dims,
              const std::vector<int64_t>& strides, bool channels_last) {
  // Memory order, innermost first.
  std::vector<size_t> order;
  for (size_t i = dims.size(); i-- > 2;) order.push_back(i);
  if (channels_last) {
    order.insert(order.begin(), 1);
  } else {
    order.push_back(1);
  }
  order.push_back(0);
  int64_t expected = 1;
  for (size_t i : order) {
    if (dims[i] != 1 && strides[i] != expected) return false;
    expected *= dims[i];
  }
  return true;
}

absl::Status CheckTensor(const ShadowTensor& t, const char* what, size_t rank) {
  if (t.is_virtual) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": virtual"));
  }
  if (t.vector_count != 1) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": vectorized"));
  }
  if (t.dims.size() != rank || t.strides.size() != rank) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": dims/strides missing or of another rank"));
  }
  if (t.alignment <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": no alignment"));
  }
  return absl::OkStatus();
}

// The one convolution node of `h`, its operands present, of one rank (4 or
// 5) and one data type, and keyable (CheckTensor).
absl::StatusOr<const ShadowNode*> ConvolutionNode(const ShadowHeuristics& h) {
  if (!h.has_graph || h.nodes.size() != 1) {
    return absl::InvalidArgumentError(
        "the graph is not exactly one convolution node");
  }
  const ShadowNode& node = h.nodes[0];
  if (node.kind == ShadowNode::kOther) {
    return absl::InvalidArgumentError("the node is not a convolution");
  }
  if (!node.has_x || !node.has_w || !node.has_y || !node.has_conv) {
    return absl::InvalidArgumentError("the node lacks an operand");
  }
  const size_t rank = node.x.dims.size();
  if (rank != 4 && rank != 5) {
    return absl::InvalidArgumentError("x: neither 4 nor 5 dimensions");
  }
  RETURN_IF_ERROR(CheckTensor(node.x, "x", rank));
  RETURN_IF_ERROR(CheckTensor(node.w, "w", rank));
  RETURN_IF_ERROR(CheckTensor(node.y, "y", rank));
  const int type = node.x.data_type;
  if (node.w.data_type != type || node.y.data_type != type) {
    return absl::InvalidArgumentError("operands of different data types");
  }
  return &node;
}

// Whether x, w and y are all packed channels-last (false: all packed
// channels-first); an error otherwise.
absl::StatusOr<bool> ChannelsLast(const ShadowNode& node) {
  bool channels_last = false;
  if (!PackedIn(node.x.dims, node.x.strides, false)) {
    channels_last = true;
    if (!PackedIn(node.x.dims, node.x.strides, true)) {
      return absl::InvalidArgumentError("x: strides are not packed");
    }
  }
  for (const ShadowTensor* t : {&node.w, &node.y}) {
    if (!PackedIn(t->dims, t->strides, channels_last)) {
      return absl::InvalidArgumentError(
          "w or y: strides are not packed in x's layout");
    }
  }
  return channels_last;
}

// The node's convolution: `spatial` dimensions, symmetric padding, and
// groups that divide x's channels.
absl::Status CheckConvolution(const ShadowNode& node, size_t spatial) {
  const ShadowConvolution& conv = node.conv;
  if (conv.spatial_dims != static_cast<int64_t>(spatial) ||
      conv.pre_padding.size() != spatial || conv.stride.size() != spatial ||
      conv.dilation.size() != spatial) {
    return absl::InvalidArgumentError("convolution: spatial dims differ");
  }
  if (!conv.post_padding.empty() && conv.post_padding != conv.pre_padding) {
    return absl::InvalidArgumentError("convolution: asymmetric padding");
  }
  if (node.w.dims[1] <= 0 || node.x.dims[1] % node.w.dims[1] != 0) {
    return absl::InvalidArgumentError("w: channels do not divide x's");
  }
  return absl::OkStatus();
}

// The shape of ConvolutionNode's `node`.
absl::StatusOr<ConvShape> ShapeOf(const ShadowNode& node) {
  const std::optional<DataType> data_type =
      DataTypeFromCudnn(static_cast<cudnnDataType_t>(node.x.data_type));
  const std::optional<DataType> compute_type =
      DataTypeFromCudnn(static_cast<cudnnDataType_t>(node.conv.compute_type));
  if (!data_type || !compute_type) {
    return absl::InvalidArgumentError("unsupported data or compute type");
  }
  ConvShape s;
  ASSIGN_OR_RETURN(s.channels_last, ChannelsLast(node));
  RETURN_IF_ERROR(CheckConvolution(node, node.x.dims.size() - 2));
  s.op = node.kind == ShadowNode::kBackwardData     ? ConvOp::kBackwardData
         : node.kind == ShadowNode::kBackwardFilter ? ConvOp::kBackwardFilter
                                                    : ConvOp::kForward;
  s.n = node.x.dims[0];
  s.c = node.x.dims[1];
  s.k = node.w.dims[0];
  s.input.assign(node.x.dims.begin() + 2, node.x.dims.end());
  s.filter.assign(node.w.dims.begin() + 2, node.w.dims.end());
  s.padding = node.conv.pre_padding;
  s.stride = node.conv.stride;
  s.dilation = node.conv.dilation;
  s.groups = node.x.dims[1] / node.w.dims[1];
  s.data_type = *data_type;
  s.compute_type = *compute_type;
  s.mode = node.conv.mode == CUDNN_CONVOLUTION ? ConvMode::kConvolution
                                               : ConvMode::kCrossCorrelation;
  return s;
}

// The smallest byte alignment set on x, w and y, capped at
// ConvProblem::kMaxAlignment, as a power of two.
int GraphAlignment(const ShadowNode& node) {
  int64_t alignment =
      std::min({node.x.alignment, node.w.alignment, node.y.alignment,
                static_cast<int64_t>(ConvProblem::kMaxAlignment)});
  int64_t power = 1;
  while (power * 2 <= alignment) power *= 2;
  return static_cast<int>(power);
}

}  // namespace

absl::StatusOr<ConvProblem> ProblemFromShadow(const ShadowHeuristics& h) {
  ASSIGN_OR_RETURN(const ShadowNode* node, ConvolutionNode(h));
  ASSIGN_OR_RETURN(const ConvShape shape, ShapeOf(*node));
  ASSIGN_OR_RETURN(ConvProblem p, MakeConvProblem(shape));
  const size_t spatial = node->x.dims.size() - 2;
  std::vector<int64_t> y_dims = {p.n, p.k};
  for (size_t i = 0; i < spatial; ++i) {
    y_dims.push_back(p.OutputSize(static_cast<int>(i)));
  }
  if (node->y.dims != y_dims) {
    return absl::InvalidArgumentError("y: dims are not the output's");
  }
  p.api = ConvApi::kGraph;
  p.alignment = GraphAlignment(*node);
  RETURN_IF_ERROR(p.Validate());
  return p;
}

}  // namespace tunedb::preload
