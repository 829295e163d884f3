/* The hybrid factorizations (lib/factor): mlsba_getrf and mlsba_potrf on
 * two pinned cores and on simulated devices, graded by their scaled
 * residuals and against LAPACK on the same matrices; the per-step split
 * and the virtual times of small cases, worked out by hand. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mlsba.h"
#include "support/dense.h"
#include "support/run_suite.h"

/* LU of m x n on the node with block nb: info 0 and a residual below 16. */
static void check_getrf(mlsba_executor_t *ex, mlsba_precision_t prec, int64_t m,
                        int64_t n, int64_t lda, int64_t nb) {
  void *a = make_matrix(prec, m, n, lda, 0, (unsigned)(m * 31 + n));
  void *a0 = copy_of(a, bytes_of(prec, lda, n));
  int64_t k = m < n ? m : n, info = -1;
  int64_t *ipiv = calloc((size_t)(k > 0 ? k : 1), sizeof *ipiv);
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  o.block = nb;
  ck_assert_msg(mlsba_getrf_ex(ex, prec, m, n, a, lda, ipiv, &info, &o, NULL) ==
                    0,
                "%s", mlsba_last_error());
  ck_assert_int_eq(info, 0);
  double r = -1;
  ck_assert_int_eq(mlsba_getrf_residual(prec, m, n, a0, lda, a, lda, ipiv, &r),
                   0);
  ck_assert_msg(r >= 0 && r < MLSBA_FACTOR_RESIDUAL_OK,
                "getrf %lld x %lld nb %lld precision %d: residual %g",
                (long long)m, (long long)n, (long long)nb, (int)prec, r);
  free(a);
  free(a0);
  free(ipiv);
}

static void check_potrf_solved(mlsba_executor_t *ex, mlsba_precision_t prec,
                               char uplo, int64_t n, int64_t lda, int64_t nb,
                               mlsba_factor_solve_t solve) {
  void *a = make_matrix(prec, n, n, lda, 1, (unsigned)(n * 17 + uplo));
  void *a0 = copy_of(a, bytes_of(prec, lda, n));
  int64_t info = -1;
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  o.block = nb;
  o.solve = solve;
  ck_assert_msg(mlsba_potrf_ex(ex, prec, uplo, n, a, lda, &info, &o, NULL) == 0,
                "%s", mlsba_last_error());
  ck_assert_int_eq(info, 0);
  double r = -1;
  ck_assert_int_eq(mlsba_potrf_residual(prec, uplo, n, a0, lda, a, lda, &r), 0);
  ck_assert_msg(r >= 0 && r < MLSBA_FACTOR_RESIDUAL_OK,
                "potrf %c n %lld nb %lld precision %d: residual %g", uplo,
                (long long)n, (long long)nb, (int)prec, r);
  /* The other triangle is left as it was. */
  size_t es = prec == MLSBA_PRECISION_DOUBLE ? 8 : 4;
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++)
      if ((uplo == 'L' && i < j) || (uplo == 'U' && i > j))
        ck_assert_msg(memcmp((char *)a + (size_t)(i + j * lda) * es,
                             (char *)a0 + (size_t)(i + j * lda) * es, es) == 0,
                      "potrf %c wrote (%lld, %lld)", uplo, (long long)i,
                      (long long)j);
  free(a);
  free(a0);
}

static void check_potrf(mlsba_executor_t *ex, mlsba_precision_t prec, char uplo,
                        int64_t n, int64_t lda, int64_t nb) {
  check_potrf_solved(ex, prec, uplo, n, lda, nb, MLSBA_FACTOR_SOLVE_AUTO);
}

START_TEST(both_precisions_factorize_right_on_two_cores) {
  node_t nd = open_node(two_cores);
  for (int prec = 0; prec < 2; prec++) {
    check_getrf(nd.ex, (mlsba_precision_t)prec, 300, 300, 300, 64);
    check_potrf(nd.ex, (mlsba_precision_t)prec, 'L', 300, 300, 64);
    check_potrf(nd.ex, (mlsba_precision_t)prec, 'U', 300, 300, 64);
  }
  close_node(&nd);
}
END_TEST

/* n not a multiple of the block, n below the block, one column,
 * rectangular matrices, a leading dimension beyond m; panels wide enough
 * for the recursive LU panel to split unevenly (100: 48 + 24 + 14 + 14)
 * and shares wider than one block of the solves by inverse (256);
 * leading dimensions whose operands the update copies first (into a
 * buffer the executor keeps between calls: each call after the first
 * takes the one an earlier call left, larger than it needs or, where too
 * small, replaced). */
START_TEST(odd_sizes_factorize_right) {
  node_t nd = open_node(two_cores);
  static const int64_t sizes[][4] = {
      /* m, n, lda, nb */
      {130, 130, 130, 32},
      {5, 5, 5, 32},
      {1, 1, 1, 32},
      {97, 41, 101, 16},
      {41, 97, 45, 16},
      {200, 200, 203, 7},
      {301, 301, 301, 100},
      {230, 120, 233, 100},
      {700, 700, 701, 40},
      /* leading dimensions of 1 KiB multiples: the operands copied */
      {256, 256, 256, 64},
      {300, 300, 512, 48},
      {200, 120, 256, 40},
      {120, 200, 256, 40}};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
    for (int prec = 0; prec < 2; prec++) {
      const int64_t *z = sizes[s];
      check_getrf(nd.ex, (mlsba_precision_t)prec, z[0], z[1], z[2], z[3]);
      if (z[0] == z[1]) {
        check_potrf(nd.ex, (mlsba_precision_t)prec, 'L', z[1], z[2], z[3]);
        check_potrf(nd.ex, (mlsba_precision_t)prec, 'U', z[1], z[2], z[3]);
      }
    }
  close_node(&nd);
}
END_TEST

START_TEST(pivots_and_factors_match_lapack) {
  node_t nd = open_node(two_cores);
  const int n = 257;
  double *a = make_matrix(MLSBA_PRECISION_DOUBLE, n, n, n, 0, 7);
  double *ref = copy_of(a, bytes_of(MLSBA_PRECISION_DOUBLE, n, n));
  int64_t ipiv[257], info = -1;
  int lipiv[257], linfo = -1;
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  o.block = 48;
  ck_assert_int_eq(mlsba_getrf_ex(nd.ex, MLSBA_PRECISION_DOUBLE, n, n, a, n,
                                  ipiv, &info, &o, NULL),
                   0);
  dgetrf_(&n, &n, ref, &n, lipiv, &linfo);
  ck_assert_int_eq(info, linfo);
  for (int i = 0; i < n; i++)
    ck_assert_msg(ipiv[i] == lipiv[i], "ipiv[%d]: %lld, LAPACK %d", i,
                  (long long)ipiv[i], lipiv[i]);
  double worst = 0;
  for (int i = 0; i < n * n; i++)
    worst = fmax(worst, fabs(a[i] - ref[i]));
  ck_assert_msg(worst < 1e-10, "factors differ from LAPACK's by %g", worst);
  free(a);
  free(ref);
  close_node(&nd);
}
END_TEST

