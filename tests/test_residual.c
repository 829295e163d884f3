/* The scaled residuals of the factorizations (lib/factor/residual.c):
 * right factors read below 16, and factors or a matrix holding a NaN or
 * an Inf never do (a comparison with NaN is false, so a residual that
 * skips it reads small). */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mlsba.h"
#include "support/run_suite.h"

enum { N = 12 };

/* A = L U exactly (small integers: every product is exact in double), L
 * unit lower, U upper with a dominant diagonal; lu holds both as
 * mlsba_getrf() leaves them, ipiv the identity. */
static void lu_of(double *a, double *lu, int64_t *ipiv) {
  double L[N * N] = {0}, U[N * N] = {0};
  for (int j = 0; j < N; j++) {
    L[j + j * N] = 1;
    for (int i = j + 1; i < N; i++)
      L[i + j * N] = (double)((i * 7 + j * 3) % 5) - 2;
    for (int i = 0; i < j; i++)
      U[i + j * N] = (double)((i * 5 + j) % 7) - 3;
    U[j + j * N] = 4 * N + j;
  }
  for (int j = 0; j < N; j++)
    for (int i = 0; i < N; i++) {
      double s = 0;
      for (int k = 0; k < N; k++)
        s += L[i + k * N] * U[k + j * N];
      a[i + j * N] = s;
      lu[i + j * N] = i > j ? L[i + j * N] : U[i + j * N];
    }
  for (int i = 0; i < N; i++)
    ipiv[i] = i + 1;
}

static double getrf_residual(const double *a, const double *lu,
                             const int64_t *ipiv) {
  double r = -1;
  ck_assert_int_eq(
      mlsba_getrf_residual(MLSBA_PRECISION_DOUBLE, N, N, a, N, lu, N, ipiv, &r),
      0);
  return r;
}

/* Not below 16, whatever NaN does to a comparison. */
static void expect_wrong(double r, const char *what) {
  ck_assert_msg(!(r < MLSBA_FACTOR_RESIDUAL_OK) && isinf(r), "%s: residual %g",
                what, r);
}

START_TEST(lu_factors_with_a_nan_or_an_inf_are_never_right) {
  double a[N * N], lu[N * N], bad[N * N];
  int64_t ipiv[N];
  lu_of(a, lu, ipiv);
  double r = getrf_residual(a, lu, ipiv);
  ck_assert_msg(r >= 0 && r < 1, "right factors: residual %g", r);
  /* One NaN (read 0.038 before), NaN everywhere (read 0), an Inf. */
  memcpy(bad, lu, sizeof bad);
  bad[3 + 2 * N] = NAN;
  expect_wrong(getrf_residual(a, bad, ipiv), "one NaN in L");
  memcpy(bad, lu, sizeof bad);
  bad[5 + 9 * N] = NAN;
  expect_wrong(getrf_residual(a, bad, ipiv), "one NaN in U");
  for (int i = 0; i < N * N; i++)
    bad[i] = NAN;
  expect_wrong(getrf_residual(a, bad, ipiv), "NaN everywhere");
  memcpy(bad, lu, sizeof bad);
  bad[N * N - 1] = INFINITY;
  expect_wrong(getrf_residual(a, bad, ipiv), "an Inf in U");
  /* A NaN in the matrix itself: nothing can be right about it. */
  memcpy(bad, a, sizeof bad);
  bad[7] = NAN;
  expect_wrong(getrf_residual(bad, lu, ipiv), "a NaN in A");
  /* A zero matrix: zero factors are right, others are not. */
  double zero[N * N] = {0};
  ck_assert(getrf_residual(zero, zero, ipiv) == 0);
  expect_wrong(getrf_residual(zero, lu, ipiv), "A zero, factors not");
  /* Single precision reads the same way. */
  float af[N * N], luf[N * N];
  for (int i = 0; i < N * N; i++) {
    af[i] = (float)a[i];
    luf[i] = (float)lu[i];
  }
  luf[4] = NAN;
  ck_assert_int_eq(mlsba_getrf_residual(MLSBA_PRECISION_SINGLE, N, N, af, N,
                                        luf, N, ipiv, &r),
                   0);
  expect_wrong(r, "single, one NaN");
}
END_TEST

START_TEST(cholesky_factors_with_a_nan_or_an_inf_are_never_right) {
  /* A = L L^T from the unit lower triangle of lu_of() with the diagonal
   * of U's scale: exact, and positive definite. */
  double a[N * N], lu[N * N], l[N * N] = {0}, spd[N * N];
  int64_t ipiv[N];
  lu_of(a, lu, ipiv);
  for (int j = 0; j < N; j++) {
    l[j + j * N] = 4;
    for (int i = j + 1; i < N; i++)
      l[i + j * N] = lu[i + j * N];
  }
  for (int j = 0; j < N; j++)
    for (int i = 0; i < N; i++) {
      double s = 0;
      for (int k = 0; k < N; k++)
        s += l[i + k * N] * l[j + k * N];
      spd[i + j * N] = s;
    }
  double r = -1;
  ck_assert_int_eq(
      mlsba_potrf_residual(MLSBA_PRECISION_DOUBLE, 'L', N, spd, N, l, N, &r),
      0);
  ck_assert_msg(r >= 0 && r < 1, "right factor: residual %g", r);
  l[6 + 2 * N] = NAN;
  ck_assert_int_eq(
      mlsba_potrf_residual(MLSBA_PRECISION_DOUBLE, 'L', N, spd, N, l, N, &r),
      0);
  expect_wrong(r, "one NaN in L");
  /* U = L^T, the upper triangle read: an Inf there. */
  double u[N * N];
  for (int j = 0; j < N; j++)
    for (int i = 0; i < N; i++)
      u[i + j * N] = l[j + i * N];
  u[2 + 6 * N] = INFINITY;
  ck_assert_int_eq(
      mlsba_potrf_residual(MLSBA_PRECISION_DOUBLE, 'U', N, spd, N, u, N, &r),
      0);
  expect_wrong(r, "an Inf in U");
  for (int i = 0; i < N * N; i++)
    u[i] = NAN;
  ck_assert_int_eq(
      mlsba_potrf_residual(MLSBA_PRECISION_DOUBLE, 'U', N, spd, N, u, N, &r),
      0);
  expect_wrong(r, "NaN everywhere");
}
END_TEST

static Suite *residual_suite(void) {
  Suite *s = suite_create("residual");
  TCase *tc = tcase_create("nan");
  /* The first product may time the cores' kernels (lib/devices/cpu). */
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, lu_factors_with_a_nan_or_an_inf_are_never_right);
  tcase_add_test(tc, cholesky_factors_with_a_nan_or_an_inf_are_never_right);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(residual_suite()); }
