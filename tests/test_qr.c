/* Hybrid QR (mlsba_geqrf, lib/factor/qr.c) on two pinned cores and on
 * simulated devices: graded as LAPACK's own tests grade ?geqrf, by
 * ||A - Q R||_1 / (||A||_1 max(m, n) eps) and ||I - Q^T Q||_1 / (n eps)
 * with Q formed by LAPACK's ?orgqr from our factors; the factors against
 * LAPACK's ?geqrf on the same matrix; the virtual times of simulated
 * runs against the profiles; a device failing mid-factorization; bad
 * arguments. And what is built on it: mlsba_ormqr against LAPACK's
 * ?ormqr on the same factors, mlsba_gels against LAPACK's ?gels on the
 * same systems (lib/factor/ormqr.c, gels.c). */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "factor/ormqr.h"
#include "mlsba.h"
#include "runtime/executor.h"
#include "support/dense.h"
#include "support/run_suite.h"

static const char *one_core =
    "{\"devices\": [{\"name\": \"c0\", \"type\": \"cpu\", \"core\": 0}]}";

static size_t esize(mlsba_precision_t prec) {
  return prec == MLSBA_PRECISION_DOUBLE ? sizeof(double) : sizeof(float);
}

static double get(const matrix_t *A, const void *x, int64_t ld, int64_t i,
                  int64_t j) {
  return A->prec == MLSBA_PRECISION_DOUBLE ? ((const double *)x)[i + j * ld]
                                           : ((const float *)x)[i + j * ld];
}

/* The 1-norm of an m x n matrix in double, leading dimension ld. */
static double norm1(const double *x, int64_t m, int64_t n, int64_t ld) {
  double most = 0;
  for (int64_t j = 0; j < n; j++) {
    double s = 0;
    for (int64_t i = 0; i < m; i++)
      s += fabs(x[i + j * ld]);
    most = s > most ? s : most;
  }
  return most;
}

/* What LAPACK's tests of ?geqrf measure (dqrt01's two ratios, the second
 * scaled by n as issue 33 asks), from the factors the call left in A.a
 * and its tau: Q (m x k, k = min(m, n)) by ?orgqr in the call's
 * precision, then in double ||A - Q R||_1 / (||A||_1 max(m, n) eps) and
 * ||I - Q^T Q||_1 / (max(n, 1) eps). */
static void residuals(const matrix_t *A, const void *tau, double *fact,
                      double *orth) {
  int64_t m = A->m, n = A->n, k = m < n ? m : n, ld = A->lda;
  double eps =
      A->prec == MLSBA_PRECISION_DOUBLE ? DBL_EPSILON / 2 : FLT_EPSILON / 2;
  *fact = *orth = 0;
  if (k == 0)
    return;
  /* Q from the reflectors: the first k columns, through ?orgqr. */
  size_t es = esize(A->prec);
  char *q = malloc((size_t)(m * k) * es);
  for (int64_t j = 0; j < k; j++)
    memcpy(q + (size_t)(j * m) * es, (char *)A->a + (size_t)(j * ld) * es,
           (size_t)m * es);
  int im = (int)m, ik = (int)k, lwork = (int)(64 * k), info = 0;
  void *work = malloc((size_t)lwork * es);
  if (A->prec == MLSBA_PRECISION_DOUBLE)
    dorgqr_(&im, &ik, &ik, (double *)q, &im, tau, work, &lwork, &info);
  else
    sorgqr_(&im, &ik, &ik, (float *)q, &im, tau, work, &lwork, &info);
  ck_assert_int_eq(info, 0);
  free(work);
  double *Q = malloc((size_t)(m * k) * sizeof *Q);
  for (int64_t i = 0; i < m * k; i++)
    Q[i] =
        A->prec == MLSBA_PRECISION_DOUBLE ? ((double *)q)[i] : ((float *)q)[i];
  free(q);
  /* A - Q R, R the upper trapezoid k x n of the factors. */
  double *D = malloc((size_t)(m * n) * sizeof *D);
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < m; i++) {
      double s = A->ref[i + j * ld];
      for (int64_t l = 0; l <= j && l < k; l++)
        s -= Q[i + l * m] * get(A, A->a, ld, l, j);
      D[i + j * m] = s;
    }
  double an = norm1(A->ref, m, n, ld);
  double big = (double)(m > n ? m : n);
  *fact = an > 0 ? norm1(D, m, n, m) / (an * big * eps) : 0;
  /* I - Q^T Q, k x k. */
  double *E = malloc((size_t)(k * k) * sizeof *E);
  for (int64_t j = 0; j < k; j++)
    for (int64_t i = 0; i < k; i++) {
      double s = i == j ? 1 : 0;
      for (int64_t l = 0; l < m; l++)
        s -= Q[l + i * m] * Q[l + j * m];
      E[i + j * k] = s;
    }
  *orth = norm1(E, k, k, k) / ((double)(n > 1 ? n : 1) * eps);
  free(D);
  free(E);
  free(Q);
}

/* QR of m x n (leading dimension lda) with block nb on the node: both
 * ratios below 16. */
static void check_geqrf(mlsba_executor_t *ex, mlsba_precision_t prec, int64_t m,
                        int64_t n, int64_t lda, int64_t nb) {
  matrix_t A = make_matrix_ref(prec, m, n, lda, (unsigned)(m * 31 + n));
  int64_t k = m < n ? m : n, info = -1;
  void *tau = calloc((size_t)(k > 0 ? k : 1), esize(prec));
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  o.block = nb;
  ck_assert_msg(
      mlsba_geqrf_ex(ex, prec, m, n, A.a, lda, tau, &info, &o, NULL) == 0, "%s",
      mlsba_last_error());
  ck_assert_int_eq(info, 0);
  double fact, orth;
  residuals(&A, tau, &fact, &orth);
  if (getenv("QR_DEBUG"))
    fprintf(stderr, "%lld x %lld nb %lld p %d: %g %g\n", (long long)m,
            (long long)n, (long long)nb, (int)prec, fact, orth);
  ck_assert_msg(
      fact < MLSBA_FACTOR_RESIDUAL_OK && orth < MLSBA_FACTOR_RESIDUAL_OK,
      "geqrf %lld x %lld nb %lld precision %d: ||A - QR|| %g, "
      "||I - Q^T Q|| %g",
      (long long)m, (long long)n, (long long)nb, (int)prec, fact, orth);
  free(tau);
  free_matrix(&A);
}

/* Square, odd, wide (m < n), tall (m >> n), a panel wider than the
 * matrix, a leading dimension beyond m and one of 1 KiB (the panel's
 * copy), in both precisions. */
START_TEST(every_shape_factorizes_right_in_both_precisions) {
  node_t nd = open_node(two_cores);
  static const int64_t shapes[][4] = {
      /* m, n, lda, nb */
      {1, 1, 1, 8},         {257, 193, 257, 32},  {100, 230, 103, 24},
      {2000, 40, 2000, 16}, {1500, 97, 1500, 32}, {60, 50, 60, 128},
      {50, 60, 64, 128},    {128, 128, 128, 128}, {300, 150, 512, 48},
      {7, 300, 7, 4},       {333, 333, 340, 64}};
  for (int p = 0; p < 2; p++)
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
      check_geqrf(nd.ex, p ? MLSBA_PRECISION_DOUBLE : MLSBA_PRECISION_SINGLE,
                  shapes[s][0], shapes[s][1], shapes[s][2], shapes[s][3]);
  close_node(&nd);
}
END_TEST

