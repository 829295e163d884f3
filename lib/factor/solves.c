/* The solves with the factors of mlsba_getrf and mlsba_potrf, LAPACK's
 * ?getrs and ?potrs: the arguments checked as LAPACK checks them, then
 * the right-hand sides solved on the platform's cores (rhs.c) by one call
 * of the cores' kernels with a thread a core, which share one packed copy
 * of the triangle. Split by columns instead, each core on its own, every
 * core packs the whole triangle for its few columns: on this machine's
 * two cores (n = 2048, double, 64 right-hand sides) the split ran 1.07x
 * one core, BLIS's two threads 1.34x (n = 4096: 1.52x; 256 columns 1.46x
 * and 1.77x); docs/factor.md has the table. */
#include <limits.h>

#include "../core/error.h"
#include "../platform/platform.h"
#include "../runtime/executor.h"
#include "rhs.h"

int mlsba__rhs_check(const char *fn, const mlsba_executor_t *ex,
                     mlsba_precision_t prec, int64_t n, int64_t nrhs,
                     const void *a, int64_t lda, const void *b, int64_t ldb,
                     const int64_t *info) {
  if (ex == NULL)
    return mlsba__fail(MLSBA_EINVAL, "%s: the executor is NULL", fn);
  if (prec != MLSBA_PRECISION_SINGLE && prec != MLSBA_PRECISION_DOUBLE)
    return mlsba__fail(MLSBA_EINVAL,
                       "%s: precision %d is neither single nor "
                       "double",
                       fn, (int)prec);
  if (n < 0 || n > INT_MAX)
    return mlsba__fail(MLSBA_EINVAL, "%s: n %lld is outside 0..%d", fn,
                       (long long)n, INT_MAX);
  if (nrhs < 0 || nrhs > INT_MAX)
    return mlsba__fail(MLSBA_EINVAL, "%s: nrhs %lld is outside 0..%d", fn,
                       (long long)nrhs, INT_MAX);
  if (lda < (n > 1 ? n : 1) || lda > INT_MAX)
    return mlsba__fail(MLSBA_EINVAL,
                       "%s: lda %lld must be at least max(1, "
                       "%lld) (and at most %d)",
                       fn, (long long)lda, (long long)n, INT_MAX);
  if (ldb < (n > 1 ? n : 1) || ldb > INT_MAX)
    return mlsba__fail(MLSBA_EINVAL,
                       "%s: ldb %lld must be at least max(1, "
                       "%lld) (and at most %d)",
                       fn, (long long)ldb, (long long)n, INT_MAX);
  if (a == NULL && n > 0)
    return mlsba__fail(MLSBA_EINVAL, "%s: the matrix a is NULL", fn);
  if (b == NULL && n > 0 && nrhs > 0)
    return mlsba__fail(MLSBA_EINVAL, "%s: the right-hand sides b are NULL", fn);
  if (info == NULL)
    return mlsba__fail(MLSBA_EINVAL, "%s: info is NULL", fn);
  return 0;
}

unsigned mlsba__solve_threads(const mlsba_executor_t *ex) {
  const mlsba_platform_t *pl = ex->pl;
  unsigned cores = 0;
  for (size_t i = 0; i < pl->ndev; i++) {
    unsigned roles = mlsba__platform_device_roles(pl, i);
    if (roles & MLSBA__ROLE_VIRTUAL)
      return 1;
    cores += (roles & MLSBA__ROLE_CORE) != 0;
  }
  return cores > 0 ? cores : 1;
}

int mlsba_getrs(mlsba_executor_t *ex, mlsba_precision_t prec, char trans,
                int64_t n, int64_t nrhs, const void *a, int64_t lda,
                const int64_t *ipiv, void *b, int64_t ldb, int64_t *info) {
  const char *fn = "mlsba_getrs";
  int err = mlsba__rhs_check(fn, ex, prec, n, nrhs, a, lda, b, ldb, info);
  if (err)
    return err;
  int t = trans == 'T' || trans == 't' || trans == 'C' || trans == 'c';
  if (!t && trans != 'N' && trans != 'n')
    return mlsba__fail(MLSBA_EINVAL,
                       "%s: trans must be 'N', 'T' or 'C', "
                       "got '%c'",
                       fn, trans);
  if (ipiv == NULL && n > 0)
    return mlsba__fail(MLSBA_EINVAL, "%s: ipiv is NULL", fn);
  /* A pivot out of range would swap a row outside B: refused, as LAPACK
   * would not (it trusts them), because the library never crashes. */
  for (int64_t i = 0; i < n; i++)
    if (ipiv[i] < 1 || ipiv[i] > n)
      return mlsba__fail(MLSBA_EINVAL,
                         "%s: ipiv[%lld] = %lld is outside "
                         "1..%lld",
                         fn, (long long)i, (long long)ipiv[i], (long long)n);
  *info = 0;
  mlsba__rhs_t s = {.prec = prec,
                    .n = n,
                    .a = a,
                    .lda = lda,
                    .ipiv = ipiv,
                    .trans = t,
                    .b = b,
                    .ldb = ldb};
  mlsba__rhs_solve(&s, 0, nrhs, mlsba__solve_threads(ex));
  return 0;
}

int mlsba_potrs(mlsba_executor_t *ex, mlsba_precision_t prec, char uplo,
                int64_t n, int64_t nrhs, const void *a, int64_t lda, void *b,
                int64_t ldb, int64_t *info) {
  const char *fn = "mlsba_potrs";
  int err = mlsba__rhs_check(fn, ex, prec, n, nrhs, a, lda, b, ldb, info);
  if (err)
    return err;
  int lower = uplo == 'L' || uplo == 'l';
  if (!lower && uplo != 'U' && uplo != 'u')
    return mlsba__fail(MLSBA_EINVAL, "%s: uplo must be 'L' or 'U', got '%c'",
                       fn, uplo);
  *info = 0;
  mlsba__rhs_t s = {.prec = prec,
                    .n = n,
                    .a = a,
                    .lda = lda,
                    .lower = lower,
                    .b = b,
                    .ldb = ldb};
  mlsba__rhs_solve(&s, 0, nrhs, mlsba__solve_threads(ex));
  return 0;
}
