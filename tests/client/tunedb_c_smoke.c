/* The C API compiled as C: every type and function of tunedb_c.h used from
 * a C translation unit, without a daemon. Exits non-zero on failure. */
#include <stdio.h>
#include <string.h>

#include "tunedb/tunedb_c.h"

static int Guess(void* user, const tunedb_problem_t* p,
                 const tunedb_constraints_t* c, int32_t* algo,
                 int32_t* math_type, int64_t* workspace_bytes) {
  (void)user;
  (void)c;
  *algo = (int32_t)(p->k % 8);
  *math_type = TUNEDB_MATH_DEFAULT;
  *workspace_bytes = 0;
  return 1;
}

int main(void) {
  tunedb_options_t options;
  tunedb_client_t* client = NULL;
  tunedb_problem_t p;
  tunedb_answer_t a;
  tunedb_stats_t s;
  tunedb_options_init(&options);
  options.address = "unix:/nonexistent/tunedb-c-smoke.sock";
  options.heuristic = Guess;
  if (tunedb_client_create(&options, &client) != TUNEDB_OK) {
    fprintf(stderr, "create: %s\n", tunedb_last_error());
    return 1;
  }
  tunedb_problem_init(&p);
  p.gpu_model = "Simulated GPU";
  p.cc_major = 9;
  p.sm_count = 132;
  p.cudnn_version = 91900;
  p.cuda_runtime_version = 13000;
  p.n = 2;
  p.c = 16;
  p.k = 35;
  p.input[0] = p.input[1] = 12;
  p.filter[0] = p.filter[1] = 3;
  if (tunedb_get(client, &p, NULL, &a) != TUNEDB_OK ||
      a.source != TUNEDB_SOURCE_HEURISTIC || a.algo != 3) {
    fprintf(stderr, "get: source %d algo %d (%s)\n", a.source, a.algo,
            tunedb_last_error());
    return 1;
  }
  if (tunedb_client_stats(client, &s) != TUNEDB_OK || s.gets != 1 ||
      s.fallbacks != 1) {
    fprintf(stderr, "stats: gets %lld fallbacks %lld\n", (long long)s.gets,
            (long long)s.fallbacks);
    return 1;
  }
  tunedb_client_destroy(client);
  printf("tunedb C API from C: ok\n");
  return 0;
}
