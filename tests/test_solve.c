/* The solves with the hybrid factors (lib/factor/solves.c, rhs.c, sv.c):
 * mlsba_getrs, mlsba_potrs and the drivers mlsba_gesv and mlsba_posv on
 * two cores (one or two right-hand sides by TRSV, more split between the
 * cores by columns or, from n = 512, by rows of B) and on simulated
 * devices, graded by the scaled residual
 * of every column and against LAPACK's ?gesv and ?posv on the same
 * matrices; the pivots handed to LAPACK's ?getrs and back; a singular
 * matrix's info as LAPACK's; every bad argument refused by name. */
#include <check.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "factor/rhs.h"
#include "mlsba.h"
#include "support/dense.h"
#include "support/run_suite.h"

static const mlsba_precision_t D = MLSBA_PRECISION_DOUBLE,
                               S = MLSBA_PRECISION_SINGLE;

/* The matrix in the call's precision (a new array). */
static void *in_prec(mlsba_precision_t p, const mat_t *m) {
  size_t count = (size_t)(m->ld * m->cols + 1);
  if (p == D) {
    double *x = malloc(count * sizeof *x);
    memcpy(x, m->v, count * sizeof *x);
    return x;
  }
  float *x = malloc(count * sizeof *x);
  for (size_t i = 0; i < count; i++)
    x[i] = (float)m->v[i];
  return x;
}

static mat_t from_prec(mlsba_precision_t p, const void *x, int64_t rows,
                       int64_t cols, int64_t ld) {
  mat_t m = mat(rows, cols, ld);
  for (int64_t i = 0; i < ld * cols; i++)
    m.v[i] = p == D ? ((const double *)x)[i] : ((const float *)x)[i];
  return m;
}

static double eps_of(mlsba_precision_t p) {
  return p == D ? DBL_EPSILON / 2 : FLT_EPSILON / 2;
}

/* The largest over the columns of ||A x - b||_1 / (||A||_1 ||x||_1 n
 * eps), LAPACK's test of a solve (its ?get02), in double. */
static double solve_residual(mlsba_precision_t p, const mat_t *a,
                             const mat_t *x, const mat_t *b) {
  int64_t n = a->rows;
  double anorm = 0, worst = 0;
  for (int64_t j = 0; j < n; j++) {
    double s = 0;
    for (int64_t i = 0; i < n; i++)
      s += fabs(a->v[i + j * a->ld]);
    anorm = s > anorm ? s : anorm;
  }
  for (int64_t c = 0; c < b->cols; c++) {
    double rnorm = 0, xnorm = 0;
    for (int64_t i = 0; i < n; i++) {
      double r = b->v[i + c * b->ld];
      for (int64_t j = 0; j < n; j++)
        r -= a->v[i + j * a->ld] * x->v[j + c * x->ld];
      rnorm += fabs(r);
      xnorm += fabs(x->v[i + c * x->ld]);
    }
    double q = rnorm / (anorm * xnorm * (double)n * eps_of(p));
    worst = q > worst || isnan(q) ? q : worst;
  }
  return worst;
}

/* max |x - y| / max |y| over the n x cols solution. */
static double distance(const mat_t *x, const mat_t *y) {
  double d = 0, big = 0;
  for (int64_t c = 0; c < x->cols; c++)
    for (int64_t i = 0; i < x->rows; i++) {
      double e = fabs(x->v[i + c * x->ld] - y->v[i + c * y->ld]);
      d = e > d || isnan(e) ? e : d;
      big = fabs(y->v[i + c * y->ld]) > big ? fabs(y->v[i + c * y->ld]) : big;
    }
  return big > 0 ? d / big : d;
}

/* How far from LAPACK's solution ours may be: the same pivots, so only
 * the order of the sums differs, by a few units of the precision times
 * n, the matrices being well conditioned (pivoting_mat, and symmetric
 * ones with n on the diagonal). The largest seen: 1.3 eps at n = 2, 5.6
 * eps at n = 37, a hundredth of this bound. */
static double close_enough(mlsba_precision_t p, int64_t n) {
  return 16.0 * (double)(n + 10) * eps_of(p);
}

