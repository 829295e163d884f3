/* Solves with the distributed factors (mlsba_mpi_getrs, mlsba_mpi_potrs):
 * B is small (n x nrhs) and the same on every rank, so each triangular
 * solve walks the block rows in order: every rank sums the products of
 * its own blocks of that block row with the parts of X already known,
 * the sums meet on the owner of the diagonal block (a reduction), which
 * solves with that block and broadcasts the block of X to every rank.
 * Two collectives of nb x nrhs a block row; the flops are the ranks'
 * blocks, each computed once. */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../devices/kernels.h"
#include "factor.h"

/* One triangular solve T X = B over the block rows, T's blocks those of
 * the factors: 'L' forward with L (diag 'U' for LU's, 'N' for
 * Cholesky's), 'U' backward with LU's U, 'T' backward with L^T. */
typedef struct {
  const mlsba__mpi_dfac_t *f;
  char which, diag;
  int64_t nrhs, ldb;
  char *b;     /* the caller's: X replaces it block by block */
  char *xc;    /* X at this rank's local columns: lcols x nrhs */
  char *xr;    /* X at this rank's local rows: lrows x nrhs */
  char *sum;   /* nb x nrhs: this rank's part of a block row's sum */
  char *total; /* nb x nrhs: the sum on the root */
} solve_t;

/* This rank's part of block row k's sum: its blocks (k, j) with j before
 * (forward) or after (backward) k, times those blocks of X; for 'T' the
 * blocks (j, k) of L below k, transposed. Returns whether it had any. */
static int partial(const solve_t *s, int64_t k0, int64_t w) {
  const mlsba__mpi_dfac_t *f = s->f;
  size_t me = (size_t)f->me;
  int64_t k = k0 / f->nb;
  if (s->which == 'T') { /* column k's rows below the diagonal block */
    if (mlsba__layout_bcol_column(f->layout, k) != f->mycol)
      return 0;
    int64_t lr = mlsba__mpi_dfac_rows_before(f, me, k0 + w);
    int64_t lc = mlsba__mpi_dfac_cols_before(f, me, k0);
    if (f->lrows - lr <= 0)
      return 0;
    mlsba__cpu_gemm(f->prec, 'T', 'N', w, s->nrhs, f->lrows - lr, 1.0,
                    mlsba__mpi_dfac_at(f, lr, lc), f->lda,
                    s->xr + (size_t)lr * f->es, f->lrows, 0.0, s->sum, w, 1);
    return 1;
  }
  if (mlsba__layout_row_owner(f->layout, f->mycol, k) != me)
    return 0;
  int64_t lr = mlsba__mpi_dfac_rows_before(f, me, k0);
  int64_t lc0 = 0, lc1 = mlsba__mpi_dfac_cols_before(f, me, k0);
  if (s->which == 'U') {
    lc0 = mlsba__mpi_dfac_cols_before(f, me, k0 + w);
    lc1 = f->lcols;
  }
  if (lc1 - lc0 <= 0)
    return 0;
  mlsba__cpu_gemm(f->prec, 'N', 'N', w, s->nrhs, lc1 - lc0, 1.0,
                  mlsba__mpi_dfac_at(f, lr, lc0), f->lda,
                  s->xc + (size_t)lc0 * f->es, f->lcols, 0.0, s->sum, w, 1);
  return 1;
}

/* X's block k (in b) into this rank's copies at its columns and rows. */
static void keep(const solve_t *s, int64_t k0, int64_t w) {
  const mlsba__mpi_dfac_t *f = s->f;
  size_t me = (size_t)f->me;
  int64_t k = k0 / f->nb;
  for (int64_t j = 0; j < s->nrhs; j++) {
    const char *x = s->b + (size_t)(j * s->ldb + k0) * f->es;
    if (mlsba__layout_bcol_column(f->layout, k) == f->mycol) {
      int64_t lc = mlsba__mpi_dfac_cols_before(f, me, k0);
      memcpy(s->xc + (size_t)(j * f->lcols + lc) * f->es, x, (size_t)w * f->es);
    }
    if (mlsba__layout_row_owner(f->layout, f->mycol, k) == me) {
      int64_t lr = mlsba__mpi_dfac_rows_before(f, me, k0);
      memcpy(s->xr + (size_t)(j * f->lrows + lr) * f->es, x, (size_t)w * f->es);
    }
  }
}

