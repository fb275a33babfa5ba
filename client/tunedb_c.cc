// The C API over tunedb::Client.
#include "tunedb/tunedb_c.h"

#include <cstddef>
#include <cstring>
#include <exception>
#include <memory>
#include <string>

#include "tunedb/client.h"
#if defined(TUNEDB_HAVE_CUDNN)
#include "tunedb/cudnn_graph_helpers.h"
#endif

struct tunedb_client {
  std::unique_ptr<tunedb::Client> client;
};

namespace {

// tunedb_source_t mirrors tunedb::Source value for value.
static_assert(TUNEDB_SOURCE_DATABASE ==
              static_cast<int>(tunedb::Source::kDatabase));
static_assert(TUNEDB_SOURCE_PREDICTED ==
              static_cast<int>(tunedb::Source::kPredicted));
static_assert(TUNEDB_SOURCE_PINNED ==
              static_cast<int>(tunedb::Source::kPinned));

thread_local std::string last_error;

tunedb_error_t Fail(tunedb_error_t code, std::string message) {
  last_error = std::move(message);
  return code;
}

absl::Duration Us(int64_t us) { return absl::Microseconds(us); }

// The first revision of tunedb_problem_t ended before `api`.
constexpr size_t kProblemV1Size = offsetof(tunedb_problem_t, api);

bool FromC(const tunedb_problem_t& in, tunedb::ProblemKey* out) {
  if (in.spatial_dims < 2 || in.spatial_dims > 3) return false;
  tunedb::DeviceKey& d = out->device;
  d.gpu_model = in.gpu_model != nullptr ? in.gpu_model : "";
  d.cc_major = in.cc_major;
  d.cc_minor = in.cc_minor;
  d.sm_count = in.sm_count;
  d.cudnn_version = in.cudnn_version;
  d.cuda_runtime_version = in.cuda_runtime_version;
  tunedb::ConvProblem& p = out->problem;
  p.op = static_cast<tunedb::ConvOp>(in.op);
  p.spatial_dims = in.spatial_dims;
  p.n = in.n;
  p.c = in.c;
  p.k = in.k;
  p.input = {};
  p.filter = {};
  p.padding = {};
  p.stride = {};
  p.dilation = {};
  for (int i = 0; i < in.spatial_dims; ++i) {
    p.input[i] = in.input[i];
    p.filter[i] = in.filter[i];
    p.padding[i] = in.padding[i];
    p.stride[i] = in.stride[i];
    p.dilation[i] = in.dilation[i];
  }
  p.groups = in.groups;
  p.mode = static_cast<tunedb::ConvMode>(in.mode);
  p.input_type = static_cast<tunedb::DataType>(in.input_type);
  p.output_type = static_cast<tunedb::DataType>(in.output_type);
  p.compute_type = static_cast<tunedb::DataType>(in.compute_type);
  p.layout = static_cast<tunedb::Layout>(in.layout);
  p.allow_tensor_cores = in.allow_tensor_cores != 0;
  p.allow_tf32 = in.allow_tf32 != 0;
  p.api = tunedb::ConvApi::kLegacy;
  p.alignment = 0;
  if (in.struct_size >= sizeof(tunedb_problem_t) &&
      in.api == TUNEDB_API_GRAPH) {
    p.api = tunedb::ConvApi::kGraph;
    p.alignment = in.alignment == 0 ? tunedb::ConvProblem::kMaxAlignment
                                    : in.alignment;
  } else if (in.struct_size >= sizeof(tunedb_problem_t) &&
             in.api != TUNEDB_API_LEGACY && in.api != 0) {
    p.api = static_cast<tunedb::ConvApi>(in.api);  // refused by Validate
  }
  return true;
}

// Back to C for the heuristic callback.
void ToC(const tunedb::ProblemKey& key, tunedb_problem_t* out) {
  tunedb_problem_init(out);
  const tunedb::DeviceKey& d = key.device;
  out->gpu_model = d.gpu_model.c_str();
  out->cc_major = d.cc_major;
  out->cc_minor = d.cc_minor;
  out->sm_count = d.sm_count;
  out->cudnn_version = d.cudnn_version;
  out->cuda_runtime_version = d.cuda_runtime_version;
  const tunedb::ConvProblem& p = key.problem;
  out->op = static_cast<int32_t>(p.op);
  out->spatial_dims = p.spatial_dims;
  out->n = p.n;
  out->c = p.c;
  out->k = p.k;
  for (int i = 0; i < 3; ++i) {
    out->input[i] = p.input[i];
    out->filter[i] = p.filter[i];
    out->padding[i] = p.padding[i];
    out->stride[i] = p.stride[i];
    out->dilation[i] = p.dilation[i];
  }
  out->groups = p.groups;
  out->mode = static_cast<int32_t>(p.mode);
  out->input_type = static_cast<int32_t>(p.input_type);
  out->output_type = static_cast<int32_t>(p.output_type);
  out->compute_type = static_cast<int32_t>(p.compute_type);
  out->layout = static_cast<int32_t>(p.layout);
  out->allow_tensor_cores = p.allow_tensor_cores ? 1 : 0;
  out->allow_tf32 = p.allow_tf32 ? 1 : 0;
  out->api = static_cast<int32_t>(p.api);
  out->alignment = p.alignment;
}

// The key and constraints of a tunedb_get-style call, or an error code
// (the message set).
tunedb_error_t ReadRequest(const tunedb_problem_t* problem,
                           const tunedb_constraints_t* c,
                           tunedb::ProblemKey* key,
                           tunedb::Constraints* constraints) {
  // Constraints grew launch_mode later: the first revision's size is enough.
  constexpr size_t kConstraintsV1Size =
      offsetof(tunedb_constraints_t, launch_mode);
  if (problem->struct_size < kProblemV1Size ||
      (c != nullptr && c->struct_size < kConstraintsV1Size)) {
    return Fail(TUNEDB_ERROR_INVALID_ARGUMENT,
                "struct_size too small: call the _init function");
  }
  if (!FromC(*problem, key)) {
    return Fail(TUNEDB_ERROR_INVALID_ARGUMENT, "spatial_dims must be 2 or 3");
  }
  absl::Status valid = key->problem.Validate();
  if (!valid.ok()) {
    return Fail(TUNEDB_ERROR_INVALID_ARGUMENT, std::string(valid.message()));
  }
  if (c != nullptr) {
    if (c->max_workspace_bytes >= 0) {
      constraints->max_workspace_bytes = c->max_workspace_bytes;
    }
    constraints->deterministic_only = c->deterministic_only != 0;
    if (c->struct_size >= offsetof(tunedb_constraints_t, launch_mode) +
                              sizeof(c->launch_mode)) {
      if (c->launch_mode != TUNEDB_LAUNCH_DIRECT &&
          c->launch_mode != TUNEDB_LAUNCH_GRAPH) {
        return Fail(TUNEDB_ERROR_INVALID_ARGUMENT,
                    "launch_mode must be TUNEDB_LAUNCH_DIRECT or "
                    "TUNEDB_LAUNCH_GRAPH");
      }
      constraints->launch_mode =
          static_cast<tunedb::LaunchMode>(c->launch_mode);
    }
    if (c->struct_size >= offsetof(tunedb_constraints_t,
                                   excluded_numerical_notes) +
                              sizeof(c->excluded_numerical_notes)) {
      constraints->excluded_numerical_notes = c->excluded_numerical_notes;
    }
  }
  return TUNEDB_OK;
}

// The C heuristic `fn` (with `user`) as a HeuristicFn.
tunedb::HeuristicFn HeuristicFromC(tunedb_heuristic_fn fn, void* user) {
  return [fn, user](const tunedb::ProblemKey& key,
                    const tunedb::Constraints& constraints)
             -> std::optional<tunedb::AlgoResult> {
    tunedb_problem_t p;
    ToC(key, &p);
    tunedb_constraints_t c;
    tunedb_constraints_init(&c);
    c.max_workspace_bytes = constraints.max_workspace_bytes.value_or(-1);
    c.deterministic_only = constraints.deterministic_only ? 1 : 0;
    c.launch_mode = static_cast<int32_t>(constraints.launch_mode);
    c.excluded_numerical_notes = constraints.excluded_numerical_notes;
    int32_t algo = -1;
    int32_t math = TUNEDB_MATH_DEFAULT;
    int64_t workspace = 0;
    if (fn(user, &p, &c, &algo, &math, &workspace) == 0) return std::nullopt;
    if (math < TUNEDB_MATH_DEFAULT || math > TUNEDB_MATH_FMA) {
      math = TUNEDB_MATH_DEFAULT;
    }
    tunedb::AlgoResult r;
    r.algo = algo;
    r.math_type = static_cast<tunedb::MathType>(math);
    r.workspace_bytes = workspace;
    return r;
  };
}

// The ClientOptions `o` (of at least the first revision's size) gives, or
// an error code (the message set) for an unknown enum value. The rest is
// Client::Create's to check.
tunedb_error_t OptionsFromC(const tunedb_options_t& o,
                            tunedb::ClientOptions* options) {
  if (o.address != nullptr) options->address = o.address;
  options->lookup_deadline = Us(o.lookup_deadline_us);
  options->tune_deadline = Us(o.tune_deadline_us);
  options->background_tune_deadline = Us(o.background_tune_deadline_us);
  if (o.miss_policy < TUNEDB_MISS_CACHE_ONLY ||
      o.miss_policy > TUNEDB_MISS_BACKGROUND) {
    return Fail(TUNEDB_ERROR_INVALID_ARGUMENT, "unknown miss_policy");
  }
  options->miss_policy = static_cast<tunedb::MissPolicy>(o.miss_policy);
  options->cache_capacity = o.cache_capacity;
  options->negative_ttl = Us(o.negative_ttl_us);
  options->refresh_interval = Us(o.refresh_interval_us);
  options->reconnect_backoff_min = Us(o.reconnect_backoff_min_us);
  options->reconnect_backoff_max = Us(o.reconnect_backoff_max_us);
  options->background_queue_capacity = o.background_queue_capacity;
  if (o.db_path != nullptr) options->db_path = o.db_path;
  auto copy = [](const char* from, std::string* to) {
    if (from != nullptr) *to = from;
  };
  // Callers built before the pin fields pass a struct that ends at
  // tls_server_name.
  if (o.struct_size >= offsetof(tunedb_options_t, pin_path)) {
    copy(o.tls_ca_file, &options->tls.ca_file);
    copy(o.tls_cert_file, &options->tls.cert_file);
    copy(o.tls_key_file, &options->tls.key_file);
    copy(o.tls_server_name, &options->tls.server_name);
  }
  if (o.struct_size >= offsetof(tunedb_options_t, program)) {
    if (o.pin_mode < TUNEDB_PIN_OFF || o.pin_mode > TUNEDB_PIN_FOLLOW) {
      return Fail(TUNEDB_ERROR_INVALID_ARGUMENT, "unknown pin_mode");
    }
    copy(o.pin_path, &options->pin.path);
    options->pin.mode = static_cast<tunedb::PinMode>(o.pin_mode);
    options->pin.accept_mismatch = o.pin_accept_mismatch != 0;
    options->pin.driver_version = o.pin_driver_version;
    options->pin.deterministic = o.pin_deterministic != 0;
    copy(o.job_id, &options->job_id);
  }
  // Callers built before the program pass a struct that ends at job_id.
  if (o.struct_size >= sizeof(tunedb_options_t)) {
    copy(o.program, &options->program);
    options->warm_at_start = o.warm_at_start != 0;
  }
  if (o.heuristic != nullptr) {
    options->heuristic = HeuristicFromC(o.heuristic, o.heuristic_user_data);
  }
  return TUNEDB_OK;
}

}  // namespace

