/* LU's panel factorized by its node column (mlsba__mpi_lu_panel): the
 * ranks that hold block column k factor rows [k0, m) of its columns
 * together, each on its own rows, in place in their local arrays.
 *
 * The columns are split in halves recursively, as LAPACK's ?getrf2 and
 * HPL's recursive panel do: the left half factored, the top rows of the
 * right half solved with its L11, the rows below updated by one GEMM,
 * then the right half. So all but a leaf's (LEAF columns) rank-1 updates
 * are GEMMs: a column-by-column panel (ScaLAPACK's PDGETF2) updates the
 * whole panel once per column, memory-bound on a tall panel.
 *
 * Each column's pivot needs the column updated by every column before
 * it, so a panel takes one collective per column whatever the recursion
 * (only tournament pivoting saves them, and it changes the pivots). HPL's
 * way makes that collective the only one: every rank offers its
 * candidate (the first row of the largest |value| among its rows,
 * LAPACK's idamax rule) with the whole row, and the diagonal block's
 * owner its current row k0 + j too, in one exchange down the node
 * column that keeps the larger candidate (on a tie the smaller global
 * row; a NaN above any number, so that every rank's result agrees) and
 * the current row (factor_pivot.c: one flat round on a column of up to
 * 32 ranks, ceil(log2 q) rounds on a larger one). Every rank then
 * has the same pivot, its owner takes the
 * current row in its place, and every rank
 * keeps the pivot row in a copy of the panel's top rows (`t`), from which
 * each solves the U12 blocks of the recursion itself: no other message.
 * A row moves whole (the panel's p columns, however far each is
 * updated): a row's updates use only its own multipliers and the top
 * rows, so moving it before or after them gives the same row.
 *
 * A node column of one rank has nothing to exchange: LAPACK's ?getrf
 * factors its rows in place (the library's LAPACK, ../devices/lapack.h:
 * the private OpenBLAS, on one thread). A short panel on a node column of
 * 4 ranks or more is gathered onto one rank and factored there the same
 * way (factor_gathered(): its p exchanges' latencies cost more than its
 * rows' trips).
 *
 * The panel runs on the node's cores together, as seed 003's hybrid
 * HPL runs it while the accelerators update: on a real node the
 * recursion's GEMMs (all but the leaves' flops) take a BLIS thread a
 * core of the node, the executor's threads idle meanwhile. Every
 * operation's flops are charged to a simulated node's clock
 * (mlsba__mpi_dfac_charge: its panel cores together) where it runs,
 * between the column's collectives, so the simulated panel takes its
 * time where a real one would. A run that skips the numbers (f->skip, SMPI)
 * computes none and draws each column's pivot at random among the rows left, as
 * HPL on SMPI does: the rows still move between the ranks as real pivots would
 * move them. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "../devices/kernels.h"
#include "../devices/lapack.h"
#include "factor.h"

/* The widest sub-panel factored column by column. */
enum { LEAF = 16 };

/* The fewest rows a thread of the recursion's GEMMs takes: fewer, and
 * the threads' start costs more than they save. */
enum { ROWS_PER_THREAD = 256 };

/* One panel's factorization on one rank of its node column. */
typedef struct {
  const mlsba__mpi_dfac_t *f;
  int64_t k0, p;
  char *a;    /* this rank's rows of the panel: element (i, j) of them at
                 a + (i + j lda) es */
  int64_t ml; /* their count */
  int64_t lr0;
  int diag;   /* nonzero on the owner of the diagonal block, whose rows
                 0..p-1 are global rows k0..k0+p-1 */
  int cq, me; /* the node column's ranks and this one's place */
  int root;   /* the diagonal block owner's place */
  char *t;    /* p x p, leading dimension p: the panel's top rows */
  char *mine; /* this rank's part of a column's pivot search */
  char *all;  /* the exchange's result */
  char *in;   /* the exchange's scratch */
  size_t slot;
  int64_t best; /* this rank's candidate row of the current column */
  int *piv;
  unsigned threads; /* the recursion's GEMMs' (the node's cores) */
} panel_t;

/* A pseudo-random 64-bit number from x alone (splitmix64's finalizer). */
static uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15u;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9u;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBu;
  return x ^ (x >> 31);
}

static size_t round16(size_t n) { return (n + 15) / 16 * 16; }