/* A zero column makes U singular: info names the first zero pivot as
 * LAPACK's does, and the call succeeds. */
START_TEST(a_singular_matrix_sets_info) {
  node_t nd = open_node(two_cores);
  const int n = 150;
  double *a = make_matrix(MLSBA_PRECISION_DOUBLE, n, n, n, 0, 3);
  for (int i = 0; i < n; i++)
    a[i + 70 * n] = 0;
  double *ref = copy_of(a, bytes_of(MLSBA_PRECISION_DOUBLE, n, n));
  int64_t ipiv[150], info = -1;
  int lipiv[150], linfo = -1;
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  o.block = 32;
  ck_assert_int_eq(mlsba_getrf_ex(nd.ex, MLSBA_PRECISION_DOUBLE, n, n, a, n,
                                  ipiv, &info, &o, NULL),
                   0);
  dgetrf_(&n, &n, ref, &n, lipiv, &linfo);
  ck_assert_int_gt(linfo, 0);
  ck_assert_int_eq(info, linfo);
  free(a);
  free(ref);
  close_node(&nd);
}
END_TEST

/* A negative entry on the diagonal past the first panel (block 32), or
 * in the second half of the first panel's recursively factorized
 * diagonal block (block 128): info is the order of the first minor that
 * is not positive definite, as LAPACK's. */
START_TEST(a_matrix_not_positive_definite_sets_info) {
  node_t nd = open_node(two_cores);
  const int n = 200;
  for (int way = 0; way < 4; way++) {
    int lower = way % 2;
    double *a = make_matrix(MLSBA_PRECISION_DOUBLE, n, n, n, 1, 5);
    a[90 + 90 * n] = -1;
    double *ref = copy_of(a, bytes_of(MLSBA_PRECISION_DOUBLE, n, n));
    int64_t info = -1;
    int linfo = -1;
    mlsba_factor_opts_t o;
    mlsba_factor_opts_init(&o);
    o.block = way < 2 ? 32 : 128;
    char uplo = lower ? 'L' : 'U';
    ck_assert_int_eq(mlsba_potrf_ex(nd.ex, MLSBA_PRECISION_DOUBLE, uplo, n, a,
                                    n, &info, &o, NULL),
                     0);
    dpotrf_(&uplo, &n, ref, &n, &linfo, 1);
    ck_assert_int_gt(linfo, 0);
    ck_assert_int_eq(info, linfo);
    free(a);
    free(ref);
  }
  close_node(&nd);
}
END_TEST

START_TEST(bad_arguments_are_refused_with_a_message) {
  node_t nd = open_node(two_cores);
  double a[16] = {4, 1, 1, 4};
  int64_t ipiv[4], info;
  ck_assert_int_eq(
      mlsba_getrf(NULL, MLSBA_PRECISION_DOUBLE, 2, 2, a, 2, ipiv, &info),
      MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "executor"));
  ck_assert_int_eq(
      mlsba_getrf(nd.ex, MLSBA_PRECISION_DOUBLE, 3, 2, a, 2, ipiv, &info),
      MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "lda"));
  ck_assert_int_eq(
      mlsba_getrf(nd.ex, MLSBA_PRECISION_DOUBLE, -1, 2, a, 2, ipiv, &info),
      MLSBA_EINVAL);
  ck_assert_int_eq(
      mlsba_getrf(nd.ex, MLSBA_PRECISION_DOUBLE, 2, 2, a, 2, NULL, &info),
      MLSBA_EINVAL);
  ck_assert_int_eq(
      mlsba_potrf(nd.ex, MLSBA_PRECISION_DOUBLE, 'X', 2, a, 2, &info),
      MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "uplo"));
  ck_assert_int_eq(
      mlsba_potrf(nd.ex, (mlsba_precision_t)7, 'L', 2, a, 2, &info),
      MLSBA_EINVAL);
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  unsigned char none[2] = {0, 0};
  o.use = none;
  ck_assert_int_eq(mlsba_potrf_ex(nd.ex, MLSBA_PRECISION_DOUBLE, 'L', 2, a, 2,
                                  &info, &o, NULL),
                   MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "no device"));
  /* An empty matrix is no error. */
  ck_assert_int_eq(
      mlsba_getrf(nd.ex, MLSBA_PRECISION_DOUBLE, 0, 0, a, 1, ipiv, &info), 0);
  ck_assert_int_eq(info, 0);
  close_node(&nd);
}
END_TEST

/* n = 12, nb = 4 on the sim pair: a profile unit is a column of the
 * 12^3 product, 2 * 144 = 288 flops, so core0 runs 28800 flops/s and
 * gpu0 86400.
 *   step 0: panel 0, 12 * 16 - 64 / 3 flops on core0;
 *   step 1: 8 columns of 16 + 2 * 4 * 8 = 80 flops. gpu0 updates the
 *           next panel's 4 columns 3x sooner than core0 would, so both
 *           ways are split: core0 holding them and the panel (8 * 16 -
 *           64 / 3 flops) takes (4 * 80 + 106.7) / core = 14.8 ms; gpu0
 *           running them first (320 / gpu = 3.7 ms) and core0 the panel
 *           after that takes 7.4 ms, gpu0's 8 columns 640 / gpu as long
 *           (core0 takes at most one, which ends before gpu0's four);
 *   step 2: 4 columns of 16 + 2 * 4 * 4 = 48 flops, the next panel's:
 *           on gpu0 (192 / gpu), then that panel (4 * 16 - 64 / 3) on
 *           core0;
 * the last panel has no update. */
