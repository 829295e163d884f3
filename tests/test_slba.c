/* SLBA: unit cases with known answers, edge cases, and property tests
 * against brute-force integer optima on thousands of random models. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mlsba.h"
#include "support/oracle.h"
#include "support/random_models.h"
#include "support/run_suite.h"

#define MAXP 64

typedef struct {
  mlsba_model_t *m[MAXP];
  int p;
} platform_t;

static void platform_free(platform_t *pl) {
  for (int i = 0; i < pl->p; i++)
    mlsba_model_destroy(pl->m[i]);
  pl->p = 0;
}

static const mlsba_model_t *const *models_of(const platform_t *pl) {
  return (const mlsba_model_t *const *)pl->m;
}

/* Checks the invariants every SLBA result must have; returns makespan. */
static double check_partition(const platform_t *pl, int64_t n,
                              const int64_t *loads) {
  int64_t sum = 0;
  double worst = 0;
  for (int i = 0; i < pl->p; i++) {
    ck_assert_int_ge(loads[i], 0);
    int64_t cap = mlsba_model_max_load(pl->m[i]);
    if (cap != MLSBA_NO_MAX_LOAD)
      ck_assert_int_le(loads[i], cap);
    sum += loads[i];
    double t = oracle_time(pl->m[i], loads[i]);
    worst = t > worst ? t : worst;
  }
  ck_assert_int_eq(sum, n);
  return worst;
}

/* SLBA with both ways of choosing line B, which must agree on the makespan
 * (both are exact); returns it, leaving the default rule's loads. */
static double run_slba(const platform_t *pl, int64_t n, int64_t *loads) {
  mlsba_partition_info_t info;
  mlsba_partition_opts_t opts;
  mlsba_partition_opts_init(&opts);
  opts.line_search = MLSBA_LINE_BISECT_ANGLE;
  int err = mlsba_partition_slba_ex(models_of(pl), (size_t)pl->p, n, &opts,
                                    loads, &info);
  ck_assert_msg(err == 0, "slba (angle) failed: %s", mlsba_last_error());
  double by_angle = check_partition(pl, n, loads);
  err = mlsba_partition_slba_ex(models_of(pl), (size_t)pl->p, n, NULL, loads,
                                &info);
  ck_assert_msg(err == 0, "slba failed: %s", mlsba_last_error());
  double t = check_partition(pl, n, loads);
  ck_assert_double_eq(info.makespan, t);
  ck_assert_double_eq(by_angle, t);
  return t;
}

/* ---------------------------------------------------------------------- */

START_TEST(constant_speeds_split_in_proportion) {
  platform_t pl = {
      .m = {constant_model(100), constant_model(300), constant_model(600)},
      .p = 3};
  int64_t loads[3];
  run_slba(&pl, 1000, loads);
  ck_assert_int_eq(loads[0], 100);
  ck_assert_int_eq(loads[1], 300);
  ck_assert_int_eq(loads[2], 600);
  platform_free(&pl);
}
END_TEST

/* Two devices of 100 units/s; the second's share crosses a link at 0.01 s
 * a unit after 1 s of latency: 1 + x / 50 = (1000 - x) / 100 gives
 * x = 300 (7 s each) where compute alone would split 500 | 500. */
START_TEST(a_transfer_shifts_the_split_to_equal_finish_times) {
  platform_t pl = {.m = {constant_model(100), constant_model(100)}, .p = 2};
  ck_assert_int_eq(mlsba_model_set_transfer(pl.m[1], 1, 0.01), 0);
  int64_t loads[2];
  ck_assert_double_eq_tol(run_slba(&pl, 1000, loads), 7, 1e-12);
  ck_assert_int_eq(loads[0], 700);
  ck_assert_int_eq(loads[1], 300);
  platform_free(&pl);
}
END_TEST

START_TEST(one_device_takes_everything) {
  platform_t pl = {.m = {constant_model(5)}, .p = 1};
  int64_t loads[1];
  run_slba(&pl, 123456789, loads);
  ck_assert_int_eq(loads[0], 123456789);
  run_slba(&pl, 0, loads);
  ck_assert_int_eq(loads[0], 0);
  run_slba(&pl, 1, loads);
  ck_assert_int_eq(loads[0], 1);
  platform_free(&pl);
}
END_TEST

START_TEST(identical_devices_get_equal_shares) {
  platform_t pl = {.p = 7};
  for (int i = 0; i < pl.p; i++)
    pl.m[i] = constant_model(42);
  int64_t loads[7];
  run_slba(&pl, 7000003, loads);
  for (int i = 0; i < pl.p; i++) {
    ck_assert_int_ge(loads[i], 1000000);
    ck_assert_int_le(loads[i], 1000001);
  }
  platform_free(&pl);
}
END_TEST

