/* Cholesky across ranks (mlsba_mpi_potrf, lower), right-looking, one block
 * column a step, with a lookahead of one step:
 *  1. the panel (rows k0..n of the step's columns) factorized by its node
 *     column: the diagonal block by its owner (LAPACK's ?potrf), its L11
 *     and info broadcast down the node column, and each rank of it solving
 *     its own rows below with L11, in place, the rows split between the
 *     node's devices as the update's columns are;
 *  2. the factored panel sent to every rank, each receiving L's rows of
 *     its own block rows and of its own block columns, point to point
 *     from the ranks that hold them, with info, the next panel's node
 *     column first, nonblocking (factor_deliver.c);
 *  3. each rank's lower-triangle blocks of the trailing matrix updated:
 *     per block column one GEMMT on its diagonal block (the lower triangle
 *     only) and one GEMM below, on the cores' kernels, the columns split
 *     between the node's devices (update(), factor_update.c).
 * The lookahead: the node column of the next panel updates that block
 * column first, factors it and starts sending it, then updates the
 * rest, in pieces between which the messages are progressed; every other
 * rank updates all of its blocks meanwhile, in pieces too. A rank alone
 * in its node column holds every row in the global order: it reads its
 * rows of L in the panel as received, and makes no copy of them.
 * No pivoting; the blocks above the diagonal and the upper triangle of the
 * diagonal blocks are never read or written. A minor that is not positive
 * definite stops every rank at the same step with LAPACK's info. */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../devices/kernels.h"
#include "../devices/lapack.h"
#include "factor.h"

/* The local row of global row g on this rank (which holds it). */
static int64_t local_row(const mlsba__mpi_dfac_t *f, int64_t g) {
  return mlsba__mpi_dfac_rows_before(f, (size_t)f->me, g);
}

/* The panel's rows below its diagonal block on this rank, from local row
 * lr: X L11^T = A, each range of rows on its own. */
typedef struct {
  const mlsba__mpi_dfac_t *f;
  const char *l11;
  int64_t p, lr, lc, rows, chunk; /* rows in units of chunk rows */
} panel_rows_t;

/* Units [u0, u1): rows [u0 chunk, u1 chunk) of the panel's below L11. */
static void solve_rows(const void *user, int64_t u0, int64_t u1) {
  const panel_rows_t *r = user;
  const mlsba__mpi_dfac_t *f = r->f;
  int64_t r0 = u0 * r->chunk, r1 = u1 * r->chunk;
  if (r1 > r->rows)
    r1 = r->rows;
  if (f->skip || r1 <= r0)
    return;
  mlsba__cpu_trsm(f->prec, 'R', 'L', 'T', 'N', r1 - r0, r->p, 1.0, r->l11, r->p,
                  mlsba__mpi_dfac_at(f, r->lr + r0, r->lc), f->lda, 1);
}

/* A unit's flops: its rows times p^2 (the last unit may be short). */
static double unit_rows_flops(const void *user, int64_t u) {
  const panel_rows_t *r = user;
  int64_t rows = r->rows - u * r->chunk;
  rows = rows < r->chunk ? rows : r->chunk;
  return (double)rows * (double)(r->p * r->p);
}

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
    info = mlsba__lapack_potrf(f->prec, 'L', (int)p, d, (int)f->lda);
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
  if (info == 0 && f->lrows > lr) {
    /* Each of the node's devices solves its own rows, as the step's
     * split gives them (LU's block row of U likewise): on the panel
     * cores alone it was the chain of every step once the trailing
     * update had shrunk (4 simulated Keeneland nodes at N = 69,120, nb
     * = 960: 0.11 s a panel against 0.03 s of update, the last third of
     * the steps). */
    /* The node's split takes at most this rank's local columns (its
     * arrays are that long; the rank holds the panel's, p >= 1): the
     * rows go in chunks of rows / columns, rounded up. */
    int64_t rows = f->lrows - lr, chunk = (rows + f->lcols - 1) / f->lcols;
    panel_rows_t r = {.f = f,
                      .l11 = l11,
                      .p = p,
                      .lr = lr,
                      .lc = lc,
                      .rows = rows,
                      .chunk = chunk};
    mlsba__mpi_dfac_work_t work = {.cols = (rows + chunk - 1) / chunk,
                                   .solve = 1,
                                   .unit_flops =
                                       (double)chunk * (double)(p * p),
                                   .column_flops = unit_rows_flops,
                                   .run = solve_rows,
                                   .user = &r};
    mlsba__mpi_dfac_update(f, &work);
  }
  return info;
}

/* Step 3 on this rank's trailing local columns (those right of the
 * panel, [lc0, lcols)): l holds its rows of L from k0 + p on. */
