/* The solves with the factors of mlsba_getrf and mlsba_potrf, LAPACK's
 * ?getrs and ?potrs: the arguments checked as LAPACK checks them, then
 * the right-hand sides split by columns between the platform's cores,
 * each core solving its columns alone with one thread of the cores'
 * kernels (rhs.c). Columns are independent, so the cores never wait for
 * each other; but each reads the whole of the factors, so a core is
 * worth its share only with enough columns to reuse them: below
 * RHS_PER_CORE columns a core, the calling thread solves alone. */
#include <limits.h>
#include <stdlib.h>

#include "../core/error.h"
#include "../platform/platform.h"
#include "../runtime/executor.h"
#include "rhs.h"

/* The fewest columns of B worth a core of their own. One core's TRSM
 * with the factors' 2 n^2 entries reads them at every call: with 2
 * cores, each solving half of nrhs columns, n = 4096, double, the split
 * ran [...] (benchmarks/bench-solve, RESULTS.md). */
enum { RHS_PER_CORE = 8 };

int mlsba__rhs_check(const char *fn, const mlsba_executor_t *ex,
                     mlsba_precision_t prec, int64_t n, int64_t nrhs,
                     const void *a, int64_t lda, const void *b, int64_t ldb,
                     const int64_t *info) {
  if (ex == NULL)
    return mlsba__fail(MLSBA_EINVAL, "%s: the executor is NULL", fn);
  if (prec != MLSBA_PRECISION_SINGLE && prec != MLSBA_PRECISION_DOUBLE)
    return mlsba__fail(MLSBA_EINVAL, "%s: precision %d is neither single nor "
                                     "double",
                       fn, (int)prec);
  if (n < 0 || n > INT_MAX)
    return mlsba__fail(MLSBA_EINVAL, "%s: n %lld is outside 0..%d", fn,
                       (long long)n, INT_MAX);
  if (nrhs < 0 || nrhs > INT_MAX)
    return mlsba__fail(MLSBA_EINVAL, "%s: nrhs %lld is outside 0..%d", fn,
                       (long long)nrhs, INT_MAX);
  if (lda < (n > 1 ? n : 1) || lda > INT_MAX)
    return mlsba__fail(MLSBA_EINVAL, "%s: lda %lld must be at least max(1, "
                                     "%lld) (and at most %d)",
                       fn, (long long)lda, (long long)n, INT_MAX);
  if (ldb < (n > 1 ? n : 1) || ldb > INT_MAX)
    return mlsba__fail(MLSBA_EINVAL, "%s: ldb %lld must be at least max(1, "
                                     "%lld) (and at most %d)",
                       fn, (long long)ldb, (long long)n, INT_MAX);
  if (a == NULL && n > 0)
    return mlsba__fail(MLSBA_EINVAL, "%s: the matrix a is NULL", fn);
  if (b == NULL && n > 0 && nrhs > 0)
    return mlsba__fail(MLSBA_EINVAL, "%s: the right-hand sides b are NULL",
                       fn);
  if (info == NULL)
    return mlsba__fail(MLSBA_EINVAL, "%s: info is NULL", fn);
  return 0;
}

/* A core's columns (units are columns, as the executor numbers them). */
static int solve_columns(void *user, int64_t first, int64_t count) {
  mlsba__rhs_solve(user, first, count, 1);
  return 0;
}

/* The real cores of the platform, in file order (none on a platform of
 * simulated devices: they compute nothing, so the calling thread does). */
static size_t real_cores(const mlsba_platform_t *pl, unsigned char *core) {
  size_t cores = 0;
  for (size_t i = 0; i < pl->ndev; i++) {
    unsigned roles = mlsba__platform_device_roles(pl, i);
    if (roles & MLSBA__ROLE_VIRTUAL)
      return 0;
    core[i] = (roles & MLSBA__ROLE_CORE) != 0;
    cores += core[i];
  }
  return cores;
}

/* The columns split evenly between as many cores as have RHS_PER_CORE
 * of them each, or solved on the calling thread. */
static int run(const char *fn, mlsba_executor_t *ex, mlsba__rhs_t *s,
               int64_t nrhs) {
  const mlsba_platform_t *pl = ex->pl;
  unsigned char *core = calloc(pl->ndev + 1, 1);
  int64_t *units = calloc(pl->ndev + 1, sizeof *units);
  double *t = calloc(pl->ndev + 1, sizeof *t);
  mlsba_load_t *load = NULL;
  int err = core && units && t ? 0
                               : mlsba__fail(MLSBA_ENOMEM, "%s: out of memory",
                                             fn);
  int64_t use = err ? 0 : (int64_t)real_cores(pl, core);
  if (use > nrhs / RHS_PER_CORE)
    use = nrhs / RHS_PER_CORE;
  if (!err && use <= 1) {
    mlsba__rhs_solve(s, 0, nrhs, 1);
  } else if (!err) {
    int64_t given = 0, k = 0;
    for (size_t i = 0; i < pl->ndev && k < use; i++)
      if (core[i]) {
        units[i] = (nrhs - given) / (use - k++);
        given += units[i];
      }
    err = mlsba_load_create(fn, nrhs, &load);
    if (!err)
      err = mlsba_load_set_cpu(load, solve_columns, s);
    if (!err)
      err = mlsba_executor_run(ex, load, units, MLSBA_DRIVE_SHARED, t, NULL);
  }
  mlsba_load_destroy(load);
  free(core);
  free(units);
  free(t);
  return err;
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
    return mlsba__fail(MLSBA_EINVAL, "%s: trans must be 'N', 'T' or 'C', "
                                     "got '%c'",
                       fn, trans);
  if (ipiv == NULL && n > 0)
    return mlsba__fail(MLSBA_EINVAL, "%s: ipiv is NULL", fn);
  /* A pivot out of range would swap a row outside B: refused, as LAPACK
   * would not (it trusts them), because the library never crashes. */
  for (int64_t i = 0; i < n; i++)
    if (ipiv[i] < 1 || ipiv[i] > n)
      return mlsba__fail(MLSBA_EINVAL, "%s: ipiv[%lld] = %lld is outside "
                                       "1..%lld",
                         fn, (long long)i, (long long)ipiv[i], (long long)n);
  *info = 0;
  mlsba__rhs_t s = {.prec = prec, .n = n, .a = a, .lda = lda, .ipiv = ipiv,
                    .trans = t, .b = b, .ldb = ldb};
  return run(fn, ex, &s, nrhs);
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
  mlsba__rhs_t s = {.prec = prec, .n = n, .a = a, .lda = lda, .lower = lower,
                    .b = b, .ldb = ldb};
  return run(fn, ex, &s, nrhs);
}
