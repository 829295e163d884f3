/* The baselines on cases with a known answer: homogeneous, single-CPM,
 * multiple-CPM and DLT, and the apportioning they share. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "mlsba.h"
#include "partition/grouped.h"
#include "support/oracle.h"
#include "support/random_models.h"
#include "support/run_suite.h"

/* A device whose time is exactly latency + cost * x at its points. */
static mlsba_model_t *affine(double latency, double cost) {
  mlsba_model_t *m = NULL;
  ck_assert_int_eq(mlsba_model_create(&m), 0);
  for (double x = 100; x <= 3200; x *= 2)
    ck_assert_int_eq(mlsba_model_set_point(m, x, x / (latency + cost * x)), 0);
  return m;
}

static void destroy_all(mlsba_model_t **m, size_t p) {
  for (size_t i = 0; i < p; i++)
    mlsba_model_destroy(m[i]);
}

static void partition_ex(mlsba_algorithm_t algo, mlsba_model_t **m,
                         const size_t *size, size_t q, int64_t n,
                         const mlsba_partition_opts_t *opts, int64_t *alpha,
                         int64_t *beta, double *makespan) {
  mlsba_partition_info_t info;
  size_t points[8];
  int err = mlsba_partition_groups(algo, (const mlsba_model_t *const *)m, size,
                                   q, n, opts, alpha, beta, points, &info);
  ck_assert_msg(err == 0, "%s", mlsba_last_error());
  for (size_t g = 0; g < q; g++)
    ck_assert_uint_eq(points[g], 0); /* baselines build no group models */
  if (makespan)
    *makespan = info.makespan;
}

static void partition(mlsba_algorithm_t algo, mlsba_model_t **m,
                      const size_t *size, size_t q, int64_t n, int64_t *alpha,
                      int64_t *beta, double *makespan) {
  partition_ex(algo, m, size, q, n, NULL, alpha, beta, makespan);
}

/* (max - min) / max of the device times of a distribution. */
static double spread(mlsba_model_t **m, size_t p, const int64_t *beta) {
  double lo = INFINITY, hi = 0;
  for (size_t j = 0; j < p; j++) {
    double t = oracle_time(m[j], beta[j]);
    lo = t < lo ? t : lo;
    hi = t > hi ? t : hi;
  }
  return (hi - lo) / hi;
}

START_TEST(homogeneous_splits_evenly_at_both_levels) {
  mlsba_model_t *m[4] = {constant_model(1), constant_model(100),
                         constant_model(7), constant_model(3)};
  size_t size[3] = {2, 1, 1};
  int64_t alpha[3], beta[4];
  partition(MLSBA_ALGO_HOMOGENEOUS, m, size, 3, 100, alpha, beta, NULL);
  ck_assert_int_eq(alpha[0], 34);
  ck_assert_int_eq(alpha[1], 33);
  ck_assert_int_eq(alpha[2], 33);
  ck_assert_int_eq(beta[0], 17);
  ck_assert_int_eq(beta[1], 17);
  destroy_all(m, 4);
}
END_TEST

START_TEST(homogeneous_fills_capped_devices_and_spreads_the_rest) {
  mlsba_model_t *m[3] = {constant_model(1), constant_model(1),
                         constant_model(1)};
  ck_assert_int_eq(mlsba_model_set_max_load(m[0], 10), 0);
  size_t size[3] = {1, 1, 1};
  int64_t alpha[3], beta[3];
  partition(MLSBA_ALGO_HOMOGENEOUS, m, size, 3, 300, alpha, beta, NULL);
  ck_assert_int_eq(beta[0], 10);
  ck_assert_int_eq(beta[1], 145);
  ck_assert_int_eq(beta[2], 145);
  destroy_all(m, 3);
}
END_TEST

/* Constant speeds 100 and 300 in group 0, 200 and 400 alone, n = 1000.
 * Single-CPM measures once at the homogeneous distribution (334 | 333 |
 * 333, group 0 split 167 | 167): group 0 takes 1.67 s for 334 units, a
 * measured speed of 200, not its balanced 400. So alpha = 250 | 250 | 500
 * and group 0 splits 62.5 | 187.5, rounded to 63 | 187. */
START_TEST(single_cpm_measures_once_at_the_homogeneous_distribution) {
  mlsba_model_t *m[4] = {constant_model(100), constant_model(300),
                         constant_model(200), constant_model(400)};
  size_t size[3] = {2, 1, 1};
  int64_t alpha[3], beta[4];
  partition(MLSBA_ALGO_SINGLE_CPM, m, size, 3, 1000, alpha, beta, NULL);
  ck_assert_int_eq(alpha[0], 250);
  ck_assert_int_eq(alpha[1], 250);
  ck_assert_int_eq(alpha[2], 500);
  ck_assert_int_eq(beta[0], 63);
  ck_assert_int_eq(beta[1], 187);
  destroy_all(m, 4);
}
END_TEST

/* Re-measuring converges on constant speeds towards 400 | 200 | 400 and
 * 100 | 300 inside group 0, every device busy for 1 s: with the default
 * eps it stops once the device times are within 5%; with a tight eps it
 * reaches the proportional split to a unit. */
