/* LU with partial pivoting across ranks (mlsba_mpi_getrf), right-looking,
 * one block column a step:
 *  1. the panel (rows k0..m of the step's columns) gathered from its node
 *     column onto the owner of the diagonal block and factorized there by
 *     LAPACK's ?getrf (a first version: the pivot search is not yet a
 *     max-location reduction down the node column);
 *  2. the factored panel, its pivots and info broadcast to every rank
 *     (each needs L for its own rows, and the pivots for its columns);
 *  3. the panel's interchanges applied to every other column, rows moving
 *     between the ranks of each node column in one exchange;
 *  4. U's block row solved by its owner in each node column and broadcast
 *     down that column;
 *  5. each rank's trailing rectangle updated by GEMMs on the cores'
 *     kernels (devices/kernels.h), its columns split between the node's
 *     devices (factor_update.c).
 * The interchanges and the factors are LAPACK's: ipiv global and 1-based,
 * the swaps applied to L's columns on the left too, info the first zero
 * pivot with the factorization completed. */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../devices/kernels.h"
#include "factor.h"

/* LAPACK (Fortran). */
void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv,
             int *info);
void sgetrf_(const int *m, const int *n, float *a, const int *lda, int *ipiv,
             int *info);

/* The tag of the rows a step's interchanges move (within a node column's
 * communicator, which carries nothing else point to point). */
enum { SWAP_TAG = 3217 };

/* The buffers of a factorization besides the panel's (factor.h). */
typedef struct {
  int *piv;          /* the panel's pivots and info: nb + 1 */
  int64_t *moves;    /* a step's row moves: 2 nb pairs (dst, src), and 4 nb
                        entries to compose them */
  char *send, *recv; /* rows moving between the ranks of a node column */
  int *counts;       /* send and receive counts, offsets, cursors: 5 q */
  MPI_Request *reqs; /* a step's row messages: 2 q */
  char *u;           /* U's block row: nb x lcols */
  char *l;           /* this rank's rows of L: lrows x nb */
  size_t row_bytes;  /* one row of this rank's local array */
} lu_work_t;

static void work_free(lu_work_t *w) {
  free(w->piv);
  free(w->moves);
  free(w->send);
  free(w->recv);
  free(w->counts);
  free(w->reqs);
  free(w->u);
  free(w->l);
}

static int work_alloc(const mlsba__mpi_dfac_t *f, lu_work_t *w) {
  int q;
  MPI_Comm_size(f->comm, &q);
  size_t nb = (size_t)f->nb, lc = (size_t)f->lcols, lr = (size_t)f->lrows;
  w->row_bytes = lc * f->es;
  w->piv = malloc((nb + 1) * sizeof *w->piv);
  w->moves = malloc(8 * nb * sizeof *w->moves);
  w->send = malloc(2 * nb * w->row_bytes + 1);
  w->recv = malloc(2 * nb * w->row_bytes + 1);
  w->counts = malloc(5 * (size_t)q * sizeof *w->counts);
  w->reqs = malloc(2 * (size_t)q * sizeof *w->reqs);
  w->u = malloc(nb * lc * f->es + 1);
  w->l = malloc(lr * nb * f->es + 1);
  if (!w->piv || !w->moves || !w->send || !w->recv || !w->counts || !w->reqs ||
      !w->u || !w->l)
    return mlsba__fail(MLSBA_ENOMEM, "mlsba_mpi_getrf: out of memory for a "
                                     "step's buffers");
  return 0;
}

/* Step 1 on the root: LAPACK's LU of the gathered panel, its pivots
 * (1-based in the panel) and info in piv[0..p], piv[p]. */
static void factor_panel(const mlsba__mpi_dfac_t *f, int64_t k0, int64_t p,
                         int *piv) {
  int m = (int)(f->m - k0), n = (int)p, info = 0;
  if (f->prec == MLSBA_PRECISION_DOUBLE)
    dgetrf_(&m, &n, f->panel, &m, piv, &info);
  else
    sgetrf_(&m, &n, f->panel, &m, piv, &info);
  piv[p] = info;
}

/* The panel's interchanges as moves "row dst takes row src" (LAPACK's
 * swaps composed, at most 2 p of them) in pairs (dst, src); returns their
 * count. scratch: 4 p entries. */