/* The pivot search's slots (factor.h). */
enum {
  VALUE = MLSBA__PIVOT_VALUE,
  GROW = MLSBA__PIVOT_GROW,
  HAS_CUR = MLSBA__PIVOT_HAS_CUR,
  WIDTH = MLSBA__PIVOT_WIDTH,
  ELEM = MLSBA__PIVOT_ELEM,
  NEED = MLSBA__PIVOT_NEED,
  HEAD = MLSBA__PIVOT_HEAD
};

static size_t slot_bytes(const mlsba__mpi_dfac_t *f) {
  return mlsba__mpi_pivot_slot(f->nb, f->es);
}

size_t mlsba__mpi_lu_panel_bytes(const mlsba__mpi_dfac_t *f) {
  size_t nb = (size_t)f->nb;
  int cq;
  MPI_Comm_size(f->col, &cq);
  return round16(nb * nb * f->es) + 2 * slot_bytes(f) +
         mlsba__mpi_pivot_scratch(cq, slot_bytes(f));
}

static char *at(const panel_t *P, int64_t i, int64_t j) {
  return P->a + (size_t)(i + j * P->f->lda) * P->f->es;
}

static double get(mlsba_precision_t prec, const void *x) {
  return prec == MLSBA_PRECISION_DOUBLE ? *(const double *)x
                                        : (double)*(const float *)x;
}

/* The global row of this rank's panel row i. */
static int64_t global_row(const panel_t *P, int64_t i) {
  int64_t lr = P->lr0 + i, nb = P->f->nb;
  return mlsba__layout_row_l2g(P->f->layout, (size_t)P->f->me, lr / nb) * nb +
         lr % nb;
}

/* Panel row i to or from p contiguous elements, rotated: its columns
 * from `from` on first, then those before it. */
static void row_out(const panel_t *P, int64_t i, int64_t from, char *dst) {
  for (int64_t j = 0; j < P->p; j++)
    memcpy(dst + (size_t)j * P->f->es, at(P, i, (from + j) % P->p), P->f->es);
}

static void row_in(const panel_t *P, int64_t i, int64_t from, const char *src) {
  for (int64_t j = 0; j < P->p; j++)
    memcpy(at(P, i, (from + j) % P->p), src + (size_t)j * P->f->es, P->f->es);
}

/* The first column of the pivot row of column j that a rank other than
 * the diagonal block's owner reads (in the top rows' copy P->t): the
 * recursion's TRSM of a left half [a, mid) reads its rows' columns from
 * a on (L11's part, and U12's), a leaf's update its row's columns right
 * of j; the columns before are L's, which only the diagonal block's
 * owner, whose rows the pivot rows become, keeps. factor_cols()' split. */
static int64_t row_needed_from(int64_t p, int64_t j) {
  int64_t a = 0, b = p;
  while (b - a > LEAF) {
    int64_t mid = a + (b - a) / 2;
    if (j < mid)
      return a;
    a = mid;
  }
  return a;
}

/* Rows [i0, ml) of column j times 1 / pv, or divided by pv where its
 * reciprocal would overflow (?getf2's rule). */
static void scale(const panel_t *P, int64_t i0, int64_t j, double pv) {
  int dbl = P->f->prec == MLSBA_PRECISION_DOUBLE;
  double sfmin = dbl ? DBL_MIN : FLT_MIN;
  for (int64_t i = i0; i < P->ml; i++) {
    char *x = at(P, i, j);
    if (dbl)
      *(double *)x =
          fabs(pv) >= sfmin ? *(double *)x * (1.0 / pv) : *(double *)x / pv;
    else
      *(float *)x = fabs(pv) >= sfmin ? *(float *)x * (1.0f / (float)pv)
                                      : *(float *)x / (float)pv;
  }
}

/* The pivot search of column j among every rank's rows, as idamax on the
 * whole column: each rank's candidate, then the largest, the smallest
 * global row on a tie, in P->all with the current row. Returns its
 * global row. */
