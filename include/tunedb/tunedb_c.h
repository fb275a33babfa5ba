/* tunedb C API: the tunedb::Client (tunedb/client.h) behind opaque handles
 * and plain C structs, for C programs and foreign-function interfaces.
 *
 *   tunedb_options_t opt;
 *   tunedb_options_init(&opt);            // every field at its default
 *   tunedb_client_t* client = NULL;
 *   if (tunedb_client_create(&opt, &client) != TUNEDB_OK) ...
 *   tunedb_problem_t p;  tunedb_problem_init(&p);  ... fill p ...
 *   tunedb_answer_t a;
 *   tunedb_get(client, &p, NULL, &a);     // a.source != TUNEDB_SOURCE_NONE
 *   tunedb_client_destroy(client);
 *
 * ABI stability: the structs passed in begin with `struct_size`, set by the
 * _init functions; later versions only append fields and read no further
 * than the caller's struct_size. Enum values never change.
 *
 * Thread safety: tunedb_get and tunedb_client_stats may be called
 * concurrently on one client; tunedb_client_destroy must not race with them.
 */
#ifndef TUNEDB_TUNEDB_C_H_
#define TUNEDB_TUNEDB_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define TUNEDB_C_EXPORT
#else
#define TUNEDB_C_EXPORT __attribute__((visibility("default")))
#endif

typedef enum tunedb_error {
  TUNEDB_OK = 0,
  TUNEDB_ERROR_INVALID_ARGUMENT = 1, /* a bad option, problem or pointer */
  TUNEDB_ERROR_INTERNAL = 2          /* anything else (out of memory...) */
} tunedb_error_t;

/* Values of tunedb::MissPolicy. */
typedef enum tunedb_miss_policy {
  TUNEDB_MISS_CACHE_ONLY = 1,
  TUNEDB_MISS_TUNE_AND_WAIT = 2,
  TUNEDB_MISS_BACKGROUND = 3
} tunedb_miss_policy_t;

/* tunedb::PinMode (docs/pins.md). */
typedef enum tunedb_pin_mode {
  TUNEDB_PIN_OFF = 0,
  TUNEDB_PIN_RECORD = 1, /* written at tunedb_client_destroy */
  TUNEDB_PIN_FOLLOW = 2
} tunedb_pin_mode_t;

/* Values of tunedb::Source. */
typedef enum tunedb_source {
  TUNEDB_SOURCE_NONE = 0,
  TUNEDB_SOURCE_CACHE = 1,
  TUNEDB_SOURCE_DAEMON = 2,
  TUNEDB_SOURCE_HEURISTIC = 3,
  TUNEDB_SOURCE_DATABASE = 4,
  TUNEDB_SOURCE_PREDICTED = 5,
  TUNEDB_SOURCE_PINNED = 6
} tunedb_source_t;

/* Values of tunedb::ConvOp, DataType, Layout, ConvMode and MathType. */
enum {
  TUNEDB_OP_FORWARD = 1,
  TUNEDB_OP_BACKWARD_DATA = 2,
  TUNEDB_OP_BACKWARD_FILTER = 3
};
enum {
  TUNEDB_TYPE_FLOAT = 1,
  TUNEDB_TYPE_HALF = 2,
  TUNEDB_TYPE_BFLOAT16 = 3,
  TUNEDB_TYPE_DOUBLE = 4
};
enum {
  TUNEDB_LAYOUT_NCHW = 1,
  TUNEDB_LAYOUT_NHWC = 2,
  TUNEDB_LAYOUT_NCDHW = 3,
  TUNEDB_LAYOUT_NDHWC = 4
};
enum { TUNEDB_MODE_CROSS_CORRELATION = 1, TUNEDB_MODE_CONVOLUTION = 2 };
enum {
  TUNEDB_MATH_DEFAULT = 1,
  TUNEDB_MATH_TENSOR_OP = 2,
  TUNEDB_MATH_TENSOR_OP_ALLOW_CONVERSION = 3,
  TUNEDB_MATH_FMA = 4
};

/* A heuristic for misses (see tunedb::HeuristicFn): fill *algo, *math_type
 * and *workspace_bytes and return 1, or return 0 for "no answer". Called
 * from the thread calling tunedb_get; must be thread-safe. */
struct tunedb_problem;
struct tunedb_constraints;
typedef int (*tunedb_heuristic_fn)(void* user_data,
                                   const struct tunedb_problem* problem,
                                   const struct tunedb_constraints* c,
                                   int32_t* algo, int32_t* math_type,
                                   int64_t* workspace_bytes);

