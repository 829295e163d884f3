/* Group models: Procedure 1 (integer point) and Procedure 2 (real point). */
#include <check.h>
#include <math.h>

#include "mlsba.h"
#include "partition/gmodel.h"
#include "support/oracle.h"
#include "support/random_models.h"
#include "support/run_suite.h"

static const mlsba_partition_opts_t *defaults(void) {
  static mlsba_partition_opts_t opts;
  mlsba_partition_opts_init(&opts);
  return &opts;
}

START_TEST(integer_point_carries_the_best_distribution) {
  rng_t r = {.state = 5};
  for (int trial = 0; trial < 300; trial++) {
    mlsba_model_t *dev[3];
    size_t k = (size_t)rng_range(&r, 2, 3);
    for (size_t i = 0; i < k; i++)
      dev[i] = random_paper_model(&r, 6, 200);
    mlsba__gmodel_t g;
    ck_assert_int_eq(mlsba__gmodel_init(&g, (const mlsba_model_t *const *)dev,
                                        k, 60, defaults()),
                     0);
    int64_t x = rng_range(&r, 1, 60);
    ck_assert_int_eq(mlsba__gmodel_insert_integer_point(&g, x), 0);
    ck_assert_uint_eq(mlsba__gmodel_points(&g), 1);
    ck_assert_int_ge(mlsba__gmodel_find(&g, x), 0);
    /* Idempotent: the point exists. */
    ck_assert_int_eq(mlsba__gmodel_insert_integer_point(&g, x), 0);
    ck_assert_uint_eq(mlsba__gmodel_points(&g), 1);
    int64_t beta[3], sum = 0;
    ck_assert_int_eq(mlsba__gmodel_beta(&g, x, beta), 0);
    double worst = 0;
    for (size_t i = 0; i < k; i++) {
      sum += beta[i];
      double t = oracle_time(dev[i], beta[i]);
      worst = t > worst ? t : worst;
    }
    ck_assert_int_eq(sum, x);
    /* The group time is the optimum over the group's devices, and the
     * group speed at x is x over it. */
    double t, s;
    ck_assert_int_eq(mlsba__gmodel_time(&g, x, &t), 0);
    ck_assert_double_eq(t, worst);
    ck_assert_double_eq(
        t, oracle_exhaustive((const mlsba_model_t *const *)dev, (int)k, x));
    ck_assert_int_eq(mlsba_model_speed(g.model, (double)x, &s), 0);
    ck_assert_double_eq_tol(s, (double)x / t, 1e-12 * s);
    mlsba__gmodel_free(&g);
    for (size_t i = 0; i < k; i++)
      mlsba_model_destroy(dev[i]);
  }
}
END_TEST

START_TEST(real_point_makes_floor_and_ceil_exact) {
  mlsba_model_t *dev[2] = {constant_model(10), constant_model(30)};
  mlsba__gmodel_t g;
  ck_assert_int_eq(mlsba__gmodel_init(&g, (const mlsba_model_t *const *)dev, 2,
                                      100, defaults()),
                   0);
  ck_assert_int_eq(mlsba__gmodel_insert_real_point(&g, 10.4), 0);
  ck_assert_uint_eq(mlsba__gmodel_points(&g), 2);
  ck_assert_int_ge(mlsba__gmodel_find(&g, 10), 0);
  ck_assert_int_ge(mlsba__gmodel_find(&g, 11), 0);
  ck_assert_int_eq(mlsba__gmodel_insert_real_point(&g, 7.0), 0);
  ck_assert_uint_eq(mlsba__gmodel_points(&g), 3);
  ck_assert_int_eq(mlsba__gmodel_insert_real_point(&g, 0.5), 0);
  ck_assert_uint_eq(mlsba__gmodel_points(&g), 4); /* 1 only: t(0) = 0 */
  ck_assert_int_ge(mlsba__gmodel_find(&g, 1), 0);
  ck_assert_int_lt(mlsba__gmodel_find(&g, 0), 0);
  /* Points stay sorted in the model the partitioners read. */
  double prev = 0, x;
  for (size_t i = 0; i < mlsba_model_num_points(g.model); i++) {
    ck_assert_int_eq(mlsba_model_get_point(g.model, i, &x, NULL), 0);
    ck_assert_double_gt(x, prev);
    prev = x;
  }
  /* Beyond the group's capacity there is no point to build. */
  ck_assert_int_eq(mlsba__gmodel_insert_integer_point(&g, 101), MLSBA_ERANGE);
  mlsba__gmodel_free(&g);
  mlsba_model_destroy(dev[0]);
  mlsba_model_destroy(dev[1]);
}
END_TEST

START_TEST(single_device_group_is_its_device_model) {
  mlsba_model_t *dev[1] = {random_paper_model(&(rng_t){.state = 3}, 5, 100)};
  mlsba__gmodel_t g;
  ck_assert_int_eq(mlsba__gmodel_init(&g, (const mlsba_model_t *const *)dev, 1,
                                      100, defaults()),
                   0);
  ck_assert_ptr_eq(g.model, dev[0]);
  ck_assert_uint_eq(mlsba__gmodel_points(&g), mlsba_model_num_points(dev[0]));
  ck_assert_int_eq(mlsba__gmodel_insert_real_point(&g, 42.5), 0);
  ck_assert_uint_eq(mlsba__gmodel_points(&g), mlsba_model_num_points(dev[0]));
  int64_t beta;
  ck_assert_int_eq(mlsba__gmodel_beta(&g, 17, &beta), 0);
  ck_assert_int_eq(beta, 17);
  double t;
  ck_assert_int_eq(mlsba__gmodel_time(&g, 17, &t), 0);
  ck_assert_double_eq(t, oracle_time(dev[0], 17));
  mlsba__gmodel_free(&g);
  mlsba_model_destroy(dev[0]);
}
END_TEST

START_TEST(group_capacity_is_the_sum_of_device_caps) {
  mlsba_model_t *dev[3] = {constant_model(10), constant_model(30),
                           constant_model(5)};
  ck_assert_int_eq(mlsba_model_set_max_load(dev[0], 7), 0);
  ck_assert_int_eq(mlsba_model_set_max_load(dev[1], 0), 0);
  ck_assert_int_eq(mlsba_model_set_max_load(dev[2], 5), 0);
  mlsba__gmodel_t g;
  ck_assert_int_eq(mlsba__gmodel_init(&g, (const mlsba_model_t *const *)dev, 3,
                                      100, defaults()),
                   0);
  ck_assert_int_eq(g.cap, 12);
  int64_t beta[3];
  ck_assert_int_eq(mlsba__gmodel_beta(&g, 12, beta), 0);
  ck_assert_int_eq(beta[0], 7);
  ck_assert_int_eq(beta[1], 0);
  ck_assert_int_eq(beta[2], 5);
  mlsba__gmodel_free(&g);
  for (int i = 0; i < 3; i++)
    mlsba_model_destroy(dev[i]);
}
END_TEST

static Suite *gmodel_suite(void) {
  Suite *s = suite_create("gmodel");
  TCase *tc = tcase_create("procedures");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, integer_point_carries_the_best_distribution);
  tcase_add_test(tc, real_point_makes_floor_and_ceil_exact);
  tcase_add_test(tc, single_device_group_is_its_device_model);
  tcase_add_test(tc, group_capacity_is_the_sum_of_device_caps);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(gmodel_suite()); }
