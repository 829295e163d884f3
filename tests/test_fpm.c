/* Functional performance model: points, speed, time, max_load and the
 * intersection with a line through the origin. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mlsba.h"
#include "support/random_models.h"
#include "support/run_suite.h"

static mlsba_model_t *model_of(const double (*pts)[2], int n) {
  mlsba_model_t *m = NULL;
  ck_assert_int_eq(mlsba_model_create(&m), 0);
  for (int i = 0; i < n; i++)
    ck_assert_int_eq(mlsba_model_set_point(m, pts[i][0], pts[i][1]), 0);
  return m;
}

static double speed(const mlsba_model_t *m, double x) {
  double s;
  ck_assert_int_eq(mlsba_model_speed(m, x, &s), 0);
  return s;
}

static double time_of(const mlsba_model_t *m, double x) {
  double t;
  ck_assert_int_eq(mlsba_model_time(m, x, &t), 0);
  return t;
}

static double load_by(const mlsba_model_t *m, double T) {
  double x;
  ck_assert_int_eq(mlsba_model_load_by_time(m, T, &x), 0);
  return x;
}

START_TEST(points_are_kept_sorted_and_replaced_in_place) {
  static const double pts[][2] = {{400, 4}, {100, 1}, {200, 2.5}, {300, 3}};
  mlsba_model_t *m = model_of(pts, 4);
  ck_assert_uint_eq(mlsba_model_num_points(m), 4);
  double x, s, prev = 0;
  for (size_t i = 0; i < 4; i++) {
    ck_assert_int_eq(mlsba_model_get_point(m, i, &x, &s), 0);
    ck_assert_double_gt(x, prev);
    prev = x;
  }
  ck_assert_int_eq(mlsba_model_set_point(m, 200, 7), 0);
  ck_assert_uint_eq(mlsba_model_num_points(m), 4);
  ck_assert_int_eq(mlsba_model_get_point(m, 1, &x, &s), 0);
  ck_assert_double_eq(x, 200);
  ck_assert_double_eq(s, 7);
  ck_assert_int_eq(mlsba_model_get_point(m, 4, &x, &s), MLSBA_ERANGE);
  mlsba_model_destroy(m);
}
END_TEST

START_TEST(speed_is_linear_between_points_and_constant_beyond) {
  static const double pts[][2] = {{100, 10}, {300, 30}, {500, 20}};
  mlsba_model_t *m = model_of(pts, 3);
  ck_assert_double_eq(speed(m, 0), 10);
  ck_assert_double_eq(speed(m, 50), 10);
  ck_assert_double_eq(speed(m, 100), 10);
  ck_assert_double_eq_tol(speed(m, 200), 20, 1e-12);
  ck_assert_double_eq(speed(m, 300), 30);
  ck_assert_double_eq_tol(speed(m, 400), 25, 1e-12);
  ck_assert_double_eq(speed(m, 500), 20);
  ck_assert_double_eq(speed(m, 1e9), 20);
  ck_assert_double_eq(time_of(m, 0), 0);
  ck_assert_double_eq_tol(time_of(m, 400), 16, 1e-12);
  ck_assert_double_eq_tol(time_of(m, 1000), 50, 1e-12);
  mlsba_model_destroy(m);
}
END_TEST

START_TEST(load_by_time_solves_each_region_exactly) {
  static const double pts[][2] = {{100, 10}, {300, 30}, {500, 20}};
  mlsba_model_t *m = model_of(pts, 3);
  /* Before the first point: s = 10, x = 10 T. */
  ck_assert_double_eq_tol(load_by(m, 5), 50, 1e-9);
  /* At a point. */
  ck_assert_double_eq_tol(load_by(m, 10), 300, 1e-9);
  /* Inside the falling segment: x = T (30 - (x - 300) / 20). */
  double T = 12, x = load_by(m, T);
  ck_assert_double_eq_tol(x, T * speed(m, x), 1e-9);
  ck_assert(x > 300 && x < 500);
  /* Beyond the last point: s = 20, x = 20 T. */
  ck_assert_double_eq_tol(load_by(m, 100), 2000, 1e-9);
  ck_assert_double_eq(load_by(m, 0), 0);
  /* max_load caps the answer. */
  ck_assert_int_eq(mlsba_model_set_max_load(m, 1234), 0);
  ck_assert_int_eq(mlsba_model_max_load(m), 1234);
  ck_assert_double_eq(load_by(m, 100), 1234);
  ck_assert_double_eq_tol(load_by(m, 10), 300, 1e-9);
  mlsba_model_destroy(m);
}
END_TEST