START_TEST(multiple_cpm_converges_on_constant_speeds) {
  mlsba_model_t *m[4] = {constant_model(100), constant_model(300),
                         constant_model(200), constant_model(400)};
  size_t size[3] = {2, 1, 1};
  int64_t alpha[3], beta[4];
  partition(MLSBA_ALGO_MULTIPLE_CPM, m, size, 3, 1000, alpha, beta, NULL);
  ck_assert_double_le(spread(m, 4, beta), 0.05);
  mlsba_partition_opts_t opts;
  mlsba_partition_opts_init(&opts);
  opts.cpm_eps = 1e-3;
  partition_ex(MLSBA_ALGO_MULTIPLE_CPM, m, size, 3, 1000, &opts, alpha, beta,
               NULL);
  ck_assert_int_le(llabs(beta[0] - 100), 1);
  ck_assert_int_le(llabs(beta[1] - 300), 1);
  ck_assert_int_le(llabs(alpha[1] - 200), 1);
  /* Single-CPM stays where one measurement put it. */
  partition(MLSBA_ALGO_SINGLE_CPM, m, size, 3, 1000, alpha, beta, NULL);
  ck_assert_double_gt(spread(m, 4, beta), 0.05);
  destroy_all(m, 4);
}
END_TEST

/* Where speed depends on the load, a constant model measured at one load
 * mispredicts another. Device 0 runs 1000 units/s up to 100 units and
 * collapses to 10 units/s at 500; device 1 runs 100 units/s. Measured at
 * 500 | 500 device 0 looks slow, at 91 | 909 it looks fast: multiple-CPM
 * swings between the two, far from the FPM optimum (about 465 | 535). */
START_TEST(cpm_misses_the_optimum_when_speed_depends_on_load) {
  mlsba_model_t *m[2];
  static const double collapse[][2] = {{10, 1000}, {100, 1000}, {500, 10}};
  for (int i = 0; i < 2; i++)
    ck_assert_int_eq(mlsba_model_create(&m[i]), 0);
  for (int k = 0; k < 3; k++)
    ck_assert_int_eq(
        mlsba_model_set_point(m[0], collapse[k][0], collapse[k][1]), 0);
  ck_assert_int_eq(mlsba_model_set_point(m[1], 1, 100), 0);
  size_t size[2] = {1, 1};
  int64_t alpha[2], beta[2];
  double t_cpm, t_opt;
  partition(MLSBA_ALGO_MULTIPLE_CPM, m, size, 2, 1000, alpha, beta, &t_cpm);
  t_opt = oracle_search((const mlsba_model_t *const *)m, 2, 1000);
  ck_assert_double_lt(t_opt, 5.5);
  ck_assert_double_gt(t_cpm, 1.5 * t_opt);
  destroy_all(m, 2);
}
END_TEST

/* Two devices costing 10 ms per unit, one with 1 s of latency, n = 1000:
 * T = (1000 + 0 + 100) / 200 = 5.5 s, x = 550 | 450. */
START_TEST(dlt_solves_the_affine_closed_form) {
  mlsba_model_t *m[2] = {affine(0, 0.01), affine(1, 0.01)};
  size_t size[2] = {1, 1};
  int64_t alpha[2], beta[2];
  partition(MLSBA_ALGO_DLT, m, size, 2, 1000, alpha, beta, NULL);
  ck_assert_int_eq(beta[0], 550);
  ck_assert_int_eq(beta[1], 450);
  destroy_all(m, 2);
}
END_TEST

/* A device whose latency alone exceeds the others' finish time gets
 * nothing; a capped one is held at its cap. */
START_TEST(dlt_drops_slow_starters_and_holds_caps) {
  mlsba_model_t *m[3] = {affine(0, 0.01), affine(100, 0.01), affine(0, 0.001)};
  ck_assert_int_eq(mlsba_model_set_max_load(m[2], 500), 0);
  size_t size[2] = {2, 1};
  int64_t alpha[2], beta[3];
  partition(MLSBA_ALGO_DLT, m, size, 2, 1000, alpha, beta, NULL);
  ck_assert_int_eq(beta[1], 0);
  ck_assert_int_eq(beta[2], 500);
  ck_assert_int_eq(beta[0], 500);
  ck_assert_int_eq(alpha[0], 500);
  destroy_all(m, 3);
}
END_TEST

START_TEST(shares_round_by_largest_remainder_within_caps) {
  const double x[4] = {2.5, 3.7, 1.8, 2.0};
  const int64_t cap[4] = {10, 3, 10, 10};
  int64_t out[4];
  mlsba__round_shares(x, cap, 4, 10, out);
  ck_assert_int_eq(out[0] + out[1] + out[2] + out[3], 10);
  ck_assert_int_eq(out[1], 3); /* 3.7 would round up past its cap */
  ck_assert_int_eq(out[2], 2);
  const double w[3] = {1, 2, 7};
  const int64_t caps[3] = {100, 100, 30};
  int64_t prop[3];
  mlsba__proportional(w, caps, 3, 100, prop);
  ck_assert_int_eq(prop[2], 30);
  ck_assert_int_eq(prop[0] + prop[1], 70);
  ck_assert_int_le(llabs(prop[1] - 2 * prop[0]), 1);
}
END_TEST

static Suite *baselines_suite(void) {
  Suite *s = suite_create("baselines");
  TCase *tc = tcase_create("known answers");
  tcase_add_test(tc, homogeneous_splits_evenly_at_both_levels);
  tcase_add_test(tc, homogeneous_fills_capped_devices_and_spreads_the_rest);
  tcase_add_test(tc, single_cpm_measures_once_at_the_homogeneous_distribution);
  tcase_add_test(tc, multiple_cpm_converges_on_constant_speeds);
  tcase_add_test(tc, cpm_misses_the_optimum_when_speed_depends_on_load);
  tcase_add_test(tc, dlt_solves_the_affine_closed_form);
  tcase_add_test(tc, dlt_drops_slow_starters_and_holds_caps);
  tcase_add_test(tc, shares_round_by_largest_remainder_within_caps);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(baselines_suite()); }
