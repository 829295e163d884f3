/* Cholesky across ranks (mlsba_mpi_potrf, lower), right-looking, one block
 * column a step:
 *  1. the panel (rows k0..n of the step's columns) gathered from its node
 *     column onto the owner of the diagonal block, which factorizes the
 *     diagonal block (LAPACK's ?potrf) and solves the rows below with it;
 *  2. info, then the factored panel, broadcast to every rank (each needs
 *     L's rows of its own block rows and of its own block columns);
 *  3. each rank's lower-triangle blocks of the trailing matrix updated:
 *     per block column one GEMMT on its diagonal block (the lower triangle
 *     only) and one GEMM below, on the cores' kernels.
 * No pivoting; the blocks above the diagonal and the upper triangle of the
 * diagonal blocks are never read or written. A minor that is not positive
 * definite stops every rank at the same step with LAPACK's info. */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../devices/kernels.h"
#include "factor.h"

/* LAPACK (Fortran; the hidden length of uplo last). */
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda,
             int *info, size_t uplo_len);
void spotrf_(const char *uplo, const int *n, float *a, const int *lda,
             int *info, size_t uplo_len);

/* Step 1 on the root: the panel's L, or the failing minor in info. */
static int factor_panel(const mlsba__mpi_dfac_t *f, int64_t k0, int64_t p) {
  int n = (int)p, ld = (int)(f->m - k0), info = 0;
  if (f->prec == MLSBA_PRECISION_DOUBLE)
    dpotrf_("L", &n, f->panel, &ld, &info, 1);
  else
    spotrf_("L", &n, f->panel, &ld, &info, 1);
  int64_t below = f->m - k0 - p;
  if (info == 0 && below > 0)
    mlsba__cpu_trsm(f->prec, 'R', 'L', 'T', 'N', below, p, 1.0, f->panel, ld,
                    (char *)f->panel + (size_t)p * f->es, ld, 1);
  return info;
}

/* Step 3 on this rank: each of its block columns right of the panel,
 * from its diagonal down. l holds this rank's rows of L from k0 + p on. */
static void update(const mlsba__mpi_dfac_t *f, int64_t k0, int64_t p,
                   const char *l) {
  int64_t count, ldp = f->m - k0;
  const int64_t *cols =
      mlsba__layout_rank_cols(f->layout, (size_t)f->me, &count);
  int64_t lr0 = mlsba__mpi_dfac_rows_before(f, (size_t)f->me, k0 + p);
  int64_t ml = f->lrows - lr0; /* l's rows (its leading dimension) */
  for (int64_t i = 0; i < count; i++) {
    int64_t j0 = cols[i] * f->nb;
    if (j0 < k0 + p)
      continue;
    int64_t w = f->n - j0 < f->nb ? f->n - j0 : f->nb;
    int64_t lc = mlsba__mpi_dfac_cols_before(f, (size_t)f->me, j0);
    int64_t lr = mlsba__mpi_dfac_rows_before(f, (size_t)f->me, j0);
    int64_t rows = f->lrows - lr;
    if (rows <= 0)
      continue;
    /* L's rows of this block column: panel rows j0 .. j0 + w. */
    const char *lj = (const char *)f->panel + (size_t)(j0 - k0) * f->es;
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
  char *l = malloc((size_t)f.lrows * (size_t)f.nb * f.es + 1);
  err = l ? 0
          : mlsba__fail(MLSBA_ENOMEM, "mlsba_mpi_potrf: out of memory for "
                                      "this rank's rows of L");
  if ((err = mlsba__mpi_agree(f.comm, err)) != 0) {
    free(l);
    mlsba__mpi_dfac_close(&f);
    return err;
  }
  *info = 0;
  for (int64_t k0 = 0; k0 < f.n; k0 += f.nb) {
    int64_t p = f.n - k0 < f.nb ? f.n - k0 : f.nb, k = k0 / f.nb;
    size_t c = mlsba__layout_bcol_column(f.layout, k);
    int root = (int)mlsba__layout_row_owner(f.layout, c, k), bad = 0;
    mlsba__mpi_dfac_gather_panel(&f, k0, p);
    if (f.me == root)
      bad = factor_panel(&f, k0, p);
    MPI_Bcast(&bad, 1, MPI_INT, root, f.comm);
    if (bad) {
      *info = k0 + bad;
      break;
    }
    MPI_Bcast(f.panel, (int)((f.m - k0) * p), f.type, root, f.comm);
    mlsba__mpi_dfac_put_panel(&f, k0, p, f.panel);
    mlsba__mpi_dfac_my_panel_rows(&f, k0, p, f.panel, k0 + p, l);
    update(&f, k0, p, l);
  }
  free(l);
  mlsba__mpi_dfac_close(&f);
  return 0;
}