/* LAPACK's ?gesv or ?posv on copies (uplo 0: gesv): X and info. */
static mat_t lapack_solve(mlsba_precision_t p, char uplo, const mat_t *a,
                          const mat_t *b, int *info) {
  int n = (int)a->rows, nrhs = (int)b->cols, lda = (int)a->ld, ldb = (int)b->ld;
  void *fa = in_prec(p, a), *fb = in_prec(p, b);
  int *ipiv = calloc((size_t)n + 1, sizeof *ipiv);
  if (uplo == 0 && p == D)
    dgesv_(&n, &nrhs, fa, &lda, ipiv, fb, &ldb, info);
  else if (uplo == 0)
    sgesv_(&n, &nrhs, fa, &lda, ipiv, fb, &ldb, info);
  else if (p == D)
    dposv_(&uplo, &n, &nrhs, fa, &lda, fb, &ldb, info, 1);
  else
    sposv_(&uplo, &n, &nrhs, fa, &lda, fb, &ldb, info, 1);
  mat_t x = from_prec(p, fb, b->rows, b->cols, b->ld);
  free(fa);
  free(fb);
  free(ipiv);
  return x;
}

/* Factor with mlsba_getrf (or mlsba_potrf), solve with mlsba_getrs
 * (trans) or mlsba_potrs (uplo), against A (or A^T) and LAPACK. */
static void check_solve(mlsba_executor_t *ex, mlsba_precision_t p, char op,
                        char flag, int64_t n, int64_t nrhs) {
  int64_t lda = n + 3, ldb = n + 1;
  unsigned seed = (unsigned)(n * 131 + nrhs * 7 + flag);
  mat_t a =
      op == 'P' ? random_mat(n, n, lda, 1, seed) : pivoting_mat(n, lda, seed);
  mat_t b = random_mat(n, nrhs, ldb, 0, seed + 1);
  void *fa = in_prec(p, &a), *fb = in_prec(p, &b);
  int64_t info = -1, *ipiv = calloc((size_t)n + 1, sizeof *ipiv);
  if (op == 'G') {
    ck_assert_msg(mlsba_getrf(ex, p, n, n, fa, lda, ipiv, &info) == 0, "%s",
                  mlsba_last_error());
    ck_assert_int_eq(info, 0);
    info = -1;
    ck_assert_msg(
        mlsba_getrs(ex, p, flag, n, nrhs, fa, lda, ipiv, fb, ldb, &info) == 0,
        "%s", mlsba_last_error());
  } else {
    ck_assert_msg(mlsba_potrf(ex, p, flag, n, fa, lda, &info) == 0, "%s",
                  mlsba_last_error());
    ck_assert_int_eq(info, 0);
    info = -1;
    ck_assert_msg(mlsba_potrs(ex, p, flag, n, nrhs, fa, lda, fb, ldb, &info) ==
                      0,
                  "%s", mlsba_last_error());
  }
  ck_assert_int_eq(info, 0);
  /* The system solved: A's transpose for trans 'T'. */
  mat_t at = mat(n, n, lda);
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < n; i++)
      at.v[i + j * lda] =
          op == 'G' && flag != 'N' ? a.v[j + i * lda] : a.v[i + j * lda];
  mat_t x = from_prec(p, fb, n, nrhs, ldb);
  double r = solve_residual(p, &at, &x, &b);
  ck_assert_msg(r < MLSBA_FACTOR_RESIDUAL_OK,
                "%c%c n %lld nrhs %lld precision %d: residual %g", op, flag,
                (long long)n, (long long)nrhs, (int)p, r);
  int linfo = -1;
  mat_t y = lapack_solve(p, op == 'G' ? 0 : flag, &at, &b, &linfo);
  ck_assert_int_eq(linfo, 0);
  double d = distance(&x, &y);
  ck_assert_msg(d < close_enough(p, n),
                "%c%c n %lld nrhs %lld precision %d: %g from LAPACK's", op,
                flag, (long long)n, (long long)nrhs, (int)p, d);
  /* B's rows past n (ldb > n) are left as they were. */
  for (int64_t c = 0; c < nrhs; c++)
    ck_assert(x.v[n + c * ldb] ==
              (p == D ? b.v[n + c * ldb] : (double)(float)b.v[n + c * ldb]));
  free_mat(&a), free_mat(&b), free_mat(&at), free_mat(&x), free_mat(&y);
  free(fa), free(fb), free(ipiv);
}

static const int64_t sizes[] = {1, 2, 37, 130, 257};
/* 1 by TRSV on the calling thread; 2 and 3 split between the cores,
 * each solving its one or two by TRSV; 17 split, each core's by blocks
 * of 128 rows (257: three blocks, the last of one row). */
static const int64_t rhs_counts[] = {1, 2, 3, 17};

