/* The partitioners' common promise (lib/partition/partition.c, the
 * algorithm table), on the edges of what a model accepts (the bounds
 * themselves are test_fpm's): on every accepted model each algorithm
 * returns loads that sum to
 * N within every max_load, with no signal, and in time O(p log N): the
 * per-test timeout (10 s) is the bound, where the linear loops this suite
 * guards against took minutes. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mlsba.h"
#include "partition/grouped.h"
#include "support/random_models.h"
#include "support/run_suite.h"

#define MAXP 64

/* Runs algorithm a and checks the promise: 0 and loads summing to n
 * within caps, each group's alpha the sum of its devices' loads. */
static void check_algo(mlsba_algorithm_t a, mlsba_model_t **m,
                       const size_t *size, size_t q, int64_t n) {
  size_t p = 0;
  for (size_t g = 0; g < q; g++)
    p += size[g];
  int64_t *alpha = calloc(q, sizeof *alpha), *beta = calloc(p, sizeof *beta);
  size_t *points = calloc(q, sizeof *points);
  ck_assert_ptr_nonnull(alpha);
  ck_assert_ptr_nonnull(beta);
  ck_assert_ptr_nonnull(points);
  int err = mlsba_partition_groups(a, (const mlsba_model_t *const *)m, size, q,
                                   n, NULL, alpha, beta, points, NULL);
  ck_assert_msg(err == 0, "%s at n = %lld: %s", mlsba_algorithm_name(a),
                (long long)n, mlsba_last_error());
  int64_t sum = 0;
  for (size_t g = 0, j = 0; g < q; g++) {
    int64_t gs = 0;
    for (size_t k = 0; k < size[g]; k++, j++) {
      int64_t cap = mlsba_model_max_load(m[j]);
      ck_assert_msg(beta[j] >= 0 && (cap < 0 || beta[j] <= cap),
                    "%s: device %zu got %lld (max_load %lld)",
                    mlsba_algorithm_name(a), j, (long long)beta[j],
                    (long long)cap);
      gs += beta[j];
    }
    ck_assert_int_eq(gs, alpha[g]);
    sum += gs;
  }
  ck_assert_msg(sum == n, "%s: loads sum to %lld, not %lld",
                mlsba_algorithm_name(a), (long long)sum, (long long)n);
  free(alpha);
  free(beta);
  free(points);
}

/* Every algorithm; MLFBA2 builds every point 1..N by definition, so only
 * where N is small. */
static void check_all(mlsba_model_t **m, const size_t *size, size_t q,
                      int64_t n) {
  for (int a = 0; a < MLSBA_ALGO_COUNT; a++)
    if (a != MLSBA_ALGO_MLFBA2 || n <= 2000)
      check_algo((mlsba_algorithm_t)a, m, size, q, n);
}

static mlsba_model_t *model_of(const double (*pt)[2], size_t k) {
  mlsba_model_t *m = NULL;
  ck_assert_int_eq(mlsba_model_create(&m), 0);
  for (size_t i = 0; i < k; i++)
    ck_assert_msg(mlsba_model_set_point(m, pt[i][0], pt[i][1]) == 0,
                  "point (%g, %g): %s", pt[i][0], pt[i][1], mlsba_last_error());
  return m;
}

static void destroy_all(mlsba_model_t **m, size_t p) {
  for (size_t i = 0; i < p; i++)
    mlsba_model_destroy(m[i]);
}

/* The speeds of the issue, brought to the bounds: the fastest and slowest
 * devices the library accepts, alone and in groups, at N from 0 to 2^53. */
