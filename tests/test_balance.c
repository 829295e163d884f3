/* The self-adaptive routine on simulated platforms, where the optimum is
 * known: the seed-002 desktop converges like the paper's (at most 4
 * iterations, within 1% of the optimum), and with 3% timing noise within 8
 * iterations and within 5% of it for each of 100 noise seeds. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mlsba.h"
#include "support/run_suite.h"

#define SEED002 MLSBA_SOURCE_DIR "/models/sim/desktop-seed002.json"

/* The seed-002 desktop with every device's noise and seed set, and the
 * speeds of the device named scaled (NULL: none). */
static mlsba_platform_t *desktop_scaled(double noise, int seed,
                                        const char *scaled, double factor) {
  json_error_t e;
  json_t *root = json_load_file(SEED002, 0, &e);
  ck_assert_ptr_nonnull(root);
  size_t i, k;
  json_t *d, *pt;
  json_array_foreach(json_object_get(root, "devices"), i, d) {
    json_object_set_new(d, "noise", json_real(noise));
    json_object_set_new(d, "seed", json_integer(seed * 16 + (int)i));
    if (scaled == NULL ||
        strcmp(json_string_value(json_object_get(d, "name")), scaled) != 0)
      continue;
    json_array_foreach(json_object_get(d, "speed"), k, pt) {
      double v = json_number_value(json_array_get(pt, 1));
      json_array_set_new(pt, 1, json_real(factor * v));
    }
  }
  char *text = json_dumps(root, 0);
  mlsba_platform_t *pl = NULL;
  ck_assert_int_eq(mlsba_platform_parse(text, "desktop", &pl), 0);
  free(text);
  json_decref(root);
  return pl;
}

