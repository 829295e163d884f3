/* The divisible-load interface: loads described by the application, run
 * and balanced on real cores (BLIS is not involved: the CPU functions here
 * are the test's own) and on simulated devices; the Mandelbrot load; the
 * run-many balancer with drift and faults; bad input everywhere. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "balance/balance.h"
#include "mlsba.h"
#include "support/run_suite.h"

#define SEED002 MLSBA_SOURCE_DIR "/models/sim/desktop-seed002.json"

/* Two cpu devices on core 0, so the test needs one core only. */
static mlsba_platform_t *two_cores(void) {
  const char *json =
      "{\"devices\": [{\"name\": \"a\", \"type\": \"cpu\", \"core\": 0},"
      "{\"name\": \"b\", \"type\": \"cpu\", \"core\": 0}],"
      "\"groups\": [[\"a\"], [\"b\"]]}";
  mlsba_platform_t *pl = NULL;
  ck_assert_int_eq(mlsba_platform_parse(json, "two-cores", &pl), 0);
  return pl;
}

/* The seed-002 desktop with the fields of `fields` (a JSON object, taken
 * over) added to device `dev`; NULL for the desktop as it is. */
static mlsba_platform_t *desktop_with(const char *dev, json_t *fields) {
  json_error_t e;
  json_t *root = json_load_file(SEED002, 0, &e);
  ck_assert_ptr_nonnull(root);
  size_t i;
  json_t *d;
  json_array_foreach(json_object_get(root, "devices"), i, d) {
    if (dev && strcmp(json_string_value(json_object_get(d, "name")), dev) == 0)
      json_object_update(d, fields);
  }
  json_decref(fields);
  char *text = json_dumps(root, 0);
  mlsba_platform_t *pl = NULL;
  ck_assert_msg(mlsba_platform_parse(text, "desktop", &pl) == 0, "%s",
                mlsba_last_error());
  free(text);
  json_decref(root);
  return pl;
}

/* A user load: unit i stores i * i + 1 and counts its visits. */
typedef struct {
  int64_t n;
  int64_t *out;
  atomic_int *visits;
  atomic_int fail_once; /* the first call covering unit 0 fails */
} squares_t;

static int squares(void *user, int64_t first, int64_t count) {
  squares_t *s = user;
  if (first == 0 && atomic_exchange(&s->fail_once, 0))
    return 42;
  for (int64_t i = first; i < first + count; i++) {
    volatile double spin = 0; /* some work, so times are measurable */
    for (int k = 0; k < 2000; k++)
      spin += k * 1e-9;
    s->out[i] = i * i + 1;
    atomic_fetch_add(&s->visits[i], 1);
  }
  return 0;
}

static squares_t *squares_new(int64_t n) {
  squares_t *s = calloc(1, sizeof *s);
  s->n = n;
  s->out = calloc((size_t)n, sizeof *s->out);
  s->visits = calloc((size_t)n, sizeof *s->visits);
  return s;
}

static void squares_free(squares_t *s) {
  free(s->out);
  free(s->visits);
  free(s);
}

/* Every unit computed, and by the last run exactly once more. */
static void assert_squares(const squares_t *s) {
  for (int64_t i = 0; i < s->n; i++)
    ck_assert_msg(s->out[i] == i * i + 1, "unit %lld not computed",
                  (long long)i);
}

