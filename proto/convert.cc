#include "proto/convert.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/record_results.h"
#include "common/status_macros.h"

namespace tunedb {
namespace {

// Domain enums share the wire values (1..max); 0 is "unspecified".
template <typename E, typename P>
absl::StatusOr<E> EnumFromProto(P value, int max, absl::string_view field) {
  int v = static_cast<int>(value);
  if (v < 1 || v > max) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": ", v == 0 ? "unspecified" : "unknown value ",
                     v == 0 ? "" : absl::StrCat(v)));
  }
  return static_cast<E>(v);
}

absl::Status SpatialFromProto(
    const google::protobuf::RepeatedField<int64_t>& in, absl::string_view field,
    int dims, ConvProblem::Dims* out) {
  if (in.size() != dims) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": has ", in.size(), " values, expected ", dims,
                     " (one per spatial dimension of input_spatial)"));
  }
  *out = {};
  for (int i = 0; i < dims; ++i) (*out)[i] = in[i];
  return absl::OkStatus();
}

void SpatialToProto(const ConvProblem::Dims& in, int dims,
                    google::protobuf::RepeatedField<int64_t>* out) {
  out->Clear();
  for (int i = 0; i < dims; ++i) out->Add(in[i]);
}

}  // namespace

void ToProto(const DeviceKey& in, v1::DeviceKey* out) {
  out->set_gpu_model(in.gpu_model);
  out->set_cc_major(in.cc_major);
  out->set_cc_minor(in.cc_minor);
  out->set_sm_count(in.sm_count);
  out->set_cudnn_version(in.cudnn_version);
  out->set_cuda_runtime_version(in.cuda_runtime_version);
}

void ToProto(const ConvProblem& in, v1::ConvProblem* out) {
  out->set_op(static_cast<v1::ConvOp>(in.op));
  out->set_n(in.n);
  out->set_c(in.c);
  out->set_k(in.k);
  int d = in.spatial_dims;
  SpatialToProto(in.input, d, out->mutable_input_spatial());
  SpatialToProto(in.filter, d, out->mutable_filter_spatial());
  SpatialToProto(in.padding, d, out->mutable_padding());
  SpatialToProto(in.stride, d, out->mutable_stride());
  SpatialToProto(in.dilation, d, out->mutable_dilation());
  out->set_groups(in.groups);
  out->set_mode(static_cast<v1::ConvMode>(in.mode));
  out->set_input_type(static_cast<v1::DataType>(in.input_type));
  out->set_output_type(static_cast<v1::DataType>(in.output_type));
  out->set_compute_type(static_cast<v1::DataType>(in.compute_type));
  out->set_layout(static_cast<v1::Layout>(in.layout));
  out->set_allow_tensor_cores(in.allow_tensor_cores);
  out->set_allow_tf32(in.allow_tf32);
  out->set_api(static_cast<v1::ConvApi>(in.api));
  out->set_alignment(in.alignment);
}

namespace {

void TimingToProto(const Timing& in, v1::Timing* out) {
  out->set_median_ms(in.median_ms);
  out->set_spread_ms(in.spread_ms);
  out->set_samples(in.samples);
}

absl::StatusOr<Timing> TimingFromProto(const v1::Timing& in,
                                       absl::string_view field) {
  // !(x >= 0) also refuses NaN, which would break the ranking's order.
  if (!(in.median_ms() >= 0) || !(in.spread_ms() >= 0) ||
      std::isinf(in.median_ms()) || std::isinf(in.spread_ms()) ||
      in.samples() < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ": times must be finite and non-negative, samples too"));
  }
  return Timing{in.median_ms(), in.spread_ms(), in.samples()};
}

}  // namespace