START_TEST(fewer_units_than_devices_go_to_the_fastest) {
  platform_t pl = {.m = {constant_model(1), constant_model(10),
                         constant_model(5), constant_model(2)},
                   .p = 4};
  int64_t loads[4];
  run_slba(&pl, 1, loads);
  ck_assert_int_eq(loads[1], 1);
  double t = run_slba(&pl, 3, loads);
  ck_assert_double_eq(t, oracle_exhaustive(models_of(&pl), 4, 3));
  ck_assert_int_eq(loads[0] + loads[3], 0);
  platform_free(&pl);
}
END_TEST

START_TEST(zero_cap_devices_get_nothing) {
  platform_t pl = {
      .m = {constant_model(1000), constant_model(10), constant_model(1000)},
      .p = 3};
  ck_assert_int_eq(mlsba_model_set_max_load(pl.m[0], 0), 0);
  ck_assert_int_eq(mlsba_model_set_max_load(pl.m[2], 0), 0);
  int64_t loads[3];
  run_slba(&pl, 500, loads);
  ck_assert_int_eq(loads[0], 0);
  ck_assert_int_eq(loads[1], 500);
  ck_assert_int_eq(loads[2], 0);
  platform_free(&pl);
}
END_TEST

/* Memory-limited accelerator: it fills up to its cap and the rest spreads
 * over the others (the paper's GPUs that cannot hold the whole problem). */
START_TEST(a_capped_fast_device_is_filled_to_its_cap) {
  platform_t pl = {
      .m = {constant_model(1000), constant_model(10), constant_model(10)},
      .p = 3};
  ck_assert_int_eq(mlsba_model_set_max_load(pl.m[0], 7680), 0);
  int64_t loads[3];
  run_slba(&pl, 8400, loads);
  ck_assert_int_eq(loads[0], 7680);
  ck_assert_int_eq(loads[1], 360);
  ck_assert_int_eq(loads[2], 360);
  platform_free(&pl);
}
END_TEST

START_TEST(too_little_capacity_is_a_clear_error) {
  platform_t pl = {.m = {constant_model(10), constant_model(10)}, .p = 2};
  ck_assert_int_eq(mlsba_model_set_max_load(pl.m[0], 300), 0);
  ck_assert_int_eq(mlsba_model_set_max_load(pl.m[1], 200), 0);
  int64_t loads[2];
  ck_assert_int_eq(mlsba_partition_slba(models_of(&pl), 2, 501, loads),
                   MLSBA_ECAPACITY);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "500"));
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "501"));
  ck_assert_int_eq(mlsba_partition_slba(models_of(&pl), 2, 500, loads), 0);
  ck_assert_int_eq(loads[0], 300);
  platform_free(&pl);
}
END_TEST

START_TEST(bad_arguments_are_rejected) {
  platform_t pl = {.m = {constant_model(10), NULL}, .p = 2};
  int64_t loads[2];
  const mlsba_model_t *const *ms = models_of(&pl);
  ck_assert_int_eq(mlsba_partition_slba(NULL, 1, 10, loads), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_partition_slba(ms, 1, 10, NULL), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_partition_slba(ms, 0, 10, loads), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_partition_slba(ms, 1, -1, loads), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_partition_slba(ms, 1, INT64_MAX, loads), MLSBA_ERANGE);
  ck_assert_int_eq(mlsba_partition_slba(ms, 2, 10, loads), MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "model 1"));
  ck_assert_int_eq(mlsba_model_create(&pl.m[1]), 0); /* no points */
  ck_assert_int_eq(mlsba_partition_slba(ms, 2, 10, loads), MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "no points"));
  mlsba_partition_opts_t opts;
  mlsba_partition_opts_init(&opts);
  opts.granularity = -4;
  ck_assert_int_eq(mlsba_partition_slba_ex(ms, 1, 10, &opts, loads, NULL),
                   MLSBA_EINVAL);
  double t;
  loads[0] = -1;
  ck_assert_int_eq(mlsba_partition_makespan(ms, 1, loads, &t), MLSBA_EINVAL);
  platform_free(&pl);
}
END_TEST

/* ---- property tests ---------------------------------------------------- */

/* Random platform of p paper-shaped models; some with a max_load that may
 * be zero; capacity is made sufficient for n by lifting caps if needed. */
static void random_platform(rng_t *r, platform_t *pl, int p, int64_t n,
                            double x_max, double cap_prob) {
  pl->p = p;
  int64_t total = 0;
  for (int i = 0; i < p; i++) {
    pl->m[i] = random_paper_model(r, 8, x_max);
    if (rng_uniform(r) < cap_prob) {
      int64_t cap = rng_range(r, 0, n);
      ck_assert_int_eq(mlsba_model_set_max_load(pl->m[i], cap), 0);
      total += cap;
    } else {
      total += n;
    }
  }
  if (total < n)
    ck_assert_int_eq(mlsba_model_set_max_load(pl->m[0], MLSBA_NO_MAX_LOAD), 0);
}

