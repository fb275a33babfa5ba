// preload_probe: a program linked against libcudnn.so.9 (in the tests, the
// fake one) that makes one legacy algorithm call the way a framework does,
// and prints what came back as one JSON object:
//
//   preload_probe --op fwd --call find_ex --n 8 --c 64 --k 64 --hw 28
//       --filt 3 --stride 1 --pad 1 [--type f32|f16|i8] [--nhwc]
//       [--math default|tensor_op|fma] [--ws BYTES] [--count N]
//       [--exit-code E]
//   {"status":0,"returned":4,"perf":[{"algo":7,"status":0,"memory":...,
//    "deterministic":false,"math":1,"time":-1.0},...],
//    "real_calls":{"fwd_find_ex":0,"fwd_get_v7":1,...}}
//
// "real_calls" are the fake library's own counters (fakeCudnnCallCount):
// whether the call reached cuDNN; linked against the real cuDNN (as
// preload_probe_real) it has none and prints no "real_calls". Without a GPU
// the handle stays null, which the real cuDNN refuses with BAD_PARAM.
// Exits with --exit-code (default 0).
#include <cudnn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "nlohmann/json.hpp"

extern "C" int fakeCudnnCallCount(const char* name) __attribute__((weak));

namespace {

struct Args {
  std::string op = "fwd";
  std::string call = "find_ex";
  int n = 8, c = 64, k = 64, hw = 28, filt = 3, stride = 1, pad = 1;
  std::string type = "f32";
  bool nhwc = false;
  std::string math = "default";
  long long ws = 1LL << 40;
  int count = 8;
  int exit_code = 0;
};

Args Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string f = argv[i];
    if (f == "--nhwc") {
      a.nhwc = true;
      continue;
    }
    if (i + 1 == argc) {
      std::fprintf(stderr, "preload_probe: %s needs a value\n", f.c_str());
      std::exit(2);
    }
    const char* v = argv[++i];
    if (f == "--op")
      a.op = v;
    else if (f == "--call")
      a.call = v;
    else if (f == "--n")
      a.n = std::atoi(v);
    else if (f == "--c")
      a.c = std::atoi(v);
    else if (f == "--k")
      a.k = std::atoi(v);
    else if (f == "--hw")
      a.hw = std::atoi(v);
    else if (f == "--filt")
      a.filt = std::atoi(v);
    else if (f == "--stride")
      a.stride = std::atoi(v);
    else if (f == "--pad")
      a.pad = std::atoi(v);
    else if (f == "--type")
      a.type = v;
    else if (f == "--math")
      a.math = v;
    else if (f == "--ws")
      a.ws = std::atoll(v);
    else if (f == "--count")
      a.count = std::atoi(v);
    else if (f == "--exit-code")
      a.exit_code = std::atoi(v);
    else {
      std::fprintf(stderr, "preload_probe: unknown flag %s\n", f.c_str());
      std::exit(2);
    }
  }
  return a;
}

std::vector<int> Strides(const std::vector<int>& d, bool nhwc) {
  // d = N, C, H, W
  if (!nhwc) return {d[1] * d[2] * d[3], d[2] * d[3], d[3], 1};
  return {d[1] * d[2] * d[3], 1, d[3] * d[1], d[1]};
}