extern "C" {

void tunedb_options_init(tunedb_options_t* o) {
  if (o == nullptr) return;
  std::memset(o, 0, sizeof(*o));
  const tunedb::ClientOptions d;
  o->struct_size = sizeof(*o);
  o->address = nullptr;  // the default address
  o->lookup_deadline_us = absl::ToInt64Microseconds(d.lookup_deadline);
  o->tune_deadline_us = absl::ToInt64Microseconds(d.tune_deadline);
  o->background_tune_deadline_us =
      absl::ToInt64Microseconds(d.background_tune_deadline);
  o->miss_policy = static_cast<int32_t>(d.miss_policy);
  o->cache_capacity = d.cache_capacity;
  o->negative_ttl_us = absl::ToInt64Microseconds(d.negative_ttl);
  o->refresh_interval_us = absl::ToInt64Microseconds(d.refresh_interval);
  o->reconnect_backoff_min_us =
      absl::ToInt64Microseconds(d.reconnect_backoff_min);
  o->reconnect_backoff_max_us =
      absl::ToInt64Microseconds(d.reconnect_backoff_max);
  o->background_queue_capacity = d.background_queue_capacity;
  o->warm_at_start = d.warm_at_start ? 1 : 0;
}

void tunedb_problem_init(tunedb_problem_t* p) {
  if (p == nullptr) return;
  std::memset(p, 0, sizeof(*p));
  p->struct_size = sizeof(*p);
  p->gpu_model = "";
  p->op = TUNEDB_OP_FORWARD;
  p->spatial_dims = 2;
  for (int i = 0; i < 3; ++i) {
    p->stride[i] = 1;
    p->dilation[i] = 1;
  }
  p->groups = 1;
  p->mode = TUNEDB_MODE_CROSS_CORRELATION;
  p->input_type = TUNEDB_TYPE_FLOAT;
  p->output_type = TUNEDB_TYPE_FLOAT;
  p->compute_type = TUNEDB_TYPE_FLOAT;
  p->layout = TUNEDB_LAYOUT_NCHW;
  p->allow_tensor_cores = 1;
  p->allow_tf32 = 1;
  p->api = TUNEDB_API_LEGACY;
}

void tunedb_constraints_init(tunedb_constraints_t* c) {
  if (c == nullptr) return;
  std::memset(c, 0, sizeof(*c));
  c->struct_size = sizeof(*c);
  c->max_workspace_bytes = -1;
  c->launch_mode = TUNEDB_LAUNCH_DIRECT;
}

tunedb_error_t tunedb_client_create(const tunedb_options_t* o,
                                    tunedb_client_t** client) {
  if (o == nullptr || client == nullptr) {
    return Fail(TUNEDB_ERROR_INVALID_ARGUMENT, "NULL options or client");
  }
  // Callers built before the TLS fields pass a struct that ends at db_path.
  constexpr size_t kOptionsV1Size = offsetof(tunedb_options_t, tls_ca_file);
  if (o->struct_size < kOptionsV1Size) {
    return Fail(TUNEDB_ERROR_INVALID_ARGUMENT,
                "options.struct_size too small: call tunedb_options_init");
  }
  try {
    tunedb::ClientOptions options;
    if (tunedb_error_t e = OptionsFromC(*o, &options)) return e;
    absl::StatusOr<std::unique_ptr<tunedb::Client>> created =
        tunedb::Client::Create(options);
    if (!created.ok()) {
      return Fail(TUNEDB_ERROR_INVALID_ARGUMENT,
                  std::string(created.status().message()));
    }
    *client = new tunedb_client{*std::move(created)};
    return TUNEDB_OK;
  } catch (const std::exception& e) {
    return Fail(TUNEDB_ERROR_INTERNAL, e.what());
  }
}

void tunedb_client_destroy(tunedb_client_t* client) { delete client; }

tunedb_error_t tunedb_get(tunedb_client_t* client,
                          const tunedb_problem_t* problem,
                          const tunedb_constraints_t* c,
                          tunedb_answer_t* answer) {
  if (client == nullptr || problem == nullptr || answer == nullptr) {
    return Fail(TUNEDB_ERROR_INVALID_ARGUMENT, "NULL argument");
  }
  try {
    tunedb::ProblemKey key;
    tunedb::Constraints constraints;
    if (tunedb_error_t e = ReadRequest(problem, c, &key, &constraints)) {
      return e;
    }
    const tunedb::Answer a = client->client->Get(key, constraints);
    answer->source = static_cast<int32_t>(a.source);
    answer->algo = a.algo;
    answer->math_type = static_cast<int32_t>(a.math_type);
    answer->workspace_bytes = a.workspace_bytes;
    return TUNEDB_OK;
  } catch (const std::exception& e) {
    return Fail(TUNEDB_ERROR_INTERNAL, e.what());
  }
}

tunedb_error_t tunedb_client_stats(tunedb_client_t* client,
                                   tunedb_stats_t* stats) {
  if (client == nullptr || stats == nullptr) {
    return Fail(TUNEDB_ERROR_INVALID_ARGUMENT, "NULL argument");
  }
  const tunedb::ClientStats s = client->client->Stats();
  stats->gets = s.gets;
  stats->hits = s.hits;
  stats->misses = s.misses;
  stats->daemon_calls = s.daemon_calls;
  stats->daemon_answers = s.daemon_answers;
  stats->daemon_errors = s.daemon_errors;
  stats->daemon_skipped = s.daemon_skipped;
  stats->fallbacks = s.fallbacks;
  stats->none_answers = s.none_answers;
  stats->background_enqueued = s.background_enqueued;
  stats->background_dropped = s.background_dropped;
  stats->background_tunes = s.background_tunes;
  stats->refreshes = s.refreshes;
  stats->evictions = s.evictions;
  stats->cache_entries = s.cache_entries;
  stats->database_answers = s.database_answers;
  return TUNEDB_OK;
}

void tunedb_engine_init(tunedb_engine_t* engine) {
  std::memset(engine, 0, sizeof(*engine));
  engine->struct_size = sizeof(*engine);
  engine->engine = -1;
}

tunedb_error_t tunedb_get_engine(tunedb_client_t* client,
                                 const tunedb_problem_t* problem,
                                 const tunedb_constraints_t* c,
                                 tunedb_engine_t* engine, char* plan_buffer,
                                 size_t plan_buffer_size) {
  if (client == nullptr || problem == nullptr || engine == nullptr) {
    return Fail(TUNEDB_ERROR_INVALID_ARGUMENT, "NULL argument");
  }
  if (engine->struct_size < sizeof(tunedb_engine_t)) {
    return Fail(TUNEDB_ERROR_INVALID_ARGUMENT,
                "engine.struct_size too small: call tunedb_engine_init");
  }
  try {
    tunedb::ProblemKey key;
    tunedb::Constraints constraints;
    if (tunedb_error_t e = ReadRequest(problem, c, &key, &constraints)) {
      return e;
    }
    if (key.problem.api != tunedb::ConvApi::kGraph) {
      return Fail(TUNEDB_ERROR_INVALID_ARGUMENT,
                  "tunedb_get_engine needs api TUNEDB_API_GRAPH");
    }
    const tunedb::EngineAnswer a =
        client->client->GetEngine(key, constraints);
    tunedb_engine_init(engine);
    engine->source = static_cast<int32_t>(a.source);
    if (!a.ok()) return TUNEDB_OK;
    if (a.config.knobs.size() > TUNEDB_MAX_KNOBS) {
      return Fail(TUNEDB_ERROR_INTERNAL, "more knobs than TUNEDB_MAX_KNOBS");
    }
    engine->engine = a.config.algo;
    engine->knob_count = static_cast<int32_t>(a.config.knobs.size());
    for (size_t i = 0; i < a.config.knobs.size(); ++i) {
      engine->knob_types[i] = a.config.knobs[i].type;
      engine->knob_values[i] = a.config.knobs[i].value;
    }
    engine->numerical_notes = a.config.numerical_notes;
    engine->behavior_notes = a.config.behavior_notes;
    engine->workspace_bytes = a.config.workspace_bytes;
    engine->plan_size = a.config.plan.size();
    if (plan_buffer != nullptr && plan_buffer_size >= a.config.plan.size()) {
      std::memcpy(plan_buffer, a.config.plan.data(), a.config.plan.size());
    }
    return TUNEDB_OK;
  } catch (const std::exception& e) {
    return Fail(TUNEDB_ERROR_INTERNAL, e.what());
  }
}

tunedb_error_t tunedb_cudnn_get_plan(tunedb_client_t* client,
                                     void* cudnn_handle,
                                     const tunedb_problem_t* problem,
                                     const tunedb_constraints_t* c,
                                     void** plan, int64_t* workspace_bytes,
                                     int32_t* source) {
  if (client == nullptr || cudnn_handle == nullptr || problem == nullptr ||
      plan == nullptr || workspace_bytes == nullptr || source == nullptr) {
    return Fail(TUNEDB_ERROR_INVALID_ARGUMENT, "NULL argument");
  }
#if defined(TUNEDB_HAVE_CUDNN)
  try {
    tunedb::ProblemKey key;
    tunedb::Constraints constraints;
    if (tunedb_error_t e = ReadRequest(problem, c, &key, &constraints)) {
      return e;
    }
    absl::StatusOr<tunedb::ExecutionPlan> p = tunedb::GetExecutionPlan(
        *client->client, static_cast<cudnnHandle_t>(cudnn_handle), key,
        constraints);
    if (!p.ok()) {
      return Fail(absl::IsInvalidArgument(p.status())
                      ? TUNEDB_ERROR_INVALID_ARGUMENT
                      : TUNEDB_ERROR_INTERNAL,
                  std::string(p.status().message()));
    }
    *workspace_bytes = p->workspace_bytes;
    *source = static_cast<int32_t>(p->source);
    *plan = p->release();
    return TUNEDB_OK;
  } catch (const std::exception& e) {
    return Fail(TUNEDB_ERROR_INTERNAL, e.what());
  }
#else
  (void)c;
  return Fail(TUNEDB_ERROR_INTERNAL, "tunedb was built without cuDNN");
#endif
}

int tunedb_wait_for_background(tunedb_client_t* client, int64_t timeout_us) {
  if (client == nullptr) return 0;
  return client->client->WaitForBackground(Us(timeout_us)) ? 1 : 0;
}

const char* tunedb_last_error(void) { return last_error.c_str(); }

}  // extern "C"