START_TEST(lu_solves_match_lapack_on_two_cores) {
  node_t nd = open_node(two_cores);
  for (int prec = 0; prec < 2; prec++)
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
      for (size_t k = 0; k < sizeof rhs_counts / sizeof *rhs_counts; k++) {
        check_solve(nd.ex, prec ? D : S, 'G', 'N', sizes[i], rhs_counts[k]);
        check_solve(nd.ex, prec ? D : S, 'G', k % 2 ? 't' : 'T', sizes[i],
                    rhs_counts[k]);
      }
  check_solve(nd.ex, D, 'G', 'C', 64, 9);
  close_node(&nd);
}
END_TEST

START_TEST(cholesky_solves_match_lapack_on_two_cores) {
  node_t nd = open_node(two_cores);
  for (int prec = 0; prec < 2; prec++)
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
      for (size_t k = 0; k < sizeof rhs_counts / sizeof *rhs_counts; k++) {
        check_solve(nd.ex, prec ? D : S, 'P', 'L', sizes[i], rhs_counts[k]);
        check_solve(nd.ex, prec ? D : S, 'P', k % 2 ? 'u' : 'U', sizes[i],
                    rhs_counts[k]);
      }
  close_node(&nd);
}
END_TEST

/* n = 600 on two cores: where the products are BLIS's, B's rows split
 * between the cores, each triangle in blocks of 256 rows (the last of
 * 88), one run of the cores a block; where they are OpenBLAS's, the
 * columns split. Every trans and triangle, both precisions. */
START_TEST(large_solves_split_between_the_cores_match_lapack) {
  node_t nd = open_node(two_cores);
  for (int prec = 0; prec < 2; prec++)
    for (int64_t nrhs = 3; nrhs <= 17; nrhs += 14) {
      check_solve(nd.ex, prec ? D : S, 'G', 'N', 600, nrhs);
      check_solve(nd.ex, prec ? D : S, 'G', 'T', 600, nrhs);
      check_solve(nd.ex, prec ? D : S, 'P', 'L', 600, nrhs);
      check_solve(nd.ex, prec ? D : S, 'P', 'U', 600, nrhs);
    }
  close_node(&nd);
}
END_TEST

/* Factors of 96 MiB or more with few right-hand sides a core: B's rows
 * split between the cores whatever kernels run the products
 * (solves.c, by_rows). The factors are made, not factorized (a
 * factorization of this size would cost the suite seconds): one array
 * holds a unit lower L and an upper U whose diagonal also serves as
 * Cholesky's, off-diagonal entries below 1/n, and pivots anywhere below
 * their row; each solution is multiplied back, O(n^2) a column. */
static double tri_times(const double *f, int64_t n, int64_t i, char tri,
                        int unit, const double *x) {
  double s = 0; /* row i of op(T) times x; tri: 'L', 'U', 'l' (L^T), 'u' */
  int64_t lo = tri == 'L' || tri == 'u' ? 0 : i,
          hi = tri == 'L' || tri == 'u' ? i : n - 1;
  for (int64_t k = lo; k <= hi; k++) {
    double t = tri == 'L' || tri == 'U' ? f[i + k * n] : f[k + i * n];
    s += (k == i && unit ? 1.0 : t) * x[k];
  }
  return s;
}

static void tri_apply(const double *f, int64_t n, char tri, int unit, double *x,
                      double *tmp) {
  for (int64_t i = 0; i < n; i++)
    tmp[i] = tri_times(f, n, i, tri, unit, x);
  memcpy(x, tmp, (size_t)n * sizeof *x);
}

/* LAPACK's row interchanges of ipiv (1-based) applied forward to v. */
static void interchange(double *v, int64_t n, const int64_t *ipiv) {
  for (int64_t i = 0; i < n; i++) {
    double t = v[i];
    v[i] = v[ipiv[i] - 1];
    v[ipiv[i] - 1] = t;
  }
}

/* Two cores, and three parts (a second device on core 1): the rows still
 * to solve shared anew at every block, the part holding the next block
 * solving it, the others taking equal shares of the rest; the runs that
 * split the columns instead (the interchanges with the first block, the
 * last runs of each triangle: 5 columns as 3 + 2 and 2 + 2 + 1). The
 * three parts take blocks of 512 rows (a benchmark's setting; the last
 * block of 16 rows), the two cores the library's 256 (the last of 16). */
static const char *const three_parts =
    "{\"devices\": ["
    "{\"name\": \"c0\", \"type\": \"cpu\", \"core\": 0},"
    "{\"name\": \"c1\", \"type\": \"cpu\", \"core\": 1},"
    "{\"name\": \"c2\", \"type\": \"cpu\", \"core\": 1}]}";