START_TEST(a_user_load_is_balanced_on_cores_and_computed) {
  mlsba_platform_t *pl = two_cores();
  squares_t *s = squares_new(5000);
  mlsba_load_t *w = NULL;
  ck_assert_int_eq(mlsba_load_create("squares", s->n, &w), 0);
  ck_assert_int_eq(mlsba_load_set_cpu(w, squares, s), 0);
  mlsba_balancer_t *b = NULL;
  ck_assert_msg(mlsba_balance_ex(pl, w, NULL, &b) == 0, "%s",
                mlsba_last_error());
  const mlsba_balance_result_t *r = mlsba_balancer_result(b);
  ck_assert_uint_ge(r->iterations, 1);
  ck_assert_int_eq(r->load[0] + r->load[1], s->n);
  assert_squares(s);
  /* Every run covers every unit once: visits grow by exactly one. */
  int before = atomic_load(&s->visits[0]);
  for (int run = 0; run < 3; run++) {
    mlsba_run_info_t info;
    ck_assert_int_eq(mlsba_balancer_run(b, &info), 0);
    ck_assert(info.makespan > 0);
  }
  ck_assert_int_ge(atomic_load(&s->visits[0]), before + 3);
  for (int64_t i = 1; i < s->n; i++)
    ck_assert_int_eq(atomic_load(&s->visits[i]), atomic_load(&s->visits[0]));
  ck_assert_ptr_eq(mlsba_balancer_platform(b), pl);
  mlsba_balancer_destroy(b);
  mlsba_load_destroy(w);
  squares_free(s);
  mlsba_platform_destroy(pl);
}
END_TEST

START_TEST(a_failing_cpu_function_stops_or_drops_the_core) {
  mlsba_platform_t *pl = two_cores();
  for (int mode = 0; mode < 2; mode++) {
    squares_t *s = squares_new(3000);
    atomic_store(&s->fail_once, 1);
    mlsba_load_t *w = NULL;
    ck_assert_int_eq(mlsba_load_create("squares", s->n, &w), 0);
    mlsba_load_set_cpu(w, squares, s);
    mlsba_balance_opts_t o;
    mlsba_balance_opts_init(&o);
    o.on_fault = mode ? MLSBA_ON_FAULT_CONTINUE : MLSBA_ON_FAULT_STOP;
    mlsba_balancer_t *b = NULL;
    int err = mlsba_balance_ex(pl, w, &o, &b);
    if (mode == 0) {
      ck_assert_int_eq(err, MLSBA_EDEVICE);
      ck_assert_ptr_null(b);
      ck_assert_msg(strstr(mlsba_last_error(), "returned 42") &&
                        strstr(mlsba_last_error(), "a:"),
                    "%s", mlsba_last_error());
    } else {
      ck_assert_msg(err == 0, "%s", mlsba_last_error());
      const mlsba_balance_result_t *r = mlsba_balancer_result(b);
      ck_assert_uint_eq(r->lost, 1);
      ck_assert_int_eq(r->dropped[0], MLSBA_DROPPED_FAULT); /* a had unit 0 */
      ck_assert_int_eq(r->load[0], 0);
      ck_assert_int_eq(r->load[1], s->n);
      assert_squares(s);
    }
    mlsba_balancer_destroy(b);
    mlsba_load_destroy(w);
    squares_free(s);
  }
  mlsba_platform_destroy(pl);
}
END_TEST

/* The Mandelbrot load on cores: every pixel as the reference computes it;
 * the unit order is a permutation of the rows. */
START_TEST(mandelbrot_rows_on_cores_match_the_reference) {
  static const int64_t heights[] = {1, 2, 3, 7, 64, 97, 480, 1000};
  for (size_t h = 0; h < sizeof heights / sizeof *heights; h++) {
    mlsba_mandelbrot_t mb = {.width = 37,
                             .height = heights[h],
                             .x0 = -2,
                             .y0 = -1.25,
                             .x1 = 0.75,
                             .y1 = 1.25,
                             .max_iter = 200};
    char *seen = calloc((size_t)mb.height, 1);
    for (int64_t u = 0; u < mb.height; u++) {
      int64_t row = mlsba_mandelbrot_row(&mb, u);
      ck_assert(row >= 0 && row < mb.height && !seen[row]);
      seen[row] = 1;
    }
    free(seen);
  }
  mlsba_platform_t *pl = two_cores();
  mlsba_mandelbrot_t mb = {.width = 256,
                           .height = 300,
                           .x0 = -2,
                           .y0 = -1.25,
                           .x1 = 0.75,
                           .y1 = 1.25,
                           .max_iter = 256};
  mb.out = calloc((size_t)(mb.width * mb.height), sizeof *mb.out);
  for (int64_t i = 0; i < mb.width * mb.height; i++)
    mb.out[i] = -1;
  mlsba_load_t *w = NULL;
  ck_assert_int_eq(mlsba_load_mandelbrot(&mb, &w), 0);
  ck_assert_str_eq(mlsba_load_name(w), "mandelbrot");
  ck_assert_int_eq(mlsba_load_units(w), 300);
  mlsba_balancer_t *b = NULL;
  ck_assert_msg(mlsba_balance_ex(pl, w, NULL, &b) == 0, "%s",
                mlsba_last_error());
  int64_t wrong = -1;
  ck_assert_int_eq(mlsba_mandelbrot_verify(&mb, &wrong), 0);
  ck_assert_int_eq(wrong, 0);
  /* A pixel inside the set reaches max_iter, one far outside escapes. */
  ck_assert_int_eq(mb.out[150 * 256 + 180], 256);
  ck_assert_int_lt(mb.out[0], 5);
  mb.out[5] ^= 1; /* verify sees damage */
  ck_assert_int_eq(mlsba_mandelbrot_verify(&mb, &wrong), 0);
  ck_assert_int_eq(wrong, 1);
  mlsba_balancer_destroy(b);
  mlsba_load_destroy(w);
  free(mb.out);
  mlsba_platform_destroy(pl);
}
END_TEST

