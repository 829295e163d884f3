/* The solves with the factors of mlsba_getrf and mlsba_potrf, LAPACK's
 * ?getrs and ?potrs: the arguments checked as LAPACK checks them, then
 * the right-hand sides solved on the platform's cores (rhs.c). Where
 * OpenBLAS's kernels run the products (mlsba__rhs_by_blocks), the
 * columns are split between the cores, each solving its own on its
 * pinned thread of the executor by blocks, its GEMMs on OpenBLAS's
 * kernels: single precision here, n = 2048 and 4096, 64 right-hand
 * sides, 1.33-1.37x one TRSM on BLIS's threads; but not for large
 * factors and few columns a core (by_rows). Elsewhere the rows of B
 * are split (mlsba__rhs_solve_split): each core takes its rows' share of
 * every block of the triangle solved, by one-thread GEMMs, where one
 * TRSM on BLIS's threads (a thread a core) waited at spinning barriers,
 * on a loaded machine a scheduler's time slice at a time. The crew that runs
 * the cores' parts of such a split is rhs.c's. */
#include <limits.h>
#include <stdlib.h>

#include "../core/error.h"
#include "../core/even.h"
#include "../platform/platform.h"
#include "../runtime/executor.h"
#include "factor.h"
#include "rhs.h"

int mlsba__rhs_check(const char *fn, const mlsba_executor_t *ex,
                     mlsba_precision_t prec, int64_t n, int64_t nrhs,
                     const void *a, int64_t lda, const void *b, int64_t ldb,
                     const int64_t *info) {
  int err = mlsba__factor_check_call(fn, ex, prec);
  if (err)
    return err;
  if ((err = mlsba__factor_check_count(fn, "n", n)))
    return err;
  if ((err = mlsba__factor_check_count(fn, "nrhs", nrhs)))
    return err;
  if ((err = mlsba__factor_check_ld(fn, "lda", lda, n)))
    return err;
  if ((err = mlsba__factor_check_ld(fn, "ldb", ldb, n)))
    return err;
  if (a == NULL && n > 0)
    return mlsba__fail(MLSBA_EINVAL, "%s: the matrix a is NULL", fn);
  if (b == NULL && n > 0 && nrhs > 0)
    return mlsba__fail(MLSBA_EINVAL, "%s: the right-hand sides b are NULL", fn);
  if (info == NULL)
    return mlsba__fail(MLSBA_EINVAL, "%s: info is NULL", fn);
  return 0;
}

unsigned mlsba__solve_threads(const mlsba_executor_t *ex) {
  size_t cores = mlsba__rhs_real_cores(ex);
  return cores > 0 ? (unsigned)cores : 1;
}

static int solve_columns(void *user, int64_t first, int64_t count) {
  mlsba__rhs_solve(user, first, count, 1);
  return 0;
}

/* The columns split evenly between the cores, each on its own pinned
 * thread; nonzero when the run could not start (B as it was). */
static int split_columns(mlsba_executor_t *ex, const char *load_name,
                         const mlsba__rhs_t *s, int64_t nrhs, size_t cores) {
  size_t p = ex->pl->ndev;
  int64_t *units = calloc(p, sizeof *units);
  double *time = calloc(p, sizeof *time);
  mlsba_load_t *load = NULL;
  int err = units && time ? 0 : MLSBA_ENOMEM;
  for (size_t i = 0, k = 0; !err && i < p; i++) {
    int core =
        (mlsba__platform_device_roles(ex->pl, i) & MLSBA__ROLE_CORE) != 0;
    units[i] = core ? mlsba__even_share(nrhs, (int64_t)cores, (int64_t)k) : 0;
    k += (size_t)core;
  }
  if (!err)
    err = mlsba_load_create(load_name, nrhs, &load);
  if (!err)
    err = mlsba_load_set_cpu(load, solve_columns, (void *)s);
  if (!err)
    err = mlsba_executor_run(ex, load, units, MLSBA_DRIVE_SHARED, time, NULL);
  mlsba_load_destroy(load);
  free(units);
  free(time);
  return err;
}

/* Split by columns, each core packs the whole triangle for its own few
 * columns and reads every byte of the factors; split by rows (block by
 * block of the triangles), each packs only its rows, used for all the
 * columns, at the price of a run of the cores a block. Where the factors
 * are large and each core's columns few, the rows pay: double, 64
 * right-hand sides on this machine's two cores (32 a core), mlsba_getrs
 * and mlsba_potrs against OpenBLAS's on both cores, medians of 9
 * interleaved rounds (BUSY, load 12-14): n = 4096 (the factors 128 MiB),
 * by columns 1.01-1.02x and 1.05-1.10x, by rows 1.12-1.26x and
 * 1.27-1.41x; n = 2048 (32 MiB) 1.05 / 1.17x against 0.94 / 1.17x; single
 * at n = 4096 (64 MiB) 1.15 / 0.88x against 1.04 / 0.94x: mixed, the
 * columns kept there. A core's share of the solve by columns, one thread,
 * 4096 x 32 in double: 26 GFLOPS of its CPU time, against 35 for the
 * whole 4096 x 64 (the narrower GEMMs pay the same packing for half the
 * flops). More columns a core than NARROW_COLUMNS were not measured: the
 * columns stay theirs. These figures are of the first rows split, each
 * part's rows fixed for the whole solve; the split anew at every block
 * (rhs.c) shortened its critical path at n = 4096 from 55.8 to 43.3 ms of
 * the cores' CPU time (benchmarks/RESULTS.md, solve35c). */
#define ROWS_FROM_BYTES (96.0 * 1024 * 1024)
enum { NARROW_COLUMNS = 64 };

static int by_rows(const mlsba__rhs_t *s, int64_t nrhs, size_t cores) {
  double es = s->prec == MLSBA_PRECISION_DOUBLE ? 8 : 4;
  return (double)s->n * (double)s->n * es >= ROWS_FROM_BYTES &&
         nrhs < NARROW_COLUMNS * (int64_t)cores;
}

/* The columns of B solved: split between the cores where they solve by
 * blocks (unless by_rows), else B's rows split between them block by
 * block of the triangles (mlsba__rhs_solve_split). A split of the
 * columns that cannot start is solved that way too. */
static void solve(mlsba_executor_t *ex, const char *load_name,
                  const mlsba__rhs_t *s, int64_t nrhs) {
  size_t cores = mlsba__rhs_real_cores(ex);
  if (cores >= 2 && nrhs >= 2 && mlsba__rhs_by_blocks(s->prec) &&
      !by_rows(s, nrhs, cores) &&
      split_columns(ex, load_name, s, nrhs, cores) == 0)
    return;
  mlsba__rhs_solve_split(ex, s, nrhs);
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
  solve(ex, "getrs-rhs", &s, nrhs);
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
  solve(ex, "potrs-rhs", &s, nrhs);
  return 0;
}