static int64_t search(panel_t *P, int64_t j) {
  size_t es = P->f->es;
  mlsba_precision_t prec = P->f->prec;
  double bv = -1.0;
  P->best = -1;
  int64_t first = P->diag ? j : 0;
  if (P->f->skip && P->ml > first) { /* a row of ours drawn, and its value */
    uint64_t r = mix((uint64_t)(P->k0 + j) * 0x10001u + (uint64_t)P->me);
    P->best = first + (int64_t)(r % (uint64_t)(P->ml - first));
    bv = (double)(mix(r) >> 11) / 9007199254740992.0;
  }
  for (int64_t i = first; !P->f->skip && i < P->ml; i++) {
    double v = fabs(get(prec, at(P, i, j)));
    if (P->best < 0 || v > bv) {
      P->best = i;
      bv = v;
    }
  }
  int64_t from = row_needed_from(P->p, j);
  double head[HEAD] = {[VALUE] = P->best < 0 ? -1.0 : bv,
                       [GROW] =
                           P->best < 0 ? 0.0 : (double)global_row(P, P->best),
                       [HAS_CUR] = P->diag,
                       [WIDTH] = (double)P->p,
                       [ELEM] = (double)es,
                       [NEED] = (double)(P->p - from)};
  memcpy(P->mine, head, sizeof head);
  char *row = P->mine + sizeof head;
  if (P->best >= 0)
    row_out(P, P->best, from, row);
  if (P->diag)
    row_out(P, j, 0, row + (size_t)P->p * es);
  mlsba__mpi_pivot_exchange(P->f->col, MLSBA__PIVOT_FLAT_MAX, P->slot, P->root,
                            P->mine, P->all, P->in);
  double h[HEAD];
  memcpy(h, P->all, sizeof h);
  return (int64_t)h[GROW];
}

/* Column j of the leaf [j, b): its pivot, the rows exchanged, L's column
 * scaled, the leaf's columns right of j updated. */
static void leaf_column(panel_t *P, int64_t j, int64_t b) {
  const mlsba__mpi_dfac_t *f = P->f;
  size_t es = f->es, hs = HEAD * sizeof(double);
  int64_t p = P->p, g = search(P, j), from = row_needed_from(p, j);
  /* The pivot row rotated (search()): whole on the diagonal block's
   * owner, from column `from` on elsewhere (the rest of w, and so of
   * row j of P->t, is another row's there, and nothing reads it). */
  const char *w = P->all + hs;
  const char *cur = P->all + hs + (size_t)p * es;
  P->piv[j] = (int)(g - P->k0) + 1;
  for (int64_t c = 0; c < p; c++)
    memcpy(P->t + (size_t)(j + (from + c) % p * p) * es, w + (size_t)c * es,
           es);
  if (g != P->k0 + j) {
    if (P->best >= 0 && global_row(P, P->best) == g)
      row_in(P, P->best, 0, cur);
    if (P->diag)
      row_in(P, j, from, w);
  }
  double pv = get(f->prec, w + (size_t)(j - from) * es);
  int64_t i0 = P->diag ? j + 1 : 0;
  double rows = (double)(P->ml > i0 ? P->ml - i0 : 0);
  mlsba__mpi_dfac_charge(f, rows * (1 + 2.0 * (double)(b - j - 1)), rows);
  if (f->skip)
    return;
  if (pv != 0)
    scale(P, i0, j, pv);
  else if (P->piv[p] == 0)
    P->piv[p] = (int)j + 1;
  if (P->ml > i0 && b > j + 1)
    mlsba__cpu_gemm(f->prec, 'N', 'N', P->ml - i0, b - j - 1, 1, -1.0,
                    at(P, i0, j), f->lda, P->t + (size_t)(j + (j + 1) * p) * es,
                    p, 1.0, at(P, i0, j + 1), f->lda, 1);
}

/* Columns [a, b), every row of them updated by the columns before a. */
static void factor_cols(panel_t *P, int64_t a, int64_t b) {
  if (b - a <= LEAF) {
    for (int64_t j = a; j < b; j++)
      leaf_column(P, j, b);
    return;
  }
  const mlsba__mpi_dfac_t *f = P->f;
  size_t es = f->es;
  int64_t mid = a + (b - a) / 2, p = P->p;
  factor_cols(P, a, mid);
  /* U12 from the top rows every rank holds, then the rows below. */
  char *t12 = P->t + (size_t)(a + mid * p) * es;
  int64_t i0 = P->diag ? mid : 0;
  double h = (double)(mid - a), w = (double)(b - mid),
         rows = (double)(P->ml > i0 ? P->ml - i0 : 0);
  mlsba__mpi_dfac_charge(f, h * h * w + 2 * rows * w * h, rows);
  if (!f->skip)
    mlsba__cpu_trsm(f->prec, 'L', 'L', 'N', 'U', mid - a, b - mid, 1.0,
                    P->t + (size_t)(a + a * p) * es, p, t12, p, 1);
  if (P->ml > i0 && !f->skip)
    mlsba__cpu_gemm(
        f->prec, 'N', 'N', P->ml - i0, b - mid, mid - a, -1.0, at(P, i0, a),
        f->lda, t12, p, 1.0, at(P, i0, mid), f->lda,
        P->ml - i0 >= ROWS_PER_THREAD * (int64_t)P->threads ? P->threads : 1);
  factor_cols(P, mid, b);
}