typedef struct tunedb_options {
  size_t struct_size;  /* set by tunedb_options_init */
  const char* address; /* default "unix:/run/tunedb/tunedb.sock"; copied */
  int64_t lookup_deadline_us;          /* default 20000 */
  int64_t tune_deadline_us;            /* default 10000000 */
  int64_t background_tune_deadline_us; /* default 2000000 */
  int32_t miss_policy;                 /* default TUNEDB_MISS_BACKGROUND */
  int64_t cache_capacity;              /* default 4096; 0 disables */
  int64_t negative_ttl_us;             /* default 5000000 */
  int64_t refresh_interval_us;         /* default 60000000; 0 disables */
  int64_t reconnect_backoff_min_us;    /* default 100000 */
  int64_t reconnect_backoff_max_us;    /* default 10000000 */
  int32_t background_queue_capacity;   /* default 256 */
  tunedb_heuristic_fn heuristic;       /* default NULL */
  void* heuristic_user_data;           /* default NULL */
  const char* db_path; /* daemon's database, read when it is down; copied;
                          default NULL (none) */
  /* TLS to a daemon on TCP (tunedb::TlsClientOptions); PEM file paths,
   * copied; each default NULL. Used for a TCP address when tls_ca_file or
   * tls_cert_file is set; a "unix:" address is always plain. */
  const char* tls_ca_file;     /* CA of the daemon's certificate */
  const char* tls_cert_file;   /* client certificate (mTLS) */
  const char* tls_key_file;    /* its key */
  const char* tls_server_name; /* name in the daemon's certificate */
  /* A pin (tunedb::PinOptions, docs/pins.md); pin_path copied, default NULL
   * (no pin: pin_mode must be TUNEDB_PIN_OFF, the default). */
  const char* pin_path;
  int32_t pin_mode;            /* tunedb_pin_mode_t */
  int32_t pin_accept_mismatch; /* default 0: a foreign pin is refused */
  int32_t pin_driver_version;  /* cudaDriverGetVersion; default 0: unknown */
  int32_t pin_deterministic;   /* default 0 */
  /* The job this client is a rank of (ClientOptions::job_id); copied;
   * default NULL (none). */
  const char* job_id;
  /* The program this process runs (ClientOptions::program); copied;
   * default NULL (none). */
  const char* program;
  int32_t warm_at_start; /* default 1: with a program, one Warm at start */
} tunedb_options_t;

/* A whole key: device and convolution (tunedb::ProblemKey). Spatial arrays
 * hold spatial_dims values (2: H, W; 3: D, H, W). */
typedef struct tunedb_problem {
  size_t struct_size; /* set by tunedb_problem_init */
  /* Device. */
  const char* gpu_model; /* e.g. "NVIDIA H200"; not retained */
  int32_t cc_major;
  int32_t cc_minor;
  int32_t sm_count;
  int32_t cudnn_version;        /* e.g. 91900 */
  int32_t cuda_runtime_version; /* e.g. 13000 */
  /* Convolution. */
  int32_t op; /* TUNEDB_OP_* */
  int32_t spatial_dims;
  int64_t n, c, k;
  int64_t input[3];
  int64_t filter[3];
  int64_t padding[3];
  int64_t stride[3];
  int64_t dilation[3];
  int64_t groups;
  int32_t mode;       /* TUNEDB_MODE_* */
  int32_t input_type; /* TUNEDB_TYPE_* */
  int32_t output_type;
  int32_t compute_type;
  int32_t layout; /* TUNEDB_LAYOUT_* */
  int32_t allow_tensor_cores;
  int32_t allow_tf32;
  /* Added later (the graph API): a caller built against an older header
   * passes a smaller struct_size and gets a legacy-API problem. */
  int32_t api;       /* TUNEDB_API_* (default LEGACY) */
  int32_t alignment; /* GRAPH: operand pointer alignment, bytes (default 16
                        for GRAPH when 0); LEGACY: 0 */
} tunedb_problem_t;

/* tunedb::ConvApi: which cuDNN API a problem is tuned for. */
enum { TUNEDB_API_LEGACY = 1, TUNEDB_API_GRAPH = 2 };

/* Knob choices an engine answer holds at most. */
#define TUNEDB_MAX_KNOBS 16

/* A tuned graph-API engine config (tunedb::EngineAnswer). */
typedef struct tunedb_engine {
  size_t struct_size;    /* set by tunedb_engine_init */
  int32_t source;        /* TUNEDB_SOURCE_* (NONE: use your heuristic) */
  int32_t engine;        /* the engine's global index; -1 for none */
  int32_t knob_count;    /* entries of knob_types / knob_values */
  int32_t knob_types[TUNEDB_MAX_KNOBS]; /* cudnnBackendKnobType_t */
  int64_t knob_values[TUNEDB_MAX_KNOBS];
  uint32_t numerical_notes; /* bit i: cudnnBackendNumericalNote_t i */
  uint32_t behavior_notes;  /* bit i: cudnnBackendBehaviorNote_t i */
  int64_t workspace_bytes;
  size_t plan_size; /* bytes of the stored serialized plan (0: none) */
} tunedb_engine_t;

/* tunedb::LaunchMode: how the caller launches, which decides the cost that
 * ranks the algorithms. */