START_TEST(virtual_times_of_a_small_lu_are_exact) {
  node_t nd = open_node(sim_pair);
  double a[144];
  for (int i = 0; i < 144; i++)
    a[i] = (i * 7919 % 101) / 50.0 - 1 + (i % 13 == 0 ? 12 : 0);
  int64_t ipiv[12], info;
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  o.block = 4;
  mlsba_factor_report_t r;
  ck_assert_int_eq(mlsba_getrf_ex(nd.ex, MLSBA_PRECISION_DOUBLE, 12, 12, a, 12,
                                  ipiv, &info, &o, &r),
                   0);
  const double core = 28800, gpu = 86400, third = 64.0 / 3;
  ck_assert(r.virtual_time);
  ck_assert_int_eq(r.panel_device, 0);
  ck_assert_uint_eq(r.steps, 3);
  ck_assert_int_eq(r.ahead_device[0], -1);
  ck_assert_double_eq_tol(r.step_seconds[0], (192 - third) / core, 1e-15);
  ck_assert_int_eq(r.ahead_device[1], 1);
  ck_assert_int_le(r.share[1 * 2 + 0], 1);
  ck_assert_int_eq(r.share[1 * 2 + 0] + r.share[1 * 2 + 1], 8);
  ck_assert_double_eq_tol(r.time[1 * 2 + 0], 320 / gpu + (128 - third) / core,
                          1e-15);
  ck_assert_double_eq_tol(r.time[1 * 2 + 1], r.share[1 * 2 + 1] * 80 / gpu,
                          1e-15);
  ck_assert_double_eq_tol(r.step_seconds[1], 640 / gpu, 1e-15);
  ck_assert_int_eq(r.ahead_device[2], 1);
  ck_assert_int_eq(r.share[2 * 2 + 0], 0);
  ck_assert_int_eq(r.share[2 * 2 + 1], 4);
  ck_assert_double_eq_tol(r.step_seconds[2], 192 / gpu + (64 - third) / core,
                          1e-15);
  double total =
      (192 - third) / core + 640 / gpu + 192 / gpu + (64 - third) / core;
  ck_assert_double_eq_tol(r.seconds, total, 1e-15);
  ck_assert_double_eq_tol(r.flops, 1728 - 576, 1e-9);
  /* The factors are right whoever updated the panels' columns. */
  mlsba_factor_report_free(&r);
  close_node(&nd);
}
END_TEST

/* Cholesky, n = 12, nb = 4: a unit is a pair of columns, 2 * 4 * (N + 1)
 * flops for N trailing columns. Step 0: panel 0's diagonal block (64 / 3
 * flops) on core0, then the solve of its 8 rows below (16 flops each)
 * split, 2 rows on core0 and 6 on gpu0 (32 / core = 96 / gpu): 1.9 ms,
 * against 5.2 ms with the solve on core0. Step 1 (N = 8): 4 pairs of 72
 * flops, all holding the next panel's columns. Without lookahead they
 * are split as any update, 1 pair on core0 and 3 on gpu0 (72 / core =
 * 216 / gpu), then core0 factorizes that panel's diagonal block and the
 * solve of its 4 rows is split, 1 row on core0 and 3 on gpu0 (16 / core
 * = 48 / gpu): 3.8 ms, against 4.6 ms with gpu0 updating them first
 * (288 / gpu), 6.3 ms with the solve on core0 as well and 13 ms with all
 * on core0. Step 2 (N = 4): 2 pairs of 40 flops on gpu0, then the last
 * panel (64 / 3, no rows below) on core0. */
START_TEST(virtual_times_of_a_small_cholesky_are_exact) {
  node_t nd = open_node(sim_pair);
  double *a = make_matrix(MLSBA_PRECISION_DOUBLE, 12, 12, 12, 1, 9);
  int64_t info;
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  o.block = 4;
  mlsba_factor_report_t r;
  ck_assert_int_eq(mlsba_potrf_ex(nd.ex, MLSBA_PRECISION_DOUBLE, 'L', 12, a, 12,
                                  &info, &o, &r),
                   0);
  ck_assert_int_eq(info, 0);
  const double core = 28800, gpu = 86400, third = 64.0 / 3;
  ck_assert_uint_eq(r.steps, 3);
  ck_assert_double_eq_tol(r.step_seconds[0], (third + 2 * 16) / core, 1e-15);
  ck_assert_double_eq_tol(r.panel_seconds[0], third / core, 1e-15);
  ck_assert_int_eq(r.units[1], 4);
  ck_assert_int_eq(r.share[1 * 2 + 0], 1);
  ck_assert_int_eq(r.share[1 * 2 + 1], 3);
  ck_assert_int_eq(r.ahead_device[1], -1);
  ck_assert_double_eq_tol(r.time[1 * 2 + 0], 72 / core, 1e-15);
  ck_assert_double_eq_tol(r.time[1 * 2 + 1], 3 * 72 / gpu, 1e-15);
  ck_assert_double_eq_tol(r.step_seconds[1], (72 + third + 16) / core, 1e-15);
  ck_assert_double_eq_tol(r.panel_seconds[1], third / core, 1e-15);
  ck_assert_int_eq(r.units[2], 2);
  ck_assert_int_eq(r.share[2 * 2 + 1], 2);
  ck_assert_int_eq(r.ahead_device[2], 1);
  ck_assert_double_eq_tol(r.step_seconds[2], 2 * 40 / gpu + third / core,
                          1e-15);
  ck_assert_double_eq_tol(
      r.seconds, (third + 32 + 72 + third + 16 + third) / core + 80 / gpu,
      1e-15);
  ck_assert_double_eq_tol(r.flops, 576, 1e-9);
  mlsba_factor_report_free(&r);
  free(a);
  close_node(&nd);
}
END_TEST

/* The seeds' static steps on the Cholesky case above: core0 updates the
 * next panel's columns and factorizes its diagonal block in every step,
 * and each panel's solve is split by the step's own split after the
 * update (here the models'). Step 0: as above, 2 rows of the solve on
 * core0 and 6 on gpu0. Step 1: core0 holds the 4 pairs (4 * 72 flops)
 * and the block (64 / 3), gpu0 none; then 1 row of the solve on core0
 * and 3 on gpu0. Step 2: the 2 pairs left (80 flops) and the last block
 * on core0. */
