/* MLSBA and MLFBA2 against brute-force optima on random grouped platforms;
 * MLFBA1 (the exhaustive multi-level search) against the same oracles. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "mlsba.h"
#include "partition/grouped.h"
#include "support/oracle.h"
#include "support/random_models.h"
#include "support/run_suite.h"

#define MAXQ 16
#define MAXP 64

typedef struct {
  mlsba_model_t *m[MAXP];
  size_t size[MAXQ];
  size_t q, p;
} grouped_t;

static const mlsba_model_t *const *models_of(const grouped_t *pl) {
  return (const mlsba_model_t *const *)pl->m;
}

static void grouped_free(grouped_t *pl) {
  for (size_t i = 0; i < pl->p; i++)
    mlsba_model_destroy(pl->m[i]);
}

/* q groups of 1..max_size devices of the papers' shape; a fraction of the
 * devices get a max_load (possibly 0); capacity is kept sufficient. */
static void random_grouped(rng_t *r, grouped_t *pl, size_t q, size_t max_size,
                           int64_t n, double x_max, double cap_prob) {
  pl->q = q;
  pl->p = 0;
  int64_t total = 0;
  for (size_t g = 0; g < q; g++) {
    pl->size[g] = (size_t)rng_range(r, 1, (int64_t)max_size);
    for (size_t d = 0; d < pl->size[g]; d++) {
      mlsba_model_t *m = random_paper_model(r, 8, x_max);
      if (rng_uniform(r) < cap_prob) {
        int64_t cap = rng_range(r, 0, n);
        ck_assert_int_eq(mlsba_model_set_max_load(m, cap), 0);
        total += cap;
      } else {
        total += n;
      }
      pl->m[pl->p++] = m;
    }
  }
  if (total < n)
    ck_assert_int_eq(mlsba_model_set_max_load(pl->m[0], MLSBA_NO_MAX_LOAD), 0);
}

typedef struct {
  int64_t alpha[MAXQ], beta[MAXP];
  size_t points[MAXQ];
  double makespan;
} result_t;

/* Runs an algorithm, choosing line B as search says, and checks what every
 * result must satisfy. */
static void run_with(mlsba_algorithm_t algo, mlsba_line_search_t search,
                     const grouped_t *pl, int64_t n, result_t *res) {
  mlsba_partition_info_t info;
  mlsba_partition_opts_t opts;
  mlsba_partition_opts_init(&opts);
  opts.line_search = search;
  int err =
      mlsba_partition_groups(algo, models_of(pl), pl->size, pl->q, n, &opts,
                             res->alpha, res->beta, res->points, &info);
  ck_assert_msg(err == 0, "%s: %s", mlsba_algorithm_name(algo),
                mlsba_last_error());
  int64_t total = 0;
  size_t j = 0;
  double worst = 0;
  for (size_t g = 0; g < pl->q; g++) {
    int64_t in_group = 0;
    for (size_t d = 0; d < pl->size[g]; d++, j++) {
      ck_assert_int_ge(res->beta[j], 0);
      int64_t cap = mlsba_model_max_load(pl->m[j]);
      if (cap != MLSBA_NO_MAX_LOAD)
        ck_assert_int_le(res->beta[j], cap);
      in_group += res->beta[j];
      double t = oracle_time(pl->m[j], res->beta[j]);
      worst = t > worst ? t : worst;
    }
    ck_assert_int_eq(in_group, res->alpha[g]);
    total += res->alpha[g];
  }
  ck_assert_int_eq(total, n);
  ck_assert_double_eq(info.makespan, worst);
  res->makespan = worst;
}

static void run(mlsba_algorithm_t algo, const grouped_t *pl, int64_t n,
                result_t *res) {
  run_with(algo, MLSBA_LINE_INTERPOLATE, pl, n, res);
}