static void subtract(const mlsba__mpi_dfac_t *f, int64_t w, int64_t nrhs,
                     const char *total, char *b, int64_t ldb) {
  for (int64_t j = 0; j < nrhs; j++)
    for (int64_t i = 0; i < w; i++) {
      size_t at = (size_t)(j * ldb + i), t = (size_t)(j * w + i);
      if (f->prec == MLSBA_PRECISION_DOUBLE)
        ((double *)b)[at] -= ((const double *)total)[t];
      else
        ((float *)b)[at] -= ((const float *)total)[t];
    }
}

static void solve(const solve_t *s) {
  const mlsba__mpi_dfac_t *f = s->f;
  int64_t blocks = (f->n + f->nb - 1) / f->nb;
  int forward = s->which == 'L';
  for (int64_t i = 0; i < blocks; i++) {
    int64_t k = forward ? i : blocks - 1 - i, k0 = k * f->nb;
    int64_t w = f->n - k0 < f->nb ? f->n - k0 : f->nb;
    size_t c = mlsba__layout_bcol_column(f->layout, k);
    int root = (int)mlsba__layout_row_owner(f->layout, c, k);
    size_t bytes = (size_t)(w * s->nrhs) * f->es;
    if (!partial(s, k0, w))
      memset(s->sum, 0, bytes);
    MPI_Reduce(s->sum, s->total, (int)(w * s->nrhs), f->type, MPI_SUM, root,
               f->comm);
    char *bk = s->b + (size_t)k0 * f->es;
    if (f->me == root) {
      subtract(f, w, s->nrhs, s->total, bk, s->ldb);
      int64_t lr = mlsba__mpi_dfac_rows_before(f, (size_t)f->me, k0);
      int64_t lc = mlsba__mpi_dfac_cols_before(f, (size_t)f->me, k0);
      char uplo = s->which == 'U' ? 'U' : 'L';
      mlsba__cpu_trsm(f->prec, 'L', uplo, s->which == 'T' ? 'T' : 'N', s->diag,
                      w, s->nrhs, 1.0, mlsba__mpi_dfac_at(f, lr, lc), f->lda,
                      bk, s->ldb, 1);
      for (int64_t j = 0; j < s->nrhs; j++) /* contiguous to broadcast */
        memcpy(s->total + (size_t)(j * w) * f->es,
               bk + (size_t)(j * s->ldb) * f->es, (size_t)w * f->es);
    }
    MPI_Bcast(s->total, (int)(w * s->nrhs), f->type, root, f->comm);
    for (int64_t j = 0; j < s->nrhs; j++)
      memcpy(bk + (size_t)(j * s->ldb) * f->es,
             s->total + (size_t)(j * w) * f->es, (size_t)w * f->es);
    keep(s, k0, w);
  }
}

/* Row interchanges of LU on B, as LAPACK's ?laswp forward. */
static void swap_rows(const mlsba__mpi_dfac_t *f, const int64_t *ipiv,
                      int64_t nrhs, char *b, int64_t ldb) {
  char tmp[sizeof(double)];
  for (int64_t i = 0; i < f->n; i++) {
    int64_t r = ipiv[i] - 1;
    if (r == i)
      continue;
    for (int64_t j = 0; j < nrhs; j++) {
      char *x = b + (size_t)(j * ldb + i) * f->es,
           *y = b + (size_t)(j * ldb + r) * f->es;
      memcpy(tmp, x, f->es);
      memcpy(x, y, f->es);
      memcpy(y, tmp, f->es);
    }
  }
}