START_TEST(static_ways_keep_the_panel_on_its_core) {
  node_t nd = open_node(sim_pair);
  double *a = make_matrix(MLSBA_PRECISION_DOUBLE, 12, 12, 12, 1, 9);
  double *a0 = copy_of(a, bytes_of(MLSBA_PRECISION_DOUBLE, 12, 12));
  int64_t info;
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  o.block = 4;
  o.ways = MLSBA_FACTOR_WAYS_STATIC;
  mlsba_factor_report_t r;
  ck_assert_int_eq(mlsba_potrf_ex(nd.ex, MLSBA_PRECISION_DOUBLE, 'L', 12, a, 12,
                                  &info, &o, &r),
                   0);
  const double core = 28800, third = 64.0 / 3;
  ck_assert_double_eq_tol(r.step_seconds[0], (third + 2 * 16) / core, 1e-15);
  ck_assert_int_eq(r.share[1 * 2 + 0], 4);
  ck_assert_int_eq(r.ahead_device[1], 0);
  ck_assert_double_eq_tol(r.step_seconds[1], (4 * 72 + third + 16) / core,
                          1e-15);
  ck_assert_int_eq(r.share[2 * 2 + 0], 2);
  ck_assert_int_eq(r.ahead_device[2], 0);
  ck_assert_double_eq_tol(r.step_seconds[2], (80 + third) / core, 1e-15);
  ck_assert_double_eq_tol(
      r.seconds, (third + 32 + 288 + third + 16 + 80 + third) / core, 1e-15);
  double res = -1;
  ck_assert_int_eq(mlsba_potrf_residual(MLSBA_PRECISION_DOUBLE, 'L', 12, a0, 12,
                                        a, 12, &res),
                   0);
  ck_assert_msg(res < MLSBA_FACTOR_RESIDUAL_OK, "residual %g", res);
  o.ways = (mlsba_factor_ways_t)9;
  ck_assert_int_eq(mlsba_potrf_ex(nd.ex, MLSBA_PRECISION_DOUBLE, 'L', 12, a, 12,
                                  &info, &o, NULL),
                   MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "ways"));
  mlsba_factor_report_free(&r);
  free(a);
  free(a0);
  close_node(&nd);
}
END_TEST

/* A gpu0 slow at a few units (100 units/s at 1, 600 from 16 on) beside
 * core0 (100), n = 24, nb = 4: a profile unit is 2 * 576 = 1152 flops,
 * core0 runs 115200 flops/s. Step 1: 10 pairs of 2 * 4 * 21 = 168
 * flops. gpu0 would take 6.2 ms to update the next panel's 4 pairs first
 * and the rest; without lookahead core0's share begins with the next
 * panel's columns: it takes 2 pairs, updates the 2 columns of the
 * panel's diagonal block they leave out (4 * 2 * 3 = 24 flops of its
 * lower triangle), factorizes the block (64 / 3) while gpu0 updates 8
 * pairs (s(8) = 1000 / 3 units/s, 384000 flops/s): 3.5 ms, against 3.68
 * ms with the block factorized after the update. Then the solve's 16
 * rows (16 flops each): 2 on core0, 14 on gpu0 (s(14) = 1600 / 3, 614400
 * flops/s). */
START_TEST(the_diagonal_block_first_hides_the_panel) {
  node_t nd = open_node(
      "{\"devices\": ["
      "{\"name\": \"core0\", \"type\": \"sim\", \"speed\": [[1, 100]]},"
      "{\"name\": \"gpu0\", \"type\": \"sim\","
      " \"speed\": [[1, 100], [16, 600]]}],"
      "\"groups\": [[\"core0\"], [\"gpu0\"]]}");
  double *a = make_matrix(MLSBA_PRECISION_DOUBLE, 24, 24, 24, 1, 3);
  double *a0 = copy_of(a, bytes_of(MLSBA_PRECISION_DOUBLE, 24, 24));
  int64_t info;
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  o.block = 4;
  mlsba_factor_report_t r;
  ck_assert_int_eq(mlsba_potrf_ex(nd.ex, MLSBA_PRECISION_DOUBLE, 'L', 24, a, 24,
                                  &info, &o, &r),
                   0);
  const double core = 115200, third = 64.0 / 3;
  ck_assert_int_eq(r.units[1], 10);
  ck_assert_int_eq(r.ahead_device[1], -1);
  ck_assert_int_eq(r.share[1 * 2 + 0], 2);
  ck_assert_int_eq(r.share[1 * 2 + 1], 8);
  ck_assert_double_eq_tol(r.time[1 * 2 + 0], (2 * 168 + 24 + third) / core,
                          1e-15);
  ck_assert_double_eq_tol(r.time[1 * 2 + 1], 8 * 168 / 384000.0, 1e-15);
  ck_assert_double_eq_tol(r.panel_seconds[1], third / core, 1e-15);
  ck_assert_double_eq_tol(r.step_seconds[1],
                          8 * 168 / 384000.0 + 14 * 16 / 614400.0, 1e-15);
  double res = -1;
  ck_assert_int_eq(mlsba_potrf_residual(MLSBA_PRECISION_DOUBLE, 'L', 24, a0, 24,
                                        a, 24, &res),
                   0);
  ck_assert_msg(res < MLSBA_FACTOR_RESIDUAL_OK, "residual %g", res);
  mlsba_factor_report_free(&r);
  free(a);
  free(a0);
  close_node(&nd);
}
END_TEST

/* Seed 004's slice tuned from the kernels' speeds alone, on the LU case
 * above: the first update's 8 columns split by the models with no panel
 * counted, 2 to core0 (100 units/s) and 6 to gpu0 (300), kept as 1/4 and
 * 3/4. Step 1: gpu0 updates the next panel's 4 columns within its 6
 * (320 / gpu), core0 its 2 (160 / core, longer) and then the panel
 * (128 - 64 / 3 flops): 9.3 ms, against 14.8 with core0 held to the 4
 * columns. Step 2: 1/4 of 4 columns is 1, but gpu0 must hold the next
 * panel's 4: all on gpu0 (192 / gpu), then the panel on core0. */
START_TEST(a_kernel_slice_is_the_kernels_split_of_the_first_update) {
  node_t nd = open_node(sim_pair);
  double a[144];
  for (int i = 0; i < 144; i++)
    a[i] = (i * 7919 % 101) / 50.0 - 1 + (i % 13 == 0 ? 12 : 0);
  int64_t ipiv[12], info;
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  o.block = 4;
  o.split = MLSBA_FACTOR_SPLIT_KERNEL_SLICE;
  ck_assert_str_eq(mlsba_factor_split_name(o.split), "kernel-slice");
  mlsba_factor_report_t r;
  ck_assert_int_eq(mlsba_getrf_ex(nd.ex, MLSBA_PRECISION_DOUBLE, 12, 12, a, 12,
                                  ipiv, &info, &o, &r),
                   0);
  const double core = 28800, gpu = 86400, third = 64.0 / 3;
  ck_assert_int_eq(r.share[1 * 2 + 0], 2);
  ck_assert_int_eq(r.share[1 * 2 + 1], 6);
  ck_assert_int_eq(r.ahead_device[1], 1);
  ck_assert_double_eq_tol(r.step_seconds[1], (160 + 128 - third) / core, 1e-15);
  ck_assert_int_eq(r.share[2 * 2 + 1], 4);
  ck_assert_double_eq_tol(r.step_seconds[2], 192 / gpu + (64 - third) / core,
                          1e-15);
  ck_assert_double_eq_tol(
      r.seconds,
      (192 - third + 160 + 128 - third + 64 - third) / core + 192 / gpu, 1e-15);
  mlsba_factor_report_free(&r);
  close_node(&nd);
}
END_TEST