START_TEST(mlsba_finds_the_flat_optimum_on_small_platforms) {
  rng_t r = {.state = 100 + (uint64_t)_i};
  for (int trial = 0; trial < 400; trial++) {
    grouped_t pl;
    int64_t n = rng_range(&r, 0, 40);
    random_grouped(&r, &pl, (size_t)rng_range(&r, 1, 4), 3, n,
                   rng_uniform(&r) < 0.5 ? 30 : 1e4, 0.3);
    result_t a, b;
    run(MLSBA_ALGO_MLSBA, &pl, n, &a);
    run(MLSBA_ALGO_MLFBA2, &pl, n, &b);
    double best = oracle_search(models_of(&pl), (int)pl.p, n);
    result_t c;
    run_with(MLSBA_ALGO_MLSBA, MLSBA_LINE_BISECT_ANGLE, &pl, n, &c);
    ck_assert_msg(c.makespan == best,
                  "trial %d: mlsba (angle bisection) %.17g, optimum %.17g",
                  trial, c.makespan, best);
    ck_assert_msg(a.makespan == best,
                  "trial %d q=%zu p=%zu n=%lld: mlsba %.17g, optimum %.17g",
                  trial, pl.q, pl.p, (long long)n, a.makespan, best);
    ck_assert_msg(b.makespan == best, "trial %d: mlfba2 %.17g, optimum %.17g",
                  trial, b.makespan, best);
    /* MLFBA1, the exhaustive search at both levels, agrees. */
    mlsba__grouped_t G = {.models = models_of(&pl),
                          .size = pl.size,
                          .q = pl.q,
                          .p = pl.p,
                          .n = n};
    size_t first[MAXQ];
    for (size_t g = 0, f = 0; g < pl.q; f += pl.size[g++])
      first[g] = f;
    G.first = first;
    mlsba_partition_opts_init(&G.opts);
    int64_t alpha[MAXQ], beta[MAXP];
    double t1;
    ck_assert_int_eq(mlsba__mlfba1(&G, alpha, beta, &t1), 0);
    ck_assert_double_eq(t1, best);
    grouped_free(&pl);
  }
}
END_TEST

START_TEST(mlsba_matches_mlfba2_and_the_optimum_for_larger_n) {
  rng_t r = {.state = 200 + (uint64_t)_i};
  for (int trial = 0; trial < 60; trial++) {
    grouped_t pl;
    int64_t n = rng_range(&r, 1, 3000);
    random_grouped(&r, &pl, (size_t)rng_range(&r, 1, 8), 4, n,
                   rng_uniform(&r) < 0.5 ? (double)n : 1e4, 0.25);
    result_t a, b;
    run(MLSBA_ALGO_MLSBA, &pl, n, &a);
    run(MLSBA_ALGO_MLFBA2, &pl, n, &b);
    double best = oracle_search(models_of(&pl), (int)pl.p, n);
    result_t c;
    run_with(MLSBA_ALGO_MLSBA, MLSBA_LINE_BISECT_ANGLE, &pl, n, &c);
    ck_assert_msg(c.makespan == best,
                  "trial %d: mlsba (angle bisection) %.17g, optimum %.17g",
                  trial, c.makespan, best);
    ck_assert_msg(a.makespan == best,
                  "trial %d q=%zu p=%zu n=%lld: mlsba %.17g, optimum %.17g",
                  trial, pl.q, pl.p, (long long)n, a.makespan, best);
    ck_assert_double_eq(b.makespan, best);
    /* The partial models need far fewer points than the full ones. */
    size_t pa = 0, pb = 0;
    for (size_t g = 0; g < pl.q; g++) {
      pa += a.points[g];
      pb += b.points[g];
      ck_assert_uint_le(a.points[g], b.points[g]);
    }
    ck_assert_uint_le(pa, pb);
    grouped_free(&pl);
  }
}
END_TEST

START_TEST(mlsba_finds_the_optimum_for_huge_n) {
  rng_t r = {.state = 300 + (uint64_t)_i};
  for (int trial = 0; trial < 100; trial++) {
    grouped_t pl;
    int64_t n = rng_range(&r, 1, 1000000000);
    random_grouped(&r, &pl, (size_t)rng_range(&r, 1, MAXQ), 4, n,
                   rng_uniform(&r) < 0.5 ? (double)n : 1e4, 0.25);
    result_t a, c;
    run(MLSBA_ALGO_MLSBA, &pl, n, &a);
    run_with(MLSBA_ALGO_MLSBA, MLSBA_LINE_BISECT_ANGLE, &pl, n, &c);
    double best = oracle_search(models_of(&pl), (int)pl.p, n);
    ck_assert_double_eq(c.makespan, best);
    ck_assert_msg(a.makespan == best,
                  "trial %d q=%zu p=%zu n=%lld: mlsba %.17g, optimum %.17g",
                  trial, pl.q, pl.p, (long long)n, a.makespan, best);
    /* Logarithmic in n: far fewer points than units. */
    for (size_t g = 0; g < pl.q; g++)
      ck_assert_uint_le(a.points[g], 400);
    grouped_free(&pl);
  }
}
END_TEST

