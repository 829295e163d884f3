/* Cholesky across ranks (mlsba_mpi_potrf, lower), right-looking, one block
 * column a step:
 *  1. the panel (rows k0..n of the step's columns) gathered from its node
 *     column onto the owner of the diagonal block, which factorizes the
 *     diagonal block (LAPACK's ?potrf) and solves the rows below with it;
 *  2. info, then the factored panel, broadcast to every rank (each needs
 *     L's rows of its own block rows and of its own block columns);
 *  3. each rank's lower-triangle blocks of the trailing matrix updated:
 *     per block column a GEMMT on its diagonal block (the lower triangle
 *     only) and a GEMM below, on the cores' kernels, the columns split
 *     between the node's devices (factor_update.c).
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

/* Step 3 on this rank's trailing local columns (those right of the
 * panel, [lc0, lcols)): l holds its rows of L from k0 + p on. */
typedef struct {
  const mlsba__mpi_dfac_t *f;
  int64_t k0, p, lc0, lr0;
  const char *l;
  const int64_t *cols; /* the rank's block columns */
} chol_step_t;

/* Where local column lc lies: its block column's first global column j0,
 * first local column lcb and width w, the local row of j0, and whether
 * this rank holds the diagonal block (every block but a rank's last is
 * nb wide, so lc / nb is the block). */
typedef struct {
  int64_t j0, lcb, w, lr;
  int diag;
} place_t;

static place_t place(const chol_step_t *s, int64_t lc) {
  const mlsba__mpi_dfac_t *f = s->f;
  int64_t i = lc / f->nb;
  place_t at = {.j0 = s->cols[i] * f->nb, .lcb = i * f->nb};
  at.w = f->n - at.j0 < f->nb ? f->n - at.j0 : f->nb;
  at.lr = mlsba__mpi_dfac_rows_before(f, (size_t)f->me, at.j0);
  at.diag =
      mlsba__layout_row_owner(f->layout, f->mycol, s->cols[i]) == (size_t)f->me;
  return at;
}

/* Column c's flops: its rows from the diagonal down, times 2 p. */
static double column_flops(const void *user, int64_t c) {
  const chol_step_t *s = user;
  place_t at = place(s, s->lc0 + c);
  int64_t rows = s->f->lrows - at.lr - (at.diag ? s->lc0 + c - at.lcb : 0);
  return 2.0 * (double)s->p * (double)(rows > 0 ? rows : 0);
}

/* Columns [c0, c1) from lc0: per block column's piece [a, b), a GEMMT on
 * the diagonal block's [a, b) square (its lower half) and a GEMM below
 * it, or a GEMM on every row when the diagonal block is another rank's. */
static void update_columns(const void *user, int64_t c0, int64_t c1) {
  const chol_step_t *s = user;
  const mlsba__mpi_dfac_t *f = s->f;
  int64_t ldp = f->m - s->k0, ml = f->lrows - s->lr0, end = s->lc0 + c1;
  for (int64_t lc = s->lc0 + c0; lc < end;) {
    place_t at = place(s, lc);
    int64_t a = lc - at.lcb;
    int64_t b = (at.lcb + at.w < end ? at.lcb + at.w : end) - at.lcb;
    int64_t rows = f->lrows - at.lr, top = at.diag ? b : 0;
    /* L's rows of these columns (panel rows j0 + a ..), and of ours. */
    const char *lj =
        (const char *)f->panel + (size_t)(at.j0 - s->k0 + a) * f->es;
    const char *li = s->l + (size_t)(at.lr - s->lr0) * f->es;
    if (at.diag && rows > a)
      mlsba__cpu_gemmt(f->prec, 'L', 'N', 'T', b - a, s->p, -1.0,
                       li + (size_t)a * f->es, ml, lj, ldp, 1.0,
                       mlsba__mpi_dfac_at(f, at.lr + a, lc), f->lda, 1);
    if (rows > top)
      mlsba__cpu_gemm(f->prec, 'N', 'T', rows - top, b - a, s->p, -1.0,
                      li + (size_t)top * f->es, ml, lj, ldp, 1.0,
                      mlsba__mpi_dfac_at(f, at.lr + top, lc), f->lda, 1);
    lc = at.lcb + b;
  }
}

/* Step 3 on this rank: each of its block columns right of the panel,
 * from its diagonal down, split between the node's devices. l holds
 * this rank's rows of L from k0 + p on. */
static void update(const mlsba__mpi_dfac_t *f, int64_t k0, int64_t p,
                   const char *l) {
  int64_t count;
  chol_step_t s = {.f = f, .k0 = k0, .p = p, .l = l};
  s.cols = mlsba__layout_rank_cols(f->layout, (size_t)f->me, &count);
  s.lc0 = mlsba__mpi_dfac_cols_before(f, (size_t)f->me, k0 + p);
  s.lr0 = mlsba__mpi_dfac_rows_before(f, (size_t)f->me, k0 + p);
  mlsba__mpi_dfac_work_t work = {.cols = f->lcols - s.lc0,
                                 .column_flops = column_flops,
                                 .run = update_columns,
                                 .user = &s};
  if (f->lrows > s.lr0)
    mlsba__mpi_dfac_update(f, &work);
}

int mlsba_mpi_potrf(const mlsba_mpi_matrix_t *desc, mlsba_precision_t prec,
                    char uplo, void *a, int64_t *info) {
  return mlsba_mpi_potrf_ex(desc, prec, uplo, a, info, NULL, NULL);
}

int mlsba_mpi_potrf_ex(const mlsba_mpi_matrix_t *desc, mlsba_precision_t prec,
                       char uplo, void *a, int64_t *info,
                       const mlsba_mpi_factor_opts_t *opts,
                       mlsba_mpi_factor_report_t *report) {
  int64_t m = 0, n = 0;
  int err = 0;
  if (report)
    memset(report, 0, sizeof *report);
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
  if ((err = mlsba__mpi_agree(f.comm, err)) != 0 ||
      (err = mlsba__mpi_dfac_node_open(&f, opts, "mlsba_mpi_potrf")) != 0) {
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
  mlsba__mpi_dfac_node_close(&f, report);
  free(l);
  mlsba__mpi_dfac_close(&f);
  return 0;
}
