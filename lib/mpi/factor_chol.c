/* Cholesky across ranks (mlsba_mpi_potrf, lower), right-looking, one block
 * column a step, with a lookahead of one step:
 *  1. the panel (rows k0..n of the step's columns) factorized by its node
 *     column: the diagonal block by its owner (LAPACK's ?potrf), its L11
 *     and info broadcast down the node column, and each rank of it solving
 *     its own rows below with L11, in place;
 *  2. the factored panel gathered onto the owner of the diagonal block and
 *     broadcast, with info, to every rank (each needs L's rows of its own
 *     block rows and of its own block columns), nonblocking;
 *  3. each rank's lower-triangle blocks of the trailing matrix updated:
 *     per block column one GEMMT on its diagonal block (the lower triangle
 *     only) and one GEMM below, on the cores' kernels (update()).
 * The lookahead: the node column of the next panel updates that block
 * column first, factors it and starts its broadcast, then updates the
 * rest; every other rank updates all of its blocks meanwhile.
 * No pivoting; the blocks above the diagonal and the upper triangle of the
 * diagonal blocks are never read or written. A minor that is not positive
 * definite stops every rank at the same step with LAPACK's info. */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../devices/kernels.h"
#include "factor.h"

/* The local row of global row g on this rank (which holds it). */
static int64_t local_row(const mlsba__mpi_dfac_t *f, int64_t g) {
  return mlsba__mpi_dfac_rows_before(f, (size_t)f->me, g);
}

/* LAPACK (Fortran; the hidden length of uplo last). */
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda,
             int *info, size_t uplo_len);
void spotrf_(const char *uplo, const int *n, float *a, const int *lda,
             int *info, size_t uplo_len);

/* Step 1 of panel k (p columns) on a rank of its node column: returns
 * LAPACK's info of the diagonal block (0: the panel is L). l11: p x p. */
static int factor_panel(const mlsba__mpi_dfac_t *f, int64_t k0, int64_t p,
                        char *l11) {
  size_t root = mlsba__layout_row_owner(f->layout, f->mycol, k0 / f->nb),
         es = f->es;
  int64_t lc = mlsba__mpi_dfac_cols_before(f, (size_t)f->me, k0);
  int info = 0;
  if (root == (size_t)f->me) {
    char *d = mlsba__mpi_dfac_at(f, local_row(f, k0), lc);
    int n = (int)p, ld = (int)f->lda;
    if (f->prec == MLSBA_PRECISION_DOUBLE)
      dpotrf_("L", &n, (double *)(void *)d, &ld, &info, 1);
    else
      spotrf_("L", &n, (float *)(void *)d, &ld, &info, 1);
    for (int64_t j = 0; j < p; j++)
      memcpy(l11 + (size_t)(j * p) * es, d + (size_t)(j * f->lda) * es,
             (size_t)p * es);
  }
  int cq, at = mlsba__mpi_dfac_col_rank(f, root);
  MPI_Comm_size(f->col, &cq);
  if (cq > 1) {
    MPI_Bcast(&info, 1, MPI_INT, at, f->col);
    if (info == 0)
      MPI_Bcast(l11, (int)(p * p), f->type, at, f->col);
  }
  int64_t lr = mlsba__mpi_dfac_rows_before(f, (size_t)f->me, k0 + p);
  if (info == 0 && f->lrows > lr)
    mlsba__cpu_trsm(f->prec, 'R', 'L', 'T', 'N', f->lrows - lr, p, 1.0, l11, p,
                    mlsba__mpi_dfac_at(f, lr, lc), f->lda, 1);
  return info;
}

/* Step 3 on this rank: its block columns [b0, b1) right of the panel,
 * each from its diagonal down, with the step's panel (leading dimension
 * n - k0) and l, this rank's rows of L from k0 + p on (leading dimension
 * their count). Purely local; called once per step on the next panel's
 * block column and once on the rest (or once on all). */
static void update(const mlsba__mpi_dfac_t *f, const char *panel, int64_t k0,
                   int64_t p, const char *l, int64_t b0, int64_t b1) {
  int64_t count, ldp = f->m - k0;
  const int64_t *cols =
      mlsba__layout_rank_cols(f->layout, (size_t)f->me, &count);
  int64_t lr0 = mlsba__mpi_dfac_rows_before(f, (size_t)f->me, k0 + p);
  int64_t ml = f->lrows - lr0; /* l's rows (its leading dimension) */
  for (int64_t i = 0; i < count; i++) {
    int64_t j0 = cols[i] * f->nb;
    if (j0 < k0 + p || cols[i] < b0 || cols[i] >= b1)
      continue;
    int64_t w = f->n - j0 < f->nb ? f->n - j0 : f->nb;
    int64_t lc = mlsba__mpi_dfac_cols_before(f, (size_t)f->me, j0);
    int64_t lr = mlsba__mpi_dfac_rows_before(f, (size_t)f->me, j0);
    int64_t rows = f->lrows - lr;
    if (rows <= 0)
      continue;
    /* L's rows of this block column: panel rows j0 .. j0 + w. */
    const char *lj = panel + (size_t)(j0 - k0) * f->es;
    const char *li = l + (size_t)(lr - lr0) * f->es;
    size_t owner = mlsba__layout_row_owner(f->layout, f->mycol, cols[i]);
    if (owner == (size_t)f->me) { /* the diagonal block: its lower half */
      mlsba__cpu_gemmt(f->prec, 'L', 'N', 'T', w, p, -1.0, li, ml, lj, ldp, 1.0,
                       mlsba__mpi_dfac_at(f, lr, lc), f->lda, 1);
      lr += w;
      li += (size_t)w * f->es;
      rows -= w;
    }
    if (rows > 0)
      mlsba__cpu_gemm(f->prec, 'N', 'T', rows, w, p, -1.0, li, ml, lj, ldp, 1.0,
                      mlsba__mpi_dfac_at(f, lr, lc), f->lda, 1);
  }
}

