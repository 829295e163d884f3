/* Scaled residuals of the factorizations: the factors multiplied back, in
 * double, against the matrix they came from. The product runs through
 * the CPU kernels on every online core: at the bench's sizes it costs
 * about what the factorization does. */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "../core/error.h"
#include "../devices/kernels.h"
#include "../devices/lapack.h"
#include "mlsba.h"

static double get(mlsba_precision_t prec, const void *a, int64_t lda, int64_t i,
                  int64_t j) {
  size_t k = (size_t)(i + j * lda);
  return prec == MLSBA_PRECISION_DOUBLE ? ((const double *)a)[k]
                                        : (double)((const float *)a)[k];
}

static double unit_roundoff(mlsba_precision_t prec) {
  return prec == MLSBA_PRECISION_DOUBLE ? 0x1p-53 : 0x1p-24;
}

static unsigned cores(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (unsigned)n : 1;
}

/* The largest column sum of |x| (m x n, leading dimension m); NaN when a
 * column's sum is NaN: a comparison with NaN is false, so "s > best"
 * alone would skip that column and call NaN factors right. */
static double norm1(const double *x, int64_t m, int64_t n) {
  double best = 0;
  for (int64_t j = 0; j < n; j++) {
    double s = 0;
    for (int64_t i = 0; i < m; i++)
      s += fabs(x[i + j * m]);
    if (isnan(s))
      return NAN;
    best = s > best ? s : best;
  }
  return best;
}

/* ||error||_1 / (||A||_1 scale): infinite when either norm is NaN or
 * infinite (a NaN or Inf in the factors or in A is never right), and
 * when A is zero but the error is not; 0 for both zero. */
static double scaled(double error, double anorm, double scale) {
  if (!isfinite(error) || !isfinite(anorm))
    return INFINITY;
  if (anorm == 0)
    return error == 0 ? 0 : INFINITY;
  double r = error / (anorm * scale);
  return isnan(r) ? INFINITY : r;
}

static int check(const char *fn, mlsba_precision_t prec, int64_t m, int64_t n,
                 const void *a, int64_t lda, const void *f, int64_t ldf,
                 const double *residual) {
  if (residual == NULL)
    return mlsba__fail(MLSBA_EINVAL, "%s: residual is NULL", fn);
  if (prec != MLSBA_PRECISION_SINGLE && prec != MLSBA_PRECISION_DOUBLE)
    return mlsba__fail(MLSBA_EINVAL, "%s: unknown precision %d", fn, (int)prec);
  if (m < 0 || n < 0 || lda < (m > 1 ? m : 1) || ldf < (m > 1 ? m : 1))
    return mlsba__fail(MLSBA_EINVAL,
                       "%s: bad size %lld x %lld or leading "
                       "dimension",
                       fn, (long long)m, (long long)n);
  if ((a == NULL || f == NULL) && m > 0 && n > 0)
    return mlsba__fail(MLSBA_EINVAL, "%s: a matrix is NULL", fn);
  return 0;
}

int mlsba_getrf_residual(mlsba_precision_t prec, int64_t m, int64_t n,
                         const void *a, int64_t lda, const void *lu,
                         int64_t ldlu, const int64_t *ipiv, double *residual) {
  int err =
      check("mlsba_getrf_residual", prec, m, n, a, lda, lu, ldlu, residual);
  if (err)
    return err;
  *residual = 0;
  int64_t k = m < n ? m : n;
  if (k == 0)
    return 0;
  if (ipiv == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_getrf_residual: ipiv is NULL");
  for (int64_t i = 0; i < k; i++)
    if (ipiv[i] < i + 1 || ipiv[i] > m)
      return mlsba__fail(MLSBA_EINVAL,
                         "mlsba_getrf_residual: ipiv[%lld] = "
                         "%lld is outside %lld..%lld",
                         (long long)i, (long long)ipiv[i], (long long)i + 1,
                         (long long)m);
  double *L = calloc((size_t)(m * k), sizeof *L);
  double *U = calloc((size_t)(k * n), sizeof *U);
  double *D = malloc((size_t)(m * n) * sizeof *D);
  if (L == NULL || U == NULL || D == NULL) {
    free(L);
    free(U);
    free(D);
    return mlsba__fail(MLSBA_ENOMEM, "mlsba_getrf_residual: out of memory");
  }
  for (int64_t j = 0; j < k; j++) {
    L[j + j * m] = 1;
    for (int64_t i = j + 1; i < m; i++)
      L[i + j * m] = get(prec, lu, ldlu, i, j);
  }
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i <= j && i < k; i++)
      U[i + j * k] = get(prec, lu, ldlu, i, j);
  /* D = A with the rows interchanged as the factorization did, so that
   * D - L U is the error. */
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < m; i++)
      D[i + j * m] = get(prec, a, lda, i, j);
  for (int64_t i = 0; i < k; i++) {
    int64_t r = ipiv[i] - 1;
    for (int64_t j = 0; r != i && j < n; j++) {
      double t = D[i + j * m];
      D[i + j * m] = D[r + j * m];
      D[r + j * m] = t;
    }
  }
  double anorm = norm1(D, m, n);
  mlsba__cpu_gemm(MLSBA_PRECISION_DOUBLE, 'N', 'N', m, n, k, -1.0, L, m, U, k,
                  1.0, D, m, cores());
  double big = (double)(m > n ? m : n);
  *residual = scaled(norm1(D, m, n), anorm, big * unit_roundoff(prec));
  free(L);
  free(U);
  free(D);
  return 0;
}