/* The one rank of its node column: LAPACK on its rows in place (info
 * MLSBA__LAPACK_NONE cannot come: mlsba_mpi_getrf checked first). */
static void factor_alone(const mlsba__mpi_dfac_t *f, int64_t k0, char *a,
                         int64_t lda, int64_t ml, int64_t p, int *piv) {
  double r = (double)ml, c = (double)p;
  mlsba__mpi_dfac_charge(f, r * c * c - c * c * c / 3, r);
  if (f->skip) { /* every pivot drawn among the rows left */
    for (int64_t j = 0; j < p; j++)
      piv[j] = (int)(j + 1 +
                     (int64_t)(mix((uint64_t)(k0 + j)) % (uint64_t)(ml - j)));
    piv[p] = 0;
    return;
  }
  piv[p] = mlsba__lapack_getrf(f->prec, (int)ml, (int)p, a, (int)lda, piv);
}

/* A short panel gathered: on a node column of GATHER_RANKS ranks or more,
 * a panel of GATHER_ROWS rows or fewer is gathered onto the diagonal
 * block's owner, factored there by LAPACK's ?getrf (factor_alone()) and
 * scattered back, with its pivots, in three messages a rank instead of
 * the p exchanges of the search, each a network latency in sequence.
 * The gather and the scatter move the panel's rows twice over the
 * owner's link, (m - k0) x p elements each way, and the owner factors
 * them alone; the exchanges cost p latencies whatever the rows, so the
 * gathered panel wins below about latency x bandwidth / (2 elements)
 * rows, whatever p. On SMPI's Cluster A (links of 2 us and 32 Gbps,
 * SMPI's factors for a search's 1-2 KB messages: 11-15 us an exchange,
 * 1.4-1.9 ms of a panel's 2.3 ms at 128 columns), LU at N = 8192 took
 * 1325 GFLOPS without it, 1375, 1404, 1403, 1395, 1353 and 1010
 * gathering up to 1024, 2048, 2560, 3072, 4096 and every row; the 90
 * Grenoble nodes (node columns of 7-17 ranks) 723, 773, 778 and 783 up
 * to 0, 2048, 2560 and 3072 (RESULTS.md, sim32m). The search's rows
 * queued on the links, (q - 1) rows an exchange, did not account for the
 * difference (2048 rows plus 64 a rank of the column: 774). Fewer ranks:
 * each exchange is cheaper and the gather saves less (no real-rank run
 * here has a node column of 4). */
enum { GATHER_RANKS = 4, GATHER_ROWS = 2560 };

int64_t mlsba__mpi_lu_gather_rows(void) { return GATHER_ROWS; }

/* The most rows a panel gathered takes here: f->gather_rows, and no more
 * than a message of f->piece elements carries (the tests' small pieces
 * keep the search). */
static int64_t gather_limit(const mlsba__mpi_dfac_t *f) {
  int64_t rows = f->piece / f->nb;
  rows = rows < f->gather_rows ? rows : f->gather_rows;
  return rows < f->m ? rows : f->m;
}

size_t mlsba__mpi_lu_gather_bytes(const mlsba__mpi_dfac_t *f) {
  int cq;
  MPI_Comm_size(f->col, &cq);
  int64_t rows = gather_limit(f);
  if (cq < GATHER_RANKS || rows <= 0)
    return 0;
  /* The panel in the global order, and the messages' rows. */
  return 2 * (size_t)rows * (size_t)f->nb * f->es;
}

/* The panel gathered onto the diagonal block's owner (P->root), factored
 * there and scattered back (GATHER_ROWS). Every rank's message is its
 * rows of the panel, packed column-major (its own leading dimension),
 * in its local order; the owner puts each block of them at its global
 * row. */