/* For paper-shaped models t is increasing, so the answer x satisfies
 * t(x) = T and every larger load takes longer. */
/* Compute at 100 units/s, transfer 0.5 s + 0.01 s per unit: 100 units
 * take 1 + 0.5 + 1 s; nothing takes nothing. */
START_TEST(a_transfer_adds_its_affine_cost_to_the_time) {
  mlsba_model_t *m = NULL;
  ck_assert_int_eq(mlsba_model_create(&m), 0);
  ck_assert_int_eq(mlsba_model_set_point(m, 10, 100), 0);
  ck_assert_int_eq(mlsba_model_set_transfer(m, 0.5, 0.01), 0);
  ck_assert_double_eq_tol(time_of(m, 100), 2.5, 1e-12);
  ck_assert_double_eq(time_of(m, 0), 0);
  ck_assert_double_eq_tol(load_by(m, 2.5), 100, 1e-9);
  ck_assert_double_eq(load_by(m, 0.4), 0); /* not even the latency */
  double lat, per;
  mlsba_model_t *c = NULL;
  ck_assert_int_eq(mlsba_model_clone(m, &c), 0);
  ck_assert_int_eq(mlsba_model_get_transfer(c, &lat, &per), 0);
  ck_assert_double_eq(lat, 0.5);
  ck_assert_double_eq(per, 0.01);
  ck_assert_int_eq(mlsba_model_set_transfer(m, -1, 0), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_model_set_transfer(m, 0, NAN), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_model_set_transfer(m, 0, 0), 0);
  ck_assert_double_eq_tol(time_of(m, 100), 1, 1e-12);
  mlsba_model_destroy(m);
  mlsba_model_destroy(c);
}
END_TEST

/* The intersection with a transfer solves a quadratic on each segment:
 * it inverts t(x) as exactly as the plain one, on every segment and
 * beyond both ends. */
START_TEST(load_by_time_inverts_time_with_a_transfer) {
  rng_t r = {.state = 43};
  for (int trial = 0; trial < 2000; trial++) {
    mlsba_model_t *m = random_paper_model(&r, 12, 1e5);
    double s0;
    ck_assert_int_eq(mlsba_model_get_point(m, 0, NULL, &s0), 0);
    /* Transfers from far below to far above the compute per unit. */
    double per = pow(10, -3 + 6 * rng_uniform(&r)) / s0;
    double lat = rng_uniform(&r) < 0.3 ? 0 : time_of(m, 1e3) * rng_uniform(&r);
    ck_assert_int_eq(mlsba_model_set_transfer(m, lat, per), 0);
    double x = rng_uniform(&r) * 2e5;
    double T = time_of(m, x);
    double back = load_by(m, T);
    ck_assert_double_eq_tol(back, x, 1e-9 * (1 + x));
    ck_assert_double_le(time_of(m, back), T * (1 + 1e-12));
    ck_assert_double_gt(time_of(m, back * (1 + 1e-9) + 1e-9), T);
    mlsba_model_destroy(m);
  }
}
END_TEST

START_TEST(load_by_time_inverts_time_on_random_models) {
  rng_t r = {.state = 42};
  for (int trial = 0; trial < 2000; trial++) {
    mlsba_model_t *m = random_paper_model(&r, 12, 1e5);
    double x = rng_uniform(&r) * 2e5;
    double T = time_of(m, x);
    double back = load_by(m, T);
    ck_assert_double_eq_tol(back, x, 1e-9 * (1 + x));
    ck_assert_double_le(time_of(m, back), T * (1 + 1e-12));
    ck_assert_double_gt(time_of(m, back * (1 + 1e-9) + 1e-9), T);
    mlsba_model_destroy(m);
  }
}
END_TEST