/* FPMs plus communication at both levels: every device pays its own
 * transfer (a latency and a cost per unit, up to ten times its compute);
 * MLSBA and MLFBA2 reach the brute-force optimum of that cost model. */
START_TEST(mlsba_with_transfers_finds_the_optimum) {
  rng_t r = {.state = 700 + (uint64_t)_i};
  for (int trial = 0; trial < 200; trial++) {
    grouped_t pl;
    int64_t n = rng_range(&r, 0, trial < 100 ? 40 : 3000);
    random_grouped(&r, &pl, (size_t)rng_range(&r, 1, trial < 100 ? 4 : 8),
                   trial < 100 ? 3 : 4, n,
                   rng_uniform(&r) < 0.5 ? (double)(n + 1) : 1e4, 0.25);
    for (size_t j = 0; j < pl.p; j++) {
      double t1 = oracle_time(pl.m[j], 1);
      if (rng_uniform(&r) < 0.8)
        ck_assert_int_eq(mlsba_model_set_transfer(pl.m[j],
                                                  rng_uniform(&r) * 20 * t1,
                                                  rng_uniform(&r) * 10 * t1),
                         0);
    }
    result_t a, b;
    run(MLSBA_ALGO_MLSBA, &pl, n, &a);
    run(MLSBA_ALGO_MLFBA2, &pl, n, &b);
    double best = oracle_search(models_of(&pl), (int)pl.p, n);
    ck_assert_msg(a.makespan == best,
                  "trial %d q=%zu p=%zu n=%lld: mlsba %.17g, optimum %.17g",
                  trial, pl.q, pl.p, (long long)n, a.makespan, best);
    ck_assert_msg(b.makespan == best, "trial %d: mlfba2 %.17g, optimum %.17g",
                  trial, b.makespan, best);
    grouped_free(&pl);
  }
}
END_TEST

START_TEST(slba_ignores_the_groups_and_is_optimal_too) {
  rng_t r = {.state = 400};
  for (int trial = 0; trial < 100; trial++) {
    grouped_t pl;
    int64_t n = rng_range(&r, 0, 100000);
    random_grouped(&r, &pl, (size_t)rng_range(&r, 1, 8), 3, n, 1e4, 0.2);
    result_t a, s;
    run(MLSBA_ALGO_MLSBA, &pl, n, &a);
    run(MLSBA_ALGO_SLBA, &pl, n, &s);
    ck_assert_double_eq(a.makespan, s.makespan);
    for (size_t g = 0; g < pl.q; g++)
      ck_assert_uint_eq(s.points[g], 0);
    grouped_free(&pl);
  }
}
END_TEST

/* The core that drives an accelerator computes too: a core+GPU group
 * gives its core a share (the gain of MLSBA over a devoted core). */
START_TEST(driving_core_gets_work) {
  mlsba_model_t *m[4];
  static const double gpu[][2] = {{100, 500}, {4000, 1500}, {8400, 1600}};
  static const double core[][2] = {{10, 70}, {100, 84}, {8400, 85}};
  for (int i = 0; i < 4; i++)
    ck_assert_int_eq(mlsba_model_create(&m[i]), 0);
  for (int k = 0; k < 3; k++) {
    ck_assert_int_eq(mlsba_model_set_point(m[0], core[k][0], core[k][1]), 0);
    ck_assert_int_eq(mlsba_model_set_point(m[1], gpu[k][0], gpu[k][1]), 0);
    ck_assert_int_eq(mlsba_model_set_point(m[2], core[k][0], core[k][1]), 0);
    ck_assert_int_eq(mlsba_model_set_point(m[3], core[k][0], core[k][1]), 0);
  }
  ck_assert_int_eq(mlsba_model_set_max_load(m[1], 6500), 0);
  size_t size[3] = {2, 1, 1};
  int64_t alpha[3], beta[4];
  size_t points[3];
  ck_assert_int_eq(
      mlsba_partition_groups(MLSBA_ALGO_MLSBA, (const mlsba_model_t *const *)m,
                             size, 3, 8400, NULL, alpha, beta, points, NULL),
      0);
  ck_assert_int_gt(beta[0], 100);  /* the driving core */
  ck_assert_int_le(beta[1], 6500); /* the GPU, within its memory */
  ck_assert_int_gt(alpha[0], alpha[1]);
  ck_assert_uint_eq(points[1], 3); /* a lone core's model is its own */
  for (int i = 0; i < 4; i++)
    mlsba_model_destroy(m[i]);
}
END_TEST