/* The optimum makespan of the desktop when device `slow` takes factor
 * times longer. */
static double optimum_slowed(const mlsba_platform_t *pl, size_t slow,
                             double factor) {
  const mlsba_model_t *m[6];
  mlsba_model_t *scaled = NULL;
  size_t size[4];
  int64_t alpha[4], beta[6];
  mlsba_partition_info_t info;
  ck_assert_int_eq(mlsba_platform_grouped_models(pl, m, size), 0);
  const mlsba_model_t *orig = mlsba_platform_device_model(pl, slow);
  ck_assert_int_eq(mlsba_model_clone(orig, &scaled), 0);
  for (size_t i = 0; i < mlsba_model_num_points(orig); i++) {
    double x, s;
    mlsba_model_get_point(orig, i, &x, &s);
    mlsba_model_set_point(scaled, x, s / factor);
  }
  for (size_t k = 0; k < 6; k++)
    if (m[k] == orig)
      m[k] = scaled;
  ck_assert_int_eq(mlsba_partition_groups(MLSBA_ALGO_SLBA, m, size, 4, 8400,
                                          NULL, alpha, beta, NULL, &info),
                   0);
  mlsba_model_destroy(scaled);
  return info.makespan;
}

/* Sim loads compute nothing: any load of 8400 units will do. */
static int nothing(void *user, int64_t first, int64_t count) {
  (void)user;
  (void)first;
  (void)count;
  return 0;
}

static mlsba_load_t *units8400(void) {
  mlsba_load_t *w = NULL;
  ck_assert_int_eq(mlsba_load_create("sim-units", 8400, &w), 0);
  mlsba_load_set_cpu(w, nothing, NULL);
  return w;
}

static size_t device_index(const mlsba_platform_t *pl, const char *name) {
  for (size_t j = 0; j < mlsba_platform_num_devices(pl); j++)
    if (strcmp(mlsba_platform_device_name(pl, j), name) == 0)
      return j;
  ck_abort_msg("no device %s", name);
  return 0;
}

static unsigned log_lines;
static char last_log[512];
static char stale_log[512];
static void count_log(void *user, const char *line) {
  (void)user;
  log_lines++;
  if (strstr(line, "stale"))
    snprintf(stale_log, sizeof stale_log, "%s", line);
  snprintf(last_log, sizeof last_log, "%s", line);
}