static int64_t compose_moves(const int64_t *ipiv, int64_t k0, int64_t p,
                             int64_t *scratch, int64_t *pairs) {
  /* rows[i] is a touched row, holds[i] the original row now there. */
  int64_t *rows = scratch, *holds = scratch + 2 * p, n = 0;
  for (int64_t i = 0; i < p; i++) {
    int64_t r[2] = {k0 + i, ipiv[k0 + i] - 1}, at[2];
    for (int s = 0; s < 2; s++) {
      at[s] = -1;
      for (int64_t t = 0; t < n && at[s] < 0; t++)
        if (rows[t] == r[s])
          at[s] = t;
      if (at[s] < 0) {
        rows[n] = holds[n] = r[s];
        at[s] = n++;
      }
    }
    int64_t x = holds[at[0]];
    holds[at[0]] = holds[at[1]];
    holds[at[1]] = x;
  }
  int64_t out = 0;
  for (int64_t t = 0; t < n; t++)
    if (rows[t] != holds[t]) {
      pairs[2 * out] = rows[t];
      pairs[2 * out + 1] = holds[t];
      out++;
    }
  return out;
}

/* The local columns a step's interchanges move: all but the panel's. */
typedef struct {
  int64_t lc0, lc1; /* the panel's local columns [lc0, lc1) (empty if none) */
} skip_t;

static void pack_row(const mlsba__mpi_dfac_t *f, skip_t s, int64_t lr,
                     char *dst) {
  for (int64_t c = 0; c < f->lcols; c++)
    if (c < s.lc0 || c >= s.lc1) {
      memcpy(dst, mlsba__mpi_dfac_at(f, lr, c), f->es);
      dst += f->es;
    }
}

static void unpack_row(const mlsba__mpi_dfac_t *f, skip_t s, int64_t lr,
                       const char *src) {
  for (int64_t c = 0; c < f->lcols; c++)
    if (c < s.lc0 || c >= s.lc1) {
      memcpy(mlsba__mpi_dfac_at(f, lr, c), src, f->es);
      src += f->es;
    }
}

/* The local row of global row g on this rank (which holds it). */
static int64_t local_row(const mlsba__mpi_dfac_t *f, int64_t g) {
  return mlsba__mpi_dfac_rows_before(f, (size_t)f->me, g);
}

/* Step 3: the moves among this rank's node column, every row's columns
 * but the panel's, in one exchange over the column. Every rank reads
 * the rows it sends before any is written. */