START_TEST(bad_arguments_are_rejected) {
  mlsba_model_t *m = NULL;
  ck_assert_int_eq(mlsba_model_create(&m), 0);
  ck_assert_int_eq(mlsba_model_set_point(m, 1, 1), 0);
  const mlsba_model_t *ms[2] = {m, m};
  size_t size[2] = {1, 1}, empty[2] = {1, 0};
  int64_t alpha[2], beta[2];
  ck_assert_int_eq(mlsba_partition_groups(MLSBA_ALGO_COUNT, ms, size, 2, 10,
                                          NULL, alpha, beta, NULL, NULL),
                   MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_partition_groups(MLSBA_ALGO_MLSBA, ms, empty, 2, 10,
                                          NULL, alpha, beta, NULL, NULL),
                   MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "group 1 is empty"));
  ck_assert_int_eq(mlsba_partition_groups(MLSBA_ALGO_MLSBA, ms, size, 0, 10,
                                          NULL, alpha, beta, NULL, NULL),
                   MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_partition_groups(MLSBA_ALGO_MLSBA, ms, size, 2, 10,
                                          NULL, NULL, beta, NULL, NULL),
                   MLSBA_EINVAL);
  mlsba_partition_opts_t opts;
  mlsba_partition_opts_init(&opts);
  opts.granularity = 128;
  ck_assert_int_eq(mlsba_partition_groups(MLSBA_ALGO_MLSBA, ms, size, 2, 1000,
                                          &opts, alpha, beta, NULL, NULL),
                   MLSBA_ENOTSUP);
  ck_assert_int_eq(mlsba_partition_groups(MLSBA_ALGO_SLBA, ms, size, 2, 1000,
                                          &opts, alpha, beta, NULL, NULL),
                   0);
  ck_assert_int_eq(alpha[0] % 128 + alpha[1] % 128, 1000 % 128);
  ck_assert_int_eq(mlsba_model_set_max_load(m, 4), 0);
  ck_assert_int_eq(mlsba_partition_groups(MLSBA_ALGO_MLSBA, ms, size, 2, 9,
                                          NULL, alpha, beta, NULL, NULL),
                   MLSBA_ECAPACITY);
  mlsba_model_destroy(m);
}
END_TEST

START_TEST(algorithm_names_round_trip) {
  for (int a = 0; a < MLSBA_ALGO_COUNT; a++) {
    mlsba_algorithm_t back;
    const char *name = mlsba_algorithm_name((mlsba_algorithm_t)a);
    ck_assert_ptr_nonnull(name);
    ck_assert_int_eq(mlsba_algorithm_from_name(name, &back), 0);
    ck_assert_int_eq(back, a);
  }
  mlsba_algorithm_t a;
  ck_assert_int_eq(mlsba_algorithm_from_name("mlfba1", &a), MLSBA_EINVAL);
  ck_assert_ptr_null(mlsba_algorithm_name(MLSBA_ALGO_COUNT));
  ck_assert_str_eq(mlsba_algorithm_name(MLSBA_ALGO_MULTIPLE_CPM),
                   "multiple-cpm");
}
END_TEST

static Suite *mlsba_suite(void) {
  Suite *s = suite_create("mlsba");
  TCase *tc = tcase_create("cases");
  tcase_add_test(tc, driving_core_gets_work);
  tcase_add_test(tc, bad_arguments_are_rejected);
  tcase_add_test(tc, algorithm_names_round_trip);
  suite_add_tcase(s, tc);
  tc = tcase_create("brute-force");
  tcase_set_timeout(tc, 600);
  tcase_add_loop_test(tc, mlsba_finds_the_flat_optimum_on_small_platforms, 0,
                      3);
  tcase_add_loop_test(tc, mlsba_matches_mlfba2_and_the_optimum_for_larger_n, 0,
                      3);
  tcase_add_loop_test(tc, mlsba_finds_the_optimum_for_huge_n, 0, 3);
  tcase_add_test(tc, slba_ignores_the_groups_and_is_optimal_too);
  tcase_add_loop_test(tc, mlsba_with_transfers_finds_the_optimum, 0, 2);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(mlsba_suite()); }