START_TEST(every_algorithm_on_speeds_at_the_bounds) {
  static const double fast[][2] = {{1, MLSBA_SPEED_MAX},
                                   {2, MLSBA_SPEED_MAX / 1.7}};
  static const double slow[][2] = {{1, MLSBA_SPEED_MIN},
                                   {2, 2 * MLSBA_SPEED_MIN}};
  static const double wide[][2] = {{MLSBA_LOAD_MIN, MLSBA_SPEED_MIN},
                                   {MLSBA_LOAD_MAX, MLSBA_SPEED_MAX}};
  static const double fall[][2] = {{MLSBA_LOAD_MIN, MLSBA_SPEED_MAX},
                                   {MLSBA_LOAD_MAX, MLSBA_SPEED_MIN}};
  const double(*shape[])[2] = {fast, slow, wide, fall};
  static const int64_t ns[] = {0,
                               1,
                               2,
                               3,
                               50,
                               100,
                               1000000007,
                               INT64_C(1) << 40,
                               INT64_C(1000000000000),
                               INT64_C(1) << 53};
  static const size_t sizes[][3] = {{1, 1, 0}, {2, 0, 0}, {2, 1, 3}};
  static const size_t nq[] = {2, 1, 3};
  for (size_t c = 0; c < 3; c++) {
    size_t p = 0;
    for (size_t g = 0; g < nq[c]; g++)
      p += sizes[c][g];
    for (size_t s0 = 0; s0 < 4; s0++) {
      for (size_t s1 = 0; s1 < 4; s1++) {
        mlsba_model_t *m[6];
        for (size_t j = 0; j < p; j++)
          m[j] = model_of(j % 2 ? shape[s1] : shape[s0], 2);
        for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
          check_all(m, sizes[c], nq[c], ns[k]);
        destroy_all(m, p);
      }
    }
  }
}
END_TEST

/* The denormal speeds of the issue inside a group at N = 1 crashed MLSBA
 * (the group point could not be built and the empty model was read); they
 * are refused now, and the smallest accepted speed in a group works. */
START_TEST(a_group_of_the_slowest_devices_at_one_unit) {
  static const double denormal[][2] = {{1, 4.9e-324}};
  mlsba_model_t *m = NULL;
  ck_assert_int_eq(mlsba_model_create(&m), 0);
  ck_assert_int_eq(mlsba_model_set_point(m, denormal[0][0], denormal[0][1]),
                   MLSBA_EINVAL);
  mlsba_model_destroy(m);
  static const double slowest[][2] = {{1, MLSBA_SPEED_MIN}};
  static const double fastest[][2] = {{1, MLSBA_SPEED_MAX}};
  mlsba_model_t *g[4] = {model_of(slowest, 1), model_of(slowest, 1),
                         model_of(fastest, 1), model_of(slowest, 1)};
  size_t size[] = {2, 2};
  for (int64_t n = 0; n <= 5; n++)
    check_all(g, size, 2, n);
  destroy_all(g, 4);
}
END_TEST

/* ---- item 3: the two DLT cases of the issue ------------------------- */

START_TEST(dlt_loads_sum_to_n_on_the_cases_of_the_issue) {
  static const double a[][2] = {{37, 68.96}, {244, 454.77}};
  static const double b[][2] = {{7, 1.93}, {140, 67.53}};
  mlsba_model_t *m[2] = {model_of(a, 2), model_of(b, 2)};
  size_t size[] = {1, 1};
  for (int64_t n = 0; n <= 300; n++)
    check_all(m, size, 2, n);
  size_t one[] = {2};
  check_all(m, one, 1, 50);
  destroy_all(m, 2);
}
END_TEST

/* ---- item 3 at large: random models, every algorithm ---------------- */

START_TEST(every_algorithm_sums_to_n_on_random_models) {
  rng_t r = {0x16u + (uint64_t)_i};
  for (int trial = 0; trial < 40; trial++) {
    size_t q = (size_t)rng_range(&r, 1, 5), size[5], p = 0;
    for (size_t g = 0; g < q; g++)
      p += size[g] = (size_t)rng_range(&r, 1, 3);
    mlsba_model_t *m[15];
    for (size_t j = 0; j < p; j++) {
      m[j] = rng_range(&r, 0, 1) ? random_wild_model(&r, 6, 5000)
                                 : random_paper_model(&r, 6, 5000);
      ck_assert_ptr_nonnull(m[j]);
    }
    int64_t n = rng_range(&r, 0, 3000);
    check_all(m, size, q, n);
    destroy_all(m, p);
  }
}
END_TEST

/* ---- item 7: no loop linear in N ----------------------------------- */

/* Models whose time jumps (far from the papers' shape), with the loads at
 * the ends of the range: the crossings jump by far more than one unit, so
 * rounding down and refining one unit at a time would take ~N steps. */
