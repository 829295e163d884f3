/* Linear least squares with a full-rank matrix, LAPACK's ?gels, on the
 * hybrid QR: mlsba_geqrf_ex, mlsba_ormqr's application of Q and a triangle
 * solve, in LAPACK's order and with its scaling of A and B where their
 * largest entry is near under- or overflow. LAPACK factors a wide matrix
 * (m < n) by LQ (?gelqf); this file factors A^T by mlsba_geqrf instead,
 * in a copy, and writes the factors back into A transposed, which is
 * ?gelqf's form (L in the lower triangle, the reflectors in the rows
 * right of it, the same tau): the LQ of A is the transposed QR of A^T.
 * Every argument is checked and every buffer taken before anything is
 * written; a zero on R's diagonal (the first, as info) leaves B as it
 * was. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../devices/lapack.h"
#include "factor.h"
#include "ormqr.h"
#include "rhs.h"

/* One call: its arguments, and the scaling of A and B. */
typedef struct {
  mlsba_executor_t *ex;
  mlsba_precision_t prec;
  int tran;
  int64_t m, n, nrhs;
  char *a;
  int64_t lda;
  char *b;
  int64_t ldb;
  /* The largest entries of A and B, and which bound each was scaled to
   * (0: none, 1: smlnum, 2: bignum), as LAPACK's iascl and ibscl. */
  double anrm, bnrm, smlnum, bignum;
  int ascaled, bscaled;
} lsq_t;

static size_t esize_of(mlsba_precision_t prec) {
  return prec == MLSBA_PRECISION_DOUBLE ? sizeof(double) : sizeof(float);
}

static int check(const char *fn, mlsba_executor_t *ex, mlsba_precision_t prec,
                 char trans, int64_t m, int64_t n, int64_t nrhs, const void *a,
                 int64_t lda, const void *b, int64_t ldb, const int64_t *info) {
  int err = mlsba__factor_check_call(fn, ex, prec);
  if (err || (err = mlsba__lapack_check(fn)))
    return err;
  if ((err = mlsba__factor_check_trans(fn, trans)))
    return err;
  if ((err = mlsba__factor_check_count(fn, "m", m)))
    return err;
  if ((err = mlsba__factor_check_count(fn, "n", n)))
    return err;
  if ((err = mlsba__factor_check_count(fn, "nrhs", nrhs)))
    return err;
  if ((err = mlsba__factor_check_ld(fn, "lda", lda, m)))
    return err;
  int64_t rows = m > n ? m : n;
  if (ldb < (rows > 1 ? rows : 1) || ldb > INT_MAX)
    return mlsba__fail(MLSBA_EINVAL,
                       "%s: ldb %lld must be at least max(1, m, n) = %lld "
                       "(and at most %d)",
                       fn, (long long)ldb, (long long)(rows > 1 ? rows : 1),
                       INT_MAX);
  if (a == NULL && m > 0 && n > 0)
    return mlsba__fail(MLSBA_EINVAL, "%s: the matrix a is NULL", fn);
  if (b == NULL && rows > 0 && nrhs > 0)
    return mlsba__fail(MLSBA_EINVAL, "%s: the right-hand sides b are NULL", fn);
  if (info == NULL)
    return mlsba__fail(MLSBA_EINVAL, "%s: info is NULL", fn);
  return 0;
}

/* The largest magnitude of rows x cols of x (ld), as LAPACK's ?lange
 * 'M': a NaN wins. */
static double largest(mlsba_precision_t prec, int64_t rows, int64_t cols,
                      const void *x, int64_t ld) {
  double most = 0;
  for (int64_t j = 0; j < cols; j++)
    for (int64_t i = 0; i < rows; i++) {
      double v = prec == MLSBA_PRECISION_DOUBLE
                     ? fabs(((const double *)x)[i + j * ld])
                     : fabs(((const float *)x)[i + j * ld]);
      if (v > most || isnan(v))
        most = v;
      if (isnan(most))
        return most;
    }
  return most;
}

/* rows x cols of x (ld) times cto / cfrom, by LAPACK's ?lascl. */
static void scale(mlsba_precision_t prec, double cfrom, double cto,
                  int64_t rows, int64_t cols, void *x, int64_t ld) {
  if (rows == 0 || cols == 0)
    return;
  (void)mlsba__lapack_lascl(prec, cfrom, cto, (int)rows, (int)cols, x, (int)ld);
}

/* Which bound a matrix of largest entry norm is scaled to, as LAPACK's
 * ?gels decides (0: none). */
static int bound_of(const lsq_t *s, double norm) {
  return norm > 0 && norm < s->smlnum ? 1 : norm > s->bignum ? 2 : 0;
}