void sgeqrf_(const int *m, const int *n, float *a, const int *lda, float *tau,
             float *work, const int *lwork, int *info);

/* Entry i of a matrix of precision p, in double. */
static double entry(mlsba_precision_t p, const void *a, int i) {
  return p == MLSBA_PRECISION_DOUBLE ? ((const double *)a)[i]
                                     : (double)((const float *)a)[i];
}

/* mlsba_geqrf_ex's R, V and tau against LAPACK's ?geqrf's on three shapes
 * (each with its block), A from seeds seed, seed + 1, ...: they agree
 * within `bound` and `bound_tau`. */
static void factors_against_lapack(mlsba_precision_t p, unsigned seed,
                                   double bound, double bound_tau) {
  node_t nd = open_node(two_cores);
  static const int shapes[][3] = {{257, 201, 40}, {90, 211, 32}, {700, 64, 24}};
  size_t es = p == MLSBA_PRECISION_DOUBLE ? sizeof(double) : sizeof(float);
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
    int m = shapes[s][0], n = shapes[s][1], k = m < n ? m : n, info = -1;
    matrix_t A = make_matrix_ref(p, m, n, m, seed + (unsigned)s);
    void *ref = malloc((size_t)(m * n) * es);
    memcpy(ref, A.a, (size_t)(m * n) * es);
    void *tau = malloc((size_t)k * es), *ltau = malloc((size_t)k * es);
    int lwork = 64 * n;
    void *work = malloc((size_t)lwork * es);
    if (p == MLSBA_PRECISION_DOUBLE)
      dgeqrf_(&m, &n, ref, &m, ltau, work, &lwork, &info);
    else
      sgeqrf_(&m, &n, ref, &m, ltau, work, &lwork, &info);
    ck_assert_int_eq(info, 0);
    mlsba_factor_opts_t o;
    mlsba_factor_opts_init(&o);
    o.block = shapes[s][2];
    int64_t our_info = -1;
    ck_assert_int_eq(
        mlsba_geqrf_ex(nd.ex, p, m, n, A.a, m, tau, &our_info, &o, NULL), 0);
    double worst = 0, worst_tau = 0;
    for (int i = 0; i < m * n; i++)
      worst = fmax(worst, fabs(entry(p, A.a, i) - entry(p, ref, i)));
    for (int i = 0; i < k; i++)
      worst_tau = fmax(worst_tau, fabs(entry(p, tau, i) - entry(p, ltau, i)));
    ck_assert_msg(worst < bound && worst_tau < bound_tau,
                  "%d x %d: factors differ from LAPACK's by %g, tau by %g", m,
                  n, worst, worst_tau);
    if (getenv("QR_DEBUG"))
      fprintf(stderr, "%s %d x %d: %g %g\n",
              p == MLSBA_PRECISION_DOUBLE ? "double" : "single", m, n, worst,
              worst_tau);
    free(work);
    free(tau);
    free(ltau);
    free(ref);
    free_matrix(&A);
  }
  close_node(&nd);
}

/* The same reflectors as LAPACK's ?geqrf computes: R, V and tau agree to
 * rounding (Householder's sign convention is the same, so no column of R
 * has its sign flipped). */
START_TEST(factors_match_lapack) {
  factors_against_lapack(MLSBA_PRECISION_DOUBLE, 7, 1e-11, 1e-13);
}
END_TEST

/* The same in single precision: R, V and tau agree with LAPACK's
 * ?geqrf's to single's rounding (the double test's bounds scaled by the
 * ratio of the two precisions' eps, about 5e4 and 450 units). */
START_TEST(single_precision_factors_match_lapack) {
  factors_against_lapack(MLSBA_PRECISION_SINGLE, 17, 3e-3, 3e-5);
}
END_TEST

/* One simulated device at 100 units a second, a unit 2 n^2 = 288 flops:
 * 28800 flops/s. m = n = 12, nb = 4: step 0 is panel 0, 3 nb^2 (m - nb /
 * 3) = 512 flops; step 1 updates 8 columns of 4 nb m - nb^2 = 176 flops
 * and factorizes panel 1 (320 flops); step 2 updates 4 columns of 112
 * flops and factorizes panel 2 (128 flops); nothing is right of it. */
START_TEST(virtual_times_of_a_small_qr_are_exact) {
  node_t nd = open_node("{\"devices\": [{\"name\": \"core0\", \"type\": "
                        "\"sim\", \"speed\": [[1, 100]]}]}");
  matrix_t A = make_matrix_ref(MLSBA_PRECISION_DOUBLE, 12, 12, 12, 3);
  double tau[12];
  int64_t info;
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  o.block = 4;
  mlsba_factor_report_t r;
  ck_assert_int_eq(mlsba_geqrf_ex(nd.ex, MLSBA_PRECISION_DOUBLE, 12, 12, A.a,
                                  12, tau, &info, &o, &r),
                   0);
  const double rate = 28800;
  ck_assert(r.virtual_time);
  ck_assert_uint_eq(r.steps, 3);
  ck_assert_double_eq_tol(r.step_seconds[0], 512 / rate, 1e-15);
  ck_assert_int_eq(r.units[1], 8);
  ck_assert_double_eq_tol(r.step_seconds[1], (8 * 176 + 320) / rate, 1e-15);
  ck_assert_int_eq(r.units[2], 4);
  ck_assert_double_eq_tol(r.step_seconds[2], (4 * 112 + 128) / rate, 1e-15);
  ck_assert_double_eq_tol(r.seconds, 2816 / rate, 1e-15);
  ck_assert_double_eq_tol(r.flops, 2 * 1728 - 2 * 1728 / 3.0, 1e-9);
  /* The calling thread computed the factors. */
  double fact, orth;
  residuals(&A, tau, &fact, &orth);
  ck_assert(fact < MLSBA_FACTOR_RESIDUAL_OK && orth < MLSBA_FACTOR_RESIDUAL_OK);
  mlsba_factor_report_free(&r);
  free_matrix(&A);
  close_node(&nd);
}
END_TEST

/* A tall matrix on the simulated pair: every step splits its columns
 * between core0 (which also factorizes the next panel) and gpu0, each
 * device's virtual time is its share at its profile's rate, and the
 * computed factors are right. */