START_TEST(matches_exhaustive_optimum_for_small_n) {
  rng_t r = {.state = 1000 + (uint64_t)_i};
  int64_t loads[MAXP];
  for (int trial = 0; trial < 1000; trial++) {
    platform_t pl;
    int p = (int)rng_range(&r, 1, 4);
    int64_t n = rng_range(&r, 0, p <= 2 ? 60 : 25);
    random_platform(&r, &pl, p, n, rng_uniform(&r) < 0.5 ? 30 : 1e4, 0.3);
    double got = run_slba(&pl, n, loads);
    double best = oracle_exhaustive(models_of(&pl), p, n);
    ck_assert_msg(got == best,
                  "trial %d p=%d n=%lld: slba makespan %.17g, optimum %.17g",
                  trial, p, (long long)n, got, best);
    platform_free(&pl);
  }
}
END_TEST

START_TEST(matches_exact_search_for_large_n) {
  rng_t r = {.state = 2000 + (uint64_t)_i};
  int64_t loads[MAXP];
  for (int trial = 0; trial < 300; trial++) {
    platform_t pl;
    int p = (int)rng_range(&r, 1, MAXP);
    int64_t n = rng_range(&r, 1, rng_uniform(&r) < 0.5 ? 100000 : 1000000000);
    random_platform(&r, &pl, p, n, rng_uniform(&r) < 0.5 ? (double)n : 1e4,
                    0.25);
    double got = run_slba(&pl, n, loads);
    double best = oracle_search(models_of(&pl), p, n);
    ck_assert_msg(got == best,
                  "trial %d p=%d n=%lld: slba makespan %.17g, optimum %.17g",
                  trial, p, (long long)n, got, best);
    platform_free(&pl);
  }
}
END_TEST

/* FPMs plus communication: each device's compute time plus an affine
 * transfer of its share (a latency and a cost per unit, from nothing to
 * ten times the compute) is what SLBA balances, and its makespan is the
 * brute-force optimum of that cost model. */
static void add_random_transfers(rng_t *r, platform_t *pl) {
  for (int i = 0; i < pl->p; i++) {
    if (rng_uniform(r) < 0.2)
      continue;
    double t1 = oracle_time(pl->m[i], 1);
    ck_assert_int_eq(mlsba_model_set_transfer(pl->m[i],
                                              rng_uniform(r) * 20 * t1,
                                              rng_uniform(r) * 10 * t1),
                     0);
  }
}

START_TEST(with_transfers_matches_the_optimum_of_compute_plus_transfer) {
  rng_t r = {.state = 5000 + (uint64_t)_i};
  int64_t loads[MAXP];
  for (int trial = 0; trial < 500; trial++) {
    platform_t pl;
    int p = (int)rng_range(&r, 1, 4);
    int64_t n = rng_range(&r, 0, p <= 2 ? 60 : 25);
    random_platform(&r, &pl, p, n, rng_uniform(&r) < 0.5 ? 30 : 1e4, 0.3);
    add_random_transfers(&r, &pl);
    double got = run_slba(&pl, n, loads);
    double best = oracle_exhaustive(models_of(&pl), p, n);
    ck_assert_msg(got == best,
                  "trial %d p=%d n=%lld: slba makespan %.17g, optimum %.17g",
                  trial, p, (long long)n, got, best);
    platform_free(&pl);
  }
  for (int trial = 0; trial < 200; trial++) {
    platform_t pl;
    int p = (int)rng_range(&r, 1, MAXP);
    int64_t n = rng_range(&r, 1, 1000000);
    random_platform(&r, &pl, p, n, rng_uniform(&r) < 0.5 ? (double)n : 1e4,
                    0.25);
    add_random_transfers(&r, &pl);
    double got = run_slba(&pl, n, loads);
    double best = oracle_search(models_of(&pl), p, n);
    ck_assert_msg(got == best,
                  "trial %d p=%d n=%lld: slba makespan %.17g, optimum %.17g",
                  trial, p, (long long)n, got, best);
    platform_free(&pl);
  }
}
END_TEST

/* Models that break the single-crossing shape still get a valid
 * partition (sum, caps), never an error or a hang. */