START_TEST(a_device_that_slows_down_mid_run_is_rebalanced) {
  /* gpu0 takes 3 times longer from its 8th share on. */
  mlsba_platform_t *pl = desktop_with(
      "gpu0", json_pack("{s:i, s:f}", "slow_at", 8, "slow_factor", 3.0));
  size_t gpu0 = device_index(pl, "gpu0");
  double before = optimum_slowed(pl, gpu0, 1),
         after = optimum_slowed(pl, gpu0, 3);
  mlsba_load_t *w = units8400();
  mlsba_balance_opts_t o;
  mlsba_balance_opts_init(&o);
  o.log = count_log;
  log_lines = 0;
  mlsba_balancer_t *b = NULL;
  ck_assert_int_eq(mlsba_balance_ex(pl, w, &o, &b), 0);
  const mlsba_balance_result_t *r = mlsba_balancer_result(b);
  ck_assert(r->converged);
  ck_assert_uint_gt(log_lines, r->iterations); /* a line per iteration */
  ck_assert_double_le(r->makespan, before * 1.01);
  unsigned shares = r->iterations, rebalanced = 0, run = 0;
  mlsba_run_info_t info = {0};
  for (; run < 12; run++) {
    ck_assert_int_eq(mlsba_balancer_run(b, &info), 0);
    rebalanced += (unsigned)info.rebalanced;
    if (info.rebalanced)
      break;
    ck_assert_uint_eq(info.runs, 1);
  }
  /* The call that re-balanced says what it cost: its own run and the
   * re-balancing's, within the bound (each run may be measured twice). */
  ck_assert_uint_ge(info.runs, 2);
  ck_assert_uint_le(info.runs, 1 + 2 * o.rebalance_max_iter);
  ck_assert_double_gt(info.wall_s, 0);
  ck_assert_double_eq_tol(info.drift, 2 * o.eps, 1e-12); /* no noise */
  /* The slowdown starts at gpu0's 8th share; two drifted runs later the
   * balancer re-balances by itself. */
  ck_assert_uint_eq(rebalanced, 1);
  ck_assert_uint_le(shares + run + 1, 8 + 2);
  ck_assert_msg(strstr(last_log, "sim-units") != NULL, "%s", last_log);
  /* Nothing was saved: a model the re-balancing found stale is the one it
   * learned. */
  ck_assert_msg(strstr(stale_log, "the learned model is stale") != NULL, "%s",
                stale_log);
  for (int k = 0; k < 3; k++)
    ck_assert_int_eq(mlsba_balancer_run(b, &info), 0);
  ck_assert_msg(info.makespan <= after * 1.05, "%g vs optimum %g",
                info.makespan, after);
  ck_assert_int_eq(info.rebalanced, 0);
  ck_assert_uint_eq(info.runs, 1);
  /* On request, too: from the models it has, a run or two. */
  ck_assert_int_eq(mlsba_balancer_rebalance(b), 0);
  ck_assert_uint_le(mlsba_balancer_result(b)->iterations, 2);
  mlsba_balancer_destroy(b);
  mlsba_load_destroy(w);
  mlsba_platform_destroy(pl);
}
END_TEST

/* Every device of the seed-002 desktop with `noise` (seeded: the same
 * runs every time). */
static mlsba_platform_t *noisy_desktop(double noise) {
  json_error_t e;
  json_t *root = json_load_file(SEED002, 0, &e);
  ck_assert_ptr_nonnull(root);
  size_t i;
  json_t *d;
  json_array_foreach(json_object_get(root, "devices"), i, d) {
    json_object_set_new(d, "noise", json_real(noise));
    json_object_set_new(d, "seed", json_integer(7 + (json_int_t)i));
  }
  char *text = json_dumps(root, 0);
  mlsba_platform_t *pl = NULL;
  ck_assert_msg(mlsba_platform_parse(text, "noisy", &pl) == 0, "%s",
                mlsba_last_error());
  free(text);
  json_decref(root);
  return pl;
}

/* Re-balancings over 40 steady runs of a balancer at 10% noise. */
static unsigned rebalancings_at_noise(double drift, double *threshold,
                                      unsigned *most_runs) {
  mlsba_platform_t *pl = noisy_desktop(0.10);
  mlsba_load_t *w = units8400();
  mlsba_balance_opts_t o;
  mlsba_balance_opts_init(&o);
  o.drift = drift;
  mlsba_balancer_t *b = NULL;
  ck_assert_msg(mlsba_balance_ex(pl, w, &o, &b) == 0, "%s", mlsba_last_error());
  unsigned rebalanced = 0;
  *most_runs = 0;
  for (int run = 0; run < 40; run++) {
    mlsba_run_info_t info;
    ck_assert_int_eq(mlsba_balancer_run(b, &info), 0);
    rebalanced += (unsigned)info.rebalanced;
    *most_runs = info.runs > *most_runs ? info.runs : *most_runs;
    *threshold = info.drift;
  }
  mlsba_balancer_destroy(b);
  mlsba_load_destroy(w);
  mlsba_platform_destroy(pl);
  return rebalanced;
}