START_TEST(large_double_factors_split_rows_between_the_cores) {
  enum { NRHS = 5 };
  const int64_t n = 3600; /* 98.9 MiB of double factors */
  node_t nd = open_node(_i ? three_parts : two_cores);
  mlsba__rhs_set_split_block(_i ? 512 : 0);
  double *f = malloc((size_t)(n * n) * sizeof *f);
  double *b = malloc((size_t)(n * NRHS) * sizeof *b),
         *x = malloc(sizeof *x * (size_t)(n * NRHS));
  double *tmp = malloc((size_t)n * sizeof *tmp),
         *want = malloc((size_t)n * sizeof *want);
  int64_t *ipiv = malloc((size_t)n * sizeof *ipiv), info = -1;
  ck_assert(f && b && x && tmp && want && ipiv);
  unsigned s = 35;
  for (int64_t k = 0; k < n * n; k++) {
    s = s * 1103515245u + 12345u;
    f[k] = (((s >> 8) & 0xFFFF) / 32768.0 - 1.0) / (double)n;
  }
  for (int64_t i = 0; i < n; i++) {
    f[i + i * n] = 1.5 + 0.5 * (double)(i % 3);
    s = s * 1103515245u + 12345u;
    ipiv[i] = i + 1 + (int64_t)((s >> 8) % (unsigned)(n - i));
  }
  for (int64_t k = 0; k < n * NRHS; k++)
    b[k] = (double)(k % 11) - 5.0;
  /* LU 'N' and 'T', Cholesky 'L' and 'U'. */
  for (int c = 0; c < 4; c++) {
    memcpy(x, b, (size_t)(n * NRHS) * sizeof *x);
    int err = c < 2 ? mlsba_getrs(nd.ex, D, c ? 'T' : 'N', n, NRHS, f, n, ipiv,
                                  x, n, &info)
                    : mlsba_potrs(nd.ex, D, c == 2 ? 'L' : 'U', n, NRHS, f, n,
                                  x, n, &info);
    ck_assert_msg(err == 0 && info == 0, "%s", mlsba_last_error());
    double worst = 0;
    for (int64_t j = 0; j < NRHS; j++) {
      double *xj = x + j * n, *bj = b + j * n;
      memcpy(want, bj, (size_t)n * sizeof *want);
      if (c == 0) { /* L U x = P^T b: b's rows interchanged forward */
        interchange(want, n, ipiv);
        tri_apply(f, n, 'U', 0, xj, tmp);
        tri_apply(f, n, 'L', 1, xj, tmp);
      } else if (c == 1) { /* U^T L^T P^T x = b */
        interchange(xj, n, ipiv);
        tri_apply(f, n, 'l', 1, xj, tmp);
        tri_apply(f, n, 'u', 0, xj, tmp);
      } else if (c == 2) { /* L L^T x = b */
        tri_apply(f, n, 'l', 0, xj, tmp);
        tri_apply(f, n, 'L', 0, xj, tmp);
      } else { /* U^T U x = b */
        tri_apply(f, n, 'U', 0, xj, tmp);
        tri_apply(f, n, 'u', 0, xj, tmp);
      }
      for (int64_t i = 0; i < n; i++) {
        double d = fabs(xj[i] - want[i]);
        worst = d > worst ? d : worst;
      }
    }
    ck_assert_msg(worst < 1e-10, "%s, case %d: the product back is %g off",
                  _i ? "three parts" : "two cores", c, worst);
  }
  mlsba__rhs_set_split_block(0);
  free(f), free(b), free(x), free(tmp), free(want), free(ipiv);
  close_node(&nd);
}
END_TEST

/* A simulated platform computes nothing: the calling thread solves. */
START_TEST(a_simulated_platform_solves_on_the_calling_thread) {
  node_t nd = open_node(sim_pair);
  check_solve(nd.ex, D, 'G', 'N', 90, 24);
  check_solve(nd.ex, S, 'G', 'T', 33, 2);
  check_solve(nd.ex, D, 'P', 'L', 90, 24);
  check_solve(nd.ex, S, 'P', 'U', 33, 2);
  check_solve(nd.ex, S, 'G', 'N', 300, 5); /* blocks on the calling thread */
  check_solve(nd.ex, D, 'P', 'U', 300, 5);
  close_node(&nd);
}
END_TEST

/* The drivers against LAPACK's: the solution, the factors left in A, the
 * pivots. */