static void apply_moves(const mlsba__mpi_dfac_t *f, lu_work_t *w,
                        const int64_t *moves, int64_t nmoves, int64_t k0,
                        int64_t p) {
  int cq;
  MPI_Comm_size(f->col, &cq);
  skip_t s = {0, 0};
  if (mlsba__layout_bcol_column(f->layout, k0 / f->nb) == f->mycol) {
    s.lc0 = mlsba__mpi_dfac_cols_before(f, (size_t)f->me, k0);
    s.lc1 = mlsba__mpi_dfac_cols_before(f, (size_t)f->me, k0 + p);
  }
  size_t width = (size_t)(f->lcols - (s.lc1 - s.lc0)) * f->es;
  int *scount = w->counts, *sdisp = scount + cq, *rcount = sdisp + cq,
      *rdisp = rcount + cq;
  memset(w->counts, 0, 4 * (size_t)cq * sizeof *w->counts);
  int me = mlsba__mpi_dfac_col_rank(f, (size_t)f->me);
  /* Counts first (in rows), then the rows in the order of the moves, which
   * the receiver walks the same way. */
  for (int64_t i = 0; i < nmoves; i++) {
    int64_t dst = moves[2 * i], src = moves[2 * i + 1];
    int to = mlsba__mpi_dfac_col_rank(
        f, mlsba__layout_row_owner(f->layout, f->mycol, dst / f->nb));
    int from = mlsba__mpi_dfac_col_rank(
        f, mlsba__layout_row_owner(f->layout, f->mycol, src / f->nb));
    if (from == me)
      scount[to]++;
    if (to == me)
      rcount[from]++;
  }
  for (int r = 0, sa = 0, ra = 0; r < cq; r++) {
    sdisp[r] = sa;
    rdisp[r] = ra;
    sa += scount[r];
    ra += rcount[r];
  }
  int *cursor = rdisp + cq;
  memcpy(cursor, sdisp, (size_t)cq * sizeof *cursor);
  for (int64_t i = 0; i < nmoves; i++) {
    int64_t dst = moves[2 * i], src = moves[2 * i + 1];
    int to = mlsba__mpi_dfac_col_rank(
        f, mlsba__layout_row_owner(f->layout, f->mycol, dst / f->nb));
    int from = mlsba__mpi_dfac_col_rank(
        f, mlsba__layout_row_owner(f->layout, f->mycol, src / f->nb));
    if (from == me)
      pack_row(f, s, local_row(f, src), w->send + (size_t)cursor[to]++ * width);
  }
  /* In bytes for the exchange. */
  for (int r = 0; r < cq; r++) {
    scount[r] *= (int)width;
    sdisp[r] *= (int)width;
    rcount[r] *= (int)width;
    rdisp[r] *= (int)width;
  }
  /* Point to point with the ranks that take part, not an all-to-all:
   * most pairs of a node column exchange nothing in a step (and SMPI's
   * pairwise all-to-all refuses columns of other than 2^k ranks). */
  int nreq = 0;
  for (int r = 0; r < cq; r++) {
    if (r == me) {
      memcpy(w->recv + rdisp[r], w->send + sdisp[r], (size_t)scount[r]);
      continue;
    }
    if (rcount[r] > 0)
      MPI_Irecv(w->recv + rdisp[r], rcount[r], MPI_BYTE, r, SWAP_TAG, f->col,
                &w->reqs[nreq++]);
    if (scount[r] > 0)
      MPI_Isend(w->send + sdisp[r], scount[r], MPI_BYTE, r, SWAP_TAG, f->col,
                &w->reqs[nreq++]);
  }
  MPI_Waitall(nreq, w->reqs, MPI_STATUSES_IGNORE);
  for (int r = 0; r < cq; r++)
    cursor[r] = rdisp[r];
  for (int64_t i = 0; i < nmoves; i++) {
    int64_t dst = moves[2 * i], src = moves[2 * i + 1];
    int to = mlsba__mpi_dfac_col_rank(
        f, mlsba__layout_row_owner(f->layout, f->mycol, dst / f->nb));
    int from = mlsba__mpi_dfac_col_rank(
        f, mlsba__layout_row_owner(f->layout, f->mycol, src / f->nb));
    if (to == me) {
      unpack_row(f, s, local_row(f, dst), w->recv + cursor[from]);
      cursor[from] += (int)width;
    }
  }
}

/* Step 5's product on this rank's trailing columns [c0, c1): C -= L U. */
typedef struct {
  const mlsba__mpi_dfac_t *f;
  const char *l, *u;
  int64_t mr, p, lr, lc;
} lu_gemm_t;

static void gemm_columns(const void *user, int64_t c0, int64_t c1) {
  const lu_gemm_t *g = user;
  const mlsba__mpi_dfac_t *f = g->f;
  mlsba__cpu_gemm(f->prec, 'N', 'N', g->mr, c1 - c0, g->p, -1.0, g->l, g->mr,
                  g->u + (size_t)(c0 * g->p) * f->es, g->p, 1.0,
                  mlsba__mpi_dfac_at(f, g->lr, g->lc + c0), f->lda, 1);
}

/* Steps 4 and 5 on this rank. */
static void update(const mlsba__mpi_dfac_t *f, lu_work_t *w, int64_t k0,
                   int64_t p) {
  int64_t k = k0 / f->nb, ldp = f->m - k0;
  int64_t lc = mlsba__mpi_dfac_cols_before(f, (size_t)f->me, k0 + p);
  int64_t nc = f->lcols - lc;
  size_t owner = mlsba__layout_row_owner(f->layout, f->mycol, k);
  if (nc > 0) {
    if (owner == (size_t)f->me) {
      void *a12 = mlsba__mpi_dfac_at(f, local_row(f, k0), lc);
      mlsba__cpu_trsm(f->prec, 'L', 'L', 'N', 'U', p, nc, 1.0, f->panel, ldp,
                      a12, f->lda, 1);
      for (int64_t j = 0; j < nc; j++)
        memcpy(w->u + (size_t)(j * p) * f->es,
               (char *)a12 + (size_t)(j * f->lda) * f->es, (size_t)p * f->es);
    }
    /* nc and p are below 2^31 / nb by the size checks. */
    MPI_Bcast(w->u, (int)(p * nc), f->type, mlsba__mpi_dfac_col_rank(f, owner),
              f->col);
  }
  int64_t lr = mlsba__mpi_dfac_rows_before(f, (size_t)f->me, k0 + p);
  int64_t mr = f->lrows - lr;
  if (mr <= 0 || nc <= 0)
    return;
  mlsba__mpi_dfac_my_panel_rows(f, k0, p, f->panel, k0 + p, w->l);
  lu_gemm_t g = {f, w->l, w->u, mr, p, lr, lc};
  mlsba__mpi_dfac_work_t work = {.cols = nc,
                                 .unit_flops = 2.0 * (double)mr * (double)p,
                                 .run = gemm_columns,
                                 .user = &g};
  mlsba__mpi_dfac_update(f, &work);
}