START_TEST(no_algorithm_is_linear_in_n_on_jumping_models) {
  static const double jump[][2] = {
      {1, 1e-20}, {1e6, 1e25}, {1e12, 1e-10}, {MLSBA_LOAD_MAX, 1e30}};
  static const double flat[][2] = {{1, 1}};
  static const double affine[][2] = {{1e3, 1e6}, {MLSBA_LOAD_MAX, 1e6}};
  mlsba_model_t *m[5] = {model_of(jump, 4), model_of(flat, 1),
                         model_of(affine, 2), model_of(jump, 4),
                         model_of(jump, 2)};
  size_t size[] = {1, 2, 2};
  static const int64_t ns[] = {INT64_C(1000000000), INT64_C(10000000000),
                               INT64_C(1000000000000),
                               INT64_C(1000000000000000), INT64_C(1) << 53};
  for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
    check_all(m, size, 3, ns[k]);
  destroy_all(m, 5);
}
END_TEST

/* Many identical devices at 2^53 units: the crossings' sum must be exact
 * to the unit (a plain sum of 10^4 values near 2^40 is not), or the
 * rounding pays a pass over the devices per unit it is off. */
START_TEST(ten_thousand_devices_at_two_to_the_53) {
  enum { P = 10000 };
  mlsba_model_t **m = malloc(P * sizeof *m);
  size_t *size = malloc(P * sizeof *size);
  ck_assert_ptr_nonnull(m);
  ck_assert_ptr_nonnull(size);
  rng_t r = {53};
  for (size_t j = 0; j < P; j++) {
    double pts[2][2] = {{1, 1 + rng_uniform(&r) * 1e6},
                        {MLSBA_LOAD_MAX, 1 + rng_uniform(&r) * 1e6}};
    m[j] = model_of((const double(*)[2])pts, 2);
    size[j] = 1;
  }
  static const mlsba_algorithm_t algos[] = {MLSBA_ALGO_MLSBA, MLSBA_ALGO_SLBA,
                                            MLSBA_ALGO_MULTIPLE_CPM,
                                            MLSBA_ALGO_DLT};
  for (size_t a = 0; a < 4; a++)
    check_algo(algos[a], m, size, P, INT64_C(1) << 53);
  destroy_all(m, P);
  free(m);
  free(size);
}
END_TEST

/* ---- the rounding every baseline shares ----------------------------- */

START_TEST(round_shares_is_exact_on_shares_far_from_the_total) {
  /* Shares far below, far above, not numbers, and beyond the caps: the
   * result still sums to the total within the caps, at once. */
  double below[3] = {0, 0, 0}, above[3] = {1e15, 1e15, 1e15},
         junk[3] = {NAN, INFINITY, -1};
  int64_t cap[3] = {INT64_C(1) << 53, 5, INT64_C(1) << 52};
  int64_t out[3];
  const double *cases[] = {below, above, junk};
  static const int64_t totals[] = {0, 7, INT64_C(1000000000000),
                                   (INT64_C(1) << 52) + 5};
  for (size_t c = 0; c < 3; c++) {
    for (size_t t = 0; t < 4; t++) {
      mlsba__round_shares(cases[c], cap, 3, totals[t], out);
      int64_t sum = 0;
      for (size_t i = 0; i < 3; i++) {
        ck_assert(out[i] >= 0 && out[i] <= cap[i]);
        sum += out[i];
      }
      ck_assert_int_eq(sum, totals[t]);
    }
  }
}
END_TEST

static Suite *partition_suite(void) {
  Suite *s = suite_create("partition");
  TCase *range = tcase_create("accepted range");
  tcase_set_timeout(range, 10);
  tcase_add_test(range, every_algorithm_on_speeds_at_the_bounds);
  tcase_add_test(range, a_group_of_the_slowest_devices_at_one_unit);
  suite_add_tcase(s, range);
  TCase *sums = tcase_create("loads sum to N");
  tcase_set_timeout(sums, 10);
  tcase_add_test(sums, dlt_loads_sum_to_n_on_the_cases_of_the_issue);
  tcase_add_loop_test(sums, every_algorithm_sums_to_n_on_random_models, 0, 8);
  tcase_add_test(sums, round_shares_is_exact_on_shares_far_from_the_total);
  suite_add_tcase(s, sums);
  TCase *time = tcase_create("no loop linear in N");
  tcase_set_timeout(time, 10);
  tcase_add_test(time, no_algorithm_is_linear_in_n_on_jumping_models);
  tcase_add_test(time, ten_thousand_devices_at_two_to_the_53);
  suite_add_tcase(s, time);
  return s;
}

int main(void) { return run_suite(partition_suite()); }