/* Steps 1 and 2 of panel k1 (p1 columns): factored by its node column,
 * gathered onto its root into panel, and its broadcast with the info in
 * *bad started on every rank (req[2]); every rank calls it once a step,
 * in order. */
static void start_panel(const mlsba__mpi_dfac_t *f, int64_t k1, int64_t p1,
                        char *l11, void *panel, int *bad, MPI_Request *req) {
  size_t c = mlsba__layout_bcol_column(f->layout, k1 / f->nb);
  int root = (int)mlsba__layout_row_owner(f->layout, c, k1 / f->nb);
  *bad = 0;
  if (c == f->mycol && (*bad = factor_panel(f, k1, p1, l11)) == 0)
    mlsba__mpi_dfac_gather_panel(f, k1, p1, panel);
  MPI_Ibcast(bad, 1, MPI_INT, root, f->comm, &req[0]);
  MPI_Ibcast(panel, (int)((f->m - k1) * p1), f->type, root, f->comm, &req[1]);
}

int mlsba_mpi_potrf(const mlsba_mpi_matrix_t *desc, mlsba_precision_t prec,
                    char uplo, void *a, int64_t *info) {
  int64_t m = 0, n = 0;
  int err = 0;
  if (desc)
    mlsba_mpi_matrix_size(desc, &m, &n, NULL, NULL);
  if (info == NULL)
    err = mlsba__fail(MLSBA_EINVAL, "mlsba_mpi_potrf: info is NULL");
  else if (uplo != 'L' && uplo != 'l')
    err = mlsba__fail(MLSBA_EINVAL,
                      "mlsba_mpi_potrf: uplo '%c': only 'L' "
                      "(the lower triangle) is taken",
                      uplo > 32 && uplo < 127 ? uplo : '?');
  else if (m != n)
    err = mlsba__fail(MLSBA_EINVAL,
                      "mlsba_mpi_potrf: the matrix is %lld x "
                      "%lld, not square",
                      (long long)m, (long long)n);
  mlsba__mpi_dfac_t f;
  if ((err = mlsba__mpi_dfac_open(desc, prec, a, err, 1, "mlsba_mpi_potrf",
                                  &f)) != 0)
    return err;
  size_t nb = (size_t)f.nb;
  char *l = malloc((size_t)f.lrows * nb * f.es + 1);
  char *l11 = malloc(nb * nb * f.es);
  char *other =
      malloc((size_t)f.m * (nb < (size_t)f.n ? nb : (size_t)f.n) * f.es);
  err = l && l11 && other
            ? 0
            : mlsba__fail(MLSBA_ENOMEM, "mlsba_mpi_potrf: out of memory for "
                                        "this rank's rows of L");
  if ((err = mlsba__mpi_agree(f.comm, err)) != 0) {
    free(l);
    free(l11);
    free(other);
    mlsba__mpi_dfac_close(&f);
    return err;
  }
  *info = 0;
  char *cur = f.panel, *nxt = other;
  int bad[2] = {0, 0}, now = 0;
  MPI_Request req[2];
  start_panel(&f, 0, f.n < f.nb ? f.n : f.nb, l11, nxt, &bad[0], req);
  for (int64_t k0 = 0; k0 < f.n; k0 += f.nb) {
    int64_t p = f.n - k0 < f.nb ? f.n - k0 : f.nb, k = k0 / f.nb;
    char *x = cur;
    cur = nxt;
    nxt = x;
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    if (bad[now]) {
      *info = k0 + bad[now];
      break;
    }
    int64_t k1 = k0 + p, p1 = f.n - k1 < f.nb ? f.n - k1 : f.nb;
    mlsba__mpi_dfac_my_panel_rows(&f, k0, p, cur, k1, l);
    /* The next panel's block column first where this rank holds it. */
    int ahead =
        k1 < f.n && mlsba__layout_bcol_column(f.layout, k + 1) == f.mycol;
    if (ahead)
      update(&f, cur, k0, p, l, k + 1, k + 2);
    if (k1 < f.n)
      start_panel(&f, k1, p1, l11, nxt, &bad[1 - now], req);
    update(&f, cur, k0, p, l, ahead ? k + 2 : k + 1, INT64_MAX);
    now = 1 - now;
  }
  free(l);
  free(l11);
  free(other);
  mlsba__mpi_dfac_close(&f);
  return 0;
}