static void factor_gathered(panel_t *P, char *scratch, char *gather) {
  const mlsba__mpi_dfac_t *f = P->f;
  size_t es = f->es, cn;
  int64_t k0 = P->k0, p = P->p, rows = f->m - k0;
  const size_t *ranks = mlsba__layout_column_ranks(f->layout, f->mycol, &cn);
  /* The counts in the search's part of the scratch, private to the rank
   * (the gather's buffer is shared between SMPI's ranks that skip the
   * numbers): 2 q ints fit in its q slots. */
  int cq = (int)cn,
      *cnt = (int *)(void *)(scratch + round16((size_t)(f->nb * f->nb) * es)),
      *disp = cnt + cq;
  char *g = gather, *msg = gather + (size_t)rows * (size_t)p * es;
  int at = 0;
  for (int r = 0; r < cq; r++) {
    int64_t lr, lc;
    mlsba__layout_local_size(f->layout, ranks[r], &lr, &lc);
    cnt[r] = (int)((lr - mlsba__mpi_dfac_rows_before(f, ranks[r], k0)) * p);
    disp[r] = at;
    at += cnt[r];
  }
  int root = P->me == P->root;
  /* The copies in and out: this rank's rows twice, the owner's the
   * panel's twice more. */
  mlsba__mpi_dfac_charge_copy(
      f, (double)(2 * P->ml * p + (root ? 2 * rows * p : 0)));
  if (!f->skip)
    mlsba__mpi_copy_block(es, P->ml, p, P->a, f->lda,
                          msg + (size_t)disp[P->me] * es, P->ml);
  MPI_Gatherv(root ? MPI_IN_PLACE : msg + (size_t)disp[P->me] * es, cnt[P->me],
              f->type, msg, cnt, disp, f->type, P->root, f->col);
  if (root) {
    for (int r = 0; !f->skip && r < cq; r++) {
      int64_t ml = cnt[r] / p, i = 0;
      const char *m = msg + (size_t)disp[r] * es;
      MLSBA__MPI_FOR_RANK_ROWS(f, ranks[r], k0, gr, len, lr, {
        (void)lr;
        mlsba__mpi_copy_block(es, len, p, m + (size_t)i * es, ml,
                              g + (size_t)(gr - k0) * es, rows);
        i += len;
      });
    }
    factor_alone(f, k0, g, rows, rows, p, P->piv);
    for (int r = 0; !f->skip && r < cq; r++) {
      int64_t ml = cnt[r] / p, i = 0;
      char *m = msg + (size_t)disp[r] * es;
      MLSBA__MPI_FOR_RANK_ROWS(f, ranks[r], k0, gr, len, lr, {
        (void)lr;
        mlsba__mpi_copy_block(es, len, p, g + (size_t)(gr - k0) * es, rows,
                              m + (size_t)i * es, ml);
        i += len;
      });
    }
  }
  MPI_Scatterv(msg, cnt, disp, f->type,
               root ? MPI_IN_PLACE : msg + (size_t)disp[P->me] * es, cnt[P->me],
               f->type, P->root, f->col);
  MPI_Bcast(P->piv, (int)p + 1, MPI_INT, P->root, f->col);
  if (!f->skip)
    mlsba__mpi_copy_block(es, P->ml, p, msg + (size_t)disp[P->me] * es, P->ml,
                          P->a, f->lda);
}

void mlsba__mpi_lu_panel(const mlsba__mpi_dfac_t *f, int64_t k0, int64_t p,
                         int *piv, void *scratch, void *gather) {
  panel_t P = {.f = f,
               .k0 = k0,
               .p = p,
               .piv = piv,
               .threads = mlsba__mpi_dfac_threads(f)};
  int64_t k = k0 / f->nb;
  P.lr0 = mlsba__mpi_dfac_rows_before(f, (size_t)f->me, k0);
  P.ml = f->lrows - P.lr0;
  P.a = mlsba__mpi_dfac_at(f, P.lr0,
                           mlsba__mpi_dfac_cols_before(f, (size_t)f->me, k0));
  MPI_Comm_size(f->col, &P.cq);
  if (P.cq == 1) {
    factor_alone(f, k0, P.a, f->lda, P.ml, p, piv);
    return;
  }
  size_t root = mlsba__layout_row_owner(f->layout, f->mycol, k);
  P.diag = root == (size_t)f->me;
  P.me = mlsba__mpi_dfac_col_rank(f, (size_t)f->me);
  P.root = mlsba__mpi_dfac_col_rank(f, root);
  if (gather && P.cq >= GATHER_RANKS && f->m - k0 <= gather_limit(f)) {
    factor_gathered(&P, scratch, gather);
    return;
  }
  P.slot = slot_bytes(f);
  P.t = scratch;
  P.mine = (char *)scratch + round16((size_t)(f->nb * f->nb) * f->es);
  P.all = P.mine + P.slot;
  P.in = P.all + P.slot;
  memset(piv, 0, (size_t)(p + 1) * sizeof *piv);
  factor_cols(&P, 0, p);
  /* The top rows as the recursion left them: U11 and L11. */
  for (int64_t c = 0; P.diag && c < p; c++)
    memcpy(at(&P, 0, c), P.t + (size_t)(c * p) * f->es, (size_t)p * f->es);
}