/* This rank's verdict on getrf's own arguments. */
static int check(const mlsba_mpi_matrix_t *desc, const int64_t *ipiv,
                 const int64_t *info) {
  int64_t m = 0, n = 0;
  mlsba_mpi_matrix_size(desc, &m, &n, NULL, NULL);
  if (info == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_mpi_getrf: info is NULL");
  if (ipiv == NULL)
    return mlsba__fail(MLSBA_EINVAL,
                       "mlsba_mpi_getrf: ipiv is NULL (it "
                       "takes min(m, n) = %lld entries on every "
                       "rank)",
                       (long long)(m < n ? m : n));
  return 0;
}

int mlsba_mpi_getrf(const mlsba_mpi_matrix_t *desc, mlsba_precision_t prec,
                    void *a, int64_t *ipiv, int64_t *info) {
  return mlsba_mpi_getrf_ex(desc, prec, a, ipiv, info, NULL, NULL);
}

int mlsba_mpi_getrf_ex(const mlsba_mpi_matrix_t *desc, mlsba_precision_t prec,
                       void *a, int64_t *ipiv, int64_t *info,
                       const mlsba_mpi_factor_opts_t *opts,
                       mlsba_mpi_factor_report_t *report) {
  mlsba__mpi_dfac_t f;
  if (report)
    memset(report, 0, sizeof *report);
  int err = desc ? check(desc, ipiv, info) : 0;
  if ((err = mlsba__mpi_dfac_open(desc, prec, a, err, 1, "mlsba_mpi_getrf",
                                  &f)) != 0)
    return err;
  lu_work_t w = {0};
  err = work_alloc(&f, &w);
  if ((err = mlsba__mpi_agree(f.comm, err)) != 0 ||
      (err = mlsba__mpi_dfac_node_open(&f, opts, "mlsba_mpi_getrf")) != 0) {
    work_free(&w);
    mlsba__mpi_dfac_close(&f);
    return err;
  }
  *info = 0;
  int64_t kmax = f.m < f.n ? f.m : f.n;
  for (int64_t k0 = 0; k0 < kmax; k0 += f.nb) {
    int64_t p = kmax - k0 < f.nb ? kmax - k0 : f.nb, k = k0 / f.nb;
    size_t c = mlsba__layout_bcol_column(f.layout, k);
    int root = (int)mlsba__layout_row_owner(f.layout, c, k);
    mlsba__mpi_dfac_gather_panel(&f, k0, p);
    if (f.me == root)
      factor_panel(&f, k0, p, w.piv);
    MPI_Bcast(f.panel, (int)((f.m - k0) * p), f.type, root, f.comm);
    MPI_Bcast(w.piv, (int)p + 1, MPI_INT, root, f.comm);
    for (int64_t i = 0; i < p; i++)
      ipiv[k0 + i] = k0 + w.piv[i];
    if (w.piv[p] > 0 && *info == 0)
      *info = k0 + w.piv[p];
    mlsba__mpi_dfac_put_panel(&f, k0, p, f.panel);
    int64_t *pairs = w.moves + 4 * f.nb;
    int64_t nmoves = compose_moves(ipiv, k0, p, w.moves, pairs);
    apply_moves(&f, &w, pairs, nmoves, k0, p);
    update(&f, &w, k0, p);
  }
  mlsba__mpi_dfac_node_close(&f, report);
  work_free(&w);
  mlsba__mpi_dfac_close(&f);
  return err;
}