static void check_driver(mlsba_executor_t *ex, mlsba_precision_t p, char uplo,
                         int64_t n, int64_t nrhs) {
  int64_t lda = n, ldb = n + 2;
  unsigned seed = (unsigned)(n * 7 + nrhs + uplo);
  mat_t a = uplo ? random_mat(n, n, lda, 1, seed) : pivoting_mat(n, lda, seed);
  mat_t b = random_mat(n, nrhs, ldb, 0, seed + 5);
  void *fa = in_prec(p, &a), *fb = in_prec(p, &b);
  int64_t info = -1, *ipiv = calloc((size_t)n + 1, sizeof *ipiv);
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  o.block = 32; /* several steps even at these sizes */
  mlsba_factor_report_t rep;
  int err = uplo == 0 ? mlsba_gesv_ex(ex, p, n, nrhs, fa, lda, ipiv, fb, ldb,
                                      &info, &o, &rep)
                      : mlsba_posv_ex(ex, p, uplo, n, nrhs, fa, lda, fb, ldb,
                                      &info, &o, &rep);
  ck_assert_msg(err == 0, "%s", mlsba_last_error());
  ck_assert_int_eq(info, 0);
  ck_assert_msg(rep.steps >= 2 && rep.seconds > 0, "steps %zu", rep.steps);
  mlsba_factor_report_free(&rep);
  mat_t x = from_prec(p, fb, n, nrhs, ldb);
  ck_assert_msg(solve_residual(p, &a, &x, &b) < MLSBA_FACTOR_RESIDUAL_OK,
                "sv %c n %lld", uplo ? uplo : 'G', (long long)n);
  int linfo = -1;
  mat_t y = lapack_solve(p, uplo, &a, &b, &linfo);
  ck_assert_int_eq(linfo, 0);
  ck_assert_msg(distance(&x, &y) < close_enough(p, n), "sv %c n %lld: %g",
                uplo ? uplo : 'G', (long long)n, distance(&x, &y));
  /* The plain calls, with the default block, give LAPACK's answer too. */
  void *ga = in_prec(p, &a), *gb = in_prec(p, &b);
  int64_t *gpiv = calloc((size_t)n + 1, sizeof *gpiv);
  info = -1;
  err = uplo == 0 ? mlsba_gesv(ex, p, n, nrhs, ga, lda, gpiv, gb, ldb, &info)
                  : mlsba_posv(ex, p, uplo, n, nrhs, ga, lda, gb, ldb, &info);
  ck_assert_msg(err == 0 && info == 0, "%s", mlsba_last_error());
  mat_t g = from_prec(p, gb, n, nrhs, ldb);
  ck_assert_msg(distance(&g, &y) < close_enough(p, n), "sv %c n %lld: %g",
                uplo ? uplo : 'G', (long long)n, distance(&g, &y));
  free_mat(&g);
  free_mat(&a), free_mat(&b), free_mat(&x), free_mat(&y);
  free(fa), free(fb), free(ga), free(gb), free(ipiv), free(gpiv);
}

START_TEST(the_drivers_match_lapack) {
  node_t nd = open_node(two_cores);
  for (int prec = 0; prec < 2; prec++) {
    check_driver(nd.ex, prec ? D : S, 0, 161, 1);
    check_driver(nd.ex, prec ? D : S, 0, 100, 33);
    check_driver(nd.ex, prec ? D : S, 'L', 161, 20);
    check_driver(nd.ex, prec ? D : S, 'U', 99, 5);
  }
  int64_t info = -1, piv = 0;
  double one = 4, rhs = 2;
  ck_assert_int_eq(mlsba_gesv(nd.ex, D, 1, 1, &one, 1, &piv, &rhs, 1, &info),
                   0);
  ck_assert(info == 0 && piv == 1 && rhs == 0.5);
  close_node(&nd);
}
END_TEST

/* mlsba_getrf's pivots handed to LAPACK's dgetrs with our factors give
 * our solve's answer and LAPACK's dgesv's; LAPACK's dgetrf's pivots
 * handed back to mlsba_getrs give LAPACK's. */
