// preload_graph_probe: a program linked against libcudnn.so.9 (the fake one,
// fake_cudnn.cc) that asks cuDNN's graph (backend) API for engine configs of
// one convolution the way PyTorch's cudnn_frontend path does
// (aten/src/ATen/native/cudnn/Conv_v8.cpp): tensors with uids 'x', 'y',
// 'w', a convolution descriptor, one convolution operation, an operation
// graph and an engine-heuristics descriptor; then the count query of
// CUDNN_ATTR_ENGINEHEUR_RESULTS, that many engine configs and the fill
// query (or, with --requested N, one fill query of N). It reads each
// returned config back and prints one JSON object:
//
//   preload_graph_probe --op fwd --n 8 --c 64 --k 64 --hw 28 --filt 3
//       --stride 1 --pad 1 [--post-pad P] [--type f32|f16|bf16] [--nhwc]
//       [--align A]
//       [--align-w A] [--mode instant|a|b|fallback] [--requested N]
//       [--ops 1|2] [--destroy-early] [--then-fallback]
//       [--build-plans [--drop-engine E] [--finalize-between]
//        [--rounds R] [--run-plans]]
//       [--bad-fill null_elements|null_count|wrong_type] [--fidelity]
//       [--exit-code E]
//   {"status":0,"queried":3,"count":3,
//    "configs":[{"engine":107,"knobs":"3=3","same_graph":true},...],
//    "real_calls":{"backend_heur_results":0,...},"live_descriptors":0}
//
// "queried" is the count query's answer (-1 without one), "count" the fill
// query's element count, "configs" the min(count, requested) filled ones:
// each engine's CUDNN_ATTR_ENGINE_GLOBAL_INDEX, its knob choices as
// "type=value" sorted by type and joined by commas, and whether its
// operation graph holds what the probe's graph holds. "real_calls" are the
// fake's counters; "live_descriptors" the backend descriptors nobody
// destroyed once the probe destroyed its own. --ops 2 adds a pointwise ReLU
// after the convolution (through a virtual tensor). --align-w sets the
// filter's byte alignment apart from x's and y's (--align); --post-pad the
// padding after each spatial dimension apart from the one before (--pad).
// --destroy-early destroys the tensors, the convolution and the operations
// once the operation graph is finalized, and makes other tensors, before
// the heuristics descriptor. --bad-fill makes the fill query with null
// elements, a null count, or knob-choice descriptors instead of engine
// configs. --then-fallback then reads the same graph's fallback list (a
// second heuristics descriptor, mode FALLBACK, count and fill query), as
// PyTorch's benchmark mode does after its heuristics list, and prints it as
// "fallback": {"status":0,"queried":0,"count":0,"configs":[]}.
// --build-plans then builds an execution plan of every config returned (the
// heuristics list's, then the fallback list's), in order, as
// cudnn_frontend's cudnnGetPlan does, except those of engine --drop-engine
// (a caller's filter dropping them), and prints "plans":[{"engine":107,
// "status":0},...] (status 9, NOT_SUPPORTED: not built); with
// --finalize-between it finalizes a variant pack after each plan, as a
// caller that runs a plan before it builds the next (PyTorch's benchmark
// off, trying one config after another); --rounds R builds them all R
// times over, in turn (new plan descriptors each round, as a program that
// meets the convolution again). --run-plans then runs every plan
// that built twice on one variant pack, as PyTorch's benchmark times them,
// and the first whose runs succeeded once more, as the program's own run:
// "runs":[{"engine":107,"status":[0,0]},...], "ran":107 (-1: none). --fidelity
// prints instead how this cuDNN answers the calls whose behaviour the fake
// imitates ({"fidelity":{...}}, see Fidelity below). Linked against the real
// cuDNN (preload_graph_probe_real) it prints no "real_calls",
// "live_descriptors" -1 and "same_graph" false.
//
// Thread safety: a single-threaded program.
#include <cudnn.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nlohmann/json.hpp"