START_TEST(the_default_drift_threshold_is_above_the_noise) {
  /* At 10% noise a fixed 2 eps (10%) fires on noise alone; the default
   * follows the variation the balancing measured and does not. */
  double fixed, automatic;
  unsigned fixed_runs, auto_runs;
  unsigned by_fixed = rebalancings_at_noise(0.10, &fixed, &fixed_runs);
  unsigned by_auto =
      rebalancings_at_noise(MLSBA_DRIFT_AUTO, &automatic, &auto_runs);
  ck_assert_double_eq_tol(fixed, 0.10, 1e-12);
  ck_assert_double_gt(automatic, 0.10);
  ck_assert_uint_ge(by_fixed, 3);
  ck_assert_uint_le(by_auto, 1);
  /* Each re-balancing stays within its bound of 5 runs (each measured at
   * most twice) plus the steady run. */
  ck_assert_uint_le(fixed_runs, 1 + 2 * 5);
  ck_assert_uint_ge(fixed_runs, 2);
}
END_TEST

START_TEST(the_drift_threshold_follows_the_variation) {
  mlsba_balance_opts_t o;
  mlsba_balance_opts_init(&o);
  ck_assert_double_eq(o.drift, MLSBA_DRIFT_AUTO);
  ck_assert_double_eq_tol(mlsba__bal_drift_threshold(&o, 0), 0.10, 1e-12);
  ck_assert_double_eq_tol(mlsba__bal_drift_threshold(&o, 0.01), 0.10, 1e-12);
  ck_assert_double_eq_tol(mlsba__bal_drift_threshold(&o, 0.03), 0.17, 1e-12);
  ck_assert_double_eq_tol(mlsba__bal_drift_threshold(&o, 0.10), 0.45, 1e-12);
  o.drift = 0.3; /* the caller's, whatever the noise */
  ck_assert_double_eq(mlsba__bal_drift_threshold(&o, 0.10), 0.3);
  o.drift = 0; /* off */
  ck_assert_double_eq(mlsba__bal_drift_threshold(&o, 0.10), 0);
}
END_TEST

START_TEST(a_simulated_device_failure_is_survived_or_reported) {
  mlsba_platform_t *pl = desktop_with("gpu1", json_pack("{s:i}", "fail_at", 2));
  size_t gpu1 = device_index(pl, "gpu1");
  mlsba_load_t *w = units8400();
  mlsba_balance_opts_t o;
  mlsba_balance_opts_init(&o);
  mlsba_executor_t *ex = NULL;
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
  mlsba_balance_result_t r;
  ck_assert_msg(mlsba_balance_load(ex, w, &o, &r) == 0, "%s",
                mlsba_last_error());
  ck_assert_uint_eq(r.lost, 1);
  ck_assert_int_eq(r.dropped[gpu1], MLSBA_DROPPED_FAULT);
  ck_assert_int_eq(r.load[gpu1], 0);
  ck_assert(r.converged);
  int64_t sum = 0;
  for (size_t j = 0; j < r.p; j++)
    sum += r.load[j];
  ck_assert_int_eq(sum, 8400);
  mlsba_balance_result_free(&r);
  mlsba_executor_destroy(ex);
  /* A fresh executor (the device's share count starts again) that stops. */
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
  o.on_fault = MLSBA_ON_FAULT_STOP;
  ck_assert_int_eq(mlsba_balance_load(ex, w, &o, &r), MLSBA_EDEVICE);
  ck_assert_msg(strstr(mlsba_last_error(), "gpu1") != NULL, "%s",
                mlsba_last_error());
  mlsba_executor_destroy(ex);
  mlsba_load_destroy(w);
  mlsba_platform_destroy(pl);
}
END_TEST