void ToProto(const AlgoResult& in, v1::AlgoResult* out) {
  out->set_algo(in.algo);
  out->set_math_type(static_cast<v1::MathType>(in.math_type));
  out->set_status(static_cast<v1::AlgoStatus>(in.status));
  const Timing& direct = in.cost(LaunchMode::kDirect);
  out->set_median_ms(direct.median_ms);
  out->set_spread_ms(direct.spread_ms);
  out->set_samples(direct.samples);
  TimingToProto(in.launch, out->mutable_launch());
  TimingToProto(in.gpu, out->mutable_gpu());
  TimingToProto(in.host, out->mutable_host());
  out->set_workspace_bytes(in.workspace_bytes);
  out->set_deterministic(in.deterministic);
  out->set_retimed(in.retimed);
  out->set_error(in.error);
  for (const Knob& k : in.knobs) {
    v1::Knob* knob = out->add_knobs();
    knob->set_type(k.type);
    knob->set_value(k.value);
  }
  out->set_numerical_notes(in.numerical_notes);
  out->set_behavior_notes(in.behavior_notes);
  out->set_plan(in.plan);
  out->set_build_ms(in.build_ms);
  out->set_heuristic_rank(in.heuristic_rank);
}

void ToProto(const Record& in, v1::Record* out) {
  out->set_id(in.id);
  ToProto(in.key.device, out->mutable_device());
  ToProto(in.key.problem, out->mutable_problem());
  out->set_key_text(in.key.ToText());
  out->set_key_hash(in.key.HashText());
  out->clear_results();
  for (const AlgoResult& r : in.results) ToProto(r, out->add_results());
  out->set_measured_at_us(in.measured_at_us);
  out->set_host(in.host);
  out->set_gpu_uuid(in.gpu_uuid);
  out->set_driver_version(in.driver_version);
  out->set_finder(in.finder);
  out->set_repeats(in.repeats);
  out->set_workspace_cap_bytes(in.workspace_cap_bytes);
  out->set_search_ms(in.search_ms);
  out->set_verified(in.verified);
  out->set_served_count(in.served_count);
  out->set_timing_version(in.timing_version);
  out->set_revalidated_from_cudnn(in.revalidated_from_cudnn);
  out->set_revalidated_from_driver(in.revalidated_from_driver);
}

void ToProto(const Constraints& in, v1::Constraints* out) {
  if (in.max_workspace_bytes) {
    out->set_max_workspace_bytes(*in.max_workspace_bytes);
  } else {
    out->clear_max_workspace_bytes();
  }
  out->set_deterministic_only(in.deterministic_only);
  out->set_launch_mode(static_cast<v1::LaunchMode>(in.launch_mode));
  out->set_excluded_numerical_notes(in.excluded_numerical_notes);
  out->set_compile_horizon_calls(in.compile_horizon_calls);
  out->set_loads_stored_plans(in.loads_stored_plans);
}

absl::StatusOr<DeviceKey> FromProto(const v1::DeviceKey& in) {
  DeviceKey d;
  d.gpu_model = in.gpu_model();
  d.cc_major = in.cc_major();
  d.cc_minor = in.cc_minor();
  d.sm_count = in.sm_count();
  d.cudnn_version = in.cudnn_version();
  d.cuda_runtime_version = in.cuda_runtime_version();
  absl::Status s = d.Validate();
  if (!s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("device.", s.message()));
  }
  return d;
}

