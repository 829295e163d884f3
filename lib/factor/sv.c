/* LAPACK's drivers ?gesv and ?posv on the hybrid factorizations: every
 * argument checked first (as LAPACK does, so that a bad ldb is found
 * before the matrix is overwritten), the factorization, then the solve
 * unless the factorization found the matrix singular (info > 0, B left
 * as it was). And the pivots handed between the library's int64_t and
 * LAPACK's int. */
#include <limits.h>
#include <string.h>

#include "../core/error.h"
#include "rhs.h"

int mlsba_gesv_ex(mlsba_executor_t *ex, mlsba_precision_t prec, int64_t n,
                  int64_t nrhs, void *a, int64_t lda, int64_t *ipiv, void *b,
                  int64_t ldb, int64_t *info, const mlsba_factor_opts_t *opts,
                  mlsba_factor_report_t *report) {
  const char *fn = "mlsba_gesv";
  if (report)
    memset(report, 0, sizeof *report);
  int err = mlsba__rhs_check(fn, ex, prec, n, nrhs, a, lda, b, ldb, info);
  if (!err && ipiv == NULL && n > 0)
    err = mlsba__fail(MLSBA_EINVAL, "%s: ipiv is NULL", fn);
  if (!err)
    err = mlsba_getrf_ex(ex, prec, n, n, a, lda, ipiv, info, opts, report);
  if (!err && *info == 0)
    err = mlsba_getrs(ex, prec, 'N', n, nrhs, a, lda, ipiv, b, ldb, info);
  return err;
}

int mlsba_gesv(mlsba_executor_t *ex, mlsba_precision_t prec, int64_t n,
               int64_t nrhs, void *a, int64_t lda, int64_t *ipiv, void *b,
               int64_t ldb, int64_t *info) {
  return mlsba_gesv_ex(ex, prec, n, nrhs, a, lda, ipiv, b, ldb, info, NULL,
                       NULL);
}

int mlsba_posv_ex(mlsba_executor_t *ex, mlsba_precision_t prec, char uplo,
                  int64_t n, int64_t nrhs, void *a, int64_t lda, void *b,
                  int64_t ldb, int64_t *info, const mlsba_factor_opts_t *opts,
                  mlsba_factor_report_t *report) {
  const char *fn = "mlsba_posv";
  if (report)
    memset(report, 0, sizeof *report);
  int err = mlsba__rhs_check(fn, ex, prec, n, nrhs, a, lda, b, ldb, info);
  if (!err && uplo != 'L' && uplo != 'l' && uplo != 'U' && uplo != 'u')
    err = mlsba__fail(MLSBA_EINVAL, "%s: uplo must be 'L' or 'U', got '%c'", fn,
                      uplo);
  if (!err)
    err = mlsba_potrf_ex(ex, prec, uplo, n, a, lda, info, opts, report);
  if (!err && *info == 0)
    err = mlsba_potrs(ex, prec, uplo, n, nrhs, a, lda, b, ldb, info);
  return err;
}

int mlsba_posv(mlsba_executor_t *ex, mlsba_precision_t prec, char uplo,
               int64_t n, int64_t nrhs, void *a, int64_t lda, void *b,
               int64_t ldb, int64_t *info) {
  return mlsba_posv_ex(ex, prec, uplo, n, nrhs, a, lda, b, ldb, info, NULL,
                       NULL);
}

int mlsba_ipiv_to_lapack(int64_t n, const int64_t *ipiv, int *lapack_ipiv) {
  const char *fn = "mlsba_ipiv_to_lapack";
  if (n < 0)
    return mlsba__fail(MLSBA_EINVAL, "%s: n %lld is negative", fn,
                       (long long)n);
  if (n > 0 && (ipiv == NULL || lapack_ipiv == NULL))
    return mlsba__fail(MLSBA_EINVAL, "%s: %s is NULL", fn,
                       ipiv == NULL ? "ipiv" : "lapack_ipiv");
  /* Checked whole before a value is written: a refused call leaves the
   * caller's array as it was. */
  for (int64_t i = 0; i < n; i++)
    if (ipiv[i] < 1 || ipiv[i] > INT_MAX)
      return mlsba__fail(MLSBA_EINVAL,
                         "%s: ipiv[%lld] = %lld is outside "
                         "1..%d (LAPACK's int)",
                         fn, (long long)i, (long long)ipiv[i], INT_MAX);
  for (int64_t i = 0; i < n; i++)
    lapack_ipiv[i] = (int)ipiv[i];
  return 0;
}

int mlsba_ipiv_from_lapack(int64_t n, const int *lapack_ipiv, int64_t *ipiv) {
  const char *fn = "mlsba_ipiv_from_lapack";
  if (n < 0)
    return mlsba__fail(MLSBA_EINVAL, "%s: n %lld is negative", fn,
                       (long long)n);
  if (n > 0 && (ipiv == NULL || lapack_ipiv == NULL))
    return mlsba__fail(MLSBA_EINVAL, "%s: %s is NULL", fn,
                       lapack_ipiv == NULL ? "lapack_ipiv" : "ipiv");
  for (int64_t i = 0; i < n; i++)
    if (lapack_ipiv[i] < 1)
      return mlsba__fail(MLSBA_EINVAL,
                         "%s: lapack_ipiv[%lld] = %d is not a "
                         "1-based row",
                         fn, (long long)i, lapack_ipiv[i]);
  for (int64_t i = 0; i < n; i++)
    ipiv[i] = lapack_ipiv[i];
  return 0;
}