template <typename Perf>
nlohmann::json PerfJson(const Perf* p, int n) {
  nlohmann::json out = nlohmann::json::array();
  for (int i = 0; i < n; ++i) {
    out.push_back({{"algo", static_cast<int>(p[i].algo)},
                   {"status", static_cast<int>(p[i].status)},
                   {"memory", p[i].memory},
                   {"deterministic", p[i].determinism == CUDNN_DETERMINISTIC},
                   {"math", static_cast<int>(p[i].mathType)},
                   {"time", p[i].time}});
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = Parse(argc, argv);
  const cudnnDataType_t type = a.type == "f16"  ? CUDNN_DATA_HALF
                               : a.type == "i8" ? CUDNN_DATA_INT8
                                                : CUDNN_DATA_FLOAT;
  const cudnnMathType_t math = a.math == "tensor_op" ? CUDNN_TENSOR_OP_MATH
                               : a.math == "fma"     ? CUDNN_FMA_MATH
                                                     : CUDNN_DEFAULT_MATH;
  const int out_hw = (a.hw + 2 * a.pad - a.filt) / a.stride + 1;
  const std::vector<int> xd = {a.n, a.c, a.hw, a.hw};
  const std::vector<int> yd = {a.n, a.k, out_hw, out_hw};
  const std::vector<int> wd = {a.k, a.c, a.filt, a.filt};
  const std::vector<int> xs = Strides(xd, a.nhwc), ys = Strides(yd, a.nhwc);

  cudnnHandle_t h = nullptr;
  cudnnTensorDescriptor_t x, y;
  cudnnFilterDescriptor_t w;
  cudnnConvolutionDescriptor_t conv;
  cudnnCreate(&h);
  cudnnCreateTensorDescriptor(&x);
  cudnnCreateTensorDescriptor(&y);
  cudnnCreateFilterDescriptor(&w);
  cudnnCreateConvolutionDescriptor(&conv);
  cudnnSetTensorNdDescriptor(x, type, 4, xd.data(), xs.data());
  cudnnSetTensorNdDescriptor(y, type, 4, yd.data(), ys.data());
  cudnnSetFilterNdDescriptor(
      w, type, a.nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, 4, wd.data());
  const int pad[2] = {a.pad, a.pad}, stride[2] = {a.stride, a.stride},
            dil[2] = {1, 1};
  cudnnSetConvolutionNdDescriptor(
      conv, 2, pad, stride, dil, CUDNN_CROSS_CORRELATION,
      type == CUDNN_DATA_INT8 ? CUDNN_DATA_INT32 : CUDNN_DATA_FLOAT);
  cudnnSetConvolutionMathType(conv, math);

  const size_t ws = static_cast<size_t>(a.ws);
  int returned = -1;
  cudnnStatus_t status = CUDNN_STATUS_BAD_PARAM;
  nlohmann::json perf;
  // Calls the one of `find`, `find_ex`, `get_v7` that --call names.
  auto run = [&](auto* perf_type, auto find, auto find_ex, auto get_v7) {
    using Perf = std::remove_pointer_t<decltype(perf_type)>;
    std::vector<Perf> p(a.count > 0 ? a.count : 1);
    status = a.call == "find"      ? find(p.data())
             : a.call == "find_ex" ? find_ex(p.data())
                                   : get_v7(p.data());
    perf = PerfJson(p.data(), status == CUDNN_STATUS_SUCCESS ? returned : 0);
  };
  const int n = a.count;
  int* r = &returned;
  if (a.op == "fwd") {
    run(
        static_cast<cudnnConvolutionFwdAlgoPerf_t*>(nullptr),
        [&](auto* p) {
          return cudnnFindConvolutionForwardAlgorithm(h, x, w, conv, y, n, r,
                                                      p);
        },
        [&](auto* p) {
          return cudnnFindConvolutionForwardAlgorithmEx(
              h, x, nullptr, w, nullptr, conv, y, nullptr, n, r, p, nullptr,
              ws);
        },
        [&](auto* p) {
          return cudnnGetConvolutionForwardAlgorithm_v7(h, x, w, conv, y, n, r,
                                                        p);
        });
  } else if (a.op == "bwd_data") {
    run(
        static_cast<cudnnConvolutionBwdDataAlgoPerf_t*>(nullptr),
        [&](auto* p) {
          return cudnnFindConvolutionBackwardDataAlgorithm(h, w, y, conv, x, n,
                                                           r, p);
        },
        [&](auto* p) {
          return cudnnFindConvolutionBackwardDataAlgorithmEx(
              h, w, nullptr, y, nullptr, conv, x, nullptr, n, r, p, nullptr,
              ws);
        },
        [&](auto* p) {
          return cudnnGetConvolutionBackwardDataAlgorithm_v7(h, w, y, conv, x,
                                                             n, r, p);
        });
  } else {
    run(
        static_cast<cudnnConvolutionBwdFilterAlgoPerf_t*>(nullptr),
        [&](auto* p) {
          return cudnnFindConvolutionBackwardFilterAlgorithm(h, x, y, conv, w,
                                                             n, r, p);
        },
        [&](auto* p) {
          return cudnnFindConvolutionBackwardFilterAlgorithmEx(
              h, x, nullptr, y, nullptr, conv, w, nullptr, n, r, p, nullptr,
              ws);
        },
        [&](auto* p) {
          return cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, x, y, conv, w,
                                                               n, r, p);
        });
  }
  nlohmann::json calls = nlohmann::json::object();
  for (const char* op : {"fwd", "bwd_data", "bwd_filter"}) {
    if (fakeCudnnCallCount == nullptr) break;
    for (const char* call : {"find", "find_ex", "get_v7"}) {
      const std::string name = std::string(op) + "_" + call;
      calls[name] = fakeCudnnCallCount(name.c_str());
    }
  }
  const nlohmann::json out = {{"status", static_cast<int>(status)},
                              {"returned", returned},
                              {"perf", perf},
                              {"real_calls", calls}};
  std::printf("%s\n", out.dump().c_str());
  cudnnDestroyConvolutionDescriptor(conv);
  cudnnDestroyFilterDescriptor(w);
  cudnnDestroyTensorDescriptor(y);
  cudnnDestroyTensorDescriptor(x);
  cudnnDestroy(h);
  return a.exit_code;
}