/* The panel's solve split by rows between the cores, or kept on the
 * panel's core: the factors are right either way (odd sizes too), a
 * matrix that is not positive definite stops where LAPACK's does, and in
 * virtual time the solve on the core gives step 1 of the case above
 * 288 / gpu + (64 / 3 + 4 * 16) / core. */
START_TEST(the_panel_solve_runs_right_split_or_on_the_core) {
  node_t nd = open_node(two_cores);
  for (int prec = 0; prec < 2; prec++) {
    check_potrf_solved(nd.ex, (mlsba_precision_t)prec, 'L', 300, 300, 64,
                       MLSBA_FACTOR_SOLVE_SPLIT);
    check_potrf_solved(nd.ex, (mlsba_precision_t)prec, 'L', 131, 140, 32,
                       MLSBA_FACTOR_SOLVE_SPLIT);
    check_potrf_solved(nd.ex, (mlsba_precision_t)prec, 'L', 200, 200, 48,
                       MLSBA_FACTOR_SOLVE_CORE);
  }
  const int n = 200;
  double *a = make_matrix(MLSBA_PRECISION_DOUBLE, n, n, n, 1, 5);
  a[90 + 90 * n] = -1;
  double *ref = copy_of(a, bytes_of(MLSBA_PRECISION_DOUBLE, n, n));
  int64_t info = -1;
  int linfo = -1;
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  o.block = 32;
  o.solve = MLSBA_FACTOR_SOLVE_SPLIT;
  ck_assert_int_eq(mlsba_potrf_ex(nd.ex, MLSBA_PRECISION_DOUBLE, 'L', n, a, n,
                                  &info, &o, NULL),
                   0);
  dpotrf_("L", &n, ref, &n, &linfo, 1);
  ck_assert_int_gt(linfo, 0);
  ck_assert_int_eq(info, linfo);
  o.solve = (mlsba_factor_solve_t)7;
  ck_assert_int_eq(mlsba_potrf_ex(nd.ex, MLSBA_PRECISION_DOUBLE, 'L', n, a, n,
                                  &info, &o, NULL),
                   MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "solve"));
  free(a);
  free(ref);
  close_node(&nd);

  nd = open_node(sim_pair);
  a = make_matrix(MLSBA_PRECISION_DOUBLE, 12, 12, 12, 1, 9);
  mlsba_factor_opts_init(&o);
  o.block = 4;
  o.solve = MLSBA_FACTOR_SOLVE_CORE;
  mlsba_factor_report_t r;
  ck_assert_int_eq(mlsba_potrf_ex(nd.ex, MLSBA_PRECISION_DOUBLE, 'L', 12, a, 12,
                                  &info, &o, &r),
                   0);
  const double core = 28800, gpu = 86400, third = 64.0 / 3;
  ck_assert_int_eq(r.ahead_device[1], 1);
  ck_assert_double_eq_tol(r.step_seconds[1],
                          4 * 72 / gpu + (third + 4 * 16) / core, 1e-15);
  ck_assert_double_eq_tol(r.panel_seconds[1], (third + 4 * 16) / core, 1e-15);
  mlsba_factor_report_free(&r);
  free(a);
  close_node(&nd);
}
END_TEST

/* A larger update on the sim pair: every device's time in every step is
 * its share's flops at its rate (plus the panel on core0), and the FPM
 * split keeps the devices within a unit of each other. */
START_TEST(every_sim_step_time_follows_the_profiles) {
  node_t nd = open_node(sim_pair);
  const int64_t n = 200, nb = 16;
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  o.block = nb;
  o.compute = 0;
  mlsba_factor_report_t r;
  int64_t info, ipiv[200];
  double *a = make_matrix(MLSBA_PRECISION_DOUBLE, n, n, n, 0, 1);
  ck_assert_int_eq(mlsba_getrf_ex(nd.ex, MLSBA_PRECISION_DOUBLE, n, n, a, n,
                                  ipiv, &info, &o, &r),
                   0);
  const double ref = 2.0 * n * n, rate[2] = {100 * ref, 300 * ref};
  double sum = 0;
  int aheads = 0;
  for (size_t k = 1; k < r.steps; k++) {
    int64_t j = (int64_t)(k - 1) * nb, jb = n - j < nb ? n - j : nb;
    double w = (double)(jb * jb) + 2.0 * (double)(jb * (n - j - jb));
    int64_t jn = j + jb, bn = n - jn < nb ? n - jn : nb;
    double panel =
        jn < n ? ((double)((n - jn) * bn * bn) - (double)(bn * bn * bn) / 3) /
                     rate[0]
               : 0;
    ck_assert_int_eq(r.share[k * 2] + r.share[k * 2 + 1], n - j - jb);
    /* When gpu0 updated the next panel's columns, core0 started the
     * panel when they were done and its own units were. */
    double own = r.share[k * 2] * w / rate[0];
    if (r.ahead_device[k] == 1) {
      aheads++;
      double ready = (double)(bn < n - j - jb ? bn : n - j - jb) * w / rate[1];
      own = own > ready ? own : ready;
    } else if (jn < n) {
      ck_assert_int_eq(r.ahead_device[k], 0);
    }
    ck_assert_double_eq_tol(r.time[k * 2], own + panel, 1e-12);
    ck_assert_double_eq_tol(r.time[k * 2 + 1], r.share[k * 2 + 1] * w / rate[1],
                            1e-12);
    /* Balanced to a unit, unless core0 is held to the next panel. */
    if (r.share[k * 2] > nb && r.ahead_device[k] == 0)
      ck_assert_msg(fabs(r.time[k * 2] - r.time[k * 2 + 1]) <=
                        w / rate[0] + 1e-12,
                    "step %zu: %g vs %g", k, r.time[k * 2], r.time[k * 2 + 1]);
    sum += r.step_seconds[k];
  }
  ck_assert_double_eq_tol(r.seconds, sum + r.step_seconds[0], 1e-12);
  ck_assert_int_gt(aheads, 0); /* gpu0 took the panels' columns at the end */
  mlsba_factor_report_free(&r);
  free(a);
  close_node(&nd);
}
END_TEST

/* gpu1 fails at its 4th share: it is dropped, its columns go to the
 * others, and the factors are still right. */
