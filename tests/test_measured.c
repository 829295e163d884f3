/* The measurements behind the balancer's and the one-dimensional head's
 * models (lib/partition/measured.h): runs merge into the nearest point
 * with exact running statistics, a run that contradicts the model forgets
 * the points, and devices of one kind pool their runs unless one stands
 * apart. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "partition/measured.h"
#include "support/run_suite.h"

/* The mean and sample variance of n values, computed directly. */
static void stats(const double *v, size_t n, double *mean, double *var) {
  double s = 0, q = 0;
  for (size_t i = 0; i < n; i++)
    s += v[i];
  *mean = s / n;
  for (size_t i = 0; i < n; i++)
    q += (v[i] - *mean) * (v[i] - *mean);
  *var = n > 1 ? q / (n - 1) : 0;
}

START_TEST(runs_join_the_nearest_point_and_points_that_meet_merge) {
  mlsba__measured_t m = {0};
  /* 100 and 112 are 12% apart: two points at merge 5%. */
  mlsba__measured_add(&m, 100, 1.00, 0.05); /* speed 100 */
  mlsba__measured_add(&m, 112, 1.40, 0.05); /* speed 80 */
  ck_assert_uint_eq(m.n, 2);
  /* 108 is within 5% of 112 only: it joins that point, which moves to
   * 108, still more than 5% from 100. */
  mlsba__measured_add(&m, 108, 1.20, 0.05); /* speed 90 */
  ck_assert_uint_eq(m.n, 2);
  ck_assert_double_eq(m.x[1], 108);
  ck_assert_uint_eq(m.count[1], 2);
  ck_assert_double_eq_tol(m.speed[1], 85, 1e-12);
  /* 104 is 4 from 100 and 4 from 108: it joins one, lands within 5% of
   * the other, and the two become one point of four runs. */
  mlsba__measured_add(&m, 104, 1.04, 0.05); /* speed 100 */
  ck_assert_uint_eq(m.n, 1);
  ck_assert_uint_eq(m.count[0], 4);
  ck_assert_double_eq(m.x[0], 104);
  double v[4] = {100, 80, 90, 100}, mean, var;
  stats(v, 4, &mean, &var);
  ck_assert_double_eq_tol(m.speed[0], mean, 1e-9);
  ck_assert_double_eq_tol(m.m2[0] / 3, var, 1e-9);
  /* The point is found within merge of a load, and not beyond. */
  ck_assert_int_eq(mlsba__measured_find(&m, 107, 0.05), 0);
  ck_assert_int_eq(mlsba__measured_find(&m, 120, 0.05), -1);
}
END_TEST

START_TEST(a_point_is_known_well_once_repeated_runs_agree) {
  mlsba__measured_t m = {0};
  mlsba__measured_add(&m, 1000, 1.0, 0.05);
  ck_assert(!mlsba__measured_known_well(&m, 1000, 0.05, 0.025));
  mlsba__measured_add(&m, 1000, 1.0, 0.05); /* the same speed twice */
  ck_assert(mlsba__measured_known_well(&m, 1000, 0.05, 0.025));
  ck_assert(!mlsba__measured_known_well(&m, 1200, 0.05, 0.025));
  /* Speeds 1000 and 1250: standard error of the mean 125, 11% of it. */
  mlsba__measured_t w = {0};
  mlsba__measured_add(&w, 1000, 1.0, 0.05);
  mlsba__measured_add(&w, 1000, 0.8, 0.05);
  ck_assert(!mlsba__measured_known_well(&w, 1000, 0.05, 0.10));
  ck_assert(mlsba__measured_known_well(&w, 1000, 0.05, 0.12));
}
END_TEST

/* n runs of a device at load x, at the given speeds. */
static void runs(mlsba__measured_t *m, int64_t x, const double *speed,
                 size_t n) {
  for (size_t i = 0; i < n; i++)
    mlsba__measured_add(m, x, (double)x / speed[i], 0.05);
}

