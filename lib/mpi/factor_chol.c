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
 *     only) and one GEMM below, on the cores' kernels, the columns split
 *     between the node's devices (update(), factor_update.c).
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
  /* Each operation's flops charged to a simulated node's clock; none
   * computed when the run skips the numbers (info 0 then). */
  if (root == (size_t)f->me)
    mlsba__mpi_dfac_charge(f, (double)(p * p) * (double)p / 3, (double)p);
  if (root == (size_t)f->me && !f->skip) {
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
    mlsba__mpi_dfac_charge(f, (double)(f->lrows - lr) * (double)(p * p),
                           (double)(f->lrows - lr));
  if (info == 0 && f->lrows > lr && !f->skip)
    mlsba__cpu_trsm(f->prec, 'R', 'L', 'T', 'N', f->lrows - lr, p, 1.0, l11, p,
                    mlsba__mpi_dfac_at(f, lr, lc), f->lda, 1);
  return info;
}

/* Step 3 on this rank's trailing local columns (those right of the
 * panel, [lc0, lcols)): l holds its rows of L from k0 + p on. */
typedef struct {
  const mlsba__mpi_dfac_t *f;
  int64_t k0, p, lc0, lr0;
  const char *panel, *l; /* the step's panel (leading dimension n - k0) */
  const int64_t *cols;   /* the rank's block columns */
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
    const char *lj = s->panel + (size_t)(at.j0 - s->k0 + a) * f->es;
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

/* Step 3 on this rank: its block columns [b0, b1) right of the panel,
 * each from its diagonal down, split between the node's devices, with
 * the step's panel and l, this rank's rows of L from k0 + p on (leading
 * dimension their count). Purely local; called once per step on the next
 * panel's block column and once on the rest (or once on all). */
static void update(const mlsba__mpi_dfac_t *f, const char *panel, int64_t k0,
                   int64_t p, const char *l, int64_t b0, int64_t b1) {
  int64_t count, first = k0 + p;
  chol_step_t s = {.f = f, .k0 = k0, .p = p, .panel = panel, .l = l};
  s.cols = mlsba__layout_rank_cols(f->layout, (size_t)f->me, &count);
  if (b0 * f->nb > first)
    first = b0 * f->nb;
  s.lc0 = first < f->n ? mlsba__mpi_dfac_cols_before(f, (size_t)f->me, first)
                       : f->lcols;
  int64_t lc1 = b1 < (f->n + f->nb - 1) / f->nb
                    ? mlsba__mpi_dfac_cols_before(f, (size_t)f->me, b1 * f->nb)
                    : f->lcols;
  s.lr0 = mlsba__mpi_dfac_rows_before(f, (size_t)f->me, k0 + p);
  mlsba__mpi_dfac_work_t work = {.cols = lc1 - s.lc0,
                                 .column_flops = column_flops,
                                 .run = update_columns,
                                 .user = &s};
  if (f->lrows > s.lr0 && work.cols > 0)
    mlsba__mpi_dfac_update(f, &work);
}

/* Steps 1 and 2 of panel k1 (p1 columns): factored by its node column,
 * gathered onto its root into panel, and its broadcast with the info in
 * *bad started on every rank (req[2]); every rank calls it once a step,
 * in order. */
static void start_panel(const mlsba__mpi_dfac_t *f, int64_t k1, int64_t p1,
                        char *l11, void *panel, int *bad,
                        mlsba__mpi_bcast_t *req) {
  size_t c = mlsba__layout_bcol_column(f->layout, k1 / f->nb);
  int root = (int)mlsba__layout_row_owner(f->layout, c, k1 / f->nb);
  *bad = 0;
  if (c == f->mycol && (*bad = factor_panel(f, k1, p1, l11)) == 0)
    mlsba__mpi_dfac_gather_panel(f, k1, p1, panel);
  mlsba__mpi_bcast_start(bad, 1, MPI_INT, root, f->comm, &req[0]);
  mlsba__mpi_bcast_start(panel, (int)((f->m - k1) * p1), f->type, root, f->comm,
                         &req[1]);
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
  if ((err = mlsba__mpi_dfac_open(desc, prec, a, err,
                                  mlsba__mpi_dfac_panels(opts),
                                  "mlsba_mpi_potrf", &f)) != 0)
    return err;
  size_t nb = (size_t)f.nb;
  char *l = mlsba__mpi_dfac_alloc(&f, (size_t)f.lrows * nb * f.es + 1);
  char *l11 = malloc(nb * nb * f.es);
  char *other = mlsba__mpi_dfac_alloc(
      &f, (size_t)f.m * (nb < (size_t)f.n ? nb : (size_t)f.n) * f.es);
  err = l && l11 && other
            ? 0
            : mlsba__fail(MLSBA_ENOMEM, "mlsba_mpi_potrf: out of memory for "
                                        "this rank's rows of L");
  if ((err = mlsba__mpi_agree(f.comm, err)) != 0 ||
      (err = mlsba__mpi_dfac_node_open(&f, opts, "mlsba_mpi_potrf")) != 0) {
    mlsba__mpi_dfac_free(&f, l);
    free(l11);
    mlsba__mpi_dfac_free(&f, other);
    mlsba__mpi_dfac_close(&f);
    return err;
  }
  *info = 0;
  char *cur = f.panel, *nxt = other;
  int bad[2] = {0, 0}, now = 0;
  mlsba__mpi_bcast_t req[2];
  start_panel(&f, 0, f.n < f.nb ? f.n : f.nb, l11, nxt, &bad[0], req);
  for (int64_t k0 = 0; k0 < f.n; k0 += f.nb) {
    int64_t p = f.n - k0 < f.nb ? f.n - k0 : f.nb, k = k0 / f.nb;
    char *x = cur;
    cur = nxt;
    nxt = x;
    mlsba__mpi_bcast_wait(2, req);
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
  mlsba__mpi_dfac_node_close(&f, report);
  mlsba__mpi_dfac_free(&f, l);
  free(l11);
  mlsba__mpi_dfac_free(&f, other);
  mlsba__mpi_dfac_close(&f);
  return 0;
}
