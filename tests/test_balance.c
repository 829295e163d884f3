/* The self-adaptive routine on simulated platforms, where the optimum is
 * known: the seed-002 desktop converges like the paper's (at most 4
 * iterations, within 1% of the optimum), and with 3% timing noise within 8
 * iterations, and within 5% of it for all but a few of 100 noise seeds. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlsba.h"
#include "support/run_suite.h"

#define SEED002 MLSBA_SOURCE_DIR "/models/sim/desktop-seed002.json"

/* The seed-002 desktop with every device's noise and seed set. */
static mlsba_platform_t *desktop(double noise, int seed) {
  json_error_t e;
  json_t *root = json_load_file(SEED002, 0, &e);
  ck_assert_ptr_nonnull(root);
  size_t i;
  json_t *d;
  json_array_foreach(json_object_get(root, "devices"), i, d) {
    json_object_set_new(d, "noise", json_real(noise));
    json_object_set_new(d, "seed", json_integer(seed * 16 + (int)i));
  }
  char *text = json_dumps(root, 0);
  mlsba_platform_t *pl = NULL;
  ck_assert_int_eq(mlsba_platform_parse(text, "desktop", &pl), 0);
  free(text);
  json_decref(root);
  return pl;
}

/* The optimum of the noiseless models, and the true makespan of loads. */
static double optimum(const mlsba_platform_t *pl) {
  const mlsba_model_t *m[6];
  size_t size[4];
  int64_t alpha[4], beta[6];
  mlsba_partition_info_t info;
  ck_assert_int_eq(mlsba_platform_grouped_models(pl, m, size), 0);
  ck_assert_int_eq(mlsba_partition_groups(MLSBA_ALGO_SLBA, m, size, 4, 8400,
                                          NULL, alpha, beta, NULL, &info),
                   0);
  return info.makespan;
}

static double true_makespan(const mlsba_platform_t *pl, const int64_t *load) {
  double worst = 0, t;
  for (size_t j = 0; j < mlsba_platform_num_devices(pl); j++) {
    ck_assert_int_eq(mlsba_model_time(mlsba_platform_device_model(pl, j),
                                      (double)load[j], &t),
                     0);
    worst = t > worst ? t : worst;
  }
  return worst;
}

/* Simulated devices compute nothing: the matrices are never read. */
static float dummy;
static const mlsba_gemm_t product = {
    .m = 1, .n = 8400, .k = 1, .a = &dummy, .b = &dummy, .c = &dummy};

static unsigned calls;
static void count_calls(void *ctx, const mlsba_iteration_t *it) {
  (void)ctx;
  ck_assert_uint_eq(it->iteration, ++calls);
}