START_TEST(wild_models_still_get_valid_partitions) {
  rng_t r = {.state = 3000};
  int64_t loads[MAXP];
  for (int trial = 0; trial < 500; trial++) {
    platform_t pl = {.p = (int)rng_range(&r, 1, 16)};
    int64_t n = rng_range(&r, 0, 1000000);
    for (int i = 0; i < pl.p; i++)
      pl.m[i] = random_wild_model(&r, 10, 1e6);
    run_slba(&pl, n, loads);
    platform_free(&pl);
  }
}
END_TEST

/* ---- granularity ------------------------------------------------------- */

static void check_blocks(const int64_t *loads, int p, int64_t n, int64_t b) {
  int64_t e = n % b;
  int edge = 0;
  for (int i = 0; i < p; i++) {
    if (loads[i] % b == 0)
      continue;
    ck_assert_int_eq(loads[i] % b, e);
    edge++;
  }
  ck_assert_int_eq(edge, e ? 1 : 0);
}

START_TEST(blocks_with_an_edge_are_optimal) {
  rng_t r = {.state = 4000};
  int64_t loads[MAXP];
  mlsba_partition_opts_t opts;
  mlsba_partition_opts_init(&opts);
  for (int trial = 0; trial < 3000; trial++) {
    platform_t pl;
    int p = (int)rng_range(&r, 1, 3);
    int64_t b = rng_range(&r, 2, 6);
    int64_t n = rng_range(&r, 0, (p == 3 ? 8 : 14) * b);
    /* Tiny x_max makes speeds vary within a block; caps often bind. */
    random_platform(&r, &pl, p, n, rng_uniform(&r) < 0.5 ? 40 : 4, 0.5);
    double best = oracle_exhaustive_blocks(models_of(&pl), p, n, b);
    opts.granularity = b;
    mlsba_partition_info_t info;
    int err = mlsba_partition_slba_ex(models_of(&pl), (size_t)p, n, &opts,
                                      loads, &info);
    if (isinf(best)) {
      ck_assert_int_eq(err, MLSBA_ECAPACITY);
    } else {
      ck_assert_msg(err == 0, "trial %d: %s", trial, mlsba_last_error());
      double got = check_partition(&pl, n, loads);
      check_blocks(loads, p, n, b);
      ck_assert_msg(got == best,
                    "trial %d p=%d n=%lld b=%lld: makespan %.17g, optimum "
                    "%.17g",
                    trial, p, (long long)n, (long long)b, got, best);
    }
    platform_free(&pl);
  }
}
END_TEST

START_TEST(blocks_of_128_columns) {
  platform_t pl = {.m = {constant_model(3000), constant_model(1000)}, .p = 2};
  mlsba_partition_opts_t opts;
  mlsba_partition_opts_init(&opts);
  opts.granularity = 128;
  int64_t loads[2];
  ck_assert_int_eq(
      mlsba_partition_slba_ex(models_of(&pl), 2, 8400, &opts, loads, NULL), 0);
  ck_assert_int_eq(loads[0] + loads[1], 8400);
  check_blocks(loads, 2, 8400, 128);
  /* 65 blocks and an edge of 80. Candidates: 6352 | 2048 (2.117 s),
   * 6272 | 2128 (2.128 s), 6224 | 2176 (2.176 s): the first wins. */
  ck_assert_int_eq(loads[0], 6352);
  ck_assert_int_eq(loads[1], 2048);
  platform_free(&pl);
}
END_TEST

static Suite *slba_suite(void) {
  Suite *s = suite_create("slba");
  TCase *tc = tcase_create("cases");
  tcase_add_test(tc, constant_speeds_split_in_proportion);
  tcase_add_test(tc, one_device_takes_everything);
  tcase_add_test(tc, a_transfer_shifts_the_split_to_equal_finish_times);
  tcase_add_test(tc, identical_devices_get_equal_shares);
  tcase_add_test(tc, fewer_units_than_devices_go_to_the_fastest);
  tcase_add_test(tc, zero_cap_devices_get_nothing);
  tcase_add_test(tc, a_capped_fast_device_is_filled_to_its_cap);
  tcase_add_test(tc, too_little_capacity_is_a_clear_error);
  tcase_add_test(tc, bad_arguments_are_rejected);
  tcase_add_test(tc, blocks_of_128_columns);
  suite_add_tcase(s, tc);
  tc = tcase_create("brute-force");
  tcase_set_timeout(tc, 300);
  /* Each loop test runs under several seeds (_i) in its own process. */
  tcase_add_loop_test(tc, matches_exhaustive_optimum_for_small_n, 0, 4);
  tcase_add_loop_test(tc, matches_exact_search_for_large_n, 0, 4);
  tcase_add_loop_test(
      tc, with_transfers_matches_the_optimum_of_compute_plus_transfer, 0, 2);
  tcase_add_test(tc, wild_models_still_get_valid_partitions);
  tcase_add_test(tc, blocks_with_an_edge_are_optimal);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(slba_suite()); }