START_TEST(pivots_go_to_lapack_and_back) {
  node_t nd = open_node(two_cores);
  int64_t n = 203, nrhs = 6, info = -1;
  int ni = (int)n, nr = (int)nrhs, linfo = -1;
  mat_t a = pivoting_mat(n, n, 11), b = random_mat(n, nrhs, n, 0, 12);
  double *fa = in_prec(D, &a), *fb = in_prec(D, &b), *lb = in_prec(D, &b);
  int64_t *ipiv = calloc((size_t)n, sizeof *ipiv);
  int *lpiv = calloc((size_t)n, sizeof *lpiv);
  ck_assert_int_eq(mlsba_getrf(nd.ex, D, n, n, fa, n, ipiv, &info), 0);
  ck_assert_int_eq(mlsba_ipiv_to_lapack(n, ipiv, lpiv), 0);
  int64_t swaps = 0;
  for (int64_t i = 0; i < n; i++) {
    ck_assert_int_eq(lpiv[i], ipiv[i]);
    swaps += ipiv[i] != i + 1;
  }
  ck_assert_int_gt(swaps, n / 2); /* the pivots matter */
  dgetrs_("N", &ni, &nr, fa, &ni, lpiv, lb, &ni, &linfo, 1);
  ck_assert_int_eq(linfo, 0);
  ck_assert_int_eq(
      mlsba_getrs(nd.ex, D, 'N', n, nrhs, fa, n, ipiv, fb, n, &info), 0);
  mat_t x = from_prec(D, fb, n, nrhs, n), y = from_prec(D, lb, n, nrhs, n);
  ck_assert_msg(distance(&x, &y) < close_enough(D, n), "%g", distance(&x, &y));
  mat_t z = lapack_solve(D, 0, &a, &b, &linfo);
  ck_assert_msg(distance(&y, &z) < close_enough(D, n), "%g", distance(&y, &z));
  /* Back: LAPACK's factors and pivots through mlsba_getrs. */
  double *la = in_prec(D, &a), *mb = in_prec(D, &b);
  dgetrf_(&ni, &ni, la, &ni, lpiv, &linfo);
  ck_assert_int_eq(linfo, 0);
  for (int64_t i = 0; i < n; i++)
    ipiv[i] = -5;
  ck_assert_int_eq(mlsba_ipiv_from_lapack(n, lpiv, ipiv), 0);
  for (int64_t i = 0; i < n; i++)
    ck_assert_int_eq(lpiv[i], ipiv[i]);
  ck_assert_int_eq(
      mlsba_getrs(nd.ex, D, 'N', n, nrhs, la, n, ipiv, mb, n, &info), 0);
  mat_t w = from_prec(D, mb, n, nrhs, n);
  ck_assert_msg(distance(&w, &z) < close_enough(D, n), "%g", distance(&w, &z));
  free_mat(&a), free_mat(&b), free_mat(&x), free_mat(&y), free_mat(&z);
  free_mat(&w);
  free(fa), free(fb), free(lb), free(la), free(mb), free(ipiv), free(lpiv);
  close_node(&nd);
}
END_TEST

/* A value past LAPACK's int, or below 1, is refused and nothing is
 * written. */
START_TEST(the_pivot_helpers_refuse_what_does_not_fit) {
  int64_t big[3] = {1, (int64_t)INT_MAX + 1, 3}, ok[3] = {3, 2, 3};
  int out[3] = {-7, -7, -7};
  ck_assert_int_eq(mlsba_ipiv_to_lapack(3, big, out), MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "ipiv[1] = 2147483648"));
  ck_assert(out[0] == -7 && out[1] == -7 && out[2] == -7);
  big[1] = 0;
  ck_assert_int_eq(mlsba_ipiv_to_lapack(3, big, out), MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "ipiv[1] = 0"));
  big[1] = INT_MAX;
  ck_assert_int_eq(mlsba_ipiv_to_lapack(3, big, out), 0);
  ck_assert(out[0] == 1 && out[1] == INT_MAX && out[2] == 3);
  ck_assert_int_eq(mlsba_ipiv_to_lapack(-1, ok, out), MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "n -1"));
  ck_assert_int_eq(mlsba_ipiv_to_lapack(3, NULL, out), MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "ipiv is NULL"));
  ck_assert_int_eq(mlsba_ipiv_to_lapack(3, ok, NULL), MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "lapack_ipiv is NULL"));
  ck_assert_int_eq(mlsba_ipiv_to_lapack(0, NULL, NULL), 0);
  int back[2] = {2, -1};
  int64_t into[2] = {9, 9};
  ck_assert_int_eq(mlsba_ipiv_from_lapack(2, back, into), MLSBA_EINVAL);
  ck_assert_ptr_nonnull(strstr(mlsba_last_error(), "lapack_ipiv[1] = -1"));
  ck_assert(into[0] == 9 && into[1] == 9);
  ck_assert_int_eq(mlsba_ipiv_from_lapack(2, NULL, into), MLSBA_EINVAL);
  ck_assert_int_eq(mlsba_ipiv_from_lapack(-3, back, into), MLSBA_EINVAL);
}
END_TEST