START_TEST(flat_grouping_balances_every_device_alone) {
  mlsba_platform_t *pl = desktop_with(NULL, NULL);
  mlsba_load_t *w = units8400();
  mlsba_balance_opts_t o;
  mlsba_balance_opts_init(&o);
  o.grouping = MLSBA_GROUPING_FLAT;
  mlsba_balancer_t *b = NULL;
  ck_assert_int_eq(mlsba_balance_ex(pl, w, &o, &b), 0);
  const mlsba_balance_result_t *r = mlsba_balancer_result(b);
  ck_assert(r->converged);
  ck_assert_uint_le(r->iterations, 4);
  ck_assert_double_le(r->makespan, optimum_slowed(pl, 0, 1) * 1.01);
  mlsba_balancer_destroy(b);
  /* Granularity: SLBA gives multiples of the block but one edge device. */
  o.grouping = MLSBA_GROUPING_PLATFORM;
  o.algorithm = MLSBA_ALGO_SLBA;
  o.granularity = 128;
  ck_assert_int_eq(mlsba_balance_ex(pl, w, &o, &b), 0);
  r = mlsba_balancer_result(b);
  int off_block = 0;
  for (size_t j = 0; j < r->p; j++)
    off_block += r->load[j] % 128 != 0;
  ck_assert_int_le(off_block, 1);
  mlsba_balancer_destroy(b);
  mlsba_load_destroy(w);
  mlsba_platform_destroy(pl);
}
END_TEST