START_TEST(a_failing_accelerator_is_dropped_and_the_result_stays_right) {
  node_t nd = open_node(
      "{\"devices\": ["
      "{\"name\": \"core0\", \"type\": \"sim\", \"speed\": [[1, 100]]},"
      "{\"name\": \"gpu0\", \"type\": \"sim\", \"speed\": [[1, 300]]},"
      "{\"name\": \"gpu1\", \"type\": \"sim\", \"speed\": [[1, 200]],"
      " \"fail_at\": 4}],"
      "\"groups\": [[\"core0\", \"gpu0\"], [\"gpu1\"]]}");
  for (int op = 0; op < 2; op++) {
    const int64_t n = 160;
    double *a = make_matrix(MLSBA_PRECISION_DOUBLE, n, n, n, op, 11);
    double *a0 = copy_of(a, bytes_of(MLSBA_PRECISION_DOUBLE, n, n));
    int64_t ipiv[160], info = -1;
    mlsba_factor_opts_t o;
    mlsba_factor_opts_init(&o);
    o.block = 16;
    mlsba_factor_report_t r;
    int err = op ? mlsba_potrf_ex(nd.ex, MLSBA_PRECISION_DOUBLE, 'L', n, a, n,
                                  &info, &o, &r)
                 : mlsba_getrf_ex(nd.ex, MLSBA_PRECISION_DOUBLE, n, n, a, n,
                                  ipiv, &info, &o, &r);
    ck_assert_msg(err == 0, "%s", mlsba_last_error());
    ck_assert_int_eq(info, 0);
    if (op == 0) { /* the device's share counter runs on across calls */
      ck_assert_uint_eq(r.lost, 1);
      ck_assert_int_eq(r.dropped[2], 1);
      size_t used = 0, after = 0;
      for (size_t k = 1; k < r.steps; k++) {
        used += r.share[k * 3 + 2] > 0;
        after += used >= 3 && r.share[k * 3 + 2] > 0 && k > 4;
      }
      ck_assert_uint_eq(used, 3);
      ck_assert_uint_eq(after, 0);
    }
    double res = -1;
    if (op)
      ck_assert_int_eq(mlsba_potrf_residual(MLSBA_PRECISION_DOUBLE, 'L', n, a0,
                                            n, a, n, &res),
                       0);
    else
      ck_assert_int_eq(mlsba_getrf_residual(MLSBA_PRECISION_DOUBLE, n, n, a0, n,
                                            a, n, ipiv, &res),
                       0);
    ck_assert_msg(res < MLSBA_FACTOR_RESIDUAL_OK, "residual %g", res);
    mlsba_factor_report_free(&r);
    free(a);
    free(a0);
  }
  close_node(&nd);
}
END_TEST

static char *desktop_path(void) {
  static char path[4096];
  snprintf(path, sizeof path, "%s/models/sim/desktop-seed002.json",
           MLSBA_SOURCE_DIR);
  return path;
}

/* On the seed-002 desktop the per-step split gives the GPUs less of the
 * update as it shrinks, the constant ratio keeps their share, and every
 * split leaves right factors (computed by the calling thread). */