/* Without the shape guarantee the answer is still the largest load
 * finishing by T: checked against a dense scan of every segment. */
START_TEST(load_by_time_is_the_largest_load_on_wild_models) {
  rng_t r = {.state = 7};
  for (int trial = 0; trial < 500; trial++) {
    mlsba_model_t *m = random_wild_model(&r, 8, 1000);
    double T = time_of(m, rng_uniform(&r) * 1500);
    double x = load_by(m, T);
    ck_assert_double_le(time_of(m, x), T * (1 + 1e-9));
    for (double y = x + 1e-3 * (1 + x); y < 3000; y += 0.37)
      ck_assert_msg(time_of(m, y) > T * (1 - 1e-12),
                    "trial %d: load %g finishes by %g but answer was %g", trial,
                    y, T, x);
    mlsba_model_destroy(m);
  }
}
END_TEST

START_TEST(replacing_with_a_slower_speed_updates_intersections) {
  static const double pts[][2] = {{100, 100}, {200, 150}, {300, 160}};
  mlsba_model_t *m = model_of(pts, 3);
  double before = load_by(m, 1.5);
  ck_assert_int_eq(mlsba_model_set_point(m, 300, 10), 0); /* much slower */
  ck_assert_int_eq(mlsba_model_set_point(m, 200, 20), 0);
  double after = load_by(m, 1.5);
  ck_assert_double_lt(after, before);
  ck_assert_double_le(time_of(m, after), 1.5 * (1 + 1e-12));
  ck_assert_int_eq(mlsba_model_set_point(m, 300, 500), 0); /* faster again */
  ck_assert_double_eq_tol(load_by(m, 1.5), 750, 1e-9);
  mlsba_model_destroy(m);
}
END_TEST