START_TEST(every_sim_step_time_follows_the_profiles) {
  node_t nd = open_node(sim_pair);
  const int64_t m = 300, n = 120, nb = 16;
  matrix_t A = make_matrix_ref(MLSBA_PRECISION_DOUBLE, m, n, m, 5);
  double tau[120];
  int64_t info;
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  o.block = nb;
  mlsba_factor_report_t r;
  ck_assert_int_eq(mlsba_geqrf_ex(nd.ex, MLSBA_PRECISION_DOUBLE, m, n, A.a, m,
                                  tau, &info, &o, &r),
                   0);
  const double ref = 2.0 * n * n, rate[2] = {100 * ref, 300 * ref};
  double sum = 0;
  int split = 0;
  for (size_t k = 1; k < r.steps; k++) {
    int64_t j = (int64_t)(k - 1) * nb, jb = n - j < nb ? n - j : nb;
    double w = 4.0 * (double)(jb * (m - j)) - (double)(jb * jb);
    int64_t jn = j + jb, bn = n - jn < nb ? n - jn : nb;
    double panel = jn < n ? 3.0 * (double)(bn * bn) *
                                ((double)(m - jn) - bn / 3.0) / rate[0]
                          : 0;
    ck_assert_int_eq(r.share[k * 2] + r.share[k * 2 + 1], n - j - jb);
    double own = r.share[k * 2] * w / rate[0];
    if (r.ahead_device[k] == 1) { /* gpu0 updated the next panel's columns */
      double ready = (double)(bn < n - j - jb ? bn : n - j - jb) * w / rate[1];
      own = own > ready ? own : ready;
    }
    ck_assert_double_eq_tol(r.time[k * 2], own + panel, 1e-12);
    ck_assert_double_eq_tol(r.time[k * 2 + 1], r.share[k * 2 + 1] * w / rate[1],
                            1e-12);
    split += r.share[k * 2 + 1] > 0 && r.share[k * 2] + bn > 0;
    sum += r.step_seconds[k];
  }
  ck_assert_double_eq_tol(r.seconds, sum + r.step_seconds[0], 1e-12);
  ck_assert_int_gt(split, 0);
  double fact, orth;
  residuals(&A, tau, &fact, &orth);
  ck_assert_msg(fact < MLSBA_FACTOR_RESIDUAL_OK &&
                    orth < MLSBA_FACTOR_RESIDUAL_OK,
                "%g %g", fact, orth);
  mlsba_factor_report_free(&r);
  free_matrix(&A);
  close_node(&nd);
}
END_TEST

/* gpu1 fails at its 4th share: it is dropped, its columns go to the
 * others, and the factors are still right. */
START_TEST(a_failing_device_is_dropped_and_the_result_stays_right) {
  node_t nd = open_node(
      "{\"devices\": ["
      "{\"name\": \"core0\", \"type\": \"sim\", \"speed\": [[1, 100]]},"
      "{\"name\": \"gpu0\", \"type\": \"sim\", \"speed\": [[1, 300]]},"
      "{\"name\": \"gpu1\", \"type\": \"sim\", \"speed\": [[1, 200]],"
      " \"fail_at\": 4}],"
      "\"groups\": [[\"core0\", \"gpu0\"], [\"gpu1\"]]}");
  const int64_t m = 200, n = 160;
  matrix_t A = make_matrix_ref(MLSBA_PRECISION_DOUBLE, m, n, m, 11);
  double tau[160];
  int64_t info = -1;
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  o.block = 16;
  mlsba_factor_report_t r;
  ck_assert_msg(mlsba_geqrf_ex(nd.ex, MLSBA_PRECISION_DOUBLE, m, n, A.a, m, tau,
                               &info, &o, &r) == 0,
                "%s", mlsba_last_error());
  ck_assert_uint_eq(r.lost, 1);
  ck_assert_int_eq(r.dropped[2], 1);
  size_t used = 0;
  for (size_t k = 1; k < r.steps; k++)
    used += r.share[k * 3 + 2] > 0;
  ck_assert_uint_eq(used, 3); /* three shares ran, the fourth failed */
  double fact, orth;
  residuals(&A, tau, &fact, &orth);
  ck_assert_msg(fact < MLSBA_FACTOR_RESIDUAL_OK &&
                    orth < MLSBA_FACTOR_RESIDUAL_OK,
                "%g %g", fact, orth);
  mlsba_factor_report_free(&r);
  free_matrix(&A);
  close_node(&nd);
}
END_TEST

/* The library's residuals (what mlsba-bench verifies with) agree with
 * the ones computed here, and see a factor spoiled in one entry, by a
 * wrong value or a NaN. */
START_TEST(the_library_residuals_agree_and_see_a_wrong_factor) {
  node_t nd = open_node(two_cores);
  for (int p = 0; p < 2; p++) {
    mlsba_precision_t prec =
        p ? MLSBA_PRECISION_DOUBLE : MLSBA_PRECISION_SINGLE;
    const int64_t m = 180, n = 70;
    matrix_t A = make_matrix_ref(prec, m, n, m, 21);
    void *a0 = malloc((size_t)(m * n) * esize(prec));
    memcpy(a0, A.a, (size_t)(m * n) * esize(prec));
    void *tau = malloc((size_t)n * esize(prec));
    int64_t info;
    mlsba_factor_opts_t o;
    mlsba_factor_opts_init(&o);
    o.block = 16;
    ck_assert_int_eq(
        mlsba_geqrf_ex(nd.ex, prec, m, n, A.a, m, tau, &info, &o, NULL), 0);
    double fact, orth, lib_fact = -1, lib_orth = -1;
    residuals(&A, tau, &fact, &orth);
    ck_assert_int_eq(mlsba_geqrf_residual(prec, m, n, a0, m, A.a, m, tau,
                                          &lib_fact, &lib_orth),
                     0);
    ck_assert_double_eq_tol(lib_fact, fact, 0.05 + 0.1 * fact);
    /* The library forms Q in double, this test as LAPACK's tests do, in
     * the call's precision: in single the two orthogonalities differ by
     * the rounding of ?orgqr itself. */
    if (p)
      ck_assert_double_eq_tol(lib_orth, orth, 0.05 + 0.1 * orth);
    ck_assert(lib_orth < MLSBA_FACTOR_RESIDUAL_OK);
    if (p) /* R(5, 40) off, by far more than rounding */
      ((double *)A.a)[5 + 40 * m] += 1e-6;
    else
      ((float *)A.a)[5 + 40 * m] += 0.05f;
    ck_assert_int_eq(
        mlsba_geqrf_residual(prec, m, n, a0, m, A.a, m, tau, &lib_fact, NULL),
        0);
    ck_assert_msg(lib_fact > MLSBA_FACTOR_RESIDUAL_OK, "%g", lib_fact);
    if (p) /* a NaN is never right */
      ((double *)A.a)[5 + 40 * m] = NAN;
    else
      ((float *)A.a)[5 + 40 * m] = NAN;
    ck_assert_int_eq(mlsba_geqrf_residual(prec, m, n, a0, m, A.a, m, tau,
                                          &lib_fact, &lib_orth),
                     0);
    ck_assert(isinf(lib_fact));
    ck_assert_int_eq(
        mlsba_geqrf_residual(prec, m, n, a0, m, A.a, m, NULL, &lib_fact, NULL),
        MLSBA_EINVAL);
    ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "tau"));
    free(a0);
    free(tau);
    free_matrix(&A);
  }
  close_node(&nd);
}
END_TEST

/* Each bad argument is refused, the message naming it; the matrix and
 * tau are left as they were. */