absl::StatusOr<ConvProblem> FromProto(const v1::ConvProblem& in) {
  ConvProblem p;
  ASSIGN_OR_RETURN(p.op, EnumFromProto<ConvOp>(in.op(), 3, "problem.op"));
  p.n = in.n();
  p.c = in.c();
  p.k = in.k();
  int d = in.input_spatial_size();
  if (d != 2 && d != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("problem.input_spatial: needs 2 or 3 sizes, has ", d));
  }
  p.spatial_dims = d;
  RETURN_IF_ERROR(SpatialFromProto(in.input_spatial(), "problem.input_spatial",
                                   d, &p.input));
  RETURN_IF_ERROR(SpatialFromProto(in.filter_spatial(),
                                   "problem.filter_spatial", d, &p.filter));
  RETURN_IF_ERROR(
      SpatialFromProto(in.padding(), "problem.padding", d, &p.padding));
  RETURN_IF_ERROR(
      SpatialFromProto(in.stride(), "problem.stride", d, &p.stride));
  RETURN_IF_ERROR(
      SpatialFromProto(in.dilation(), "problem.dilation", d, &p.dilation));
  p.groups = in.groups();
  ASSIGN_OR_RETURN(p.mode,
                   EnumFromProto<ConvMode>(in.mode(), 2, "problem.mode"));
  ASSIGN_OR_RETURN(p.input_type, EnumFromProto<DataType>(in.input_type(), 4,
                                                         "problem.input_type"));
  ASSIGN_OR_RETURN(
      p.output_type,
      EnumFromProto<DataType>(in.output_type(), 4, "problem.output_type"));
  ASSIGN_OR_RETURN(
      p.compute_type,
      EnumFromProto<DataType>(in.compute_type(), 4, "problem.compute_type"));
  ASSIGN_OR_RETURN(p.layout,
                   EnumFromProto<Layout>(in.layout(), 4, "problem.layout"));
  p.allow_tensor_cores = in.allow_tensor_cores();
  p.allow_tf32 = in.allow_tf32();
  if (in.api() != v1::CONV_API_UNSPECIFIED) {
    ASSIGN_OR_RETURN(p.api,
                     EnumFromProto<ConvApi>(in.api(), 2, "problem.api"));
  }
  p.alignment = in.alignment();
  absl::Status s = p.Validate();
  if (!s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("problem.", s.message()));
  }
  return p;
}

absl::StatusOr<AlgoResult> FromProto(const v1::AlgoResult& in) {
  AlgoResult r;
  r.algo = in.algo();
  ASSIGN_OR_RETURN(r.math_type, EnumFromProto<MathType>(in.math_type(), 4,
                                                        "result.math_type"));
  ASSIGN_OR_RETURN(r.status,
                   EnumFromProto<AlgoStatus>(in.status(), 3, "result.status"));
  if (in.has_launch() || in.has_gpu() || in.has_host()) {
    ASSIGN_OR_RETURN(r.launch, TimingFromProto(in.launch(), "result.launch"));
    ASSIGN_OR_RETURN(r.gpu, TimingFromProto(in.gpu(), "result.gpu"));
    ASSIGN_OR_RETURN(r.host, TimingFromProto(in.host(), "result.host"));
  } else {
    // A sender of the first API revision: its one time is GPU time.
    v1::Timing legacy;
    legacy.set_median_ms(in.median_ms());
    legacy.set_spread_ms(in.spread_ms());
    legacy.set_samples(in.samples());
    ASSIGN_OR_RETURN(r.gpu, TimingFromProto(legacy, "result"));
  }
  r.workspace_bytes = in.workspace_bytes();
  r.deterministic = in.deterministic();
  r.retimed = in.retimed();
  r.error = in.error();
  for (const v1::Knob& k : in.knobs()) {
    if (k.type() < 0) {
      return absl::InvalidArgumentError("result.knobs: type must be >= 0");
    }
    r.knobs.push_back(Knob{k.type(), k.value()});
  }
  r.numerical_notes = in.numerical_notes();
  r.behavior_notes = in.behavior_notes();
  r.plan = in.plan();
  r.build_ms = in.build_ms();
  r.heuristic_rank = in.heuristic_rank();
  if (r.algo < 0 || r.workspace_bytes < 0) {
    return absl::InvalidArgumentError(
        "result: algo and workspace must be non-negative");
  }
  if (!std::isfinite(r.build_ms) || r.build_ms < 0 || r.heuristic_rank < 0) {
    return absl::InvalidArgumentError(
        "result: build_ms and heuristic_rank must be non-negative");
  }
  return r;
}