typedef struct {
  const mlsba__mpi_dfac_t *f;
  int64_t k0, p, lc0, lr0;
  const char *panel, *l; /* the step's panel and this rank's rows of L */
  int64_t ldp, ldl;      /* their leading dimensions */
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
  int64_t ldp = s->ldp, ml = s->ldl, end = s->lc0 + c1;
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

/* Where a rank reads a step's panel (rows k0.. of its columns) and its
 * own rows of L from k0 + p on. */
typedef struct {
  const char *panel, *l;
  int64_t ldp, ldl;
} view_t;

/* Step 3 on this rank: its block columns [b0, b1) right of the panel,
 * each from its diagonal down, split between the node's devices, with
 * the step's panel and this rank's rows of L in v. Purely local; called
 * per step on the next panel's block column and on the rest. */
static void update(const mlsba__mpi_dfac_t *f, const view_t *v, int64_t k0,
                   int64_t p, int64_t b0, int64_t b1) {
  int64_t count, first = k0 + p;
  chol_step_t s = {.f = f,
                   .k0 = k0,
                   .p = p,
                   .panel = v->panel,
                   .l = v->l,
                   .ldp = v->ldp,
                   .ldl = v->ldl};
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

/* The pieces a rank's update is cut into, the panel's messages progressed
 * between them (update_in_pieces). */
enum { PIECES = 8 };

/* update() on block columns [b0, b1) in at most PIECES pieces, the next
 * panel's messages (d; NULL: none in flight) progressed between them.
 * Open MPI moves a large message only while its sender is inside MPI: a
 * holder that updated in one piece held the next panel back until its
 * whole update ended, so the other ranks waited for it at the next step
 * and the lookahead gained nothing. */
static void update_in_pieces(const mlsba__mpi_dfac_t *f, const view_t *v,
                             int64_t k0, int64_t p, int64_t b0, int64_t b1,
                             mlsba__mpi_deliver_t *d) {
  int64_t count, first = 0, last;
  const int64_t *cols =
      mlsba__layout_rank_cols(f->layout, (size_t)f->me, &count);
  while (first < count && cols[first] < b0)
    first++;
  for (last = first; last < count && cols[last] < b1;)
    last++;
  int64_t per = (last - first + PIECES - 1) / PIECES;
  /* SMPI moves the messages meanwhile: one piece, the whole split. */
  if (d == NULL || per < 1 || mlsba__mpi_is_smpi()) {
    update(f, v, k0, p, b0, b1);
    return;
  }
  /* Once the messages have gone, the rest in one piece (fewer, larger
   * GEMMs). */
  for (int64_t i = first, done = 0; i < last; i += per) {
    int64_t to = i + per < last && !done ? cols[i + per] : b1;
    update(f, v, k0, p, i == first ? b0 : cols[i], to);
    if (to == b1)
      break;
    done = mlsba__mpi_deliver_test(d);
  }
}

/* Whether this rank holds every row of its block columns (its node
 * column has no other rank). */
static int holds_all_rows(const mlsba__mpi_dfac_t *f, size_t column) {
  size_t count;
  (void)mlsba__layout_column_ranks(f->layout, column, &count);
  return count == 1;
}

/* Steps 1 and 2 of panel k1 (p1 columns): factored by its node column,
 * and on its way into buf, each rank receiving the rows it reads, with
 * the info in *bad (factor_deliver.c); every rank calls it once a step,
 * in order. *v: where this rank reads the panel then. A panel whose
 * diagonal block is not positive definite is sent all the same (every
 * rank has posted its receives): the ranks stop once it has arrived. */
static void start_panel(const mlsba__mpi_dfac_t *f, int64_t k1, int64_t p1,
                        char *l11, char *buf, int *bad, mlsba__mpi_deliver_t *d,
                        view_t *v) {
  size_t c = mlsba__layout_bcol_column(f->layout, k1 / f->nb);
  v->panel = buf;
  v->ldp = f->m - k1;
  *bad = 0;
  mlsba__mpi_dfac_beside(f, 1);
  if (c == f->mycol)
    *bad = factor_panel(f, k1, p1, l11);
  mlsba__mpi_deliver_start(d, k1, p1, buf, bad, 1);
  mlsba__mpi_dfac_beside(f, 0);
}

/* This rank's rows of L from k1 = k0 + p on, for step 3: rows of the
 * panel itself where the rank holds every row (local rows are then
 * global rows), else packed into l. */
static void my_rows(const mlsba__mpi_dfac_t *f, int64_t k0, int64_t p,
                    view_t *v, char *l) {
  if (holds_all_rows(f, f->mycol)) {
    v->l = v->panel + (size_t)p * f->es;
    v->ldl = v->ldp;
    return;
  }
  int64_t k1 = k0 + p;
  v->l = l;
  v->ldl = f->lrows - mlsba__mpi_dfac_rows_before(f, (size_t)f->me, k1);
  mlsba__mpi_dfac_my_panel_rows(f, k0, p, v->panel, k1, l);
}

/* The progress hook of a simulated update (mlsba__mpi_dfac_progress). */
static int progress(void *d) { return mlsba__mpi_deliver_progress(d); }

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
  else
    err = mlsba__lapack_check("mlsba_mpi_potrf");
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
  mlsba__mpi_deliver_t d;
  int derr = mlsba__mpi_deliver_open(&f, 1, &d);
  err = l && l11 && other && derr == 0
            ? 0
            : mlsba__fail(MLSBA_ENOMEM, "mlsba_mpi_potrf: out of memory for "
                                        "this rank's rows of L");
  if ((err = mlsba__mpi_agree(f.comm, err)) != 0 ||
      (err = mlsba__mpi_dfac_node_open(&f, opts, "mlsba_mpi_potrf")) != 0) {
    mlsba__mpi_dfac_free(&f, l);
    free(l11);
    mlsba__mpi_dfac_free(&f, other);
    mlsba__mpi_deliver_close(&d);
    mlsba__mpi_dfac_close(&f);
    return err;
  }
  *info = 0;
  mlsba__mpi_dfac_progress(&f, progress, &d);
  char *buf[2] = {f.panel, other};
  int bad[2] = {0, 0}, now = 0;
  view_t v[2];
  /* A rank outside the first panel's node column has nothing to do
   * until that panel arrives: it faults the panels' buffers in meanwhile
   * (3 ms a MiB here), not at its first receive and its first panel.
   * A run that skips the numbers shares the buffers between its
   * simulated ranks and reads nothing from them: the wall time of the
   * simulation alone (gigabytes a rank at seed 004's sizes). */
  if (mlsba__layout_bcol_column(f.layout, 0) != f.mycol && !f.skip)
    for (int i = 0; i < 2; i++)
      memset(buf[i], 0,
             (size_t)f.m * (nb < (size_t)f.n ? nb : (size_t)f.n) * f.es);
  mlsba__mpi_dfac_phase(&f, MLSBA__MPI_OTHER);
  start_panel(&f, 0, f.n < f.nb ? f.n : f.nb, l11, buf[0], &bad[0], &d, &v[0]);
  mlsba__mpi_dfac_phase(&f, MLSBA__MPI_PANEL);
  for (int64_t k0 = 0; k0 < f.n; k0 += f.nb) {
    int64_t p = f.n - k0 < f.nb ? f.n - k0 : f.nb, k = k0 / f.nb;
    mlsba__mpi_deliver_wait(&d);
    mlsba__mpi_dfac_phase(&f, MLSBA__MPI_WAIT);
    if (bad[now]) {
      *info = k0 + bad[now];
      break;
    }
    int64_t k1 = k0 + p, p1 = f.n - k1 < f.nb ? f.n - k1 : f.nb;
    my_rows(&f, k0, p, &v[now], l);
    mlsba__mpi_dfac_phase(&f, MLSBA__MPI_OTHER);
    /* The next panel's block column first where this rank holds it. */
    int ahead =
        k1 < f.n && mlsba__layout_bcol_column(f.layout, k + 1) == f.mycol;
    if (ahead)
      update(&f, &v[now], k0, p, k + 1, k + 2);
    mlsba__mpi_dfac_phase(&f, MLSBA__MPI_UPDATE);
    if (k1 < f.n)
      start_panel(&f, k1, p1, l11, buf[1 - now], &bad[1 - now], &d,
                  &v[1 - now]);
    mlsba__mpi_dfac_phase(&f, MLSBA__MPI_PANEL);
    update_in_pieces(&f, &v[now], k0, p, ahead ? k + 2 : k + 1, INT64_MAX,
                     k1 < f.n ? &d : NULL);
    mlsba__mpi_dfac_phase(&f, MLSBA__MPI_UPDATE);
    mlsba__mpi_dfac_step_done(&f, "mlsba_mpi_potrf", k);
    now = 1 - now;
  }
  mlsba__mpi_dfac_node_close(&f, report);
  mlsba__mpi_dfac_free(&f, l);
  free(l11);
  mlsba__mpi_dfac_free(&f, other);
  mlsba__mpi_deliver_close(&d);
  mlsba__mpi_dfac_close(&f);
  return 0;
}