int mlsba_potrf_residual(mlsba_precision_t prec, char uplo, int64_t n,
                         const void *a, int64_t lda, const void *f, int64_t ldf,
                         double *residual) {
  int err = check("mlsba_potrf_residual", prec, n, n, a, lda, f, ldf, residual);
  if (err)
    return err;
  int lower = uplo == 'L' || uplo == 'l';
  if (!lower && uplo != 'U' && uplo != 'u')
    return mlsba__fail(MLSBA_EINVAL,
                       "mlsba_potrf_residual: uplo must be 'L' "
                       "or 'U', got '%c'",
                       uplo);
  *residual = 0;
  if (n == 0)
    return 0;
  double *L = calloc((size_t)(n * n), sizeof *L);
  double *D = malloc((size_t)(n * n) * sizeof *D);
  if (L == NULL || D == NULL) {
    free(L);
    free(D);
    return mlsba__fail(MLSBA_ENOMEM, "mlsba_potrf_residual: out of memory");
  }
  /* L is the lower factor either way (U^T for uplo 'U'); D the symmetric
   * matrix from the triangle that was given. */
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = j; i < n; i++) {
      L[i + j * n] = lower ? get(prec, f, ldf, i, j) : get(prec, f, ldf, j, i);
      double v = lower ? get(prec, a, lda, i, j) : get(prec, a, lda, j, i);
      D[i + j * n] = v;
      D[j + i * n] = v;
    }
  double anorm = norm1(D, n, n);
  mlsba__cpu_gemm(MLSBA_PRECISION_DOUBLE, 'N', 'T', n, n, n, -1.0, L, n, L, n,
                  1.0, D, n, cores());
  *residual = scaled(norm1(D, n, n), anorm, (double)n * unit_roundoff(prec));
  free(L);
  free(D);
  return 0;
}

/* Q (m x k, leading dimension m) of the factors qr and tau, formed in
 * double by LAPACK's ?orgqr from the reflectors read as doubles: 0, or
 * -1 when LAPACK refused (it cannot for sizes checked here). */
static int form_q(mlsba_precision_t prec, int64_t m, int64_t k, const void *qr,
                  int64_t ldqr, const void *tau, double *Q) {
  double *t = malloc((size_t)k * sizeof *t);
  int lwork = (int)(64 * k), im = (int)m, ik = (int)k;
  double *work = malloc((size_t)lwork * sizeof *work);
  if (t == NULL || work == NULL) {
    free(t);
    free(work);
    return MLSBA_ENOMEM;
  }
  for (int64_t i = 0; i < k; i++)
    t[i] = get(prec, tau, 1, i, 0);
  for (int64_t j = 0; j < k; j++)
    for (int64_t i = 0; i < m; i++)
      Q[i + j * m] = get(prec, qr, ldqr, i, j);
  int info = mlsba__lapack_orgqr(MLSBA_PRECISION_DOUBLE, im, ik, ik, Q, im, t,
                                 work, lwork);
  free(t);
  free(work);
  return info == 0 ? 0 : -1;
}

int mlsba_geqrf_residual(mlsba_precision_t prec, int64_t m, int64_t n,
                         const void *a, int64_t lda, const void *qr,
                         int64_t ldqr, const void *tau, double *residual,
                         double *orthogonality) {
  const char *fn = "mlsba_geqrf_residual";
  int err = check(fn, prec, m, n, a, lda, qr, ldqr, residual);
  if (err)
    return err;
  if ((err = mlsba__lapack_check(fn)))
    return err;
  int64_t k = m < n ? m : n;
  if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX / 64)
    return mlsba__fail(MLSBA_EINVAL, "%s: the size %lld x %lld is too large",
                       fn, (long long)m, (long long)n);
  *residual = 0;
  if (orthogonality)
    *orthogonality = 0;
  if (k == 0)
    return 0;
  if (tau == NULL)
    return mlsba__fail(MLSBA_EINVAL, "%s: tau is NULL", fn);
  double *Q = malloc((size_t)(m * k) * sizeof *Q);
  double *R = calloc((size_t)(k * n), sizeof *R);
  double *D = malloc((size_t)(m * n) * sizeof *D);
  double *E = orthogonality ? malloc((size_t)(k * k) * sizeof *E) : NULL;
  err = Q && R && D && (E || !orthogonality)
            ? form_q(prec, m, k, qr, ldqr, tau, Q)
            : MLSBA_ENOMEM;
  if (err == 0) {
    for (int64_t j = 0; j < n; j++) {
      for (int64_t i = 0; i <= j && i < k; i++)
        R[i + j * k] = get(prec, qr, ldqr, i, j);
      for (int64_t i = 0; i < m; i++)
        D[i + j * m] = get(prec, a, lda, i, j);
    }
    double anorm = norm1(D, m, n), big = (double)(m > n ? m : n);
    mlsba__cpu_gemm(MLSBA_PRECISION_DOUBLE, 'N', 'N', m, n, k, -1.0, Q, m, R, k,
                    1.0, D, m, cores());
    *residual = scaled(norm1(D, m, n), anorm, big * unit_roundoff(prec));
  }
  if (err == 0 && orthogonality) { /* I - Q^T Q */
    for (int64_t j = 0; j < k; j++)
      for (int64_t i = 0; i < k; i++)
        E[i + j * k] = i == j;
    mlsba__cpu_gemm(MLSBA_PRECISION_DOUBLE, 'T', 'N', k, k, m, -1.0, Q, m, Q, m,
                    1.0, E, k, cores());
    *orthogonality = scaled(norm1(E, k, k), 1, (double)n * unit_roundoff(prec));
  }
  free(Q);
  free(R);
  free(D);
  free(E);
  if (err == MLSBA_ENOMEM)
    return mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", fn);
  if (err)
    return mlsba__fail(MLSBA_EINVAL, "%s: LAPACK's ?orgqr refused the factors",
                       fn);
  return 0;
}
