/* The divisible-load interface (lib/core/load.c, the built-in loads):
 * loads described by the application, run and balanced on real cores
 * (BLIS is not involved: the CPU functions here are the test's own); the
 * Mandelbrot load; bad input everywhere. The balancer that runs them many
 * times is test_balancer.c's. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  /* A range of units sees the damage in its rows only (what a rank of
   * mlsba-inpa --load checks): row 0 is unit 0's. */
  ck_assert_int_eq(mlsba_mandelbrot_row(&mb, 0), 0);
  ck_assert_int_eq(mlsba_mandelbrot_verify_units(&mb, 0, 10, &wrong), 0);
  ck_assert_int_eq(wrong, 1);
  ck_assert_int_eq(mlsba_mandelbrot_verify_units(&mb, 1, 299, &wrong), 0);
  ck_assert_int_eq(wrong, 0);
  ck_assert_int_eq(mlsba_mandelbrot_verify_units(&mb, 300, 0, &wrong), 0);
  ck_assert_int_eq(wrong, 0);
  ck_assert_int_eq(mlsba_mandelbrot_verify_units(&mb, 1, 300, &wrong),
                   MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_mandelbrot_verify_units(&mb, -1, 2, &wrong),
                   MLSBA_EINVAL);
  mlsba_balancer_destroy(b);
  mlsba_load_destroy(w);
  free(mb.out);
  mlsba_platform_destroy(pl);
}
END_TEST

/* Sim loads compute nothing: any load of 8400 units will do. */
static int nothing(void *user, int64_t first, int64_t count) {
  (void)user;
  (void)first;
  (void)count;
  return 0;
}

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

/* The GEMM load's check, the other verification of the library, calls
 * a NaN or an Inf in C wrong too. */
START_TEST(a_product_with_a_nan_is_never_verified) {
  enum { M = 9, K = 7, P = 5 };
  double a[M * K], b[K * P], c[M * P];
  for (int i = 0; i < M * K; i++)
    a[i] = (double)(i % 5) - 2;
  for (int i = 0; i < K * P; i++)
    b[i] = (double)(i % 3) - 1;
  for (int j = 0; j < P; j++)
    for (int i = 0; i < M; i++) {
      double s = 0;
      for (int k = 0; k < K; k++)
        s += a[i + k * M] * b[k + j * K];
      c[i + j * M] = s;
    }
  mlsba_gemm_t g = {.m = M,
                    .n = P,
                    .k = K,
                    .precision = MLSBA_PRECISION_DOUBLE,
                    .a = a,
                    .b = b,
                    .c = c};
  double err = -1;
  int ok = -1;
  ck_assert_int_eq(mlsba_gemm_verify(&g, 1, &err, &ok), 0);
  ck_assert_int_eq(ok, 1);
  c[4 + 3 * M] = NAN;
  ck_assert_int_eq(mlsba_gemm_verify(&g, 1, &err, &ok), 0);
  ck_assert_int_eq(ok, 0);
  ck_assert(isinf(err));
  c[4 + 3 * M] = INFINITY;
  ck_assert_int_eq(mlsba_gemm_verify(&g, 1, &err, &ok), 0);
  ck_assert_int_eq(ok, 0);
  c[4 + 3 * M] = 0;
  a[0] = NAN; /* the reference itself NaN */
  ck_assert_int_eq(mlsba_gemm_verify(&g, 1, &err, &ok), 0);
  ck_assert_int_eq(ok, 0);
}
END_TEST

static Suite *load_suite(void) {
  Suite *s = suite_create("load");
  TCase *tc = tcase_create("loads");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, a_user_load_is_balanced_on_cores_and_computed);
  tcase_add_test(tc, a_failing_cpu_function_stops_or_drops_the_core);
  tcase_add_test(tc, mandelbrot_rows_on_cores_match_the_reference);
  tcase_add_test(tc, bad_input_is_refused_with_a_message);
  tcase_add_test(tc, a_product_with_a_nan_is_never_verified);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(load_suite()); }
