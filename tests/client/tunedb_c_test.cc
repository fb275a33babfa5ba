// The C API: options, problems, answers and stats through plain structs.
#include "tunedb/tunedb_c.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "client_test_util.h"
#include "common/sealed_plan.h"

namespace tunedb {
namespace {

using client_test::FakeDaemon;
using testing_util::OkResult;
using testing_util::TempDir;

void FillProblem(tunedb_problem_t* p, int64_t n) {
  tunedb_problem_init(p);
  p->gpu_model = "Simulated GPU";
  p->cc_major = 9;
  p->cc_minor = 0;
  p->sm_count = 132;
  p->cudnn_version = 91900;
  p->cuda_runtime_version = 13000;
  p->n = n;
  p->c = 64;
  p->k = 64;
  p->input[0] = p->input[1] = 28;
  p->filter[0] = p->filter[1] = 3;
  p->padding[0] = p->padding[1] = 1;
}

int Heuristic(void* user, const tunedb_problem_t* p,
              const tunedb_constraints_t* c, int32_t* algo, int32_t* math,
              int64_t* workspace) {
  ++*static_cast<int*>(user);
  if (p->n == 999) return 0;
  *algo = 40 + static_cast<int32_t>(p->n % 2);
  *math = TUNEDB_MATH_TENSOR_OP;
  *workspace = c->max_workspace_bytes;
  return 1;
}

TEST(TunedbCTest, DefaultsMatchTheCppOptions) {
  tunedb_options_t o;
  tunedb_options_init(&o);
  EXPECT_EQ(o.struct_size, sizeof(o));
  EXPECT_EQ(o.address, nullptr);
  EXPECT_EQ(o.miss_policy, TUNEDB_MISS_BACKGROUND);
  EXPECT_EQ(o.cache_capacity, 4096);
  EXPECT_EQ(o.lookup_deadline_us, 20000);
}

TEST(TunedbCTest, GetFromDaemonAndCache) {
  TempDir dir;
  FakeDaemon daemon(dir.File("c.sock"));
  tunedb_problem_t p;
  FillProblem(&p, 8);
  daemon.service().Put(testing_util::TestKey(8),
                       {OkResult(6, 2048, MathType::kTensorOp)});

  tunedb_options_t o;
  tunedb_options_init(&o);
  const std::string address = daemon.address();
  o.address = address.c_str();
  tunedb_client_t* client = nullptr;
  ASSERT_EQ(tunedb_client_create(&o, &client), TUNEDB_OK);

  tunedb_answer_t a;
  ASSERT_EQ(tunedb_get(client, &p, nullptr, &a), TUNEDB_OK);
  EXPECT_EQ(a.source, TUNEDB_SOURCE_DAEMON);
  EXPECT_EQ(a.algo, 6);
  EXPECT_EQ(a.math_type, TUNEDB_MATH_TENSOR_OP);
  EXPECT_EQ(a.workspace_bytes, 2048);
  ASSERT_EQ(tunedb_get(client, &p, nullptr, &a), TUNEDB_OK);
  EXPECT_EQ(a.source, TUNEDB_SOURCE_CACHE);

  tunedb_stats_t s;
  ASSERT_EQ(tunedb_client_stats(client, &s), TUNEDB_OK);
  EXPECT_EQ(s.gets, 2);
  EXPECT_EQ(s.hits, 1);
  tunedb_client_destroy(client);
}

TEST(TunedbCTest, HeuristicCallbackWithoutDaemon) {
  TempDir dir;
  const std::string address = "unix:" + dir.File("absent.sock");
  int calls = 0;
  tunedb_options_t o;
  tunedb_options_init(&o);
  o.address = address.c_str();
  o.heuristic = &Heuristic;
  o.heuristic_user_data = &calls;
  tunedb_client_t* client = nullptr;
  ASSERT_EQ(tunedb_client_create(&o, &client), TUNEDB_OK);

  tunedb_problem_t p;
  FillProblem(&p, 3);
  tunedb_constraints_t c;
  tunedb_constraints_init(&c);
  c.max_workspace_bytes = 512;
  tunedb_answer_t a;
  ASSERT_EQ(tunedb_get(client, &p, &c, &a), TUNEDB_OK);
  EXPECT_EQ(a.source, TUNEDB_SOURCE_HEURISTIC);
  EXPECT_EQ(a.algo, 41);
  EXPECT_EQ(a.math_type, TUNEDB_MATH_TENSOR_OP);
  EXPECT_EQ(a.workspace_bytes, 512);
  EXPECT_EQ(calls, 1);

  FillProblem(&p, 999);  // the heuristic has no answer
  ASSERT_EQ(tunedb_get(client, &p, &c, &a), TUNEDB_OK);
  EXPECT_EQ(a.source, TUNEDB_SOURCE_NONE);
  EXPECT_EQ(a.algo, -1);
  tunedb_client_destroy(client);
}

TEST(TunedbCTest, GetEngineGivesKnobsNotesAndThePlanBytes) {
  TempDir dir;
  FakeDaemon daemon(dir.File("c.sock"));
  ProblemKey key = testing_util::TestKey(8);
  key.problem.api = ConvApi::kGraph;
  key.problem.alignment = 16;
  AlgoResult engine = OkResult(57, 4096, MathType::kTensorOp);
  engine.knobs = {Knob{3, 2}, Knob{11, 7}};
  engine.numerical_notes = 1;
  const std::string raw_plan = "{\"a serialized\":\"plan\"}";
  engine.plan = SealPlan(key, engine.algo, engine.knobs, raw_plan);
  daemon.service().Put(key, {engine});

  tunedb_options_t o;
  tunedb_options_init(&o);
  const std::string address = daemon.address();
  o.address = address.c_str();
  tunedb_client_t* client = nullptr;
  ASSERT_EQ(tunedb_client_create(&o, &client), TUNEDB_OK);
  tunedb_problem_t p;
  FillProblem(&p, 8);
  tunedb_engine_t e;
  tunedb_engine_init(&e);
  // A legacy problem is refused.
  EXPECT_EQ(tunedb_get_engine(client, &p, nullptr, &e, nullptr, 0),
            TUNEDB_ERROR_INVALID_ARGUMENT);
  p.api = TUNEDB_API_GRAPH;  // alignment 0: the default, 16
  ASSERT_EQ(tunedb_get_engine(client, &p, nullptr, &e, nullptr, 0),
            TUNEDB_OK)
      << tunedb_last_error();
  EXPECT_EQ(e.source, TUNEDB_SOURCE_DAEMON);
  EXPECT_EQ(e.engine, 57);
  ASSERT_EQ(e.knob_count, 2);
  EXPECT_EQ(e.knob_types[1], 11);
  EXPECT_EQ(e.knob_values[1], 7);
  EXPECT_EQ(e.numerical_notes, 1u);
  EXPECT_EQ(e.workspace_bytes, 4096);
  // The plan as cuDNN serialized it, out of its seal (sealed_plan.h).
  ASSERT_EQ(e.plan_size, raw_plan.size());
  std::string plan(e.plan_size, '\0');
  ASSERT_EQ(
      tunedb_get_engine(client, &p, nullptr, &e, plan.data(), plan.size()),
      TUNEDB_OK);
  EXPECT_EQ(e.source, TUNEDB_SOURCE_CACHE);
  EXPECT_EQ(plan, raw_plan);
  // A problem struct from before the api field is a legacy problem.
  p.struct_size = offsetof(tunedb_problem_t, api);
  EXPECT_EQ(tunedb_get_engine(client, &p, nullptr, &e, nullptr, 0),
            TUNEDB_ERROR_INVALID_ARGUMENT);
  tunedb_client_destroy(client);
}

TEST(TunedbCTest, APinRecordedThroughTheCApiIsFollowedWithoutADaemon) {
  TempDir dir;
  const std::string pin = dir.File("job.pin");
  tunedb_problem_t p;
  FillProblem(&p, 8);
  {
    FakeDaemon daemon(dir.File("c.sock"));
    daemon.service().Put(testing_util::TestKey(8),
                         {OkResult(6, 2048, MathType::kTensorOp)});
    const std::string address = daemon.address();
    tunedb_options_t o;
    tunedb_options_init(&o);
    o.address = address.c_str();
    o.pin_path = pin.c_str();
    o.pin_mode = TUNEDB_PIN_RECORD;
    o.pin_driver_version = 13000;
    o.job_id = "job-7";
    tunedb_client_t* client = nullptr;
    ASSERT_EQ(tunedb_client_create(&o, &client), TUNEDB_OK);
    tunedb_answer_t a;
    ASSERT_EQ(tunedb_get(client, &p, nullptr, &a), TUNEDB_OK);
    EXPECT_EQ(a.source, TUNEDB_SOURCE_DAEMON);
    EXPECT_EQ(daemon.service().last_job(), "job-7");
    tunedb_client_destroy(client);  // writes the pin
  }
  const std::string absent = "unix:" + dir.File("absent.sock");
  tunedb_options_t o;
  tunedb_options_init(&o);
  o.address = absent.c_str();
  o.pin_path = pin.c_str();
  o.pin_mode = TUNEDB_PIN_FOLLOW;
  o.pin_driver_version = 13000;
  tunedb_client_t* client = nullptr;
  ASSERT_EQ(tunedb_client_create(&o, &client), TUNEDB_OK);
  tunedb_answer_t a;
  ASSERT_EQ(tunedb_get(client, &p, nullptr, &a), TUNEDB_OK);
  EXPECT_EQ(a.source, TUNEDB_SOURCE_PINNED);
  EXPECT_EQ(a.algo, 6);
  EXPECT_EQ(a.workspace_bytes, 2048);
  tunedb_client_destroy(client);
}

TEST(TunedbCTest, ABadPinModeOrJobIdIsRefused) {
  tunedb_options_t o;
  tunedb_options_init(&o);
  EXPECT_EQ(o.pin_mode, TUNEDB_PIN_OFF);
  EXPECT_EQ(o.job_id, nullptr);
  tunedb_client_t* client = nullptr;
  o.pin_mode = 7;
  EXPECT_EQ(tunedb_client_create(&o, &client), TUNEDB_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(tunedb_last_error()).find("pin_mode"), std::string::npos);
  o.pin_mode = TUNEDB_PIN_FOLLOW;  // without a path
  EXPECT_EQ(tunedb_client_create(&o, &client), TUNEDB_ERROR_INVALID_ARGUMENT);
  o.pin_mode = TUNEDB_PIN_OFF;
  o.job_id = "a job\nwith a newline";
  EXPECT_EQ(tunedb_client_create(&o, &client), TUNEDB_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(client, nullptr);
}

TEST(TunedbCTest, AProgramReachesTheDaemonAndAnInvalidOneIsRefused) {
  TempDir dir;
  FakeDaemon daemon(dir.File("c.sock"));
  daemon.service().Put(testing_util::TestKey(8), {OkResult(6)});
  tunedb_problem_t p;
  FillProblem(&p, 8);
  tunedb_options_t o;
  tunedb_options_init(&o);
  EXPECT_EQ(o.program, nullptr);
  EXPECT_EQ(o.warm_at_start, 1);
  const std::string address = daemon.address();
  o.address = address.c_str();
  tunedb_client_t* client = nullptr;
  o.program = "a program";
  EXPECT_EQ(tunedb_client_create(&o, &client), TUNEDB_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(tunedb_last_error()).find("program"),
            std::string::npos);
  // A caller built before the program passes a struct that ends before it.
  o.struct_size = offsetof(tunedb_options_t, program);
  ASSERT_EQ(tunedb_client_create(&o, &client), TUNEDB_OK);
  tunedb_client_destroy(client);
  o.struct_size = sizeof(o);
  o.program = "train-1";
  ASSERT_EQ(tunedb_client_create(&o, &client), TUNEDB_OK);
  tunedb_answer_t a;
  ASSERT_EQ(tunedb_get(client, &p, nullptr, &a), TUNEDB_OK);
  EXPECT_EQ(a.source, TUNEDB_SOURCE_DAEMON);
  EXPECT_EQ(daemon.service().last_program(), "train-1");
  tunedb_client_destroy(client);
}

TEST(TunedbCTest, ErrorsAreReported) {
  tunedb_client_t* client = nullptr;
  EXPECT_EQ(tunedb_client_create(nullptr, &client),
            TUNEDB_ERROR_INVALID_ARGUMENT);
  EXPECT_STRNE(tunedb_last_error(), "");

  tunedb_options_t o;
  tunedb_options_init(&o);
  o.miss_policy = 17;
  EXPECT_EQ(tunedb_client_create(&o, &client), TUNEDB_ERROR_INVALID_ARGUMENT);
  o.miss_policy = TUNEDB_MISS_CACHE_ONLY;
  o.struct_size = 8;
  EXPECT_EQ(tunedb_client_create(&o, &client), TUNEDB_ERROR_INVALID_ARGUMENT);
  tunedb_options_init(&o);
  o.miss_policy = TUNEDB_MISS_CACHE_ONLY;
  ASSERT_EQ(tunedb_client_create(&o, &client), TUNEDB_OK);

  tunedb_problem_t p;
  FillProblem(&p, 1);
  p.spatial_dims = 7;
  tunedb_answer_t a;
  EXPECT_EQ(tunedb_get(client, &p, nullptr, &a), TUNEDB_ERROR_INVALID_ARGUMENT);
  FillProblem(&p, 1);
  p.groups = 5;  // 64 channels are not a multiple of 5 groups
  EXPECT_EQ(tunedb_get(client, &p, nullptr, &a), TUNEDB_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(tunedb_last_error()).find("group"), std::string::npos)
      << tunedb_last_error();
  EXPECT_EQ(tunedb_get(client, nullptr, nullptr, &a),
            TUNEDB_ERROR_INVALID_ARGUMENT);
  FillProblem(&p, 1);
  ASSERT_EQ(tunedb_get(client, &p, nullptr, &a), TUNEDB_OK);
  EXPECT_EQ(a.source, TUNEDB_SOURCE_NONE);
  tunedb_client_destroy(client);
  tunedb_client_destroy(nullptr);
}

}  // namespace
}  // namespace tunedb