/* Both solves: checks, buffers, then the triangular solves in order. */
static int run(const mlsba_mpi_matrix_t *desc, mlsba_precision_t prec,
               const void *a, const int64_t *ipiv, int64_t nrhs, void *b,
               int64_t ldb, int err, const char *call, const char *order,
               char first_diag) {
  int64_t m = 0, n = 0;
  if (desc)
    mlsba_mpi_matrix_size(desc, &m, &n, NULL, NULL);
  if (!err && m != n)
    err = mlsba__fail(MLSBA_EINVAL,
                      "%s: the matrix is %lld x %lld, not "
                      "square",
                      call, (long long)m, (long long)n);
  if (!err && nrhs < 0)
    err = mlsba__fail(MLSBA_EINVAL, "%s: nrhs %lld is negative", call,
                      (long long)nrhs);
  if (!err && nrhs > 0 && (b == NULL || ldb < (n > 1 ? n : 1)))
    err = mlsba__fail(MLSBA_EINVAL, "%s: %s", call,
                      b == NULL ? "b is NULL" : "ldb is below n");
  if (!err && (double)nrhs * (double)(n < 128 ? n : 128) > 2147483647.0)
    err = mlsba__fail(MLSBA_EINVAL, "%s: nrhs %lld is too large", call,
                      (long long)nrhs);
  mlsba__mpi_dfac_t f;
  if ((err = mlsba__mpi_dfac_open(desc, prec, a, err, 0, call, &f)) != 0)
    return err;
  solve_t s = {.f = &f, .nrhs = nrhs, .ldb = ldb, .b = b};
  size_t es = f.es, r = (size_t)(nrhs ? nrhs : 1);
  s.xc = malloc((size_t)f.lcols * r * es + 1);
  s.xr = malloc((size_t)f.lrows * r * es + 1);
  s.sum = malloc((size_t)f.nb * r * es);
  s.total = malloc((size_t)f.nb * r * es);
  err = s.xc && s.xr && s.sum && s.total
            ? 0
            : mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", call);
  if ((err = mlsba__mpi_agree(f.comm, err)) == 0 && nrhs > 0) {
    if (ipiv)
      swap_rows(&f, ipiv, nrhs, b, ldb);
    for (int i = 0; order[i]; i++) {
      s.which = order[i];
      s.diag = i == 0 ? first_diag : 'N';
      solve(&s);
    }
  }
  free(s.xc);
  free(s.xr);
  free(s.sum);
  free(s.total);
  mlsba__mpi_dfac_close(&f);
  return err;
}

int mlsba_mpi_getrs(const mlsba_mpi_matrix_t *desc, mlsba_precision_t prec,
                    const void *lu, const int64_t *ipiv, int64_t nrhs, void *b,
                    int64_t ldb) {
  int err = ipiv == NULL ? mlsba__fail(MLSBA_EINVAL, "mlsba_mpi_getrs: ipiv "
                                                     "is NULL")
                         : 0;
  /* L (unit diagonal) forward, then U backward. */
  return run(desc, prec, lu, ipiv, nrhs, b, ldb, err, "mlsba_mpi_getrs", "LU",
             'U');
}

int mlsba_mpi_potrs(const mlsba_mpi_matrix_t *desc, mlsba_precision_t prec,
                    char uplo, const void *l, int64_t nrhs, void *b,
                    int64_t ldb) {
  int err = uplo != 'L' && uplo != 'l'
                ? mlsba__fail(MLSBA_EINVAL,
                              "mlsba_mpi_potrs: uplo '%c': only "
                              "'L' is taken",
                              uplo > 32 && uplo < 127 ? uplo : '?')
                : 0;
  /* L forward, then L^T backward. */
  return run(desc, prec, l, NULL, nrhs, b, ldb, err, "mlsba_mpi_potrs", "LT",
             'N');
}