static void zero_rows(const lsq_t *s, int64_t r0, int64_t r1) {
  size_t es = esize_of(s->prec);
  if (r1 > r0)
    for (int64_t j = 0; j < s->nrhs; j++)
      memset(s->b + (size_t)(r0 + j * s->ldb) * es, 0, (size_t)(r1 - r0) * es);
}

/* B's first k rows = op(R)^-1 of them, R upper k x k at r (ld), as the
 * solves solve a triangle (rhs.c): few right-hand sides by TRSV on the
 * calling thread, more with B's rows split between the cores. */
static void solve_r(const lsq_t *s, char trans, int64_t k, const void *r,
                    int64_t ld) {
  mlsba__rhs_t v = {
      .prec = s->prec, .n = k, .a = r, .lda = ld, .b = s->b, .ldb = s->ldb};
  mlsba__rhs_triangle(s->ex, &v, 'U', trans, 'N', s->nrhs);
}

/* The first zero on R's diagonal (k x k at r, ld), 1-based; 0: none. As
 * LAPACK's ?trtrs, exactly zero. */
static int64_t zero_pivot(mlsba_precision_t prec, int64_t k, const void *r,
                          int64_t ld) {
  for (int64_t i = 0; i < k; i++)
    if (prec == MLSBA_PRECISION_DOUBLE ? ((const double *)r)[i + i * ld] == 0
                                       : ((const float *)r)[i + i * ld] == 0)
      return i + 1;
  return 0;
}

/* rows x cols of x (ldx) transposed into y (ldy). */
static void transpose(mlsba_precision_t prec, int64_t rows, int64_t cols,
                      const void *x, int64_t ldx, void *y, int64_t ldy) {
  for (int64_t j = 0; j < cols; j++)
    for (int64_t i = 0; i < rows; i++)
      if (prec == MLSBA_PRECISION_DOUBLE)
        ((double *)y)[j + i * ldy] = ((const double *)x)[i + j * ldx];
      else
        ((float *)y)[j + i * ldy] = ((const float *)x)[i + j * ldx];
}

/* With the factors in f (the QR of A, or of A^T for a wide A; ld) and tau,
 * B's solution as LAPACK's ?gels computes it, in work (ormqr's room);
 * returns the rows of B that hold the solution (LAPACK's scllen). */
static int64_t solve(const lsq_t *s, const void *f, int64_t ld, const void *tau,
                     void *work) {
  int64_t m = s->m, n = s->n, nrhs = s->nrhs;
  mlsba_executor_t *ex = s->ex;
  mlsba_precision_t p = s->prec;
  if (m >= n && !s->tran) { /* min ||B - A X||: X = R^-1 (Q^T B)(1:n) */
    mlsba__ormqr_apply(ex, p, 'L', 'T', m, nrhs, n, f, ld, tau, s->b, s->ldb,
                       work);
    solve_r(s, 'N', n, f, ld);
    return n;
  }
  if (m >= n) { /* A^T X = B, least norm: X = Q [R^-T B; 0] */
    solve_r(s, 'T', n, f, ld);
    zero_rows(s, n, m);
    mlsba__ormqr_apply(ex, p, 'L', 'N', m, nrhs, n, f, ld, tau, s->b, s->ldb,
                       work);
    return m;
  }
  /* A = L Q_lq with L = R^T, Q_lq = Q^T, Q of A^T's QR (f is n x m). */
  if (!s->tran) { /* A X = B, least norm: X = Q [L^-1 B; 0] */
    solve_r(s, 'T', m, f, ld);
    zero_rows(s, m, n);
    mlsba__ormqr_apply(ex, p, 'L', 'N', n, nrhs, m, f, ld, tau, s->b, s->ldb,
                       work);
    return n;
  }
  /* min ||B - A^T X||: X = L^-T (Q^T B)(1:m) */
  mlsba__ormqr_apply(ex, p, 'L', 'T', n, nrhs, m, f, ld, tau, s->b, s->ldb,
                     work);
  solve_r(s, 'N', m, f, ld);
  return m;
}

/* Undoes the scaling on B's first rows rows, as LAPACK's ?gels does. */
static void unscale(const lsq_t *s, int64_t rows) {
  if (s->ascaled)
    scale(s->prec, s->anrm, s->ascaled == 1 ? s->smlnum : s->bignum, rows,
          s->nrhs, s->b, s->ldb);
  if (s->bscaled)
    scale(s->prec, s->bscaled == 1 ? s->smlnum : s->bignum, s->bnrm, rows,
          s->nrhs, s->b, s->ldb);
}

/* The factorization and the solve, with the buffers taken: f is A's copy
 * transposed (wide A) or NULL (A factorized in place), keep A's copy
 * where A is scaled in place (so that a refused factorization leaves A as
 * it was). */