/* Four devices, each with n runs at its load, at the speeds s[k][...]. */
static void four(mlsba__measured_t *dev, const mlsba__measured_t **members,
                 const int64_t *load, const double (*s)[3], size_t n) {
  memset(dev, 0, 4 * sizeof *dev);
  for (size_t k = 0; k < 4; k++) {
    runs(&dev[k], load[k], s[k], n);
    members[k] = &dev[k];
  }
}

/* A run checked against the model of what was measured: one that agrees
 * within tol leaves every point; one further off means the machine
 * changed, and every point is forgotten; no model, nothing to contradict. */
START_TEST(a_run_that_contradicts_the_model_forgets_its_points) {
  mlsba__measured_t m = {0};
  mlsba__measured_add(&m, 1000, 1.0, 0.05); /* speed 1000 */
  mlsba__measured_add(&m, 2000, 2.5, 0.05); /* speed 800 */
  mlsba_model_t *model = NULL;
  ck_assert_int_eq(mlsba_model_create(&model), 0);
  double pred = -1;
  ck_assert(!mlsba__measured_forget_if_stale(&m, model, 1500, 1.0, 0.1, &pred));
  ck_assert_double_eq(pred, 0);
  ck_assert_int_eq(mlsba__measured_to_model(&m, model), 0);
  /* At 1500 units the model runs at 900 units/s: 1.667 s. */
  ck_assert(
      !mlsba__measured_forget_if_stale(&m, model, 1500, 1.75, 0.1, &pred));
  ck_assert_double_eq_tol(pred, 1500.0 / 900, 1e-9);
  ck_assert_uint_eq(m.n, 2);
  ck_assert(!mlsba__measured_forget_if_stale(&m, model, 1500, 1.55, 0.1, NULL));
  ck_assert_uint_eq(m.n, 2);
  /* Four times slower: stale. */
  ck_assert(mlsba__measured_forget_if_stale(&m, model, 1500, 6.67, 0.1, &pred));
  ck_assert_uint_eq(m.n, 0);
  /* Back to its speed after a slowdown: stale too (the model is the
   * slowdown's). */
  mlsba__measured_add(&m, 1500, 6.67, 0.05);
  ck_assert_int_eq(mlsba__measured_to_model(&m, model), 0);
  ck_assert(mlsba__measured_forget_if_stale(&m, model, 1500, 1.67, 0.1, NULL));
  ck_assert_uint_eq(m.n, 0);
  mlsba_model_destroy(model);
}
END_TEST

START_TEST(devices_that_agree_pool_their_runs) {
  static const double s[4][3] = {
      {100, 103, 98}, {101, 97, 102}, {99, 100, 104}, {102, 99, 96}};
  mlsba__measured_t dev[4], pool;
  const mlsba__measured_t *members[4];
  int64_t load[4] = {330, 335, 328, 340};
  unsigned char alike[4] = {1, 1, 1, 1}; /* as at a first pooling */
  four(dev, members, load, s, 3);
  double all[12];
  memcpy(all, s, sizeof all);
  mlsba__measured_pool(members, 4, 0.05, 0.05, &pool, alike);
  for (size_t k = 0; k < 4; k++)
    ck_assert_msg(alike[k], "device %zu", k);
  ck_assert_uint_eq(pool.n, 1);
  ck_assert_uint_eq(pool.count[0], 12);
  double mean, var;
  stats(all, 12, &mean, &var);
  ck_assert_double_eq_tol(pool.speed[0], mean, 1e-9);
  ck_assert_double_eq_tol(pool.m2[0] / 11, var, 1e-9);
  ck_assert_double_eq_tol(pool.x[0], (330 + 335 + 328 + 340) / 4.0, 1e-9);
  ck_assert(mlsba__measured_known_well(&pool, 333, 0.05, 0.01));
  ck_assert(!mlsba__measured_known_well(&dev[0], 330, 0.05, 0.01));
}
END_TEST