START_TEST(the_splits_on_the_sim_desktop) {
  mlsba_platform_t *pl = NULL;
  mlsba_executor_t *ex = NULL;
  ck_assert_int_eq(mlsba_platform_load(desktop_path(), &pl), 0);
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
  const int64_t n = 384;
  double seconds[MLSBA_FACTOR_SPLIT_COUNT];
  for (int s = 0; s < MLSBA_FACTOR_SPLIT_COUNT; s++) {
    double *a = make_matrix(MLSBA_PRECISION_DOUBLE, n, n, n, 0, 13);
    double *a0 = copy_of(a, bytes_of(MLSBA_PRECISION_DOUBLE, n, n));
    int64_t ipiv[384], info;
    mlsba_factor_opts_t o;
    mlsba_factor_opts_init(&o);
    o.block = 32;
    o.split = (mlsba_factor_split_t)s;
    mlsba_factor_report_t r;
    ck_assert_int_eq(mlsba_getrf_ex(ex, MLSBA_PRECISION_DOUBLE, n, n, a, n,
                                    ipiv, &info, &o, &r),
                     0);
    double res;
    mlsba_getrf_residual(MLSBA_PRECISION_DOUBLE, n, n, a0, n, a, n, ipiv, &res);
    ck_assert_msg(res < MLSBA_FACTOR_RESIDUAL_OK, "%s: residual %g",
                  mlsba_factor_split_name(o.split), res);
    /* gpu0 (device 1): its share of the first and of a late update */
    double first = (double)r.share[1 * 6 + 1] / (double)r.units[1];
    size_t last = r.steps - 4; /* 96 columns: more than the next panel */
    double late = (double)r.share[last * 6 + 1] / (double)r.units[last];
    if (s == MLSBA_FACTOR_SPLIT_FPM)
      ck_assert_msg(late < first, "fpm: gpu0 %g then %g", first, late);
    if (s == MLSBA_FACTOR_SPLIT_CONSTANT_RATIO)
      ck_assert_msg(fabs(late - first) < 0.2, "constant: %g then %g", first,
                    late);
    seconds[s] = r.seconds;
    mlsba_factor_report_free(&r);
    free(a);
    free(a0);
  }
  ck_assert_msg(seconds[MLSBA_FACTOR_SPLIT_FPM] <=
                    seconds[MLSBA_FACTOR_SPLIT_CONSTANT_RATIO],
                "fpm %g s, constant ratio %g s", seconds[0], seconds[1]);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

/* On a simulated 16-core node (the seed-002 desktop's core, 16 times) a
 * team of cores factorizes the panels where one core's would set the
 * pace: some step's panel takes less than its flops at the fastest point
 * of one core's profile, and no step's panel more than at its slowest.
 * The numbers, computed by the calling thread, are LAPACK's: ipiv, info
 * and the factors, on an odd size. */
START_TEST(a_team_of_cores_factorizes_the_panels_of_a_16_core_node) {
  char path[4096];
  snprintf(path, sizeof path, "%s/models/sim/node16.json", MLSBA_SOURCE_DIR);
  mlsba_platform_t *pl = NULL;
  mlsba_executor_t *ex = NULL;
  ck_assert_int_eq(mlsba_platform_load(path, &pl), 0);
  ck_assert_int_eq(mlsba_executor_create(pl, &ex), 0);
  const int n = 1501, nb = 64;
  double *a = make_matrix(MLSBA_PRECISION_DOUBLE, n, n, n, 0, 11);
  double *ref = copy_of(a, bytes_of(MLSBA_PRECISION_DOUBLE, n, n));
  int64_t *ipiv = calloc(n, sizeof *ipiv), info = -1;
  int *lipiv = calloc(n, sizeof *lipiv), linfo = -1;
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  o.block = nb;
  mlsba_factor_report_t r;
  ck_assert_int_eq(mlsba_getrf_ex(ex, MLSBA_PRECISION_DOUBLE, n, n, a, n, ipiv,
                                  &info, &o, &r),
                   0);
  /* The profile's unit: a column of an 8400 x 8400 x 8400 product. */
  const double unit = 2.0 * 8400 * 8400, fast = 83.577 * unit,
               slow = 59.726 * unit;
  int teams = 0;
  for (size_t k = 1; k < r.steps; k++) {
    double jn = (double)(k * nb), b = n - jn < nb ? n - jn : nb;
    if (b <= 0)
      continue;
    double flops = (n - jn) * b * b - b * b * b / 3;
    ck_assert_msg(r.panel_seconds[k] <= flops / slow * (1 + 1e-12),
                  "step %zu: panel %g s", k, r.panel_seconds[k]);
    teams += r.panel_seconds[k] < flops / fast * (1 - 1e-9);
  }
  ck_assert_int_gt(teams, 0);
  dgetrf_(&n, &n, ref, &n, lipiv, &linfo);
  ck_assert_int_eq(info, linfo);
  for (int i = 0; i < n; i++)
    ck_assert_msg(ipiv[i] == lipiv[i], "ipiv[%d]: %lld, LAPACK %d", i,
                  (long long)ipiv[i], lipiv[i]);
  double worst = 0;
  for (int i = 0; i < n * n; i++)
    worst = fmax(worst, fabs(a[i] - ref[i]));
  ck_assert_msg(worst < 1e-9, "factors differ from LAPACK's by %g", worst);
  mlsba_factor_report_free(&r);
  free(a);
  free(ref);
  free(ipiv);
  free(lipiv);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
}
END_TEST

typedef struct {
  char text[8192];
  size_t len;
} log_text_t;

static void keep_log_line(void *user, const char *line) {
  log_text_t *l = user;
  int w = snprintf(l->text + l->len, sizeof l->text - l->len, "%s\n", line);
  if (w > 0 && l->len + (size_t)w < sizeof l->text)
    l->len += (size_t)w;
}

/* Core i's saved model of this test's potrf (its key as saved). */
static mlsba_model_t *saved_model(const char *dir, int core) {
  char path[4200];
  snprintf(path, sizeof path, "%s/potrf-update-double-nb32-c%d.model", dir,
           core);
  mlsba_model_t *m = NULL;
  ck_assert_msg(mlsba_model_load(path, NULL, &m) == 0, "%s",
                mlsba_last_error());
  return m;
}

/* The models the steps measured are saved, and a second factorization of
 * the same size starts from them (its first update already split by
 * them rather than evenly). The first, cold, starts its cores from what
 * is known of them (the kernel choice's speed, or a warm core's model)
 * and saves only what it measured. */
START_TEST(models_of_the_update_are_kept_for_the_next_run) {
  node_t nd = open_node(two_cores);
  char dir[] = "/tmp/mlsba-factor-XXXXXX";
  ck_assert_ptr_nonnull(mkdtemp(dir));
  const int64_t n = 256;
  double guess = 0; /* the cold cores' first guess, GFLOPS (0: none) */
  ck_assert_int_eq(mlsba_cpu_class_kernels(MLSBA_PRECISION_DOUBLE,
                                           MLSBA_CPU_CLASS_UPDATE, NULL, NULL,
                                           &guess),
                   0);
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  o.block = 32;
  o.model_dir = dir;
  log_text_t log;
  o.log = keep_log_line;
  o.log_ctx = &log;
  for (int run = 0; run < 3; run++) {
    log.len = 0;
    log.text[0] = '\0';
    if (run == 2) { /* c1's model lost: c1 starts from c0's */
      char path[4200];
      snprintf(path, sizeof path, "%s/potrf-update-double-nb32-c1.model", dir);
      ck_assert_int_eq(unlink(path), 0);
    }
    double *a = make_matrix(MLSBA_PRECISION_DOUBLE, n, n, n, 1, 21);
    int64_t info;
    mlsba_factor_report_t r;
    ck_assert_msg(mlsba_potrf_ex(nd.ex, MLSBA_PRECISION_DOUBLE, 'L', n, a, n,
                                 &info, &o, &r) == 0,
                  "%s", mlsba_last_error());
    ck_assert_int_eq(info, 0);
    /* The report says how the call began: both cores cold the first
     * time (no saved model), warm the second; the models read and saved
     * outside the steps, inside the whole call; the kernels chosen when
     * the executor opened its cores, before the call. */
    ck_assert_uint_eq(r.models_cold + r.models_warm, 2);
    if (run == 0) {
      ck_assert_uint_eq(r.models_cold, 2);
      if (guess > 0) /* the kernels were timed, not forced */
        ck_assert_msg(strstr(log.text, "c1 starts cold from the kernel "
                                       "choice") != NULL,
                      "%s", log.text);
      /* Saved: what c1 measured, not the guess (one point at 1 unit). */
      mlsba_model_t *m = saved_model(dir, 1);
      ck_assert_uint_ge(mlsba_model_num_points(m), 1);
      for (size_t k = 0; k < mlsba_model_num_points(m); k++) {
        double x, rate;
        mlsba_model_get_point(m, k, &x, &rate);
        ck_assert_msg(x > 1 || rate != guess * 1e9, "the guess was saved");
      }
      mlsba_model_destroy(m);
    } else if (run == 1) {
      ck_assert_uint_ge(r.models_warm, 1); /* c0's model at least */
      ck_assert_msg(strstr(log.text, "starts cold") == NULL, "%s", log.text);
    } else {
      ck_assert_uint_eq(r.models_cold, 1);
      ck_assert_msg(strstr(log.text, "c1 starts cold from c0") != NULL, "%s",
                    log.text);
      mlsba_model_t *m = saved_model(dir, 1);
      ck_assert_uint_ge(mlsba_model_num_points(m), 1);
      mlsba_model_destroy(m);
    }
    ck_assert(r.models_read_s >= 0 && r.models_save_s > 0);
    ck_assert_msg(r.call_s >= r.seconds + r.models_read_s + r.models_save_s,
                  "call %g s, steps %g s, models %g + %g s", r.call_s,
                  r.seconds, r.models_read_s, r.models_save_s);
    ck_assert(r.kernels_s == 0);
    mlsba_factor_report_free(&r);
    free(a);
  }
  char path[4200];
  snprintf(path, sizeof path, "%s/potrf-update-double-nb32-c0.model", dir);
  mlsba_model_t *m = NULL;
  ck_assert_int_eq(access(path, R_OK), 0);
  /* The key names the device: a model for another one is refused. */
  ck_assert_int_eq(mlsba_model_load(path, "something else", &m), MLSBA_EFORMAT);
  snprintf(path, sizeof path, "rm -rf '%s'", dir);
  ck_assert_int_eq(system(path), 0);
  close_node(&nd);
}
END_TEST

/* Two cores that take from each other's shares (the end of a core's
 * share goes to the core that finished first): in every step of both
 * factorizations the shares reported, what each core updated, add up to
 * the step's units, and the results are right. Both devices pinned to
 * one core as well, where one runs while the other waits for the core,
 * so that shares move often. */
static void check_shares(const mlsba_factor_report_t *r) {
  for (size_t k = 1; k < r->steps; k++) {
    int64_t sum = 0;
    for (size_t i = 0; i < r->p; i++) {
      ck_assert_int_ge(r->share[k * r->p + i], 0);
      sum += r->share[k * r->p + i];
    }
    ck_assert_msg(sum == r->units[k], "step %zu: shares %lld, units %lld", k,
                  (long long)sum, (long long)r->units[k]);
  }
}

START_TEST(cores_share_their_steps_and_every_unit_is_updated_once) {
  const char *one_core = "{\"devices\": ["
                         "{\"name\": \"c0\", \"type\": \"cpu\", \"core\": 0},"
                         "{\"name\": \"c1\", \"type\": \"cpu\", \"core\": 0}],"
                         "\"groups\": [[\"c0\"], [\"c1\"]]}";
  const char *platforms[] = {two_cores, one_core};
  for (int k = 0; k < 2; k++) {
    node_t nd = open_node(platforms[k]);
    const int64_t n = 700;
    mlsba_factor_opts_t o;
    mlsba_factor_opts_init(&o);
    o.block = 64;
    for (int op = 0; op < 2; op++) {
      double *a = make_matrix(MLSBA_PRECISION_DOUBLE, n, n, n, op, 5);
      double *a0 = copy_of(a, bytes_of(MLSBA_PRECISION_DOUBLE, n, n));
      int64_t ipiv[700], info = -1;
      mlsba_factor_report_t r;
      double res = -1;
      if (op == 0) {
        ck_assert_msg(mlsba_getrf_ex(nd.ex, MLSBA_PRECISION_DOUBLE, n, n, a, n,
                                     ipiv, &info, &o, &r) == 0,
                      "%s", mlsba_last_error());
        ck_assert_int_eq(mlsba_getrf_residual(MLSBA_PRECISION_DOUBLE, n, n, a0,
                                              n, a, n, ipiv, &res),
                         0);
      } else {
        ck_assert_msg(mlsba_potrf_ex(nd.ex, MLSBA_PRECISION_DOUBLE, 'L', n, a,
                                     n, &info, &o, &r) == 0,
                      "%s", mlsba_last_error());
        ck_assert_int_eq(mlsba_potrf_residual(MLSBA_PRECISION_DOUBLE, 'L', n,
                                              a0, n, a, n, &res),
                         0);
      }
      ck_assert_int_eq(info, 0);
      ck_assert_msg(res >= 0 && res < MLSBA_FACTOR_RESIDUAL_OK,
                    "op %d platform %d: residual %g", op, k, res);
      check_shares(&r);
      mlsba_factor_report_free(&r);
      free(a);
      free(a0);
    }
    close_node(&nd);
  }
}
END_TEST

/* The block left to the library: min(m, n) / 16 in multiples of 64, from
 * 128 to 192 in double precision and to 256 in single. */
START_TEST(the_default_block_follows_precision_and_size) {
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  ck_assert_int_eq(o.block, 0);
  const mlsba_precision_t d = MLSBA_PRECISION_DOUBLE,
                          f = MLSBA_PRECISION_SINGLE;
  ck_assert_int_eq(mlsba_factor_default_block(d, 1, 1), 128);
  ck_assert_int_eq(mlsba_factor_default_block(d, 2048, 2048), 128);
  ck_assert_int_eq(mlsba_factor_default_block(d, 3072, 5000), 192);
  ck_assert_int_eq(mlsba_factor_default_block(d, 100000, 100000), 192);
  ck_assert_int_eq(mlsba_factor_default_block(f, 1, 1), 128);
  ck_assert_int_eq(mlsba_factor_default_block(f, 2048, 2048), 128);
  ck_assert_int_eq(mlsba_factor_default_block(f, 3071, 3071), 128);
  ck_assert_int_eq(mlsba_factor_default_block(f, 3072, 3072), 192);
  ck_assert_int_eq(mlsba_factor_default_block(f, 4096, 8192), 256);
  ck_assert_int_eq(mlsba_factor_default_block(f, 8192, 3500), 192);
  ck_assert_int_eq(mlsba_factor_default_block(f, 100000, 100000), 256);
}
END_TEST

static Suite *factor_suite(void) {
  Suite *s = suite_create("factor");
  TCase *tc = tcase_create("factor");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, both_precisions_factorize_right_on_two_cores);
  tcase_add_test(tc, odd_sizes_factorize_right);
  tcase_add_test(tc, pivots_and_factors_match_lapack);
  tcase_add_test(tc, a_singular_matrix_sets_info);
  tcase_add_test(tc, a_matrix_not_positive_definite_sets_info);
  tcase_add_test(tc, bad_arguments_are_refused_with_a_message);
  tcase_add_test(tc, virtual_times_of_a_small_lu_are_exact);
  tcase_add_test(tc, virtual_times_of_a_small_cholesky_are_exact);
  tcase_add_test(tc, the_panel_solve_runs_right_split_or_on_the_core);
  tcase_add_test(tc, a_kernel_slice_is_the_kernels_split_of_the_first_update);
  tcase_add_test(tc, static_ways_keep_the_panel_on_its_core);
  tcase_add_test(tc, the_diagonal_block_first_hides_the_panel);
  tcase_add_test(tc, every_sim_step_time_follows_the_profiles);
  tcase_add_test(tc,
                 a_failing_accelerator_is_dropped_and_the_result_stays_right);
  tcase_add_test(tc, the_splits_on_the_sim_desktop);
  tcase_add_test(tc, a_team_of_cores_factorizes_the_panels_of_a_16_core_node);
  tcase_add_test(tc, models_of_the_update_are_kept_for_the_next_run);
  tcase_add_test(tc, cores_share_their_steps_and_every_unit_is_updated_once);
  tcase_add_test(tc, the_default_block_follows_precision_and_size);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  setenv("MLSBA_MODEL_CACHE", "0", 1); /* not the user's cache */
  return run_suite(factor_suite());
}