START_TEST(bad_arguments_are_refused_with_a_message) {
  node_t nd = open_node(two_cores);
  double a[16] = {4, 1, 1, 4}, tau[4] = {-7, -7, -7, -7};
  int64_t info = -1;
  const mlsba_precision_t d = MLSBA_PRECISION_DOUBLE;
  ck_assert_int_eq(mlsba_geqrf(NULL, d, 2, 2, a, 2, tau, &info), MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "executor"));
  ck_assert_int_eq(mlsba_geqrf(nd.ex, d, 3, 2, a, 2, tau, &info), MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "lda"));
  ck_assert_int_eq(mlsba_geqrf(nd.ex, d, -1, 2, a, 2, tau, &info),
                   MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "size"));
  ck_assert_int_eq(mlsba_geqrf(nd.ex, d, 2, 2, a, 2, NULL, &info),
                   MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "tau"));
  ck_assert_int_eq(mlsba_geqrf(nd.ex, d, 2, 2, NULL, 2, tau, &info),
                   MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "matrix"));
  ck_assert_int_eq(mlsba_geqrf(nd.ex, d, 2, 2, a, 2, tau, NULL), MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "info"));
  ck_assert_int_eq(
      mlsba_geqrf(nd.ex, (mlsba_precision_t)7, 2, 2, a, 2, tau, &info),
      MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "precision"));
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  o.block = 100000;
  ck_assert_int_eq(mlsba_geqrf_ex(nd.ex, d, 2, 2, a, 2, tau, &info, &o, NULL),
                   MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "block"));
  o.block = 0;
  unsigned char none[2] = {0, 0};
  o.use = none;
  ck_assert_int_eq(mlsba_geqrf_ex(nd.ex, d, 2, 2, a, 2, tau, &info, &o, NULL),
                   MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "geqrf"));
  ck_assert(a[0] == 4 && a[1] == 1 && tau[0] == -7);
  /* An empty matrix is no error, and tau may be NULL for it. */
  ck_assert_int_eq(mlsba_geqrf(nd.ex, d, 0, 5, a, 1, NULL, &info), 0);
  ck_assert_int_eq(info, 0);
  close_node(&nd);
}
END_TEST

/* ---- mlsba_ormqr and mlsba_gels ----------------------------------------- */

static double eps_of(mlsba_precision_t prec) {
  return prec == MLSBA_PRECISION_DOUBLE ? DBL_EPSILON / 2 : FLT_EPSILON / 2;
}

/* The largest |x - y| over rows x cols (leading dimension ld), and the
 * largest |y|. */
static double largest_difference(mlsba_precision_t prec, int64_t rows,
                                 int64_t cols, const void *x, const void *y,
                                 int64_t ld, double *scale) {
  double worst = 0, big = 0;
  for (int64_t j = 0; j < cols; j++)
    for (int64_t i = 0; i < rows; i++) {
      double u, v;
      if (prec == MLSBA_PRECISION_DOUBLE) {
        u = ((const double *)x)[i + j * ld];
        v = ((const double *)y)[i + j * ld];
      } else {
        u = ((const float *)x)[i + j * ld];
        v = ((const float *)y)[i + j * ld];
      }
      double d = fabs(u - v);
      worst = d > worst || isnan(d) ? d : worst;
      big = fabs(v) > big ? fabs(v) : big;
    }
  *scale = big;
  return worst;
}

/* C = op(Q) C or C op(Q) by mlsba_ormqr and by LAPACK's ?ormqr on the
 * same factors (mlsba_geqrf's of a random nq x k matrix, nq the order of
 * Q), C random, other its other side: they agree to rounding. */
static void check_ormqr_on(mlsba_executor_t *fx, mlsba_executor_t *ex,
                           mlsba_precision_t prec, char side, char trans,
                           int64_t nq, int64_t other, int64_t k) {
  int left = side == 'L';
  int64_t m = left ? nq : other, n = left ? other : nq;
  int64_t lda = nq + 3, ldc = m + 2, info = -1;
  size_t es = esize(prec);
  matrix_t A = make_matrix_ref(prec, nq, k, lda, (unsigned)(nq * 7 + k));
  void *tau = calloc((size_t)(k > 0 ? k : 1), es);
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  o.block = 16;
  ck_assert_msg(
      mlsba_geqrf_ex(fx, prec, nq, k, A.a, lda, tau, &info, &o, NULL) == 0,
      "%s", mlsba_last_error());
  matrix_t C = make_matrix_ref(prec, m, n, ldc, (unsigned)(m * 13 + n));
  void *ref = copy_of(C.a, (size_t)(ldc * (n > 0 ? n : 1)) * es);
  ck_assert_msg(mlsba_ormqr(ex, prec, side, trans, m, n, k, A.a, lda, tau, C.a,
                            ldc, &info) == 0,
                "%s", mlsba_last_error());
  ck_assert_int_eq(info, 0);
  int im = (int)m, in = (int)n, ik = (int)k, ilda = (int)lda, ildc = (int)ldc;
  int lwork = (int)(64 * ((m > n ? m : n) + 1) + 4160), linfo = 0;
  void *work = malloc((size_t)lwork * es);
  char sd[2] = {side, 0}, tr[2] = {trans, 0};
  if (m > 0 && n > 0) {
    if (prec == MLSBA_PRECISION_DOUBLE)
      dormqr_(sd, tr, &im, &in, &ik, A.a, &ilda, tau, ref, &ildc, work, &lwork,
              &linfo, 1, 1);
    else
      sormqr_(sd, tr, &im, &in, &ik, A.a, &ilda, tau, ref, &ildc, work, &lwork,
              &linfo, 1, 1);
  }
  ck_assert_int_eq(linfo, 0);
  double big, worst = largest_difference(prec, m, n, C.a, ref, ldc, &big);
  double tol =
      256 * (double)(nq > 1 ? nq : 1) * eps_of(prec) * (big > 1 ? big : 1);
  ck_assert_msg(worst <= tol,
                "ormqr %c%c %lld x %lld, k %lld, precision %d: off LAPACK's "
                "by %g (tolerance %g)",
                side, trans, (long long)m, (long long)n, (long long)k,
                (int)prec, worst, tol);
  free(work);
  free(ref);
  free(tau);
  free_matrix(&C);
  free_matrix(&A);
}

/* The same, factorized and applied on one executor. */
static void check_ormqr(mlsba_executor_t *ex, mlsba_precision_t prec, char side,
                        char trans, int64_t nq, int64_t other, int64_t k) {
  check_ormqr_on(ex, ex, prec, side, trans, nq, other, k);
}

/* Every side and trans, in both precisions, on one core, two and a
 * simulated pair: odd sizes, k below the order of Q, a C narrower than
 * the split's threshold (16) and one wider than the wide block's (64),
 * a reflector more than the block (k = nq), seven blocks of reflectors
 * (the parts' rows of C2 shrinking block by block), and the empty
 * cases. */
static const int64_t ormqr_cases[][3] = {
    /* nq, the other side, k */
    {97, 61, 45}, {150, 5, 150}, {200, 130, 67}, {33, 1, 20},
    {1, 3, 1},    {70, 0, 10},   {64, 20, 0},    {300, 40, 200}};

START_TEST(ormqr_matches_lapack_on_every_side_and_trans) {
  const int64_t(*cases)[3] = ormqr_cases;
  const char *nodes[] = {one_core, two_cores, sim_pair};
  for (size_t d = 0; d < 3; d++) {
    node_t nd = open_node(nodes[d]);
    for (int p = 0; p < 2; p++)
      for (int c = 0; c < 4; c++)
        for (size_t s = 0; s < sizeof ormqr_cases / sizeof *ormqr_cases; s++)
          check_ormqr(nd.ex,
                      p ? MLSBA_PRECISION_DOUBLE : MLSBA_PRECISION_SINGLE,
                      c < 2 ? 'L' : 'R', c % 2 ? 'T' : 'N', cases[s][0],
                      cases[s][1], cases[s][2]);
    close_node(&nd);
  }
}
END_TEST