static mlsba_platform_t *desktop(double noise, int seed) {
  return desktop_scaled(noise, seed, NULL, 1);
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

/* Over 100 noise seeds, with kinds pooled (the default): every run
 * converges within 8 iterations and within 5% of the optimum, the issue's
 * target (measured: at most 7 iterations, mean 3.96, worst 4.8%;
 * benchmarks/RESULTS.md). Each device on its own (MLSBA_KINDS_SEPARATE)
 * misses it for a few seeds: every run within 8 iterations and 7%, at
 * least 93 of them within 5% (measured 96, the worst 5.5%). */
static void noisy_desktop(mlsba_kinds_t kinds, int *within5, double *worst) {
  *within5 = 0;
  *worst = 0;
  for (int seed = 1; seed <= 100; seed++) {
    mlsba_platform_t *pl = desktop(0.03, seed);
    mlsba_executor_t *ex = NULL;
    ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
    mlsba_balance_opts_t o;
    mlsba_balance_opts_init(&o);
    o.kinds = kinds;
    mlsba_balance_result_t r;
    ck_assert_int_eq(mlsba_balance_gemm(ex, &product, &o, &r), 0);
    double ratio = true_makespan(pl, r.load) / optimum(pl);
    ck_assert_msg(r.converged && r.iterations <= 8,
                  "kinds %d, seed %d: %u iterations, stop %d", (int)kinds, seed,
                  r.iterations, (int)r.stop);
    ck_assert_msg(r.stop != MLSBA_STOP_BALANCED || r.imbalance <= o.eps,
                  "kinds %d, seed %d: balanced at imbalance %.4f", (int)kinds,
                  seed, r.imbalance);
    *within5 += ratio <= 1.05;
    *worst = ratio > *worst ? ratio : *worst;
    mlsba_balance_result_free(&r);
    mlsba_executor_destroy(ex);
    mlsba_platform_destroy(pl);
  }
}

START_TEST(three_percent_noise_converges_within_8_and_5_percent) {
  int within5;
  double worst;
  noisy_desktop(MLSBA_KINDS_POOL, &within5, &worst);
  ck_assert_msg(within5 == 100, "%d of 100 within 5%%, worst %.4f", within5,
                worst);
  noisy_desktop(MLSBA_KINDS_SEPARATE, &within5, &worst);
  ck_assert_msg(within5 >= 93 && worst <= 1.07,
                "separate: %d of 100 within 5%%, worst %.4f", within5, worst);
}
END_TEST

static int apart_lines;
static void count_apart(void *ctx, const char *line) {
  (void)ctx;
  apart_lines += strstr(line, "apart from its kind") != NULL;
}

/* core3 30% slower than the other cores of its kind: its runs stand
 * apart, it is modelled from its own, and the routine ends as close to
 * the optimum as on the true desktop. */
START_TEST(a_device_unlike_its_kind_is_modelled_apart) {
  int within5 = 0;
  for (int seed = 1; seed <= 20; seed++) {
    mlsba_platform_t *pl = desktop_scaled(0.03, seed, "core3", 0.7);
    mlsba_executor_t *ex = NULL;
    ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
    mlsba_balance_opts_t o;
    mlsba_balance_opts_init(&o);
    o.log = count_apart;
    apart_lines = 0;
    mlsba_balance_result_t r;
    ck_assert_int_eq(mlsba_balance_gemm(ex, &product, &o, &r), 0);
    double ratio = true_makespan(pl, r.load) / optimum(pl);
    ck_assert_msg(r.converged && r.iterations <= 8 && ratio <= 1.07,
                  "seed %d: %u iterations, %.4f of the optimum", seed,
                  r.iterations, ratio);
    ck_assert_int_ge(apart_lines, 1);
    /* It gets about 0.7 of another core's load. */
    double share = (double)r.load[5] / (double)r.load[4];
    ck_assert_msg(share > 0.6 && share < 0.8, "seed %d: core3 / core2 %.3f",
                  seed, share);
    within5 += ratio <= 1.05;
    mlsba_balance_result_free(&r);
    mlsba_executor_destroy(ex);
    mlsba_platform_destroy(pl);
  }
  ck_assert_int_ge(within5, 19);
}
END_TEST

static char noise_line[512];
static void keep_noise_line(void *ctx, const char *line) {
  (void)ctx;
  if (strstr(line, "from run to run") != NULL)
    snprintf(noise_line, sizeof noise_line, "%s", line);
}

/* Balances the product on pl in at most max_iter runs, keeping the log's
 * line on the noise in noise_line; how the routine stopped. */
static mlsba_stop_reason_t balance_noting_noise(const mlsba_platform_t *pl,
                                                unsigned max_iter) {
  mlsba_executor_t *ex = NULL;
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
  mlsba_balance_opts_t o;
  mlsba_balance_opts_init(&o);
  o.max_iter = max_iter;
  o.log = keep_noise_line;
  noise_line[0] = '\0';
  mlsba_balance_result_t r;
  ck_assert_int_eq(mlsba_balance_gemm(ex, &product, &o, &r), 0);
  mlsba_stop_reason_t stop = r.stop;
  mlsba_balance_result_free(&r);
  mlsba_executor_destroy(ex);
  return stop;
}

/* Two sim devices a (1000 units/s) and b, whose times vary by 20% from
 * run to run; of one kind when kind is not NULL. */
static mlsba_platform_t *noisy_pair(int seed, const char *kind, int speed_b) {
  char text[512], k[64] = "";
  if (kind)
    snprintf(k, sizeof k, "\"kind\": \"%s\", ", kind);
  snprintf(text, sizeof text,
           "{\"devices\": [{\"name\": \"a\", \"type\": \"sim\", %s"
           "\"speed\": [[1, 1000]], \"noise\": 0.2, \"seed\": %d}, "
           "{\"name\": \"b\", \"type\": \"sim\", %s\"speed\": [[1, "
           "%d]], \"noise\": 0.2, \"seed\": %d}]}",
           k, 2 * seed, k, speed_b, 2 * seed + 1);
  mlsba_platform_t *pl = NULL;
  ck_assert_int_eq(mlsba_platform_parse(text, "noisy", &pl), 0);
  return pl;
}

/* Two devices of different kinds whose times vary by 20% from run to run
 * cannot be known within eps/2 in six runs: the routine says so after
 * max_iter, naming the noise it measured and the runs a point needs. A
 * quiet platform stopped by max_iter gets no such line. */
START_TEST(max_iter_under_noise_says_why) {
  for (int seed = 1; seed <= 5; seed++) {
    mlsba_platform_t *pl = noisy_pair(seed, NULL, 2000);
    ck_assert_int_eq(balance_noting_noise(pl, 6), MLSBA_STOP_MAX_ITER);
    double percent = 0;
    unsigned runs = 0;
    const char *at = strstr(noise_line, "vary by ");
    ck_assert_msg(at != NULL, "seed %d: no line on the noise", seed);
    ck_assert_int_eq(sscanf(at, "vary by %lf%%", &percent), 1);
    ck_assert_msg(percent > 8 && percent < 40, "seed %d: %s", seed, noise_line);
    at = strstr(noise_line, "after about ");
    ck_assert_ptr_nonnull(at);
    ck_assert_int_eq(sscanf(at, "after about %u runs", &runs), 1);
    ck_assert_uint_ge(runs, 10);
    mlsba_platform_destroy(pl);
  }
  mlsba_platform_t *pl = desktop(0, 1);
  ck_assert_int_eq(balance_noting_noise(pl, 2), MLSBA_STOP_MAX_ITER);
  ck_assert_str_eq(noise_line, "");
  mlsba_platform_destroy(pl);
  ck_assert_str_eq(mlsba_stop_reason_name(MLSBA_STOP_MAX_ITER), "max-iter");
  ck_assert_str_eq(mlsba_stop_reason_name(MLSBA_STOP_FIXED_POINT),
                   "fixed-point");
  ck_assert_ptr_null(mlsba_stop_reason_name((mlsba_stop_reason_t)9));
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
  mlsba_platform_t *slow = desktop_scaled(0, 1, "gpu0", 1.0 / 3);
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

static char save_line[512];
static void keep_save_line(void *ctx, const char *line) {
  (void)ctx;
  if (strstr(line, "not saved") || strstr(line, "stale"))
    snprintf(save_line, sizeof save_line, "%s", line);
}

/* The model folder follows the tools' rule: made when only it is missing,
 * refused before any run when its parent is missing (naming the folder);
 * a save that fails names the folder, not a temporary file. */
START_TEST(the_model_folder_is_made_or_refused_by_name) {
  char dir[] = "/tmp/mlsba-modeldir-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char made[128], chain[128], file[128];
  snprintf(made, sizeof made, "%s/models", dir);
  snprintf(chain, sizeof chain, "%s/no/such/models", dir);
  mlsba_platform_t *pl = desktop(0, 1);
  mlsba_executor_t *ex = NULL;
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
  mlsba_balance_opts_t o;
  mlsba_balance_opts_init(&o);
  o.log = keep_save_line;
  mlsba_balance_result_t r;
  o.model_dir = chain;
  ck_assert_int_eq(mlsba_balance_gemm(ex, &product, &o, &r), MLSBA_EIO);
  ck_assert_msg(strstr(mlsba_last_error(), chain) &&
                    strstr(mlsba_last_error(), "parent folder does not exist"),
                "%s", mlsba_last_error());
  snprintf(file, sizeof file, "%s/no", dir);
  ck_assert_int_ne(access(file, F_OK), 0); /* no chain of folders */
  o.model_dir = made;
  ck_assert_int_eq(mlsba_balance_gemm(ex, &product, &o, &r), 0);
  ck_assert_int_eq(r.save_error, 0);
  mlsba_balance_result_free(&r);
  /* A folder that cannot be written (a file in the way of every model):
   * the balancing stands, the log names the folder. */
  char cmd[320];
  snprintf(cmd, sizeof cmd,
           "for f in %s/*.model; do rm $f; mkdir $f; touch $f/x; done", made);
  ck_assert_int_eq(system(cmd), 0);
  save_line[0] = '\0';
  ck_assert_int_eq(mlsba_balance_gemm(ex, &product, &o, &r), 0);
  ck_assert_int_ne(r.save_error, 0);
  ck_assert_msg(strstr(save_line, "models not saved in '") &&
                    strstr(save_line, made) && !strstr(save_line, ".tmp."),
                "%s", save_line);
  mlsba_balance_result_free(&r);
  /* A file where the folder should be. */
  o.model_dir = cmd;
  snprintf(cmd, sizeof cmd, "%s/file", dir);
  FILE *f = fopen(cmd, "w");
  ck_assert_ptr_nonnull(f);
  fclose(f);
  ck_assert_int_eq(mlsba_balance_gemm(ex, &product, &o, &r), MLSBA_EIO);
  ck_assert_msg(strstr(mlsba_last_error(), "not a folder"), "%s",
                mlsba_last_error());
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* Only a run within eps is called balanced: a result and its sentence
 * say "balanced" only within eps, and "not balanced" otherwise, with the
 * run-to-run variation when that is why. 1 for a stop above eps that the
 * noise explains. */
static int check_honest_stop(const mlsba_balance_result_t *r) {
  char how[512];
  ck_assert_int_eq(mlsba_balance_result_describe(r, how, sizeof how), 0);
  ck_assert_double_eq(r->eps, 0.05);
  if (r->stop == MLSBA_STOP_BALANCED) {
    ck_assert_msg(strncmp(how, "balanced in ", 12) == 0, "%s", how);
    /* Balanced means within eps over all devices, as reported. */
    ck_assert_msg(r->imbalance <= r->eps, "%s", how);
    return 0;
  }
  ck_assert_msg(strncmp(how, "not balanced", 12) == 0, "%s", how);
  if (r->imbalance <= r->eps || r->variation <= r->eps / 2)
    return 0;
  ck_assert_msg(strstr(how, "from run to run") != NULL, "%s", how);
  return 1;
}

/* Two devices of one kind with 20% timing noise: their runs are pooled
 * into one model, so the even split is known at once (no number of runs
 * could move it), where separate models would chase the noise. That stop
 * is a fixed point, often above eps: the result says so, and why. */
START_TEST(one_kind_under_heavy_noise_splits_evenly_at_once) {
  int noisy_stops = 0;
  for (int seed = 1; seed <= 20; seed++) {
    mlsba_platform_t *pl = noisy_pair(seed, "core", 1000);
    mlsba_executor_t *ex = NULL;
    ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
    mlsba_balance_result_t r;
    ck_assert_int_eq(mlsba_balance_gemm(ex, &product, NULL, &r), 0);
    ck_assert_msg(r.converged && r.iterations <= 2,
                  "seed %d: stop %d after %u runs", seed, (int)r.stop,
                  r.iterations);
    ck_assert_int_eq(r.load[0], 4200);
    ck_assert_int_eq(r.load[1], 4200);
    noisy_stops += check_honest_stop(&r);
    mlsba_balance_result_free(&r);
    mlsba_executor_destroy(ex);
    mlsba_platform_destroy(pl);
  }
  ck_assert_int_gt(noisy_stops, 0);
}
END_TEST

/* The noiseless desktop is balanced, and its sentence says so. */
START_TEST(a_balanced_run_says_so) {
  mlsba_platform_t *pl = desktop(0, 1);
  mlsba_executor_t *ex = NULL;
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
  mlsba_balance_result_t r;
  ck_assert_int_eq(mlsba_balance_gemm(ex, &product, NULL, &r), 0);
  ck_assert_int_eq(r.stop, MLSBA_STOP_BALANCED);
  check_honest_stop(&r);
  char how[512];
  ck_assert_int_eq(mlsba_balance_result_describe(&r, how, sizeof how), 0);
  ck_assert_msg(strncmp(how, "balanced in 3 runs", 18) == 0, "%s", how);
  ck_assert_double_lt(r.variation, r.eps / 2); /* no noise to speak of */
  mlsba_balance_result_free(&r);
  ck_assert_int_eq(mlsba_balance_result_describe(NULL, how, sizeof how),
                   MLSBA_EINVAL);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

/* An imbalance just under eps never reads as eps (4.96% is not "5.0%"),
 * one just over never reads as eps either; the sentence agrees. */
START_TEST(an_imbalance_near_eps_reads_on_its_side) {
  ck_assert_double_eq(mlsba_imbalance_percent(0.0496, 0.05), 4.9);
  ck_assert_double_eq(mlsba_imbalance_percent(0.05, 0.05), 5.0);
  ck_assert_double_eq(mlsba_imbalance_percent(0.0504, 0.05), 5.1);
  ck_assert_double_eq(mlsba_imbalance_percent(0.123, 0.05), 12.3);
  ck_assert_double_eq(mlsba_imbalance_percent(0.1236, 0.05), 12.4);
  ck_assert_double_eq(mlsba_imbalance_percent(0.0123, 0.05), 1.2);
  ck_assert_double_eq(mlsba_imbalance_percent(0.0, 0.05), 0.0);
  int64_t load[2] = {1, 1};
  double time[2] = {1, 1};
  mlsba_balance_result_t r = {.p = 2,
                              .load = load,
                              .time = time,
                              .stop = MLSBA_STOP_BALANCED,
                              .iterations = 4,
                              .eps = 0.05,
                              .imbalance = 0.04996};
  char how[512];
  ck_assert_int_eq(mlsba_balance_result_describe(&r, how, sizeof how), 0);
  ck_assert_msg(strstr(how, "imbalance 4.9%") != NULL, "%s", how);
  r.stop = MLSBA_STOP_MAX_ITER;
  r.imbalance = 0.05004;
  ck_assert_int_eq(mlsba_balance_result_describe(&r, how, sizeof how), 0);
  ck_assert_msg(strstr(how, "imbalance 5.1% (eps 5%)") != NULL, "%s", how);
}
END_TEST

static Suite *balance_suite(void) {
  Suite *s = suite_create("balance");
  TCase *tc = tcase_create("sim");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, noiseless_desktop_converges_like_the_paper);
  tcase_add_test(tc, three_percent_noise_converges_within_8_and_5_percent);
  tcase_add_test(tc, a_device_unlike_its_kind_is_modelled_apart);
  tcase_add_test(tc, one_kind_under_heavy_noise_splits_evenly_at_once);
  tcase_add_test(tc, max_iter_under_noise_says_why);
  tcase_add_test(tc, a_balanced_run_says_so);
  tcase_add_test(tc, an_imbalance_near_eps_reads_on_its_side);
  tcase_add_test(tc, every_algorithm_runs_and_reports_honestly);
  tcase_add_test(tc, devoted_cores_get_no_work_and_limits_are_checked);
  tcase_add_test(tc, warm_start_and_stale_models);
  tcase_add_test(tc, the_model_folder_is_made_or_refused_by_name);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(balance_suite()); }