// The fake's own functions: absent (null) when linked against the real
// cuDNN (preload_graph_probe_real).
extern "C" int fakeCudnnCallCount(const char* name) __attribute__((weak));
extern "C" int64_t fakeCudnnLiveDescriptors() __attribute__((weak));
extern "C" int fakeCudnnSameContents(cudnnBackendDescriptor_t a,
                                     cudnnBackendDescriptor_t b)
    __attribute__((weak));

namespace {

struct Args {
  std::string op = "fwd";
  int n = 8, c = 64, k = 64, hw = 28, filt = 3, stride = 1, pad = 1;
  int post_pad = -1;  // -1: --pad
  std::string type = "f32";
  bool nhwc = false;
  bool destroy_early = false;
  bool fidelity = false;
  bool then_fallback = false;
  bool build_plans = false;
  bool finalize_between = false;
  bool run_plans = false;
  int64_t drop_engine = -1;
  int64_t align = 16;
  int64_t align_w = -1;  // -1: --align
  std::string mode = "instant";
  int64_t requested = -1;  // -1: a count query first
  int ops = 1;
  int rounds = 1;
  std::string bad_fill;  // "", null_elements, null_count or wrong_type
  int exit_code = 0;
};

[[noreturn]] void Usage(const std::string& why) {
  std::fprintf(stderr, "preload_graph_probe: %s\n", why.c_str());
  std::exit(2);
}

Args Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string f = argv[i];
    // The flags without a value.
    const std::pair<const char*, bool*> switches[] = {
        {"--nhwc", &a.nhwc},
        {"--destroy-early", &a.destroy_early},
        {"--fidelity", &a.fidelity},
        {"--then-fallback", &a.then_fallback},
        {"--build-plans", &a.build_plans},
        {"--finalize-between", &a.finalize_between},
        {"--run-plans", &a.run_plans}};
    bool* on = nullptr;
    for (const auto& [name, flag] : switches) {
      if (f == name) on = flag;
    }
    if (on != nullptr) {
      *on = true;
      continue;
    }
    if (i + 1 == argc) Usage(f + " needs a value");
    const std::string v = argv[++i];
    const int num = std::atoi(v.c_str());
    if (f == "--op") {
      a.op = v;
    } else if (f == "--n") {
      a.n = num;
    } else if (f == "--c") {
      a.c = num;
    } else if (f == "--k") {
      a.k = num;
    } else if (f == "--hw") {
      a.hw = num;
    } else if (f == "--filt") {
      a.filt = num;
    } else if (f == "--stride") {
      a.stride = num;
    } else if (f == "--pad") {
      a.pad = num;
    } else if (f == "--post-pad") {
      a.post_pad = num;
    } else if (f == "--type") {
      a.type = v;
    } else if (f == "--align") {
      a.align = num;
    } else if (f == "--align-w") {
      a.align_w = num;
    } else if (f == "--mode") {
      a.mode = v;
    } else if (f == "--requested") {
      a.requested = num;
    } else if (f == "--drop-engine") {
      a.drop_engine = num;
    } else if (f == "--bad-fill") {
      a.bad_fill = v;
    } else if (f == "--rounds") {
      a.rounds = num;
    } else if (f == "--ops") {
      a.ops = num;
    } else if (f == "--exit-code") {
      a.exit_code = num;
    } else {
      Usage("unknown flag " + f);
    }
  }
  if (a.op != "fwd" && a.op != "bwd_data" && a.op != "bwd_filter") {
    Usage("--op is fwd, bwd_data or bwd_filter");
  }
  if (a.type != "f32" && a.type != "f16" && a.type != "bf16") {
    Usage("--type is f32, f16 or bf16");
  }
  if (a.mode != "instant" && a.mode != "a" && a.mode != "b" &&
      a.mode != "fallback") {
    Usage("--mode is instant, a, b or fallback");
  }
  if (a.ops != 1 && a.ops != 2) Usage("--ops is 1 or 2");
  if (a.rounds < 1) Usage("--rounds is at least 1");
  return a;
}