/* The split between the two cores at every width (the threshold moved
 * to 1): one column of C, a part whose rows of C2 run out (k = nq), every
 * side and trans, both precisions. */
START_TEST(ormqr_split_at_every_width_matches_lapack) {
  node_t nd = open_node(two_cores);
  mlsba__ormqr_set_split_from(1);
  for (int p = 0; p < 2; p++)
    for (int c = 0; c < 4; c++)
      for (size_t s = 0; s < sizeof ormqr_cases / sizeof *ormqr_cases; s++)
        check_ormqr(nd.ex, p ? MLSBA_PRECISION_DOUBLE : MLSBA_PRECISION_SINGLE,
                    c < 2 ? 'L' : 'R', c % 2 ? 'T' : 'N', ormqr_cases[s][0],
                    ormqr_cases[s][1], ormqr_cases[s][2]);
  mlsba__ormqr_set_split_from(0);
  close_node(&nd);
}
END_TEST

/* A split whose cores' threads cannot start (the executor's second
 * thread refused) runs its parts on the calling thread: the call
 * succeeds with LAPACK's result, and the failure is what it met. */
START_TEST(an_ormqr_split_that_cannot_start_still_applies_q) {
  node_t nd = open_node(two_cores);
  mlsba_platform_t *pl = NULL;
  mlsba_executor_t *fresh = NULL;
  ck_assert_int_eq(mlsba_platform_parse(two_cores, "two cores", &pl), 0);
  ck_assert_int_eq(mlsba_executor_create(pl, &fresh), 0);
  /* The node's own threads started first (40 columns: split), so that
   * the fault is fresh's. */
  check_ormqr(nd.ex, MLSBA_PRECISION_DOUBLE, 'L', 'N', 50, 40, 10);
  mlsba__executor_inject_thread_fault(2);
  check_ormqr_on(nd.ex, fresh, MLSBA_PRECISION_DOUBLE, 'L', 'T', 230, 40, 100);
  mlsba__executor_inject_thread_fault(0);
  ck_assert_msg(strstr(mlsba_last_error(), "cannot start the thread") != NULL,
                "%s", mlsba_last_error());
  /* The next call starts the threads and splits. */
  check_ormqr_on(nd.ex, fresh, MLSBA_PRECISION_DOUBLE, 'R', 'N', 230, 40, 100);
  mlsba_executor_destroy(fresh);
  mlsba_platform_destroy(pl);
  close_node(&nd);
}
END_TEST

/* Q^T Q C = C: the two products undo each other, whichever side. */
START_TEST(ormqr_with_q_and_its_transpose_gives_c_back) {
  node_t nd = open_node(two_cores);
  const int64_t m = 123, n = 77, k = 77, ld = 130;
  matrix_t A = make_matrix_ref(MLSBA_PRECISION_DOUBLE, m, k, ld, 41);
  double tau[77];
  int64_t info;
  ck_assert_int_eq(
      mlsba_geqrf(nd.ex, MLSBA_PRECISION_DOUBLE, m, k, A.a, ld, tau, &info), 0);
  matrix_t C = make_matrix_ref(MLSBA_PRECISION_DOUBLE, m, n, m, 43);
  for (int side = 0; side < 2; side++) {
    int64_t rows = side ? n : m, cols = side ? m : n;
    /* Side R: C is n x m, Q of order m from the right. */
    ck_assert_int_eq(mlsba_ormqr(nd.ex, MLSBA_PRECISION_DOUBLE,
                                 side ? 'R' : 'L', 'N', rows, cols, k, A.a, ld,
                                 tau, C.a, rows, &info),
                     0);
    ck_assert_int_eq(mlsba_ormqr(nd.ex, MLSBA_PRECISION_DOUBLE,
                                 side ? 'R' : 'L', 'T', rows, cols, k, A.a, ld,
                                 tau, C.a, rows, &info),
                     0);
    double worst = 0;
    for (int64_t i = 0; i < m * n; i++)
      worst = fmax(worst, fabs(((double *)C.a)[i] - C.ref[i]));
    ck_assert_msg(worst < 1e-12, "side %d: Q^T Q C off C by %g", side, worst);
  }
  free_matrix(&C);
  free_matrix(&A);
  close_node(&nd);
}
END_TEST

/* A random m x n matrix whose first min(m, n) diagonal entries have 3
 * added, so that it is well conditioned and X is compared closely. */
static matrix_t make_system(mlsba_precision_t prec, int64_t m, int64_t n,
                            int64_t lda, unsigned seed) {
  matrix_t A = make_matrix_ref(prec, m, n, lda, seed);
  for (int64_t i = 0; i < m && i < n; i++) {
    A.ref[i + i * lda] += 3;
    if (prec == MLSBA_PRECISION_DOUBLE)
      ((double *)A.a)[i + i * lda] += 3;
    else
      ((float *)A.a)[i + i * lda] += 3;
  }
  return A;
}

/* LAPACK's ?gels on copies of a and b (lda, ldb): its info. */
static int lapack_gels(mlsba_precision_t prec, char trans, int64_t m, int64_t n,
                       int64_t nrhs, void *a, int64_t lda, void *b,
                       int64_t ldb) {
  int im = (int)m, in = (int)n, ir = (int)nrhs, ilda = (int)lda,
      ildb = (int)ldb, lwork = -1, info = 0;
  double query = 0;
  float fquery = 0;
  char tr[2] = {trans, 0};
  if (prec == MLSBA_PRECISION_DOUBLE)
    dgels_(tr, &im, &in, &ir, a, &ilda, b, &ildb, &query, &lwork, &info, 1);
  else
    sgels_(tr, &im, &in, &ir, a, &ilda, b, &ildb, &fquery, &lwork, &info, 1);
  lwork = (int)(prec == MLSBA_PRECISION_DOUBLE ? query : fquery) + 1;
  void *work = malloc((size_t)lwork * esize(prec));
  if (prec == MLSBA_PRECISION_DOUBLE)
    dgels_(tr, &im, &in, &ir, a, &ilda, b, &ildb, work, &lwork, &info, 1);
  else
    sgels_(tr, &im, &in, &ir, a, &ilda, b, &ildb, work, &lwork, &info, 1);
  free(work);
  return info;
}

/* mlsba_gels and LAPACK's ?gels on the same system: the same info, B
 * (the solution and, for least squares, the residual's rows) and A (the
 * QR or, wide, the LQ factors) to rounding. */