START_TEST(bad_input_is_refused_with_a_message) {
  mlsba_load_t *w = NULL;
  ck_assert_int_eq(mlsba_load_create("ok", 10, NULL), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_load_create(NULL, 10, &w), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_load_create("", 10, &w), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_load_create("has space", 10, &w), MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "has space"));
  ck_assert_int_eq(mlsba_load_create("a/b", 10, &w), MLSBA_EINVAL);
  char longname[80];
  memset(longname, 'x', sizeof longname - 1);
  longname[79] = 0;
  ck_assert_int_eq(mlsba_load_create(longname, 10, &w), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_load_create("ok", 0, &w), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_load_create("ok", -5, &w), MLSBA_EINVAL);
  ck_assert_ptr_null(w);
  ck_assert_int_eq(mlsba_load_create("ok", 10, &w), 0);
  ck_assert_int_eq(mlsba_load_set_shape(w, "a\nb"), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_load_set_shape(w, NULL), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_load_set_shape(NULL, "x"), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_load_set_cpu(NULL, nothing, NULL), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_load_units(NULL), 0);
  mlsba_load_destroy(NULL);
  /* Balancing arguments. */
  mlsba_balancer_t *b = NULL;
  ck_assert_int_eq(mlsba_balance_ex(NULL, NULL, NULL, &b), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_balance_ex(NULL, w, NULL, NULL), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_balancer_run(NULL, NULL), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_balancer_rebalance(NULL), MLSBA_EINVAL);
  ck_assert_ptr_null(mlsba_balancer_result(NULL));
  mlsba_balancer_destroy(NULL);
  mlsba_platform_t *pl = two_cores();
  mlsba_balance_opts_t o;
  double bad_eps[] = {-1, NAN, INFINITY};
  for (size_t k = 0; k < 3; k++) {
    mlsba_balance_opts_init(&o);
    o.eps = bad_eps[k];
    ck_assert_int_eq(mlsba_balance_ex(pl, w, &o, &b), MLSBA_EINVAL);
  }
  mlsba_balance_opts_init(&o);
  o.max_iter = 0;
  ck_assert_int_eq(mlsba_balance_ex(pl, w, &o, &b), MLSBA_EINVAL);
  mlsba_balance_opts_init(&o);
  o.grouping = (mlsba_grouping_t)7;
  ck_assert_int_eq(mlsba_balance_ex(pl, w, &o, &b), MLSBA_EINVAL);
  mlsba_balance_opts_init(&o);
  o.drift = NAN;
  ck_assert_int_eq(mlsba_balance_ex(pl, w, &o, &b), MLSBA_EINVAL);
  mlsba_balance_opts_init(&o);
  o.granularity = -3;
  ck_assert_int_eq(mlsba_balance_ex(pl, w, &o, &b), MLSBA_EINVAL);
  /* A load with no code for any device of the platform. */
  ck_assert_int_eq(mlsba_balance_ex(pl, w, NULL, &b), MLSBA_ECAPACITY);
  ck_assert_msg(strstr(mlsba_last_error(), "ok") != NULL, "%s",
                mlsba_last_error());
  ck_assert_ptr_null(b);
  /* Executor-level: units that do not add up, or NULLs. */
  mlsba_load_set_cpu(w, nothing, NULL);
  mlsba_executor_t *ex = NULL;
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
  int64_t units[2] = {3, 3};
  double time[2];
  long failed = 5;
  ck_assert_int_eq(
      mlsba_executor_run(ex, w, units, MLSBA_DRIVE_SHARED, time, &failed),
      MLSBA_EINVAL);
  ck_assert_int_eq(failed, -1);
  units[0] = -1;
  units[1] = 11;
  ck_assert_int_eq(
      mlsba_executor_run(ex, w, units, MLSBA_DRIVE_SHARED, time, NULL),
      MLSBA_EINVAL);
  ck_assert_int_eq(
      mlsba_executor_run(ex, NULL, units, MLSBA_DRIVE_SHARED, time, NULL),
      MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_executor_max_units(ex, w, NULL), MLSBA_EINVAL);
  mlsba_executor_destroy(ex);
  /* Built-in loads check their problems. */
  mlsba_mandelbrot_t mb = {.width = 0,
                           .height = 10,
                           .x0 = 0,
                           .x1 = 1,
                           .y0 = 0,
                           .y1 = 1,
                           .max_iter = 5};
  mlsba_load_t *m = NULL;
  int32_t px[100];
  ck_assert_int_eq(mlsba_load_mandelbrot(&mb, &m), MLSBA_EINVAL);
  mb.width = 10;
  ck_assert_int_eq(mlsba_load_mandelbrot(&mb, &m), MLSBA_EINVAL); /* out */
  mb.out = px;
  mb.x1 = NAN;
  ck_assert_int_eq(mlsba_load_mandelbrot(&mb, &m), MLSBA_EINVAL);
  mb.x1 = -1;
  ck_assert_int_eq(mlsba_load_mandelbrot(&mb, &m), MLSBA_EINVAL);
  mb.x1 = 1;
  mb.height = INT64_C(1) << 40;
  ck_assert_int_eq(mlsba_load_mandelbrot(&mb, &m), MLSBA_ERANGE);
  ck_assert_int_eq(mlsba_mandelbrot_row(&mb, -1), -1);
  ck_assert_int_eq(mlsba_load_mandelbrot(NULL, &m), MLSBA_EINVAL);
  ck_assert_ptr_null(m);
  mlsba_gemm_t g = {.m = 0, .n = 1, .k = 1};
  ck_assert_int_eq(mlsba_load_gemm(&g, &m), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_load_gemm(NULL, &m), MLSBA_EINVAL);
  mlsba_load_destroy(w);
  mlsba_platform_destroy(pl);
}
END_TEST

static Suite *kernel_suite(void) {
  Suite *s = suite_create("kernel");
  TCase *tc = tcase_create("loads");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, a_user_load_is_balanced_on_cores_and_computed);
  tcase_add_test(tc, a_failing_cpu_function_stops_or_drops_the_core);
  tcase_add_test(tc, mandelbrot_rows_on_cores_match_the_reference);
  tcase_add_test(tc, a_device_that_slows_down_mid_run_is_rebalanced);
  tcase_add_test(tc, the_default_drift_threshold_is_above_the_noise);
  tcase_add_test(tc, the_drift_threshold_follows_the_variation);
  tcase_add_test(tc, a_simulated_device_failure_is_survived_or_reported);
  tcase_add_test(tc, flat_grouping_balances_every_device_alone);
  tcase_add_test(tc, bad_input_is_refused_with_a_message);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(kernel_suite()); }