absl::StatusOr<Record> FromProto(const v1::Record& in) {
  Record r;
  r.id = in.id();
  ASSIGN_OR_RETURN(r.key.device, FromProto(in.device()));
  ASSIGN_OR_RETURN(r.key.problem, FromProto(in.problem()));
  for (const auto& res : in.results()) {
    ASSIGN_OR_RETURN(AlgoResult a, FromProto(res));
    r.results.push_back(std::move(a));
  }
  r.measured_at_us = in.measured_at_us();
  r.host = in.host();
  r.gpu_uuid = in.gpu_uuid();
  r.driver_version = in.driver_version();
  r.finder = in.finder();
  r.repeats = in.repeats();
  r.workspace_cap_bytes = in.workspace_cap_bytes();
  r.search_ms = in.search_ms();
  r.verified = in.verified();
  r.served_count = in.served_count();
  r.timing_version = in.timing_version() == 0 ? 1 : in.timing_version();
  if (r.timing_version < 1 || r.timing_version > kCurrentTimingVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("record.timing_version: ", in.timing_version(),
                     " is not 1..", kCurrentTimingVersion));
  }
  r.revalidated_from_cudnn = in.revalidated_from_cudnn();
  RETURN_IF_ERROR(CheckRevalidatedFrom(r));
  r.revalidated_from_driver = in.revalidated_from_driver();
  RETURN_IF_ERROR(CheckRevalidatedFromDriver(r));
  return r;
}

void ToProto(const Prediction& in, v1::Prediction* out) {
  out->clear_candidates();
  for (const AlgoResult& r : in.candidates) ToProto(r, out->add_candidates());
  out->clear_source_keys();
  for (const std::string& k : in.sources) out->add_source_keys(k);
  out->set_confidence(in.confidence);
  out->set_distance(in.distance);
}

absl::StatusOr<Prediction> FromProto(const v1::Prediction& in) {
  Prediction p;
  for (const v1::AlgoResult& wire : in.candidates()) {
    ASSIGN_OR_RETURN(AlgoResult r, FromProto(wire));
    p.candidates.push_back(std::move(r));
  }
  if (p.candidates.empty()) {
    return absl::InvalidArgumentError("prediction: no candidate");
  }
  p.sources.assign(in.source_keys().begin(), in.source_keys().end());
  p.confidence = in.confidence();
  p.distance = in.distance();
  if (!(p.confidence >= 0 && p.confidence <= 1) ||
      !(p.distance >= 0 && std::isfinite(p.distance))) {
    return absl::InvalidArgumentError(
        "prediction: confidence must be in [0, 1] and distance >= 0");
  }
  return p;
}

absl::StatusOr<Constraints> FromProto(const v1::Constraints& in) {
  Constraints c;
  if (in.has_max_workspace_bytes()) {
    if (in.max_workspace_bytes() < 0) {
      return absl::InvalidArgumentError(
          "constraints.max_workspace_bytes: must be >= 0");
    }
    c.max_workspace_bytes = in.max_workspace_bytes();
  }
  c.deterministic_only = in.deterministic_only();
  c.excluded_numerical_notes = in.excluded_numerical_notes();
  if (in.has_compile_horizon_calls()) {
    if (in.compile_horizon_calls() < 0) {
      return absl::InvalidArgumentError(
          "constraints.compile_horizon_calls: must be >= 0");
    }
    c.compile_horizon_calls = in.compile_horizon_calls();
  }
  c.loads_stored_plans = in.loads_stored_plans();
  if (in.launch_mode() != v1::LAUNCH_MODE_UNSPECIFIED) {
    ASSIGN_OR_RETURN(c.launch_mode,
                     EnumFromProto<LaunchMode>(in.launch_mode(), 2,
                                               "constraints.launch_mode"));
  }
  return c;
}

}  // namespace tunedb