static void check_gels(mlsba_executor_t *ex, mlsba_precision_t prec, char trans,
                       int64_t m, int64_t n, int64_t nrhs, double factor) {
  int64_t lda = m + 1, rows = m > n ? m : n, ldb = rows + 2, info = -1;
  size_t es = esize(prec);
  matrix_t A = make_system(prec, m, n, lda, (unsigned)(m * 3 + n));
  matrix_t B = make_matrix_ref(prec, rows, nrhs, ldb, (unsigned)(n * 5 + nrhs));
  for (int64_t i = 0; i < lda * n; i++) /* a badly scaled A */
    if (prec == MLSBA_PRECISION_DOUBLE)
      ((double *)A.a)[i] *= factor;
    else
      ((float *)A.a)[i] = (float)(((float *)A.a)[i] * factor);
  void *la = copy_of(A.a, (size_t)(lda * n) * es);
  void *lb = copy_of(B.a, (size_t)(ldb * nrhs) * es);
  int linfo = lapack_gels(prec, trans, m, n, nrhs, la, lda, lb, ldb);
  ck_assert_msg(
      mlsba_gels(ex, prec, trans, m, n, nrhs, A.a, lda, B.a, ldb, &info) == 0,
      "%s", mlsba_last_error());
  ck_assert_int_eq(info, linfo);
  ck_assert_int_eq(info, 0);
  double big, tol_b, tol_a;
  double worst_b = largest_difference(prec, rows, nrhs, B.a, lb, ldb, &big);
  tol_b = 256 * (double)rows * eps_of(prec) * big;
  double worst_a = largest_difference(prec, m, n, A.a, la, lda, &big);
  tol_a = 256 * (double)rows * eps_of(prec) * big;
  ck_assert_msg(worst_b <= tol_b && worst_a <= tol_a,
                "gels %c %lld x %lld, %lld rhs, precision %d, A times %g: B "
                "off LAPACK's by %g (tolerance %g), A by %g (%g)",
                trans, (long long)m, (long long)n, (long long)nrhs, (int)prec,
                factor, worst_b, tol_b, worst_a, tol_a);
  free(la);
  free(lb);
  free_matrix(&B);
  free_matrix(&A);
}

/* Tall and wide, trans N and T, one right-hand side and several, in both
 * precisions on two cores, and on a simulated pair; in double an A whose
 * largest entry is near underflow and one near overflow (LAPACK's
 * scaling). */
START_TEST(gels_matches_lapack_over_and_under_determined) {
  static const int64_t cases[][3] = {/* m, n, nrhs */
                                     {120, 47, 3}, {47, 120, 5}, {91, 91, 17},
                                     {200, 33, 1}, {33, 200, 2}, {1, 9, 4}};
  /* R of 530 columns: its solve splits B's rows between the cores. */
  static const int64_t big[][3] = {{700, 530, 20}, {530, 700, 4}};
  node_t nd = open_node(two_cores);
  for (int p = 0; p < 2; p++)
    for (int t = 0; t < 2; t++)
      for (size_t s = 0; s < sizeof cases / sizeof *cases; s++)
        check_gels(nd.ex, p ? MLSBA_PRECISION_DOUBLE : MLSBA_PRECISION_SINGLE,
                   t ? 'T' : 'N', cases[s][0], cases[s][1], cases[s][2], 1);
  for (int t = 0; t < 2; t++) {
    check_gels(nd.ex, MLSBA_PRECISION_DOUBLE, t ? 'T' : 'N', 80, 30, 3, 1e-300);
    check_gels(nd.ex, MLSBA_PRECISION_DOUBLE, t ? 'T' : 'N', 30, 80, 3, 1e300);
  }
  for (int p = 0; p < 2; p++)
    for (size_t s = 0; s < sizeof big / sizeof *big; s++)
      check_gels(nd.ex, p ? MLSBA_PRECISION_DOUBLE : MLSBA_PRECISION_SINGLE,
                 s ? 'T' : 'N', big[s][0], big[s][1], big[s][2], 1);
  close_node(&nd);
  nd = open_node(sim_pair);
  for (int t = 0; t < 2; t++) {
    check_gels(nd.ex, MLSBA_PRECISION_DOUBLE, t ? 'T' : 'N', 150, 70, 4, 1);
    check_gels(nd.ex, MLSBA_PRECISION_DOUBLE, t ? 'T' : 'N', 70, 150, 4, 1);
  }
  close_node(&nd);
}
END_TEST

/* The least-squares solution satisfies what its definition says, with
 * no reference: the residual B - A X is orthogonal to A's columns, and
 * its squared norm is the sum of squares of B's rows n..m. The least-norm
 * solution of a wide system solves it and lies in the span of A^T's
 * columns (A^T Y = X for some Y: X orthogonal to A's null space, checked
 * as X = A^T (A A^T)^-1 A X through the normal equations' residual). */
START_TEST(gels_solutions_are_what_their_definitions_say) {
  node_t nd = open_node(two_cores);
  const int64_t m = 140, n = 60;
  matrix_t A = make_system(MLSBA_PRECISION_DOUBLE, m, n, m, 51);
  matrix_t B = make_matrix_ref(MLSBA_PRECISION_DOUBLE, m, 2, m, 53);
  int64_t info;
  ck_assert_int_eq(mlsba_gels(nd.ex, MLSBA_PRECISION_DOUBLE, 'N', m, n, 2, A.a,
                              m, B.a, m, &info),
                   0);
  const double *x = B.a;
  for (int64_t c = 0; c < 2; c++) {
    double *r = malloc((size_t)m * sizeof *r), rss = 0, tail = 0;
    for (int64_t i = 0; i < m; i++) {
      r[i] = B.ref[i + c * m];
      for (int64_t j = 0; j < n; j++)
        r[i] -= A.ref[i + j * m] * x[j + c * m];
      rss += r[i] * r[i];
    }
    for (int64_t i = n; i < m; i++)
      tail += x[i + c * m] * x[i + c * m];
    ck_assert_msg(fabs(rss - tail) < 1e-10 * rss, "rss %g, B's rows %g", rss,
                  tail);
    for (int64_t j = 0; j < n; j++) { /* A^T r = 0 */
      double s = 0;
      for (int64_t i = 0; i < m; i++)
        s += A.ref[i + j * m] * r[i];
      ck_assert_msg(fabs(s) < 1e-10, "column %lld: A^T r = %g", (long long)j,
                    s);
    }
    free(r);
  }
  free_matrix(&B);
  free_matrix(&A);
  /* Wide: A X = B exactly, and X = A^T Y with Y = the solution of
   * A A^T Y = B (the least-norm solution). */
  const int64_t w = 30, v = 90;
  A = make_system(MLSBA_PRECISION_DOUBLE, w, v, w, 55);
  B = make_matrix_ref(MLSBA_PRECISION_DOUBLE, v, 1, v, 57);
  ck_assert_int_eq(mlsba_gels(nd.ex, MLSBA_PRECISION_DOUBLE, 'N', w, v, 1, A.a,
                              w, B.a, v, &info),
                   0);
  x = B.a;
  double *g = malloc((size_t)(w * w) * sizeof *g), y[30], worst = 0;
  for (int64_t i = 0; i < w; i++) { /* A X = B */
    double s = -B.ref[i];
    for (int64_t j = 0; j < v; j++)
      s += A.ref[i + j * w] * x[j];
    worst = fmax(worst, fabs(s));
  }
  ck_assert_msg(worst < 1e-12, "A X - B off by %g", worst);
  /* Y by Gaussian elimination on G = A A^T (small, well conditioned). */
  for (int64_t i = 0; i < w; i++) {
    y[i] = B.ref[i];
    for (int64_t j = 0; j < w; j++) {
      double s = 0;
      for (int64_t l = 0; l < v; l++)
        s += A.ref[i + l * w] * A.ref[j + l * w];
      g[i + j * w] = s;
    }
  }
  for (int64_t c = 0; c < w; c++)
    for (int64_t i = c + 1; i < w; i++) {
      double f = g[i + c * w] / g[c + c * w];
      for (int64_t j = c; j < w; j++)
        g[i + j * w] -= f * g[c + j * w];
      y[i] -= f * y[c];
    }
  for (int64_t i = w - 1; i >= 0; i--) {
    for (int64_t j = i + 1; j < w; j++)
      y[i] -= g[i + j * w] * y[j];
    y[i] /= g[i + i * w];
  }
  worst = 0;
  for (int64_t j = 0; j < v; j++) { /* X = A^T Y */
    double s = 0;
    for (int64_t i = 0; i < w; i++)
      s += A.ref[i + j * w] * y[i];
    worst = fmax(worst, fabs(s - x[j]));
  }
  ck_assert_msg(worst < 1e-12, "X off A^T (A A^T)^-1 B by %g", worst);
  free(g);
  free_matrix(&B);
  free_matrix(&A);
  close_node(&nd);
}
END_TEST