START_TEST(bad_values_are_rejected_and_leave_the_model_unchanged) {
  static const double pts[][2] = {{100, 10}};
  mlsba_model_t *m = model_of(pts, 1);
  const double bad[][2] = {{0, 1},  {-1, 1},  {NAN, 1},  {INFINITY, 1},
                           {10, 0}, {10, -2}, {10, NAN}, {10, INFINITY}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    ck_assert_int_eq(mlsba_model_set_point(m, bad[i][0], bad[i][1]),
                     MLSBA_EINVAL);
  ck_assert_uint_eq(mlsba_model_num_points(m), 1);
  ck_assert_double_eq(speed(m, 100), 10);
  ck_assert_int_eq(mlsba_model_set_max_load(m, -5), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_model_max_load(m), MLSBA_NO_MAX_LOAD);
  double out;
  ck_assert_int_eq(mlsba_model_speed(m, -1, &out), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_model_time(m, NAN, &out), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_model_load_by_time(m, INFINITY, &out), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_model_speed(m, 1, NULL), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_model_speed(NULL, 1, &out), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_model_set_point(NULL, 1, 1), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_model_create(NULL), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_model_clear(m), 0);
  ck_assert_int_eq(mlsba_model_time(m, 1, &out), MLSBA_EINVAL);
  mlsba_model_destroy(NULL);
  mlsba_model_destroy(m);
}
END_TEST

START_TEST(clone_is_independent) {
  static const double pts[][2] = {{100, 10}, {200, 30}};
  mlsba_model_t *m = model_of(pts, 2), *c = NULL;
  ck_assert_int_eq(mlsba_model_set_max_load(m, 150), 0);
  ck_assert_int_eq(mlsba_model_clone(m, &c), 0);
  ck_assert_int_eq(mlsba_model_set_point(m, 150, 1), 0);
  ck_assert_uint_eq(mlsba_model_num_points(c), 2);
  ck_assert_int_eq(mlsba_model_max_load(c), 150);
  ck_assert_double_eq_tol(speed(c, 150), 20, 1e-12);
  ck_assert_double_eq(speed(m, 150), 1);
  mlsba_model_destroy(m);
  mlsba_model_destroy(c);
}
END_TEST

START_TEST(many_points_in_any_order) {
  rng_t r = {.state = 99};
  mlsba_model_t *m = NULL;
  ck_assert_int_eq(mlsba_model_create(&m), 0);
  for (int i = 0; i < 5000; i++)
    ck_assert_int_eq(
        mlsba_model_set_point(m, (double)rng_range(&r, 1, 3000), 1 + i % 17),
        0);
  size_t n = mlsba_model_num_points(m);
  ck_assert_uint_le(n, 3000);
  double prev = 0, x;
  for (size_t i = 0; i < n; i++) {
    ck_assert_int_eq(mlsba_model_get_point(m, i, &x, NULL), 0);
    ck_assert_double_gt(x, prev);
    prev = x;
  }
  mlsba_model_destroy(m);
}
END_TEST

/* The accepted range of a model's points, and messages naming the field. */

START_TEST(set_point_refuses_values_outside_the_bounds_naming_them) {
  mlsba_model_t *m = NULL;
  ck_assert_int_eq(mlsba_model_create(&m), 0);
  static const struct {
    double x, s;
    const char *says;
  } bad[] = {
      {1, 1e308, "speed"},     {1, 1.7e308, "speed"}, {1, 4.9e-324, "speed"},
      {1, 1e-31, "speed"},     {1, 2e30, "speed"},    {1, NAN, "speed"},
      {1, -INFINITY, "speed"}, {1e308, 1, "load"},    {1e16, 1, "load"},
      {1e-7, 1, "load"},       {4.9e-324, 1, "load"}, {NAN, 1, "load"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ck_assert_int_eq(mlsba_model_set_point(m, bad[i].x, bad[i].s),
                     MLSBA_EINVAL);
    ck_assert_msg(strstr(mlsba_last_error(), bad[i].says) != NULL,
                  "(%g, %g): '%s' does not name the %s", bad[i].x, bad[i].s,
                  mlsba_last_error(), bad[i].says);
    ck_assert_uint_eq(mlsba_model_num_points(m), 0);
  }
  /* The bounds themselves are accepted. */
  ck_assert_int_eq(mlsba_model_set_point(m, MLSBA_LOAD_MIN, MLSBA_SPEED_MIN),
                   0);
  ck_assert_int_eq(mlsba_model_set_point(m, MLSBA_LOAD_MAX, MLSBA_SPEED_MAX),
                   0);
  ck_assert_int_eq(mlsba_model_set_max_load(m, INT64_C(1) << 53), 0);
  ck_assert_int_eq(mlsba_model_set_max_load(m, (INT64_C(1) << 53) + 1),
                   MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "max_load"));
  ck_assert_int_eq(mlsba_model_set_max_load(m, INT64_MAX), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_model_set_max_load(m, -2), MLSBA_EINVAL);
  double x;
  ck_assert_int_eq(mlsba_model_load_by_time(m, 1e300, &x), 0);
  ck_assert(x <= MLSBA_LOAD_MAX);
  mlsba_model_destroy(m);
}
END_TEST

static Suite *fpm_suite(void) {
  Suite *s = suite_create("fpm");
  TCase *tc = tcase_create("model");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, points_are_kept_sorted_and_replaced_in_place);
  tcase_add_test(tc, speed_is_linear_between_points_and_constant_beyond);
  tcase_add_test(tc, load_by_time_solves_each_region_exactly);
  tcase_add_test(tc, load_by_time_inverts_time_on_random_models);
  tcase_add_test(tc, a_transfer_adds_its_affine_cost_to_the_time);
  tcase_add_test(tc, load_by_time_inverts_time_with_a_transfer);
  tcase_add_test(tc, load_by_time_is_the_largest_load_on_wild_models);
  tcase_add_test(tc, replacing_with_a_slower_speed_updates_intersections);
  tcase_add_test(tc, bad_values_are_rejected_and_leave_the_model_unchanged);
  tcase_add_test(tc, clone_is_independent);
  tcase_add_test(tc, many_points_in_any_order);
  tcase_add_test(tc, set_point_refuses_values_outside_the_bounds_naming_them);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(fpm_suite()); }