enum {
  /* Direct cuDNN calls: launch time, host cost included (the default). */
  TUNEDB_LAUNCH_DIRECT = 1,
  /* CUDA-graph replays: GPU time. */
  TUNEDB_LAUNCH_GRAPH = 2
};

/* tunedb::Constraints. Fields past deterministic_only were added later: a
 * caller built against an older header passes a smaller struct_size and gets
 * their defaults. */
typedef struct tunedb_constraints {
  size_t struct_size;          /* set by tunedb_constraints_init */
  int64_t max_workspace_bytes; /* < 0: unlimited (default -1) */
  int32_t deterministic_only;  /* default 0 */
  int32_t launch_mode;         /* TUNEDB_LAUNCH_* (default DIRECT) */
  /* Graph API: only engine configs whose numerical notes have none of these
   * bits (bit i: cudnnBackendNumericalNote_t i). Default 0. */
  uint32_t excluded_numerical_notes;
} tunedb_constraints_t;

typedef struct tunedb_answer {
  int32_t source;    /* TUNEDB_SOURCE_* */
  int32_t algo;      /* cudnnConvolution*Algo_t value; -1 for none */
  int32_t math_type; /* TUNEDB_MATH_* */
  int64_t workspace_bytes;
} tunedb_answer_t;

/* tunedb::ClientStats. */
typedef struct tunedb_stats {
  int64_t gets, hits, misses, daemon_calls, daemon_answers, daemon_errors,
      daemon_skipped, fallbacks, none_answers, background_enqueued,
      background_dropped, background_tunes, refreshes, evictions, cache_entries,
      database_answers;
} tunedb_stats_t;

typedef struct tunedb_client tunedb_client_t;

TUNEDB_C_EXPORT void tunedb_options_init(tunedb_options_t* options);
/* Zeroes the problem and sets: forward, 2 spatial dims, unit stride and
 * dilation, groups 1, cross-correlation, fp32, NCHW, tensor cores and TF32
 * allowed. */
TUNEDB_C_EXPORT void tunedb_problem_init(tunedb_problem_t* problem);
TUNEDB_C_EXPORT void tunedb_constraints_init(tunedb_constraints_t* c);
TUNEDB_C_EXPORT void tunedb_engine_init(tunedb_engine_t* engine);

/* Creates a client; the daemon need not be running. */
TUNEDB_C_EXPORT tunedb_error_t
tunedb_client_create(const tunedb_options_t* options, tunedb_client_t** client);
/* Stops the background worker and frees the client. NULL is a no-op. */
TUNEDB_C_EXPORT void tunedb_client_destroy(tunedb_client_t* client);

/* The algorithm for `problem` (constraints may be NULL: none). Returns
 * TUNEDB_ERROR_INVALID_ARGUMENT for a NULL pointer or an invalid problem;
 * otherwise TUNEDB_OK with *answer filled (source NONE if no answer). */
TUNEDB_C_EXPORT tunedb_error_t tunedb_get(tunedb_client_t* client,
                                          const tunedb_problem_t* problem,
                                          const tunedb_constraints_t* c,
                                          tunedb_answer_t* answer);

/* The tuned engine config for a graph-API `problem` (api GRAPH; see
 * tunedb::Client::GetEngine). When plan_buffer is not NULL and holds at
 * least engine->plan_size bytes, the serialized plan is copied there (not
 * NUL-terminated); call again with a larger buffer otherwise. */
TUNEDB_C_EXPORT tunedb_error_t tunedb_get_engine(
    tunedb_client_t* client, const tunedb_problem_t* problem,
    const tunedb_constraints_t* c, tunedb_engine_t* engine, char* plan_buffer,
    size_t plan_buffer_size);

/* A ready execution plan (a cudnnBackendDescriptor_t the caller destroys
 * with cudnnBackendDestroyDescriptor) for a graph-API `problem` on the
 * cuDNN handle `cudnn_handle` (see tunedb::GetExecutionPlan): *source is
 * 1 = stored plan loaded, 2 = built from the tuned engine config,
 * 3 = built from cuDNN's heuristic. Tensors bind to uids 1 (x), 2 (w) and
 * 3 (y). TUNEDB_ERROR_INTERNAL in a build without cuDNN. */
TUNEDB_C_EXPORT tunedb_error_t tunedb_cudnn_get_plan(
    tunedb_client_t* client, void* cudnn_handle,
    const tunedb_problem_t* problem, const tunedb_constraints_t* c,
    void** plan, int64_t* workspace_bytes, int32_t* source);

TUNEDB_C_EXPORT tunedb_error_t tunedb_client_stats(tunedb_client_t* client,
                                                   tunedb_stats_t* stats);

/* Waits up to timeout_us for the background queue to drain; 1 if drained. */
TUNEDB_C_EXPORT int tunedb_wait_for_background(tunedb_client_t* client,
                                               int64_t timeout_us);

/* The message of the last error on this thread ("" if none). */
TUNEDB_C_EXPORT const char* tunedb_last_error(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TUNEDB_TUNEDB_C_H_ */