/* A zero column (tall) or row (wide) makes R's or L's diagonal exactly
 * zero there: info names it, as LAPACK's ?gels; B is left as it was. */
START_TEST(gels_of_a_rank_deficient_matrix_gives_lapacks_info) {
  node_t nd = open_node(two_cores);
  static const int64_t cases[][4] = {/* m, n, the zero column or row, tall */
                                     {60, 20, 3, 1},
                                     {20, 60, 2, 0},
                                     {30, 30, 0, 1}};
  for (size_t s = 0; s < sizeof cases / sizeof *cases; s++)
    for (int t = 0; t < 2; t++) {
      int64_t m = cases[s][0], n = cases[s][1], z = cases[s][2];
      int64_t rows = m > n ? m : n, info = -1;
      char trans = t ? 'T' : 'N';
      matrix_t A = make_system(MLSBA_PRECISION_DOUBLE, m, n, m, 61);
      double *a = A.a;
      for (int64_t i = 0; i < (cases[s][3] ? m : n); i++)
        a[cases[s][3] ? i + z * m : z + i * m] = 0;
      matrix_t B = make_matrix_ref(MLSBA_PRECISION_DOUBLE, rows, 3, rows, 63);
      double *la = copy_of(A.a, (size_t)(m * n) * sizeof(double));
      double *lb = copy_of(B.a, (size_t)(rows * 3) * sizeof(double));
      int linfo =
          lapack_gels(MLSBA_PRECISION_DOUBLE, trans, m, n, 3, la, m, lb, rows);
      ck_assert_int_eq(mlsba_gels(nd.ex, MLSBA_PRECISION_DOUBLE, trans, m, n, 3,
                                  A.a, m, B.a, rows, &info),
                       0);
      ck_assert_int_eq(linfo, z + 1);
      ck_assert_int_eq(info, linfo);
      ck_assert(memcmp(B.a, B.ref, (size_t)(rows * 3) * sizeof(double)) == 0);
      free(la);
      free(lb);
      free_matrix(&B);
      free_matrix(&A);
    }
  close_node(&nd);
}
END_TEST

/* Each bad argument of mlsba_ormqr and mlsba_gels is refused, the message
 * naming it, with A, tau, B and C as they were; so are bad options, even
 * where A was to be scaled in place first. */
START_TEST(ormqr_and_gels_refuse_bad_arguments_untouched) {
  node_t nd = open_node(two_cores);
  const mlsba_precision_t d = MLSBA_PRECISION_DOUBLE;
  double a[12] = {2, 1, 1, 1, 3, 1, 5, 5, 5, 5, 5, 5}, tau[3] = {0.5, 0.25, 0};
  double c[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  double a0[12], tau0[3], c0[12];
  memcpy(a0, a, sizeof a);
  memcpy(tau0, tau, sizeof tau);
  memcpy(c0, c, sizeof c);
  int64_t info = -1;
#define ORMQR(ex_, prec_, side_, trans_, m_, n_, k_, a_, lda_, tau_, c_, ldc_, \
              info_, word_)                                                    \
  ck_assert_int_eq(mlsba_ormqr(ex_, prec_, side_, trans_, m_, n_, k_, a_,      \
                               lda_, tau_, c_, ldc_, info_),                   \
                   MLSBA_EINVAL);                                              \
  ck_assert_msg(strstr(mlsba_last_error(), word_), "%s: no '%s'",              \
                mlsba_last_error(), word_)
  ORMQR(NULL, d, 'L', 'N', 3, 2, 2, a, 3, tau, c, 3, &info, "executor");
  ORMQR(nd.ex, (mlsba_precision_t)9, 'L', 'N', 3, 2, 2, a, 3, tau, c, 3, &info,
        "precision");
  ORMQR(nd.ex, d, 'X', 'N', 3, 2, 2, a, 3, tau, c, 3, &info, "side");
  ORMQR(nd.ex, d, 'L', 'Q', 3, 2, 2, a, 3, tau, c, 3, &info, "trans");
  ORMQR(nd.ex, d, 'L', 'N', -1, 2, 2, a, 3, tau, c, 3, &info, "m -1");
  ORMQR(nd.ex, d, 'L', 'N', 3, -2, 2, a, 3, tau, c, 3, &info, "n -2");
  ORMQR(nd.ex, d, 'L', 'N', 3, 2, 4, a, 3, tau, c, 3, &info, "k 4");
  ORMQR(nd.ex, d, 'R', 'N', 3, 2, 3, a, 3, tau, c, 3, &info, "k 3");
  ORMQR(nd.ex, d, 'L', 'N', 3, 2, -1, a, 3, tau, c, 3, &info, "k -1");
  ORMQR(nd.ex, d, 'L', 'N', 3, 2, 2, a, 2, tau, c, 3, &info, "lda");
  ORMQR(nd.ex, d, 'R', 'N', 4, 3, 2, a, 2, tau, c, 4, &info, "lda");
  ORMQR(nd.ex, d, 'L', 'N', 3, 2, 2, a, 3, tau, c, 2, &info, "ldc");
  ORMQR(nd.ex, d, 'L', 'N', 3, 2, 2, NULL, 3, tau, c, 3, &info, "reflectors");
  ORMQR(nd.ex, d, 'L', 'N', 3, 2, 2, a, 3, NULL, c, 3, &info, "tau");
  ORMQR(nd.ex, d, 'L', 'N', 3, 2, 2, a, 3, tau, NULL, 3, &info, "matrix c");
  ORMQR(nd.ex, d, 'L', 'N', 3, 2, 2, a, 3, tau, c, 3, NULL, "info");
#undef ORMQR
  ck_assert(memcmp(a, a0, sizeof a) == 0 && memcmp(c, c0, sizeof c) == 0 &&
            memcmp(tau, tau0, sizeof tau) == 0);
#define GELS(ex_, prec_, trans_, m_, n_, nrhs_, a_, lda_, b_, ldb_, info_,     \
             word_)                                                            \
  ck_assert_int_eq(mlsba_gels(ex_, prec_, trans_, m_, n_, nrhs_, a_, lda_, b_, \
                              ldb_, info_),                                    \
                   MLSBA_EINVAL);                                              \
  ck_assert_msg(strstr(mlsba_last_error(), word_), "%s: no '%s'",              \
                mlsba_last_error(), word_)
  GELS(NULL, d, 'N', 3, 2, 2, a, 3, c, 3, &info, "executor");
  GELS(nd.ex, (mlsba_precision_t)9, 'N', 3, 2, 2, a, 3, c, 3, &info,
       "precision");
  GELS(nd.ex, d, 'X', 3, 2, 2, a, 3, c, 3, &info, "trans");
  GELS(nd.ex, d, 'N', -3, 2, 2, a, 3, c, 3, &info, "m -3");
  GELS(nd.ex, d, 'N', 3, -2, 2, a, 3, c, 3, &info, "n -2");
  GELS(nd.ex, d, 'N', 3, 2, -1, a, 3, c, 3, &info, "nrhs");
  GELS(nd.ex, d, 'N', 3, 2, 2, a, 2, c, 3, &info, "lda");
  GELS(nd.ex, d, 'N', 2, 3, 2, a, 2, c, 2, &info, "ldb");
  GELS(nd.ex, d, 'N', 3, 2, 2, NULL, 3, c, 3, &info, "matrix a");
  GELS(nd.ex, d, 'N', 3, 2, 2, a, 3, NULL, 3, &info, "right-hand sides");
  GELS(nd.ex, d, 'N', 3, 2, 2, a, 3, c, 3, NULL, "info");