/* A zero column makes U(j, j) exactly zero: the drivers' info is
 * LAPACK's, the factors are complete and B is left alone; so is a matrix
 * that is not positive definite. */
START_TEST(a_singular_matrix_gives_lapacks_info) {
  node_t nd = open_node(two_cores);
  int64_t n = 57, nrhs = 12;
  for (int prec = 0; prec < 2; prec++) {
    mlsba_precision_t p = prec ? D : S;
    mat_t a = random_mat(n, n, n, 0, 3), b = random_mat(n, nrhs, n, 0, 4);
    for (int64_t i = 0; i < n; i++)
      a.v[i + 40 * n] = 0;
    void *fa = in_prec(p, &a), *fb = in_prec(p, &b), *b0 = in_prec(p, &b);
    int64_t info = -1, *ipiv = calloc((size_t)n, sizeof *ipiv);
    ck_assert_int_eq(mlsba_gesv(nd.ex, p, n, nrhs, fa, n, ipiv, fb, n, &info),
                     0);
    int linfo = -1;
    mat_t y = lapack_solve(p, 0, &a, &b, &linfo);
    ck_assert_int_eq(linfo, 41);
    ck_assert_int_eq(info, linfo);
    ck_assert(memcmp(fb, b0, (size_t)(n * nrhs) * (p == D ? 8 : 4)) == 0);
    free_mat(&y);
    /* Not positive definite: a negative entry on the diagonal. */
    mat_t s = random_mat(n, n, n, 1, 5);
    s.v[30 + 30 * n] = -1;
    void *fs = in_prec(p, &s);
    for (char uplo = 'L';; uplo = 'U') {
      void *cs = in_prec(p, &s);
      info = -1;
      ck_assert_int_eq(mlsba_posv(nd.ex, p, uplo, n, nrhs, cs, n, fb, n, &info),
                       0);
      y = lapack_solve(p, uplo, &s, &b, &linfo);
      ck_assert_int_eq(linfo, 31);
      ck_assert_int_eq(info, linfo);
      ck_assert(memcmp(fb, b0, (size_t)(n * nrhs) * (p == D ? 8 : 4)) == 0);
      free_mat(&y);
      free(cs);
      if (uplo == 'U')
        break;
    }
    free_mat(&a), free_mat(&b), free_mat(&s);
    free(fa), free(fb), free(b0), free(fs), free(ipiv);
  }
  close_node(&nd);
}
END_TEST

/* The call fails with MLSBA_EINVAL and a message holding `what`. */
#define REFUSED(call, what)                                                    \
  do {                                                                         \
    ck_assert_int_eq((call), MLSBA_EINVAL);                                    \
    ck_assert_msg(strstr(mlsba_last_error(), (what)) != NULL,                  \
                  "\"%s\" not in \"%s\"", (what), mlsba_last_error());         \
  } while (0)