// The first failing call's status wins; later calls still run.
cudnnStatus_t first_failure = CUDNN_STATUS_SUCCESS;
void Check(cudnnStatus_t s, const char* what) {
  if (s != CUDNN_STATUS_SUCCESS && first_failure == CUDNN_STATUS_SUCCESS) {
    std::fprintf(stderr, "preload_graph_probe: %s: status %d\n", what,
                 static_cast<int>(s));
    first_failure = s;
  }
}

std::vector<cudnnBackendDescriptor_t> made;  // destroyed at the end

cudnnBackendDescriptor_t Make(cudnnBackendDescriptorType_t type) {
  cudnnBackendDescriptor_t d = nullptr;
  Check(cudnnBackendCreateDescriptor(type, &d), "create");
  made.push_back(d);
  return d;
}

template <typename T>
void Set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
         cudnnBackendAttributeType_t type, const std::vector<T>& values) {
  Check(cudnnBackendSetAttribute(
            d, name, type, static_cast<int64_t>(values.size()), values.data()),
        "set attribute");
}
template <typename T>
void Set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
         cudnnBackendAttributeType_t type, T value) {
  const T values[1] = {value};
  Check(cudnnBackendSetAttribute(d, name, type, 1, values), "set attribute");
}

void Finalize(cudnnBackendDescriptor_t d, const char* what) {
  Check(cudnnBackendFinalize(d), what);
}

// Packed N, C, spatial... strides, channels first or last.
std::vector<int64_t> Strides(const std::vector<int64_t>& d, bool nhwc) {
  // d = N, C, H, W
  if (!nhwc) return {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1};
  return {d[1] * d[2] * d[3], 1, d[3] * d[1], d[1]};
}

cudnnBackendDescriptor_t Tensor(int64_t uid, const std::vector<int64_t>& dims,
                                bool nhwc, cudnnDataType_t type,
                                int64_t alignment, bool is_virtual) {
  cudnnBackendDescriptor_t t = Make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  Set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, type);
  Set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims);
  Set(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, Strides(dims, nhwc));
  Set(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, uid);
  Set(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, alignment);
  Set(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, is_virtual);
  Finalize(t, "tensor");
  return t;
}

// A convolution operation's descriptor type and attributes, per pass.
struct PassAttrs {
  cudnnBackendDescriptorType_t type;
  cudnnBackendAttributeName_t x, w, y, conv, alpha, beta;
};
constexpr PassAttrs kForward = {
    CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
    CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
    CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
    CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
    CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
    CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
    CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA};
constexpr PassAttrs kBackwardData = {
    CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
    CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
    CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
    CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
    CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
    CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
    CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA};
constexpr PassAttrs kBackwardFilter = {
    CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
    CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
    CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
    CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
    CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
    CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
    CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA};