START_TEST(a_device_that_differs_stands_apart) {
  /* Three alike at about 100, one at about 130: noise of 2% cannot
   * explain 30%. */
  static const double s[4][3] = {
      {100, 103, 98}, {101, 97, 102}, {129, 131, 132}, {99, 100, 104}};
  mlsba__measured_t dev[4], pool;
  const mlsba__measured_t *members[4];
  int64_t load[4] = {330, 335, 330, 328};
  unsigned char alike[4] = {1, 1, 1, 1}; /* as at a first pooling */
  four(dev, members, load, s, 3);
  mlsba__measured_pool(members, 4, 0.05, 0.05, &pool, alike);
  ck_assert(alike[0] && alike[1] && !alike[2] && alike[3]);
  ck_assert_uint_eq(pool.count[0], 9); /* the three alike only */
  ck_assert_double_lt(pool.speed[0], 102);
  /* 4.2% apart is 2.3 standard errors of the others' nine runs and its
   * three: pooled when it was (the bar is three), but a device that stood
   * apart last time comes back only within two. */
  static const double t[3] = {106, 107, 101};
  mlsba__measured_t near = {0};
  runs(&near, 330, t, 3);
  members[2] = &near;
  mlsba__measured_pool(members, 4, 0.05, 0.05, &pool, alike);
  ck_assert(alike[0] && alike[1] && !alike[2] && alike[3]);
  alike[2] = 1;
  mlsba__measured_pool(members, 4, 0.05, 0.05, &pool, alike);
  ck_assert(alike[0] && alike[1] && alike[2] && alike[3]);
  ck_assert_uint_eq(pool.count[0], 12);
}
END_TEST

START_TEST(one_run_never_sets_a_device_apart) {
  mlsba__measured_t dev[4], pool;
  const mlsba__measured_t *members[4];
  static const double s[4][3] = {{100}, {103}, {150}, {98}};
  int64_t load[4] = {1400, 1400, 1400, 1400};
  unsigned char alike[4] = {1, 1, 1, 1}; /* as at a first pooling */
  four(dev, members, load, s, 1);
  mlsba__measured_pool(members, 4, 0.05, 0.05, &pool, alike);
  ck_assert(alike[0] && alike[1] && alike[2] && alike[3]);
  ck_assert_uint_eq(pool.count[0], 4);
  /* A second run of each: 150 again stands apart, by the noise of the
   * other runs. */
  static const double again[4] = {97, 101, 148, 102};
  for (size_t k = 0; k < 4; k++)
    runs(&dev[k], load[k], &again[k], 1);
  mlsba__measured_pool(members, 4, 0.05, 0.05, &pool, alike);
  ck_assert(alike[0] && alike[1] && !alike[2] && alike[3]);
  ck_assert_uint_eq(pool.count[0], 6);
  /* A device measured where nobody else ran is compared with the others'
   * model there (constant beyond their last point): alike at their speed,
   * apart at 40% of it. */
  mlsba__measured_t far = {0};
  static const double same[2] = {97, 103}, slow[2] = {39, 41};
  runs(&far, 5000, same, 2);
  members[2] = &far;
  mlsba__measured_pool(members, 4, 0.05, 0.05, &pool, alike);
  ck_assert(alike[0] && alike[1] && alike[2] && alike[3]);
  ck_assert_uint_eq(pool.n, 2);
  memset(&far, 0, sizeof far);
  runs(&far, 5000, slow, 2);
  mlsba__measured_pool(members, 4, 0.05, 0.05, &pool, alike);
  ck_assert(alike[0] && alike[1] && !alike[2] && alike[3]);
  ck_assert_uint_eq(pool.n, 1);
}
END_TEST

static Suite *measured_suite(void) {
  Suite *s = suite_create("measured");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, runs_join_the_nearest_point_and_points_that_meet_merge);
  tcase_add_test(tc, a_point_is_known_well_once_repeated_runs_agree);
  tcase_add_test(tc, a_run_that_contradicts_the_model_forgets_its_points);
  tcase_add_test(tc, devices_that_agree_pool_their_runs);
  tcase_add_test(tc, a_device_that_differs_stands_apart);
  tcase_add_test(tc, one_run_never_sets_a_device_apart);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(measured_suite()); }