START_TEST(bad_arguments_are_refused_by_name) {
  node_t nd = open_node(two_cores);
  mlsba_executor_t *ex = nd.ex;
  double a[16] = {4, 1, 0, 0, 1, 4, 1, 0, 0, 1, 4, 1, 0, 0, 1, 4};
  double b[8] = {1, 2, 3, 4, 5, 6, 7, 8}, a0[16], b0[8];
  memcpy(a0, a, sizeof a);
  memcpy(b0, b, sizeof b);
  int64_t ipiv[4] = {1, 2, 3, 4}, info = 0;
  REFUSED(mlsba_getrs(NULL, D, 'N', 4, 2, a, 4, ipiv, b, 4, &info),
          "executor is NULL");
  REFUSED(
      mlsba_getrs(ex, (mlsba_precision_t)7, 'N', 4, 2, a, 4, ipiv, b, 4, &info),
      "precision 7");
  REFUSED(mlsba_getrs(ex, D, 'N', -1, 2, a, 4, ipiv, b, 4, &info),
          "mlsba_getrs: n -1");
  REFUSED(mlsba_getrs(ex, D, 'N', 4, -2, a, 4, ipiv, b, 4, &info), "nrhs -2");
  REFUSED(mlsba_getrs(ex, D, 'N', 4, 2, a, 3, ipiv, b, 4, &info), "lda 3");
  REFUSED(mlsba_getrs(ex, D, 'N', 4, 2, a, 4, ipiv, b, 3, &info),
          "ldb 3 must be at least max(1, 4)");
  REFUSED(mlsba_getrs(ex, D, 'N', 0, 2, a, 4, ipiv, b, 0, &info), "ldb 0");
  REFUSED(mlsba_getrs(ex, D, 'N', 4, 2, NULL, 4, ipiv, b, 4, &info),
          "matrix a is NULL");
  REFUSED(mlsba_getrs(ex, D, 'N', 4, 2, a, 4, ipiv, NULL, 4, &info),
          "b are NULL");
  REFUSED(mlsba_getrs(ex, D, 'N', 4, 2, a, 4, NULL, b, 4, &info),
          "ipiv is NULL");
  REFUSED(mlsba_getrs(ex, D, 'N', 4, 2, a, 4, ipiv, b, 4, NULL),
          "info is NULL");
  REFUSED(mlsba_getrs(ex, D, 'X', 4, 2, a, 4, ipiv, b, 4, &info),
          "trans must be");
  ipiv[2] = 5;
  REFUSED(mlsba_getrs(ex, D, 'N', 4, 2, a, 4, ipiv, b, 4, &info),
          "ipiv[2] = 5 is outside 1..4");
  ipiv[2] = 0;
  REFUSED(mlsba_getrs(ex, D, 'N', 4, 2, a, 4, ipiv, b, 4, &info),
          "ipiv[2] = 0");
  ipiv[2] = 3;
  REFUSED(mlsba_potrs(ex, D, 'x', 4, 2, a, 4, b, 4, &info),
          "uplo must be 'L' or 'U'");
  REFUSED(mlsba_potrs(ex, D, 'L', 4, 2, a, 4, b, 2, &info),
          "mlsba_potrs: ldb 2");
  /* The drivers check everything before A is touched. */
  REFUSED(mlsba_gesv(ex, D, 4, 2, a, 4, ipiv, b, 3, &info),
          "mlsba_gesv: ldb 3");
  REFUSED(mlsba_gesv(ex, D, 4, 2, a, 4, NULL, b, 4, &info),
          "mlsba_gesv: ipiv is NULL");
  REFUSED(mlsba_gesv(ex, D, -4, 2, a, 4, ipiv, b, 4, &info),
          "mlsba_gesv: n -4");
  REFUSED(mlsba_posv(ex, D, 'L', 4, 2, a, 4, NULL, 4, &info),
          "mlsba_posv: the right-hand sides b are NULL");
  REFUSED(mlsba_posv(ex, D, 'Q', 4, 2, a, 4, b, 4, &info), "uplo");
  mlsba_factor_opts_t o;
  mlsba_factor_opts_init(&o);
  o.block = -3;
  REFUSED(mlsba_posv_ex(ex, D, 'L', 4, 2, a, 4, b, 4, &info, &o, NULL),
          "block -3");
  ck_assert(memcmp(a, a0, sizeof a) == 0 && memcmp(b, b0, sizeof b) == 0);
  /* Nothing to solve: fine, info 0. */
  info = -1;
  ck_assert_int_eq(mlsba_getrs(ex, D, 'N', 0, 3, NULL, 1, NULL, NULL, 1, &info),
                   0);
  ck_assert_int_eq(info, 0);
  info = -1;
  ck_assert_int_eq(mlsba_potrs(ex, S, 'U', 4, 0, a, 4, NULL, 4, &info), 0);
  ck_assert_int_eq(info, 0);
  close_node(&nd);
}
END_TEST

static Suite *solve_suite(void) {
  Suite *s = suite_create("solve");
  TCase *tc = tcase_create("solve");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, lu_solves_match_lapack_on_two_cores);
  tcase_add_test(tc, cholesky_solves_match_lapack_on_two_cores);
  tcase_add_test(tc, large_solves_split_between_the_cores_match_lapack);
  tcase_add_loop_test(tc, large_double_factors_split_rows_between_the_cores, 0,
                      2);
  tcase_add_test(tc, a_simulated_platform_solves_on_the_calling_thread);
  tcase_add_test(tc, the_drivers_match_lapack);
  tcase_add_test(tc, pivots_go_to_lapack_and_back);
  tcase_add_test(tc, the_pivot_helpers_refuse_what_does_not_fit);
  tcase_add_test(tc, a_singular_matrix_gives_lapacks_info);
  tcase_add_test(tc, bad_arguments_are_refused_by_name);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return run_suite(solve_suite()); }