START_TEST(noiseless_desktop_converges_like_the_paper) {
  mlsba_platform_t *pl = desktop(0, 1);
  mlsba_executor_t *ex = NULL;
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
  mlsba_balance_opts_t o;
  mlsba_balance_opts_init(&o);
  o.progress = count_calls;
  calls = 0;
  mlsba_balance_result_t r;
  ck_assert_msg(mlsba_balance_gemm(ex, &product, &o, &r) == 0, "%s",
                mlsba_last_error());
  ck_assert(r.converged);
  ck_assert_uint_le(r.iterations, 4);
  ck_assert_uint_eq(calls, r.iterations);
  double best = optimum(pl), got = true_makespan(pl, r.load);
  ck_assert_msg(got <= 1.01 * best, "makespan %g, optimum %g", got, best);
  /* The first run is N/P per device. */
  for (size_t j = 0; j < 6; j++)
    ck_assert_int_eq(r.history_load[j], 1400);
  int64_t sum = 0;
  for (size_t gi = 0; gi < 4; gi++)
    sum += r.alpha[gi];
  ck_assert_int_eq(sum, 8400);
  ck_assert_uint_ge(r.points[0], 1);
  mlsba_balance_result_free(&r);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

/* Over 100 noise seeds: every run converges within 8 iterations and 7% of
 * the optimum, and at least 93 of them within 5% (measured: 100 within 8
 * iterations, 95 within 5%, the worst 6.1%; benchmarks/RESULTS.md). */
START_TEST(three_percent_noise_converges_within_8_and_5_percent) {
  int within5 = 0, trials = 100;
  for (int seed = 1; seed <= trials; seed++) {
    mlsba_platform_t *pl = desktop(0.03, seed);
    mlsba_executor_t *ex = NULL;
    ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
    mlsba_balance_result_t r;
    ck_assert_int_eq(mlsba_balance_gemm(ex, &product, NULL, &r), 0);
    double best = optimum(pl), got = true_makespan(pl, r.load);
    ck_assert_msg(r.converged && r.iterations <= 8,
                  "seed %d: %u iterations, stop %d", seed, r.iterations,
                  (int)r.stop);
    ck_assert_msg(got <= 1.07 * best, "seed %d: makespan %g, optimum %g", seed,
                  got, best);
    within5 += got <= 1.05 * best;
    mlsba_balance_result_free(&r);
    mlsba_executor_destroy(ex);
    mlsba_platform_destroy(pl);
  }
  ck_assert_int_ge(within5, 93);
}
END_TEST

START_TEST(every_algorithm_runs_and_reports_honestly) {
  mlsba_platform_t *pl = desktop(0, 1);
  mlsba_executor_t *ex = NULL;
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
  double best = optimum(pl);
  for (int a = 0; a < MLSBA_ALGO_COUNT; a++) {
    mlsba_balance_opts_t o;
    mlsba_balance_opts_init(&o);
    o.algorithm = (mlsba_algorithm_t)a;
    o.max_iter = 8;
    mlsba_balance_result_t r;
    ck_assert_int_eq(mlsba_balance_gemm(ex, &product, &o, &r), 0);
    ck_assert_uint_le(r.iterations, 8);
    /* Converged means balanced or stuck at a fixed point; otherwise the
     * stop reason says why not. */
    ck_assert_int_eq(r.converged, r.stop == MLSBA_STOP_BALANCED ||
                                      r.stop == MLSBA_STOP_FIXED_POINT);
    ck_assert_double_ge(true_makespan(pl, r.load), best * (1 - 1e-12));
    mlsba_balance_result_free(&r);
  }
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

START_TEST(devoted_cores_get_no_work_and_limits_are_checked) {
  mlsba_platform_t *pl = desktop(0, 1);
  mlsba_executor_t *ex = NULL;
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
  mlsba_balance_opts_t o;
  mlsba_balance_opts_init(&o);
  o.drive = MLSBA_DRIVE_DEVOTED;
  o.algorithm = MLSBA_ALGO_SLBA;
  mlsba_balance_result_t r;
  ck_assert_int_eq(mlsba_balance_gemm(ex, &product, &o, &r), 0);
  ck_assert_int_eq(r.load[0], 0); /* core0 drives gpu0 */
  ck_assert_int_eq(r.load[2], 0); /* core1 drives gpu1 */
  ck_assert(r.converged);
  double devoted = true_makespan(pl, r.load);
  mlsba_balance_result_free(&r);
  ck_assert_int_eq(mlsba_balance_gemm(ex, &product, NULL, &r), 0);
  ck_assert_double_lt(true_makespan(pl, r.load), devoted);
  mlsba_balance_result_free(&r);
  o.max_iter = 1;
  o.drive = MLSBA_DRIVE_SHARED;
  ck_assert_int_eq(mlsba_balance_gemm(ex, &product, &o, &r), 0);
  ck_assert(!r.converged);
  ck_assert_int_eq(r.stop, MLSBA_STOP_MAX_ITER);
  mlsba_balance_result_free(&r);
  o.eps = -1;
  ck_assert_int_eq(mlsba_balance_gemm(ex, &product, &o, &r), MLSBA_EINVAL);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);

  ck_assert_int_eq(
      mlsba_platform_parse("{\"devices\": [{\"name\": \"small\", \"type\": "
                           "\"sim\", \"speed\": [[1, 10]], \"max_load\": 10}]}",
                           "small", &pl),
      0);
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
  ck_assert_int_eq(mlsba_balance_gemm(ex, &product, NULL, &r), MLSBA_ECAPACITY);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

/* A second identical run starts from the models the first one saved and
 * converges in at most 2 iterations; when a device gets slower, its stored
 * model is found stale and the run still converges. */
START_TEST(warm_start_and_stale_models) {
  char dir[] = "/tmp/mlsba-models-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  for (int noisy = 0; noisy < 2; noisy++) {
    mlsba_platform_t *pl = desktop(noisy ? 0.03 : 0, 3);
    mlsba_executor_t *ex = NULL;
    ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
    mlsba_balance_opts_t o;
    mlsba_balance_opts_init(&o);
    o.model_dir = dir;
    mlsba_balance_result_t cold, warm;
    ck_assert_int_eq(mlsba_balance_gemm(ex, &product, &o, &cold), 0);
    ck_assert_int_eq(cold.save_error, 0);
    ck_assert_int_eq(mlsba_balance_gemm(ex, &product, &o, &warm), 0);
    ck_assert_uint_eq(warm.warm, 6);
    ck_assert_uint_eq(warm.stale, 0);
    ck_assert_msg(warm.converged && warm.iterations <= 2,
                  "noisy %d: warm start took %u iterations", noisy,
                  warm.iterations);
    ck_assert_double_le(true_makespan(pl, warm.load), 1.05 * optimum(pl));
    mlsba_balance_result_free(&cold);
    mlsba_balance_result_free(&warm);
    mlsba_executor_destroy(ex);
    mlsba_platform_destroy(pl);
  }
  /* GPU0 three times slower than its stored model says. */
  json_error_t e;
  json_t *root = json_load_file(SEED002, 0, &e);
  json_t *speed = json_object_get(
      json_array_get(json_object_get(root, "devices"), 1), "speed");
  size_t i;
  json_t *pt;
  json_array_foreach(speed, i, pt) {
    json_array_set_new(pt, 1,
                       json_real(json_number_value(json_array_get(pt, 1)) / 3));
  }
  char *text = json_dumps(root, 0);
  mlsba_platform_t *slow = NULL;
  ck_assert_int_eq(mlsba_platform_parse(text, "slow", &slow), 0);
  free(text);
  json_decref(root);
  mlsba_executor_t *ex = NULL;
  ck_assert_int_eq(mlsba_executor_create(slow, &ex), 0);
  mlsba_balance_opts_t o;
  mlsba_balance_opts_init(&o);
  o.model_dir = dir;
  mlsba_balance_result_t r;
  ck_assert_int_eq(mlsba_balance_gemm(ex, &product, &o, &r), 0);
  ck_assert_uint_ge(r.stale, 1);
  ck_assert_msg(r.converged, "stop %d after %u iterations", (int)r.stop,
                r.iterations);
  ck_assert_double_le(true_makespan(slow, r.load), 1.05 * optimum(slow));
  mlsba_balance_result_free(&r);
  /* A corrupted file is ignored, the run goes on cold. */
  char cmd[256];
  snprintf(cmd, sizeof cmd, "for f in %s/*.model; do echo x >> $f; done", dir);
  ck_assert_int_eq(system(cmd), 0);
  ck_assert_int_eq(mlsba_balance_gemm(ex, &product, &o, &r), 0);
  ck_assert_uint_eq(r.ignored, 6);
  ck_assert_uint_eq(r.warm, 0);
  ck_assert(r.converged);
  mlsba_balance_result_free(&r);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(slow);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static Suite *balance_suite(void) {
  Suite *s = suite_create("balance");
  TCase *tc = tcase_create("sim");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, noiseless_desktop_converges_like_the_paper);
  tcase_add_test(tc, three_percent_noise_converges_within_8_and_5_percent);
  tcase_add_test(tc, every_algorithm_runs_and_reports_honestly);
  tcase_add_test(tc, devoted_cores_get_no_work_and_limits_are_checked);
  tcase_add_test(tc, warm_start_and_stale_models);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(balance_suite()); }