#undef GELS
  ck_assert(memcmp(a, a0, sizeof a) == 0 && memcmp(c, c0, sizeof c) == 0);
  /* Options the factorization refuses: A and B as they were, also where
   * A is scaled in place first (its largest entry near underflow), and
   * where a wide A's copy is factorized. */
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  o.block = 100000;
  double tiny[6] = {1e-300, 2e-300, 3e-300, 4e-300, 5e-300, 7e-300};
  double tiny0[6];
  memcpy(tiny0, tiny, sizeof tiny);
  ck_assert_int_eq(
      mlsba_gels_ex(nd.ex, d, 'N', 3, 2, 2, tiny, 3, c, 3, &info, &o, NULL),
      MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "block"));
  ck_assert_int_eq(
      mlsba_gels_ex(nd.ex, d, 'T', 2, 3, 2, a, 2, c, 3, &info, &o, NULL),
      MLSBA_EINVAL);
  ck_assert(memcmp(tiny, tiny0, sizeof tiny) == 0);
  ck_assert(memcmp(a, a0, sizeof a) == 0 && memcmp(c, c0, sizeof c) == 0);
  /* Empty: no error; gels's B rows are zero (LAPACK's quick return). */
  ck_assert_int_eq(
      mlsba_ormqr(nd.ex, d, 'L', 'N', 0, 2, 0, NULL, 1, NULL, NULL, 1, &info),
      0);
  ck_assert_int_eq(mlsba_gels(nd.ex, d, 'N', 0, 3, 2, NULL, 1, c, 3, &info), 0);
  ck_assert(c[0] == 0 && c[2] == 0 && c[3] == 0 && c[5] == 0 && c[6] == 7);
  close_node(&nd);
}
END_TEST

/* QR's own default block: 128 whatever the precision (LU's would be 192
 * or 256 at these sizes), 64 below 1024 columns (tall-skinny matrices),
 * and a call that leaves the block to the library (0, or no options)
 * computes exactly what that block does and not what LU's block (128
 * here) would (one core: no split in between). */
START_TEST(the_default_block_is_qrs_own) {
  for (int p = 0; p < 2; p++) {
    mlsba_precision_t prec =
        p ? MLSBA_PRECISION_DOUBLE : MLSBA_PRECISION_SINGLE;
    ck_assert_int_eq(mlsba_geqrf_default_block(prec, 1, 1), 64);
    ck_assert_int_eq(mlsba_geqrf_default_block(prec, 1, 1024), 128);
    ck_assert_int_eq(mlsba_geqrf_default_block(prec, 4096, 4096), 128);
    ck_assert_int_eq(mlsba_geqrf_default_block(prec, 20000, 500), 64);
    ck_assert_int_eq(mlsba_geqrf_default_block(prec, 20000, 1023), 64);
    ck_assert_int_eq(mlsba_geqrf_default_block(prec, 20000, 1024), 128);
    ck_assert_int_eq(mlsba_geqrf_default_block(prec, 500, 4096), 128);
    ck_assert_int_eq(mlsba_geqrf_default_block(prec, 100000, 100000), 128);
    ck_assert_int_gt(mlsba_factor_default_block(prec, 4096, 4096), 128);
  }
  node_t nd = open_node(one_core);
  const int64_t m = 420, n = 400;
  /* 64 the default here (400 columns), 128 LU's and QR's above 1024 */
  static const int64_t blocks[] = {0, -1 /* no options */, 64, 128};
  double *out[4], tau[400];
  for (int b = 0; b < 4; b++) {
    matrix_t A = make_matrix_ref(MLSBA_PRECISION_DOUBLE, m, n, m, 17);
    int64_t info = -1;
    mlsba_factor_opts_t o;
    mlsba_factor_opts_init(&o);
    o.block = blocks[b];
    int rc = blocks[b] < 0 ? mlsba_geqrf(nd.ex, MLSBA_PRECISION_DOUBLE, m, n,
                                         A.a, m, tau, &info)
                           : mlsba_geqrf_ex(nd.ex, MLSBA_PRECISION_DOUBLE, m, n,
                                            A.a, m, tau, &info, &o, NULL);
    ck_assert_msg(rc == 0, "%s", mlsba_last_error());
    out[b] = A.a;
    free(A.ref);
  }
  size_t bytes = (size_t)(m * n) * sizeof(double);
  ck_assert_int_eq(memcmp(out[0], out[2], bytes), 0);
  ck_assert_int_eq(memcmp(out[1], out[2], bytes), 0);
  ck_assert_int_ne(memcmp(out[3], out[2], bytes), 0);
  for (int b = 0; b < 4; b++)
    free(out[b]);
  close_node(&nd);
}
END_TEST

static Suite *qr_suite(void) {
  Suite *s = suite_create("qr");
  TCase *tc = tcase_create("qr");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, every_shape_factorizes_right_in_both_precisions);
  tcase_add_test(tc, factors_match_lapack);
  tcase_add_test(tc, single_precision_factors_match_lapack);
  tcase_add_test(tc, virtual_times_of_a_small_qr_are_exact);
  tcase_add_test(tc, every_sim_step_time_follows_the_profiles);
  tcase_add_test(tc, a_failing_device_is_dropped_and_the_result_stays_right);
  tcase_add_test(tc, the_library_residuals_agree_and_see_a_wrong_factor);
  tcase_add_test(tc, bad_arguments_are_refused_with_a_message);
  tcase_add_test(tc, the_default_block_is_qrs_own);
  tcase_add_test(tc, ormqr_matches_lapack_on_every_side_and_trans);
  tcase_add_test(tc, ormqr_split_at_every_width_matches_lapack);
  tcase_add_test(tc, an_ormqr_split_that_cannot_start_still_applies_q);
  tcase_add_test(tc, ormqr_with_q_and_its_transpose_gives_c_back);
  tcase_add_test(tc, gels_matches_lapack_over_and_under_determined);
  tcase_add_test(tc, gels_solutions_are_what_their_definitions_say);
  tcase_add_test(tc, gels_of_a_rank_deficient_matrix_gives_lapacks_info);
  tcase_add_test(tc, ormqr_and_gels_refuse_bad_arguments_untouched);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(qr_suite()); }