// One config read back: engine index, knob text, same graph.
nlohmann::json ReadConfig(cudnnBackendDescriptor_t config,
                          cudnnBackendDescriptor_t graph) {
  int64_t n = 0;
  cudnnBackendDescriptor_t engine = Make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  Check(cudnnBackendGetAttribute(config, CUDNN_ATTR_ENGINECFG_ENGINE,
                                 CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &engine),
        "get ENGINECFG_ENGINE");
  int64_t index = -1;
  Check(cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX,
                                 CUDNN_TYPE_INT64, 1, &n, &index),
        "get ENGINE_GLOBAL_INDEX");
  cudnnBackendDescriptor_t engine_graph =
      Make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  Check(cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH,
                                 CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
                                 &engine_graph),
        "get ENGINE_OPERATION_GRAPH");
  // Knob choices as cudnn_frontend reads them: room for every knob type.
  std::vector<cudnnBackendDescriptor_t> knobs;
  for (int i = 0; i < CUDNN_KNOB_TYPE_COUNTS; ++i) {
    knobs.push_back(Make(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR));
  }
  int64_t knob_count = 0;
  std::vector<std::pair<int64_t, int64_t>> choices;
  const cudnnStatus_t s = cudnnBackendGetAttribute(
      config, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR,
      static_cast<int64_t>(knobs.size()), &knob_count, knobs.data());
  // NOT_SUPPORTED: no knob choices were set, as for a config without knobs.
  if (s != CUDNN_STATUS_NOT_SUPPORTED) Check(s, "get ENGINECFG_KNOB_CHOICES");
  if (s == CUDNN_STATUS_SUCCESS) {
    for (int64_t i = 0;
         i < std::min<int64_t>(knob_count, static_cast<int64_t>(knobs.size()));
         ++i) {
      cudnnBackendKnobType_t type = CUDNN_KNOB_TYPE_COUNTS;
      int64_t value = 0;
      Check(cudnnBackendGetAttribute(knobs[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
                                     CUDNN_TYPE_KNOB_TYPE, 1, &n, &type),
            "get KNOB_TYPE");
      Check(
          cudnnBackendGetAttribute(knobs[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE,
                                   CUDNN_TYPE_INT64, 1, &n, &value),
          "get KNOB_VALUE");
      choices.emplace_back(static_cast<int64_t>(type), value);
    }
  }
  std::sort(choices.begin(), choices.end());
  std::string text;
  for (const auto& [type, value] : choices) {
    if (!text.empty()) text += ',';
    text += std::to_string(type) + "=" + std::to_string(value);
  }
  return {{"engine", index},
          {"knobs", text},
          {"same_graph", fakeCudnnSameContents != nullptr &&
                             fakeCudnnSameContents(engine_graph, graph) == 1}};
}

// How this cuDNN answers the backend calls whose behaviour the fake imitates
// and the preload relies on, as status categories (CUDNN_STATUS_CATEGORY)
// and element counts. `x` is a finalized tensor of 4 dimensions, `graph`
// and `heur` finalized unless `built` is false (no handle: no GPU), which
// leaves the graph's checks out.
nlohmann::json Fidelity(cudnnBackendDescriptor_t x,
                        cudnnBackendDescriptor_t graph,
                        cudnnBackendDescriptor_t heur, bool built) {
  auto category = [](cudnnStatus_t s) {
    return static_cast<int>(CUDNN_STATUS_CATEGORY(s));
  };
  nlohmann::json f;
  int64_t n = -1, v = 0;
  f["tensor_alignment_get"] = category(cudnnBackendGetAttribute(
      x, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &n, &v));
  int64_t dims[8] = {};
  n = -1;
  cudnnBackendGetAttribute(x, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 8,
                           &n, dims);
  f["tensor_dims_count_of_8"] = n;
  n = -1;
  cudnnBackendGetAttribute(x, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 2,
                           &n, dims);
  f["tensor_dims_count_of_2"] = n;
  f["tensor_dims_get_as_int32"] = category(cudnnBackendGetAttribute(
      x, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT32, 8, &n, dims));
  const int64_t uid = 'q';
  f["set_after_finalize"] = category(cudnnBackendSetAttribute(
      x, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid));
  const cudnnDataType_t type = CUDNN_DATA_FLOAT;
  f["set_on_another_descriptor_type"] = category(cudnnBackendSetAttribute(
      x, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type));
  cudnnBackendDescriptor_t open = Make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  cudnnBackendSetAttribute(open, CUDNN_ATTR_TENSOR_DATA_TYPE,
                           CUDNN_TYPE_DATA_TYPE, 1, &type);
  cudnnDataType_t got = CUDNN_DATA_INT8;
  f["get_before_finalize"] = category(cudnnBackendGetAttribute(
      open, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &n, &got));
  cudnnBackendDescriptor_t op =
      Make(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
  f["set_unfinalized_reference"] = category(
      cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &open));
  if (!built) return f;

  cudnnBackendDescriptor_t node =
      Make(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
  f["graph_ops_get"] = category(
      cudnnBackendGetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &node));
  cudnnBackendDescriptor_t first = Make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
  n = -1;
  cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                           CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &first);
  f["results_count_of_1"] = n;
  // A config of the first result's engine without knob choices.
  cudnnBackendDescriptor_t engine = Make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  cudnnBackendGetAttribute(first, CUDNN_ATTR_ENGINECFG_ENGINE,
                           CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &engine);
  cudnnBackendDescriptor_t bare = Make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
  cudnnBackendSetAttribute(bare, CUDNN_ATTR_ENGINECFG_ENGINE,
                           CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &engine);
  f["knobless_config_finalize"] = category(cudnnBackendFinalize(bare));
  std::vector<cudnnBackendDescriptor_t> knobs;
  for (int i = 0; i < CUDNN_KNOB_TYPE_COUNTS; ++i) {
    knobs.push_back(Make(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR));
  }
  n = -1;
  f["knobless_config_knobs_get"] = category(cudnnBackendGetAttribute(
      bare, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR,
      CUDNN_KNOB_TYPE_COUNTS, &n, knobs.data()));
  f["knobless_config_knobs_count"] = n;
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = Parse(argc, argv);
  const cudnnDataType_t type = a.type == "f16"    ? CUDNN_DATA_HALF
                               : a.type == "bf16" ? CUDNN_DATA_BFLOAT16
                                                  : CUDNN_DATA_FLOAT;
  const int64_t post_pad = a.post_pad >= 0 ? a.post_pad : a.pad;
  const int64_t out_hw = (a.hw + a.pad + post_pad - a.filt) / a.stride + 1;
  const std::vector<int64_t> xd = {a.n, a.c, a.hw, a.hw};
  const std::vector<int64_t> yd = {a.n, a.k, out_hw, out_hw};
  const std::vector<int64_t> wd = {a.k, a.c, a.filt, a.filt};
  const int64_t align_w = a.align_w > 0 ? a.align_w : a.align;

  cudnnHandle_t handle = nullptr;
  Check(cudnnCreate(&handle), "cudnnCreate");
  const bool fused = a.ops == 2;
  cudnnBackendDescriptor_t x = Tensor('x', xd, a.nhwc, type, a.align, false);
  cudnnBackendDescriptor_t w = Tensor('w', wd, a.nhwc, type, align_w, false);
  // With a second operation the convolution writes a virtual tensor.
  cudnnBackendDescriptor_t conv_out =
      Tensor(fused ? 'C' : 'y', yd, a.nhwc, type, a.align, fused);
  cudnnBackendDescriptor_t y =
      fused ? Tensor('y', yd, a.nhwc, type, a.align, false) : conv_out;

  cudnnBackendDescriptor_t conv = Make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  const std::vector<int64_t> pad = {a.pad, a.pad},
                             stride = {a.stride, a.stride}, dil = {1, 1};
  Set(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE,
      CUDNN_DATA_FLOAT);
  Set(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE,
      CUDNN_CROSS_CORRELATION);
  Set(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, int64_t{2});
  Set(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, pad);
  Set(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64,
      std::vector<int64_t>{post_pad, post_pad});
  Set(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, dil);
  Set(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, stride);
  Finalize(conv, "convolution");

  // The pass's operation: x (dx), w (dw), y (dy), the convolution, alpha
  // 1 and beta 0 as floats, as cudnn_frontend sets them for non-double data.
  const PassAttrs& pass = a.op == "fwd"        ? kForward
                          : a.op == "bwd_data" ? kBackwardData
                                               : kBackwardFilter;
  const auto D = CUDNN_TYPE_BACKEND_DESCRIPTOR;
  cudnnBackendDescriptor_t op = Make(pass.type);
  Set(op, pass.x, D, x);
  Set(op, pass.w, D, w);
  Set(op, pass.y, D, conv_out);
  Set(op, pass.conv, D, conv);
  Set(op, pass.alpha, CUDNN_TYPE_FLOAT, 1.0f);
  Set(op, pass.beta, CUDNN_TYPE_FLOAT, 0.0f);
  Finalize(op, "convolution operation");
  std::vector<cudnnBackendDescriptor_t> ops = {op};
  if (fused) {
    cudnnBackendDescriptor_t relu = Make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    Set(relu, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE,
        CUDNN_POINTWISE_RELU_FWD);
    Set(relu, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE,
        CUDNN_DATA_FLOAT);
    Finalize(relu, "pointwise");
    cudnnBackendDescriptor_t pw =
        Make(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    Set(pw, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, D, relu);
    Set(pw, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, D, conv_out);
    Set(pw, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, D, y);
    Finalize(pw, "pointwise operation");
    ops.push_back(pw);
  }

  cudnnBackendDescriptor_t graph =
      Make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  Set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, handle);
  Set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, D, ops);
  Finalize(graph, "operation graph");
  if (a.destroy_early) {
    // As frameworks do: the tensors, the convolution and the operations go
    // once the graph is final (it holds copies); new descriptors of the same
    // size may take their addresses.
    for (size_t i = 0; i + 1 < made.size(); ++i) {
      cudnnBackendDestroyDescriptor(made[i]);
    }
    made.erase(made.begin(), made.end() - 1);
    std::vector<int64_t> dims = {1, 1, 1, 1};
    for (int i = 0; i < 4; ++i) {
      Tensor(100 + i, dims, false, CUDNN_DATA_DOUBLE, 8, false);
    }
  }

  const cudnnBackendHeurMode_t mode = a.mode == "a"   ? CUDNN_HEUR_MODE_A
                                      : a.mode == "b" ? CUDNN_HEUR_MODE_B
                                      : a.mode == "fallback"
                                          ? CUDNN_HEUR_MODE_FALLBACK
                                          : CUDNN_HEUR_MODE_INSTANT;
  cudnnBackendDescriptor_t heur = Make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  Set(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, D, graph);
  Set(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, mode);
  Finalize(heur, "engine heuristics");
  const cudnnStatus_t built = first_failure;
  if (a.fidelity) {
    const nlohmann::json f =
        Fidelity(x, graph, heur, built == CUDNN_STATUS_SUCCESS);
    for (cudnnBackendDescriptor_t d : made) cudnnBackendDestroyDescriptor(d);
    std::printf("%s\n", nlohmann::json{{"fidelity", f}}.dump().c_str());
    return a.exit_code;
  }

  // The count query (unless --requested), then the fill query.
  struct Query {
    cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
    int64_t queried = -1;
    int64_t count = -1;
    nlohmann::json configs = nlohmann::json::array();
    std::vector<cudnnBackendDescriptor_t> filled;  // configs' descriptors
  };
  auto query = [&](cudnnBackendDescriptor_t h, cudnnStatus_t status) {
    Query q;
    q.status = status;
    if (q.status == CUDNN_STATUS_SUCCESS && a.requested < 0) {
      q.status = cudnnBackendGetAttribute(h, CUDNN_ATTR_ENGINEHEUR_RESULTS, D,
                                          0, &q.queried, nullptr);
    }
    const int64_t requested = a.requested >= 0 ? a.requested : q.queried;
    if (q.status == CUDNN_STATUS_SUCCESS && requested >= 0) {
      std::vector<cudnnBackendDescriptor_t> configs;
      for (int64_t i = 0; i < requested; ++i) {
        configs.push_back(Make(a.bad_fill == "wrong_type"
                                   ? CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR
                                   : CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
      }
      // A fill query of 0 is what cudnn_frontend makes for an empty list.
      if (requested > 0 || a.then_fallback) {
        q.status = cudnnBackendGetAttribute(
            h, CUDNN_ATTR_ENGINEHEUR_RESULTS, D, requested,
            a.bad_fill == "null_count" ? nullptr : &q.count,
            a.bad_fill == "null_elements" ? nullptr : configs.data());
      }
      if (q.status == CUDNN_STATUS_SUCCESS) {
        for (int64_t i = 0; i < std::min(q.count, requested); ++i) {
          q.configs.push_back(ReadConfig(configs[i], graph));
          q.filled.push_back(configs[i]);
        }
      }
    }
    return q;
  };
  const Query first = query(heur, built);
  std::optional<Query> fallback;
  if (a.then_fallback && first.status == CUDNN_STATUS_SUCCESS) {
    cudnnBackendDescriptor_t fb = Make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    Set(fb, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, D, graph);
    Set(fb, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE,
        CUDNN_HEUR_MODE_FALLBACK);
    Finalize(fb, "fallback heuristics");
    fallback = query(fb, first_failure);
  }

  // The plans, in cudnnGetPlan's order: every config of both lists.
  nlohmann::json plans = nlohmann::json::array();
  nlohmann::json runs = nlohmann::json::array();
  int64_t out_ran = -1;
  if (a.build_plans) {
    std::vector<std::pair<cudnnBackendDescriptor_t, nlohmann::json>> all;
    for (size_t i = 0; i < first.filled.size(); ++i) {
      all.emplace_back(first.filled[i], first.configs[i]);
    }
    if (fallback.has_value()) {
      for (size_t i = 0; i < fallback->filled.size(); ++i) {
        all.emplace_back(fallback->filled[i], fallback->configs[i]);
      }
    }
    // A variant pack, finalized (its buffers do not matter to the fake).
    auto variant_pack = [&] {
      cudnnBackendDescriptor_t pack =
          Make(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
      cudnnBackendFinalize(pack);
      return pack;
    };
    std::vector<std::pair<int64_t, cudnnBackendDescriptor_t>> built;
    const size_t listed = all.size();
    for (int round = 1; round < a.rounds; ++round) {
      for (size_t i = 0; i < listed; ++i) all.push_back(all[i]);
    }
    for (const auto& [config, read] : all) {
      const int64_t engine = read.value("engine", int64_t{-1});
      if (engine == a.drop_engine) continue;
      cudnnBackendDescriptor_t plan =
          Make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      // As cudnn_frontend's ExecutionPlanBuilder_v8::build: the engine
      // config alone, no handle (only its loadFromJson sets one).
      Set(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, D, config);
      // Not Finalize(): a plan that does not build is an answer, not a
      // failure of the probe.
      const cudnnStatus_t s = cudnnBackendFinalize(plan);
      plans.push_back({{"engine", engine}, {"status", static_cast<int>(s)}});
      if (s == CUDNN_STATUS_SUCCESS) built.emplace_back(engine, plan);
      if (a.finalize_between) variant_pack();
    }
    if (a.run_plans) {
      cudnnBackendDescriptor_t pack = variant_pack();
      int64_t ran = -1;
      cudnnBackendDescriptor_t first_good = nullptr;
      for (const auto& [engine, plan] : built) {
        const int s1 = cudnnBackendExecute(handle, plan, pack);
        const int s2 = cudnnBackendExecute(handle, plan, pack);
        runs.push_back({{"engine", engine}, {"status", {s1, s2}}});
        if (first_good == nullptr && s1 == 0 && s2 == 0) {
          first_good = plan;
          ran = engine;
        }
      }
      if (first_good != nullptr &&
          cudnnBackendExecute(handle, first_good, pack) != CUDNN_STATUS_SUCCESS) {
        ran = -1;
      }
      out_ran = ran;
    }
  }

  nlohmann::json calls = nlohmann::json::object();
  for (const char* name :
       {"backend_heur_results", "backend_heur_count", "backend_engine_finalize",
        "backend_plan_finalize", "backend_plan_load",
        "backend_plan_load_refused", "backend_plan_load_caller_ids",
        "backend_plan_load_inner", "backend_execute",
        "backend_execute_failed"}) {
    if (fakeCudnnCallCount != nullptr) calls[name] = fakeCudnnCallCount(name);
  }
  for (cudnnBackendDescriptor_t d : made) cudnnBackendDestroyDescriptor(d);
  cudnnDestroy(handle);
  nlohmann::json out = {
      {"status", static_cast<int>(first.status)},
      {"queried", first.queried},
      {"count", first.count},
      {"configs", first.configs},
      {"real_calls", calls},
      {"live_descriptors",
       fakeCudnnLiveDescriptors != nullptr ? fakeCudnnLiveDescriptors() : -1}};
  if (a.build_plans) out["plans"] = plans;
  if (a.run_plans) {
    out["runs"] = runs;
    out["ran"] = out_ran;
  }
  if (fallback.has_value()) {
    out["fallback"] = {{"status", static_cast<int>(fallback->status)},
                       {"queried", fallback->queried},
                       {"count", fallback->count},
                       {"configs", fallback->configs}};
  }
  std::printf("%s\n", out.dump().c_str());
  return a.exit_code;
}