static int factor_and_solve(lsq_t *s, void *f, void *keep, void *tau,
                            void *work, int64_t *info,
                            const mlsba_factor_opts_t *opts,
                            mlsba_factor_report_t *report) {
  int64_t m = s->m, n = s->n, k = m < n ? m : n, finfo = 0;
  size_t es = esize_of(s->prec);
  void *fac = f ? f : s->a;
  int64_t ld = f ? n : s->lda;
  if (f)
    transpose(s->prec, m, n, s->a, s->lda, f, n);
  else if (keep)
    memcpy(keep, s->a, (size_t)(s->lda * (n - 1) + m) * es);
  if (s->ascaled)
    scale(s->prec, s->anrm, s->ascaled == 1 ? s->smlnum : s->bignum, f ? n : m,
          f ? m : n, fac, ld);
  int err =
      f ? mlsba_geqrf_ex(s->ex, s->prec, n, m, f, n, tau, &finfo, opts, report)
        : mlsba_geqrf_ex(s->ex, s->prec, m, n, s->a, s->lda, tau, &finfo, opts,
                         report);
  if (err) {
    if (keep)
      memcpy(s->a, keep, (size_t)(s->lda * (n - 1) + m) * es);
    return err;
  }
  if (f) /* ?gelqf's form: L and the reflectors' rows */
    transpose(s->prec, n, m, f, n, s->a, s->lda);
  *info = zero_pivot(s->prec, k, fac, ld);
  if (*info > 0)
    return 0;
  int64_t brow = s->tran ? n : m;
  s->bnrm = largest(s->prec, brow, s->nrhs, s->b, s->ldb);
  s->bscaled = bound_of(s, s->bnrm);
  if (s->bscaled)
    scale(s->prec, s->bnrm, s->bscaled == 1 ? s->smlnum : s->bignum, brow,
          s->nrhs, s->b, s->ldb);
  unscale(s, solve(s, fac, ld, tau, work));
  return 0;
}

int mlsba_gels_ex(mlsba_executor_t *ex, mlsba_precision_t prec, char trans,
                  int64_t m, int64_t n, int64_t nrhs, void *a, int64_t lda,
                  void *b, int64_t ldb, int64_t *info,
                  const mlsba_factor_opts_t *opts,
                  mlsba_factor_report_t *report) {
  const char *fn = "mlsba_gels";
  if (report)
    memset(report, 0, sizeof *report);
  int err = check(fn, ex, prec, trans, m, n, nrhs, a, lda, b, ldb, info);
  if (err)
    return err;
  lsq_t s = {.ex = ex,
             .prec = prec,
             .tran = trans != 'N' && trans != 'n',
             .m = m,
             .n = n,
             .nrhs = nrhs,
             .a = a,
             .lda = lda,
             .b = b,
             .ldb = ldb};
  /* LAPACK's smlnum = safe minimum / precision, and its inverse. */
  s.smlnum = prec == MLSBA_PRECISION_DOUBLE ? DBL_MIN / DBL_EPSILON
                                            : FLT_MIN / FLT_EPSILON;
  s.bignum = 1 / s.smlnum;
  *info = 0;
  int64_t k = m < n ? m : n, rows = m > n ? m : n;
  /* Nothing to solve, or a zero A: X = 0 (LAPACK's quick returns). */
  s.anrm = k > 0 && nrhs > 0 ? largest(prec, m, n, a, lda) : 0;
  if (s.anrm == 0) {
    zero_rows(&s, 0, rows);
    return 0;
  }
  s.ascaled = bound_of(&s, s.anrm);
  size_t es = esize_of(prec);
  int wide = m < n;
  void *tau = malloc((size_t)k * es);
  void *f = wide ? malloc((size_t)(m * n) * es) : NULL;
  void *keep =
      !wide && s.ascaled ? malloc((size_t)(lda * (n - 1) + m) * es) : NULL;
  void *work = malloc(mlsba__ormqr_work_bytes(ex, prec, 1, rows, nrhs, k));
  if (tau == NULL || work == NULL || (wide && f == NULL) ||
      (!wide && s.ascaled && keep == NULL))
    err = mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", fn);
  else
    err = factor_and_solve(&s, f, keep, tau, work, info, opts, report);
  free(tau);
  free(f);
  free(keep);
  free(work);
  return err;
}

int mlsba_gels(mlsba_executor_t *ex, mlsba_precision_t prec, char trans,
               int64_t m, int64_t n, int64_t nrhs, void *a, int64_t lda,
               void *b, int64_t ldb, int64_t *info) {
  return mlsba_gels_ex(ex, prec, trans, m, n, nrhs, a, lda, b, ldb, info, NULL,
                       NULL);
}
