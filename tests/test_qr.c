/* Hybrid QR (mlsba_geqrf, lib/factor/qr.c) on two pinned cores and on
 * simulated devices: graded as LAPACK's own tests grade ?geqrf, by
 * ||A - Q R||_1 / (||A||_1 max(m, n) eps) and ||I - Q^T Q||_1 / (n eps)
 * with Q formed by LAPACK's ?orgqr from our factors; the factors against
 * LAPACK's ?geqrf on the same matrix; the virtual times of simulated
 * runs against the profiles; a device failing mid-factorization; bad
 * arguments. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlsba.h"
#include "support/run_suite.h"

/* LAPACK, the reference. */
void dgeqrf_(const int *m, const int *n, double *a, const int *lda, double *tau,
             double *work, const int *lwork, int *info);
void dorgqr_(const int *m, const int *n, const int *k, double *a,
             const int *lda, const double *tau, double *work, const int *lwork,
             int *info);
void sorgqr_(const int *m, const int *n, const int *k, float *a, const int *lda,
             const float *tau, float *work, const int *lwork, int *info);

static const char *two_cores =
    "{\"devices\": ["
    "{\"name\": \"c0\", \"type\": \"cpu\", \"core\": 0},"
    "{\"name\": \"c1\", \"type\": \"cpu\", \"core\": 1}]}";

/* Two simulated devices of constant speed (units per second), alone in
 * their groups. */
static const char *sim_pair =
    "{\"devices\": ["
    "{\"name\": \"core0\", \"type\": \"sim\", \"speed\": [[1, 100]]},"
    "{\"name\": \"gpu0\", \"type\": \"sim\", \"speed\": [[1, 300]]}],"
    "\"groups\": [[\"core0\"], [\"gpu0\"]]}";

typedef struct {
  mlsba_platform_t *pl;
  mlsba_executor_t *ex;
} node_t;

static node_t open_node(const char *json) {
  node_t n = {0};
  ck_assert_msg(mlsba_platform_parse(json, "test", &n.pl) == 0, "%s",
                mlsba_last_error());
  ck_assert_msg(mlsba_executor_create(n.pl, &n.ex) == 0, "%s",
                mlsba_last_error());
  return n;
}

static void close_node(node_t *n) {
  mlsba_executor_destroy(n->ex);
  mlsba_platform_destroy(n->pl);
}

static double uniform(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return ((*s >> 8) & 0xFFFF) / 32768.0 - 1.0;
}

/* A matrix in double (the reference) and its copy in the precision of the
 * call, m x n with leading dimension lda, entries in [-1, 1). */
typedef struct {
  mlsba_precision_t prec;
  int64_t m, n, lda;
  double *ref; /* the entries as the call's precision holds them */
  void *a;
} matrix_t;

static size_t esize(mlsba_precision_t prec) {
  return prec == MLSBA_PRECISION_DOUBLE ? sizeof(double) : sizeof(float);
}

static matrix_t make_matrix(mlsba_precision_t prec, int64_t m, int64_t n,
                            int64_t lda, unsigned seed) {
  matrix_t A = {.prec = prec, .m = m, .n = n, .lda = lda};
  size_t count = (size_t)(lda * (n > 0 ? n : 1));
  A.ref = malloc(count * sizeof *A.ref);
  A.a = malloc(count * esize(prec));
  for (size_t i = 0; i < count; i++) {
    double v = uniform(&seed);
    if (prec == MLSBA_PRECISION_DOUBLE) {
      ((double *)A.a)[i] = v;
    } else {
      ((float *)A.a)[i] = (float)v;
      v = (float)v;
    }
    A.ref[i] = v;
  }
  return A;
}

static void free_matrix(matrix_t *A) {
  free(A->ref);
  free(A->a);
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
  matrix_t A = make_matrix(prec, m, n, lda, (unsigned)(m * 31 + n));
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

/* The same reflectors as LAPACK's ?geqrf computes: R, V and tau agree to
 * rounding (Householder's sign convention is the same, so no column of R
 * has its sign flipped). */
START_TEST(factors_match_lapack) {
  node_t nd = open_node(two_cores);
  static const int shapes[][3] = {{257, 201, 40}, {90, 211, 32}, {700, 64, 24}};
  for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
    int m = shapes[s][0], n = shapes[s][1], k = m < n ? m : n, info = -1;
    matrix_t A = make_matrix(MLSBA_PRECISION_DOUBLE, m, n, m, 7 + (unsigned)s);
    double *ref = malloc((size_t)(m * n) * sizeof *ref);
    memcpy(ref, A.a, (size_t)(m * n) * sizeof *ref);
    double *tau = malloc((size_t)k * sizeof *tau);
    double *ltau = malloc((size_t)k * sizeof *ltau);
    int lwork = 64 * n;
    double *work = malloc((size_t)lwork * sizeof *work);
    dgeqrf_(&m, &n, ref, &m, ltau, work, &lwork, &info);
    ck_assert_int_eq(info, 0);
    mlsba_factor_opts_t o;
    mlsba_factor_opts_init(&o);
    o.block = shapes[s][2];
    int64_t our_info = -1;
    ck_assert_int_eq(mlsba_geqrf_ex(nd.ex, MLSBA_PRECISION_DOUBLE, m, n, A.a, m,
                                    tau, &our_info, &o, NULL),
                     0);
    const double *a = A.a;
    double worst = 0, worst_tau = 0;
    for (int i = 0; i < m * n; i++)
      worst = fmax(worst, fabs(a[i] - ref[i]));
    for (int i = 0; i < k; i++)
      worst_tau = fmax(worst_tau, fabs(tau[i] - ltau[i]));
    ck_assert_msg(worst < 1e-11 && worst_tau < 1e-13,
                  "%d x %d: factors differ from LAPACK's by %g, tau by %g", m,
                  n, worst, worst_tau);
    free(work);
    free(tau);
    free(ltau);
    free(ref);
    free_matrix(&A);
  }
  close_node(&nd);
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
  matrix_t A = make_matrix(MLSBA_PRECISION_DOUBLE, 12, 12, 12, 3);
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
  matrix_t A = make_matrix(MLSBA_PRECISION_DOUBLE, m, n, m, 5);
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
  matrix_t A = make_matrix(MLSBA_PRECISION_DOUBLE, m, n, m, 11);
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
    matrix_t A = make_matrix(prec, m, n, m, 21);
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

static Suite *qr_suite(void) {
  Suite *s = suite_create("qr");
  TCase *tc = tcase_create("qr");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, every_shape_factorizes_right_in_both_precisions);
  tcase_add_test(tc, factors_match_lapack);
  tcase_add_test(tc, virtual_times_of_a_small_qr_are_exact);
  tcase_add_test(tc, every_sim_step_time_follows_the_profiles);
  tcase_add_test(tc, a_failing_device_is_dropped_and_the_result_stays_right);
  tcase_add_test(tc, the_library_residuals_agree_and_see_a_wrong_factor);
  tcase_add_test(tc, bad_arguments_are_refused_with_a_message);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(qr_suite()); }
