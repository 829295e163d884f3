/* LU with partial pivoting across ranks (mlsba_mpi_getrf), right-looking,
 * one block column a step, with a lookahead of one step:
 *  1. the panel (rows k0..m of the step's columns) factorized by the
 *     ranks of its node column together, each on its own rows: the pivot
 *     of each column a max-location search down the node column, a
 *     recursive panel; a short panel on a long node column gathered
 *     onto one rank and factored there (factor_panel.c);
 *  2. the factored panel sent to every rank, each receiving the rows of
 *     L it owns (and L11 where it owns the diagonal block row), point to
 *     point from the ranks that hold them, with the pivots and info, the
 *     next panel's node column first, nonblocking (factor_deliver.c);
 *  3. the panel's interchanges applied to every column right of it, rows
 *     moving between the ranks of each node column in one exchange (the
 *     columns left of it, L's, take every later step's at the end, in
 *     one pass a block column: left_moves());
 *  4. U's block row solved by its owner in each node column, each of
 *     its node's devices solving its own columns (the update's split),
 *     and broadcast down that column; a large row on a long column as a
 *     pipeline of column pieces, each rank updating the columns of a
 *     piece while the next comes (chain_update());
 *  5. each rank's trailing rectangle updated by GEMMs on the cores'
 *     kernels (update()), its columns split between the node's devices
 *     (factor_update.c).
 * The lookahead: the node column of the next panel swaps, solves and
 * updates that panel's columns first, factors the next panel and starts
 * sending it, and only then swaps and updates the rest of its columns; every
 * other rank updates all of its columns meanwhile. The rest is updated in
 * pieces between which the messages are progressed (Open MPI moves a large
 * message only inside MPI calls), in one piece from the moment they are
 * done. So the panel is off the critical path:
 * the ranks find their rows of it when they finish a step. A rank alone
 * in its node column reads L in the panel as received and U in its own
 * block row, copying neither.
 * The interchanges and the factors are LAPACK's: ipiv global and 1-based,
 * the swaps applied to L's columns on the left too, info the first zero
 * pivot with the factorization completed. */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../devices/kernels.h"
#include "../devices/lapack.h"
#include "factor.h"

/* The tag of the rows a step's interchanges move (within a node column's
 * communicator, which carries nothing else point to point). */
enum { SWAP_TAG = 3217 };

/* The smallest broadcast of U (bytes) that goes down the node column as
 * a pipeline, on a node column of CHAIN_RANKS ranks or more. */
enum { CHAIN_BYTES = 256 << 10, CHAIN_RANKS = 4 };

/* The pipeline's pieces: 64 KiB at least (a piece's latency small beside
 * its time on the link), at most CHAIN_PER_HOP a hop of the chain (its
 * fill, q - 2 pieces' time, a small part of the row's) and CHAIN_PIECES
 * in all (w->reqs' room). */
enum { CHAIN_PIECE = 64 << 10, CHAIN_PER_HOP = 16, CHAIN_PIECES = 64 };

/* The tag of U's pieces (within the node column's communicator). */
enum { U_TAG = 3220 };

/* The columns a pass of apply_moves() moves at once. A column's moved
 * rows are scattered (2 nb of a step's trailing rows, one cache miss
 * each), and a core keeps more misses in flight on four independent
 * columns than on one: the local moves of a step at N = 8192, nb = 256
 * took 3.2-3.6 ns an element so against 4.7-5.3 one column at a time
 * with plain (row, slot) pairs and 6.1-6.7 through the moves' table
 * (lu32i, both cores busy). Four rows of four columns lda apart share
 * one set of an 8-way L1 where lda is a power of two; sixteen did not
 * fit (lu32h: dlaswp's blocking of 16 columns ran slower). */
enum { PASS_COLS = 4 };

/* The buffers of a factorization besides the panel's (factor.h). */
typedef struct {
  int *piv, *piv2;   /* a panel's pivots and info (nb + 1), two steps' */
  char *panel2;      /* the next step's panel, while f->panel is in use */
  void *scratch;     /* the panel's factorization (factor_panel.c) */
  void *gather;      /* a short panel gathered onto one rank (or NULL) */
  int64_t lcs;       /* the step's first trailing local column: w->u's */
  int64_t *moves;    /* a step's row moves: 2 nb pairs (dst, src), and 4 nb
                        entries to compose them */
  char *send, *recv; /* rows moving between the ranks of a node column */
  int64_t *mv;       /* each move's part here: MV entries a move */
  int64_t *ord;      /* the moves read here by row, written here by row,
                        then the local ones' (row, move) pairs: 6 a move */
  char *tmp;         /* PASS_COLS columns' elements moving within this
                        rank */
  int *counts;       /* send and receive counts, offsets, cursors: 5 q */
  MPI_Request *reqs; /* a step's row messages (2 q), U's pieces */
  char *u;           /* U's block row: nb x lcols */
  char *l;           /* this rank's rows of L: lrows x nb */
  /* Where the step's update reads them: w->u (leading dimension p) or,
   * on a rank alone in its node column, its own block row of A; w->l
   * or the step's panel itself. */
  const char *ua, *la;
  int64_t ldu, ldl;
  int alone;                    /* this rank is alone in its node column */
  mlsba__mpi_deliver_t deliver; /* the next panel on its way */
  size_t row_bytes;             /* one row of this rank's local array */
} lu_work_t;

static void work_free(const mlsba__mpi_dfac_t *f, lu_work_t *w) {
  free(w->piv);
  free(w->piv2);
  mlsba__mpi_dfac_free(f, w->panel2);
  free(w->scratch);
  if (w->gather)
    mlsba__mpi_dfac_free(f, w->gather);
  free(w->moves);
  mlsba__mpi_dfac_free(f, w->send);
  free(w->mv);
  free(w->ord);
  free(w->tmp);
  mlsba__mpi_dfac_free(f, w->recv);
  free(w->counts);
  free(w->reqs);
  mlsba__mpi_dfac_free(f, w->u);
  mlsba__mpi_dfac_free(f, w->l);
  mlsba__mpi_deliver_close(&w->deliver);
}

static int work_alloc(const mlsba__mpi_dfac_t *f, lu_work_t *w) {
  int q;
  MPI_Comm_size(f->comm, &q);
  size_t nb = (size_t)f->nb, lc = (size_t)f->lcols, lr = (size_t)f->lrows;
  w->row_bytes = lc * f->es;
  w->piv = malloc((nb + 1) * sizeof *w->piv);
  w->piv2 = malloc((nb + 1) * sizeof *w->piv2);
  /* The large ones shared between SMPI's ranks when nothing is computed. */
  w->panel2 = mlsba__mpi_dfac_alloc(
      f, (size_t)f->m * (nb < (size_t)f->n ? nb : (size_t)f->n) * f->es);
  w->scratch = malloc(mlsba__mpi_lu_panel_bytes(f));
  size_t gather = mlsba__mpi_lu_gather_bytes(f);
  w->gather = gather ? mlsba__mpi_dfac_alloc(f, gather) : NULL;
  w->moves = malloc(8 * nb * sizeof *w->moves);
  w->send = mlsba__mpi_dfac_alloc(f, 2 * nb * w->row_bytes + 1);
  w->mv = malloc(2 * nb * 6 * sizeof *w->mv);
  w->ord = malloc(6 * 2 * nb * sizeof *w->ord);
  w->tmp = malloc(PASS_COLS * 2 * nb * f->es);
  w->recv = mlsba__mpi_dfac_alloc(f, 2 * nb * w->row_bytes + 1);
  w->counts = malloc(5 * (size_t)q * sizeof *w->counts);
  /* A pair's rows (2 nb at most) x this rank's columns, in pieces of
   * whole columns (f->piece), and U's pieces down a pipeline. */
  int64_t per = mlsba__mpi_dfac_piece_cols(f, 2 * f->nb);
  size_t pieces = (size_t)((f->lcols + per - 1) / per);
  w->reqs = malloc((2 * (size_t)q * (pieces ? pieces : 1) + CHAIN_PIECES) *
                   sizeof *w->reqs);
  w->u = mlsba__mpi_dfac_alloc(f, nb * lc * f->es + 1);
  w->l = mlsba__mpi_dfac_alloc(f, lr * nb * f->es + 1);
  if (!w->piv || !w->piv2 || !w->panel2 || !w->scratch ||
      (gather && !w->gather) || !w->moves || !w->send || !w->recv ||
      !w->counts || !w->reqs || !w->mv || !w->ord || !w->tmp || !w->u ||
      !w->l || mlsba__mpi_deliver_open(f, 0, &w->deliver) != 0)
    return mlsba__fail(MLSBA_ENOMEM, "mlsba_mpi_getrf: out of memory for a "
                                     "step's buffers");
  return 0;
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

/* The local row of global row g on this rank (which holds it). */
static int64_t local_row(const mlsba__mpi_dfac_t *f, int64_t g) {
  return mlsba__mpi_dfac_rows_before(f, (size_t)f->me, g);
}

/* One element of es bytes (8 or 4), copied as bits. */
static void copy_elem(size_t es, void *dst, const void *src) {
  if (es == 8)
    *(uint64_t *)dst = *(const uint64_t *)src;
  else
    *(uint32_t *)dst = *(const uint32_t *)src;
}

/* A move's part on this rank (w->mv, 6 entries): the local row it reads
 * (or -1), the rank it goes to and its place among that rank's rows; the
 * local row it writes (or -1), the rank it comes from and its place. */
enum { SRC, TO, SSLOT, DST, FROM, RSLOT, MV };

static int by_key(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* The moves whose entry `field` of w->mv is a local row (>= 0), in the
 * order of that row, into ord; returns their count. A column's scattered
 * rows are then walked up its memory, where the cores' prefetchers
 * follow, rather than in the pivots' order. */
static int64_t order_moves(const lu_work_t *w, int64_t nmoves, int field,
                           int64_t *ord) {
  int64_t n = 0;
  for (int64_t i = 0; i < nmoves; i++)
    if (w->mv[i * MV + field] >= 0)
      ord[n++] = (w->mv[i * MV + field] << 32) | i;
  qsort(ord, (size_t)n, sizeof *ord, by_key);
  for (int64_t t = 0; t < n; t++)
    ord[t] &= 0xffffffff;
  return n;
}

/* The moves within this rank on the columns col[0..n) (n <= PASS_COLS),
 * rows given as (row, slot) pairs in row order: every read row into
 * tmp (slot s of column j at s PASS_COLS + j), then every written one
 * from there, so each column reads all its rows before it writes any. */
#define LOCAL_MOVES(name, type)                                                \
  static void name(char *const *col, int n, const int64_t *rd, int64_t nrd,    \
                   const int64_t *wr, int64_t nwr, void *tmpv) {               \
    type *tmp = tmpv;                                                          \
    if (n == PASS_COLS) {                                                      \
      type *x0 = (type *)col[0], *x1 = (type *)col[1], *x2 = (type *)col[2],   \
           *x3 = (type *)col[3];                                               \
      for (int64_t t = 0; t < nrd; t++) {                                      \
        int64_t r = rd[2 * t], at = rd[2 * t + 1] * PASS_COLS;                 \
        tmp[at] = x0[r];                                                       \
        tmp[at + 1] = x1[r];                                                   \
        tmp[at + 2] = x2[r];                                                   \
        tmp[at + 3] = x3[r];                                                   \
      }                                                                        \
      for (int64_t t = 0; t < nwr; t++) {                                      \
        int64_t r = wr[2 * t], at = wr[2 * t + 1] * PASS_COLS;                 \
        x0[r] = tmp[at];                                                       \
        x1[r] = tmp[at + 1];                                                   \
        x2[r] = tmp[at + 2];                                                   \
        x3[r] = tmp[at + 3];                                                   \
      }                                                                        \
      return;                                                                  \
    }                                                                          \
    for (int j = 0; j < n; j++) {                                              \
      type *x = (type *)col[j];                                                \
      for (int64_t t = 0; t < nrd; t++)                                        \
        tmp[rd[2 * t + 1] * PASS_COLS] = x[rd[2 * t]];                         \
      for (int64_t t = 0; t < nwr; t++)                                        \
        x[wr[2 * t]] = tmp[wr[2 * t + 1] * PASS_COLS];                         \
    }                                                                          \
  }
LOCAL_MOVES(local_moves_8, uint64_t)
LOCAL_MOVES(local_moves_4, uint32_t)

/* The moves of ord (n of them) whose entry `field` of w->mv is a local
 * row and whose entry `remote` is not (< 0), as (row, move) pairs into
 * pairs, in ord's order; returns their count. */
static int64_t local_pairs(const lu_work_t *w, const int64_t *ord, int64_t n,
                           int field, int remote, int64_t *pairs) {
  int64_t k = 0;
  for (int64_t t = 0; t < n; t++) {
    const int64_t *mv = w->mv + ord[t] * MV;
    if (mv[remote] < 0) {
      pairs[2 * k] = mv[field];
      pairs[2 * k + 1] = ord[t];
      k++;
    }
  }
  return k;
}

/* Step 3: the moves among this rank's node column, on this rank's local
 * columns [c0, c1) but [x0, x1) (the panel's, which its factorization
 * swapped). Rows are strided in the column-major local array, so
 * every pass walks it column by column, each column once: the rows going
 * to another rank packed into one column-major block per rank, the moves
 * within this rank done through a column's worth of temporaries, the rows
 * received unpacked; one exchange over the column between. Every rank
 * reads the rows it sends before any is written. */
static void apply_moves(const mlsba__mpi_dfac_t *f, lu_work_t *w,
                        const int64_t *moves, int64_t nmoves, int64_t c0,
                        int64_t c1, int64_t x0, int64_t x1) {
  int cq;
  MPI_Comm_size(f->col, &cq);
  int64_t lc0 = x0 > c0 ? x0 : c0, lc1 = x1 < c1 ? x1 : c1;
  lc1 = lc1 > lc0 ? lc1 : lc0;
  int64_t width = c1 - c0 - (lc1 - lc0);
  size_t es = f->es;
  int *scount = w->counts, *sdisp = scount + cq, *rcount = sdisp + cq,
      *rdisp = rcount + cq;
  memset(w->counts, 0, 4 * (size_t)cq * sizeof *w->counts);
  int me = mlsba__mpi_dfac_col_rank(f, (size_t)f->me);
  int64_t *mv = w->mv;
  for (int64_t i = 0; i < nmoves; i++, mv += MV) {
    int64_t dst = moves[2 * i], src = moves[2 * i + 1];
    int to = mlsba__mpi_dfac_col_rank(
        f, mlsba__layout_row_owner(f->layout, f->mycol, dst / f->nb));
    int from = mlsba__mpi_dfac_col_rank(
        f, mlsba__layout_row_owner(f->layout, f->mycol, src / f->nb));
    mv[SRC] = from == me ? local_row(f, src) : -1;
    mv[TO] = to;
    mv[SSLOT] = from == me && to != me ? scount[to]++ : -1;
    mv[DST] = to == me ? local_row(f, dst) : -1;
    mv[FROM] = from;
    mv[RSLOT] = to == me && from != me ? rcount[from]++ : -1;
  }
  for (int r = 0, sa = 0, ra = 0; r < cq; r++) {
    sdisp[r] = sa;
    rdisp[r] = ra;
    sa += scount[r];
    ra += rcount[r];
  }
  /* Reads in the order of their rows, writes in the order of theirs
   * (none copied in a run without the numbers). */
  int64_t *rd = w->ord, *wr = w->ord + nmoves;
  int64_t nrd = f->skip ? 0 : order_moves(w, nmoves, SRC, rd);
  int64_t nwr = f->skip ? 0 : order_moves(w, nmoves, DST, wr);
  /* The copies' time: every row of ours that moves packed or moved here,
   * every row received unpacked. */
  int64_t moved = 0, received = 0;
  for (int r = 0; r < cq; r++)
    received += rcount[r];
  for (int64_t i = 0; i < nmoves; i++)
    moved += w->mv[i * MV + SRC] >= 0;
  mlsba__mpi_dfac_charge_copy(f, (double)((moved + received) * width));
  /* The moves within this rank as (row, move) pairs, the rows packed for
   * other ranks kept in rd (in its order). */
  int64_t *lrd = w->ord + 2 * nmoves, *lwr = lrd + 2 * nmoves;
  int64_t nlr = local_pairs(w, rd, nrd, SRC, SSLOT, lrd);
  int64_t nlw = local_pairs(w, wr, nwr, DST, RSLOT, lwr);
  int64_t npk = 0;
  for (int64_t t = 0; t < nrd; t++)
    if (w->mv[rd[t] * MV + SSLOT] >= 0)
      rd[npk++] = rd[t];
  /* Peer r's block: element (slot, ci) at (disp[r] width + ci count[r] +
   * slot) elements. PASS_COLS columns a pass. */
  for (int64_t c = c0, ci = 0; !f->skip && c < c1;) {
    char *col[PASS_COLS];
    int n = 0;
    for (; c < c1 && n < PASS_COLS; c++)
      if (c < lc0 || c >= lc1)
        col[n++] = mlsba__mpi_dfac_at(f, 0, c);
    for (int j = 0; j < n; j++, ci++)
      for (int64_t t = 0; t < npk; t++) {
        mv = w->mv + rd[t] * MV;
        copy_elem(es,
                  w->send + (size_t)(sdisp[mv[TO]] * width +
                                     ci * scount[mv[TO]] + mv[SSLOT]) *
                                es,
                  col[j] + (size_t)mv[SRC] * es);
      }
    if (es == 8)
      local_moves_8(col, n, lrd, nlr, lwr, nlw, w->tmp);
    else
      local_moves_4(col, n, lrd, nlr, lwr, nlw, w->tmp);
  }
  /* Point to point with the ranks that take part, not an all-to-all:
   * most pairs of a node column exchange nothing in a step (and SMPI's
   * pairwise all-to-all refuses columns of other than 2^k ranks). A
   * message (rows x width, column-major) in pieces of whole columns
   * (f->piece: counts and bytes below 2^31). */
  int nreq = 0;
  size_t row = (size_t)width * es;
  for (int r = 0; r < cq; r++)
    for (int dir = 0; dir < 2; dir++) {
      int64_t rows = dir == 0 ? rcount[r] : scount[r];
      char *at = dir == 0 ? w->recv + (size_t)rdisp[r] * row
                          : w->send + (size_t)sdisp[r] * row;
      int64_t per = mlsba__mpi_dfac_piece_cols(f, rows);
      for (int64_t j = 0; rows > 0 && j < width; j += per) {
        int64_t c = width - j < per ? width - j : per;
        char *piece = at + (size_t)(j * rows) * es;
        if (dir == 0)
          MPI_Irecv(piece, (int)(c * rows), f->type, r, SWAP_TAG, f->col,
                    &w->reqs[nreq++]);
        else
          MPI_Isend(piece, (int)(c * rows), f->type, r, SWAP_TAG, f->col,
                    &w->reqs[nreq++]);
      }
    }
  MPI_Waitall(nreq, w->reqs, MPI_STATUSES_IGNORE);
  if (nreq == 0 || f->skip)
    return;
  for (int64_t c = c0, ci = 0; c < c1; c++) {
    if (c >= lc0 && c < lc1)
      continue;
    char *col = mlsba__mpi_dfac_at(f, 0, c);
    for (int64_t t = 0; t < nwr; t++) {
      mv = w->mv + wr[t] * MV;
      if (mv[RSLOT] >= 0)
        copy_elem(es, col + (size_t)mv[DST] * es,
                  w->recv + (size_t)(rdisp[mv[FROM]] * width +
                                     ci * rcount[mv[FROM]] + mv[RSLOT]) *
                                es);
    }
    ci++;
  }
}

/* Step 3 on this rank: the step's moves on its local columns right of
 * the panel, which the update needs now, in two passes: first (ahead
 * nonzero) the next panel's columns [lcs, lcn) alone, where this rank
 * holds them, so that its node column factors that panel after an
 * exchange of p columns' rows rather than of every trailing column's
 * (HPL's lookahead swaps the next panel's columns first too); then the
 * rest. Every rank of a node column holds the same columns, so all of
 * them make the same passes. Those left of the panel (L's) need the
 * moves only in the factors returned, and take every later step's at
 * the end (left_moves()), in a run that skips the numbers (SMPI) too,
 * so that it charges what real ranks run. */
static void step_moves(const mlsba__mpi_dfac_t *f, lu_work_t *w,
                       const int64_t *pairs, int64_t nmoves, int64_t lcn,
                       int ahead) {
  if (ahead) {
    if (lcn > w->lcs)
      apply_moves(f, w, pairs, nmoves, w->lcs, lcn, 0, 0);
    return;
  }
  apply_moves(f, w, pairs, nmoves, lcn, f->lcols, 0, 0);
}

/* The interchanges of the steps after each of this node column's block
 * columns applied to it, once, at the end (LAPACK's factors: L's rows in
 * the final order). Walking the block columns from the right, the steps
 * after each are composed into one permutation of the rows (holds[r]:
 * the row whose content ends at r), applied to that block column's nb
 * columns alone as moves "r takes holds[r]", one exchange over the node
 * column per block column. A random matrix's pivots move nearly every
 * row below the block column, so each column is walked nearly in order:
 * half the elements the per-step moves would copy on L's side (each
 * row once, not once a step), read from a column in cache rather than
 * 2 nb scattered rows of every left column a step. Collective over the
 * node column, whose ranks hold the same block columns. */
static int left_moves(const mlsba__mpi_dfac_t *f, lu_work_t *w,
                      const int64_t *ipiv, int64_t kmax) {
  int64_t m = f->m, nb = f->nb, count = 0;
  const int64_t *mine =
      mlsba__layout_rank_cols(f->layout, (size_t)f->me, &count);
  int64_t *holds = malloc((size_t)m * sizeof *holds);
  int64_t *step = malloc((size_t)m * sizeof *step);
  int64_t *pairs = malloc(2 * (size_t)m * sizeof *pairs);
  lu_work_t big = *w;
  big.mv = malloc((size_t)m * MV * sizeof *big.mv);
  big.ord = malloc(6 * (size_t)m * sizeof *big.ord);
  big.tmp = malloc(PASS_COLS * (size_t)m * f->es);
  /* Shared between SMPI's ranks when nothing is computed: a block
   * column's rows, on every simulated rank at once. */
  big.send = mlsba__mpi_dfac_alloc(f, (size_t)m * (size_t)nb * f->es + 1);
  big.recv = mlsba__mpi_dfac_alloc(f, (size_t)m * (size_t)nb * f->es + 1);
  /* A pair's message here is up to m rows of a block column: more pieces
   * (f->piece) than a step's 2 nb rows, for which w->reqs is sized. */
  int cq;
  MPI_Comm_size(f->col, &cq);
  int64_t per = mlsba__mpi_dfac_piece_cols(f, m);
  big.reqs = malloc(2 * (size_t)cq * (size_t)((nb + per - 1) / per) *
                    sizeof *big.reqs);
  int err = holds && step && pairs && big.mv && big.ord && big.tmp &&
                    big.send && big.recv && big.reqs
                ? 0
                : mlsba__fail(MLSBA_ENOMEM,
                              "mlsba_mpi_getrf: out of memory for the "
                              "final interchanges (%lld rows)",
                              (long long)m);
  /* Every rank of the column passes the same verdict, then the same
   * exchanges. */
  MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_INT, MPI_MIN, f->col);
  int64_t steps = (kmax + nb - 1) / nb, upto = steps;
  for (int64_t r = 0; !err && r < m; r++)
    holds[r] = step[r] = r;
  for (int64_t b = count - 1; !err && b >= 0; b--) {
    int64_t bj = mine[b];
    if (bj + 1 >= steps)
      continue;
    /* Steps upto - 1 down to bj + 1 composed in front of the later
     * ones: step[r] is the row the step brings to r. */
    for (; upto > bj + 1; upto--) {
      int64_t k0 = (upto - 1) * nb, p = kmax - k0 < nb ? kmax - k0 : nb;
      for (int64_t i = 0; i < p; i++) {
        int64_t x = step[k0 + i];
        step[k0 + i] = step[ipiv[k0 + i] - 1];
        step[ipiv[k0 + i] - 1] = x;
      }
      for (int64_t r = k0; r < m; r++)
        holds[r] = step[holds[r]];
      for (int64_t i = 0; i < p; i++) {
        step[k0 + i] = k0 + i;
        step[ipiv[k0 + i] - 1] = ipiv[k0 + i] - 1;
      }
    }
    int64_t n = 0;
    for (int64_t r = (bj + 1) * nb; r < m; r++)
      if (holds[r] != r) {
        pairs[2 * n] = r;
        pairs[2 * n + 1] = holds[r];
        n++;
      }
    int64_t c0 = mlsba__mpi_dfac_cols_before(f, (size_t)f->me, bj * nb);
    int64_t c1 = mlsba__mpi_dfac_cols_before(f, (size_t)f->me, bj * nb + nb);
    apply_moves(f, &big, pairs, n, c0, c1, 0, 0);
  }
  free(holds);
  free(step);
  free(pairs);
  free(big.mv);
  free(big.ord);
  free(big.tmp);
  free(big.reqs);
  mlsba__mpi_dfac_free(f, big.send);
  mlsba__mpi_dfac_free(f, big.recv);
  return err;
}

/* Step 5's product on columns [c0, c1) of a range of this rank's
 * trailing columns (g->lc its first local column): C -= L U. */
typedef struct {
  const mlsba__mpi_dfac_t *f;
  const char *l, *u;
  int64_t mr, p, lr, lc, ldl, ldu;
} lu_gemm_t;

static void gemm_columns(const void *user, int64_t c0, int64_t c1) {
  const lu_gemm_t *g = user;
  const mlsba__mpi_dfac_t *f = g->f;
  mlsba__cpu_gemm(f->prec, 'N', 'N', g->mr, c1 - c0, g->p, -1.0, g->l, g->ldl,
                  g->u + (size_t)(c0 * g->ldu) * f->es, g->ldu, 1.0,
                  mlsba__mpi_dfac_at(f, g->lr, g->lc + c0), f->lda, 1);
}

/* Step 4's solve on columns [c0, c1) of a range of U's block row: A12
 * there solved with L11 in place, and copied into u (NULL: the update
 * reads it in place). Called from several threads on disjoint ranges. */
typedef struct {
  const mlsba__mpi_dfac_t *f;
  const void *l11;
  int64_t ldl, p;
  char *a12, *u;
} lu_solve_t;

static void solve_columns(const void *user, int64_t c0, int64_t c1) {
  const lu_solve_t *s = user;
  const mlsba__mpi_dfac_t *f = s->f;
  if (f->skip) /* SMPI's run without numbers: the time alone */
    return;
  char *a12 = s->a12 + (size_t)(c0 * f->lda) * f->es;
  mlsba__cpu_trsm(f->prec, 'L', 'L', 'N', 'U', s->p, c1 - c0, 1.0, s->l11,
                  s->ldl, a12, f->lda, 1);
  for (int64_t j = c0; s->u && j < c1; j++)
    memcpy(s->u + (size_t)(j * s->p) * f->es,
           s->a12 + (size_t)(j * f->lda) * f->es, (size_t)s->p * f->es);
}

/* U's block row, count elements at u, from the node column's rank root
 * to all of its ranks, in pieces of at most f->piece elements (U's block
 * row of a rank alone in its node row, nb x N, passes 2^31 bytes from
 * N = 279,621 at nb = 960 in double). A large row on a column of
 * CHAIN_RANKS or more goes as chain_update()'s pipeline instead, unless
 * its pieces would pass f->piece (the tests' knob). */
static void bcast_u(const mlsba__mpi_dfac_t *f, char *u, int64_t count,
                    int root) {
  for (int64_t at = 0; at < count; at += f->piece)
    MPI_Bcast(u + (size_t)at * f->es,
              (int)(count - at < f->piece ? count - at : f->piece), f->type,
              root, f->col);
}

/* Step 5, the trailing update, for this rank's local columns [lc0, lc1)
 * (within [w->lcs, f->lcols)) and its rows from global row k0 + p on (the
 * tail of its local array): A -= L U, with L this rank's rows of the
 * step's L (w->l, leading dimension their count) and U those columns of
 * U's block row (w->u, solved and received on them). Purely local; a
 * column is updated once a step. whole, first: the columns are a piece
 * of a step's update of whole columns, the first piece when first is
 * nonzero (mlsba__mpi_dfac_work_t); whole 0: a call of its own. */
static void update_part(const mlsba__mpi_dfac_t *f, lu_work_t *w, int64_t k0,
                        int64_t p, int64_t lc0, int64_t lc1, int64_t whole,
                        int first) {
  int64_t lr = mlsba__mpi_dfac_rows_before(f, (size_t)f->me, k0 + p);
  int64_t mr = f->lrows - lr, nc = lc1 - lc0;
  if (mr <= 0 || nc <= 0)
    return;
  lu_gemm_t g = {.f = f,
                 .l = w->la,
                 .u = w->ua + (size_t)((lc0 - w->lcs) * w->ldu) * f->es,
                 .mr = mr,
                 .p = p,
                 .lr = lr,
                 .lc = lc0,
                 .ldl = w->ldl,
                 .ldu = w->ldu};
  mlsba__mpi_dfac_work_t work = {.cols = nc,
                                 .whole = whole,
                                 .first = first,
                                 .unit_flops = 2.0 * (double)mr * (double)p,
                                 .run = gemm_columns,
                                 .user = &g};
  mlsba__mpi_dfac_update(f, &work);
}

static void update(const mlsba__mpi_dfac_t *f, lu_work_t *w, int64_t k0,
                   int64_t p, int64_t lc0, int64_t lc1) {
  update_part(f, w, k0, p, lc0, lc1, 0, 0);
}

/* The pieces a rank's update is cut into, the panel's messages progressed
 * between them. */
enum { PIECES = 8 };

/* update() on local columns [lc0, lc1) in at most PIECES pieces of whole
 * blocks, the next panel's messages (in flight: nonzero) progressed
 * between them: Open MPI moves a large message only while its sender is
 * inside MPI, so a holder that updated in one piece held the next panel
 * back until its update ended. Once this rank's part of the panel's
 * messages is done (before the first piece too), the columns left go in
 * one call: nothing is left to progress, and each piece is a GEMM of
 * its own that packs the step's L (mr x p) again. */
static void update_in_pieces(const mlsba__mpi_dfac_t *f, lu_work_t *w,
                             int64_t k0, int64_t p, int64_t lc0, int64_t lc1,
                             int in_flight) {
  int64_t blocks = (lc1 - lc0 + f->nb - 1) / f->nb;
  /* SMPI moves the messages meanwhile: one piece, the whole split. */
  int64_t per =
      mlsba__mpi_is_smpi() ? lc1 - lc0 : (blocks + PIECES - 1) / PIECES * f->nb;
  int done = !in_flight ||
             (!mlsba__mpi_is_smpi() && mlsba__mpi_deliver_test(&w->deliver));
  for (int64_t c = lc0; c < lc1; c += per) {
    if (done)
      per = lc1 - c;
    update(f, w, k0, p, c, c + per < lc1 ? c + per : lc1);
    if (!done)
      done = mlsba__mpi_deliver_test(&w->deliver);
  }
}

/* The columns of a piece of U's block row going down the node column as
 * a pipeline (chain_update), or 0: the row goes as one broadcast. */
static int64_t chain_piece_cols(const mlsba__mpi_dfac_t *f, int64_t p,
                                int64_t nc) {
  int cq;
  MPI_Comm_size(f->col, &cq);
  size_t col = (size_t)p * f->es;
  if (cq < CHAIN_RANKS || (size_t)nc * col < CHAIN_BYTES)
    return 0;
  int64_t per = (int64_t)((CHAIN_PIECE + col - 1) / col);
  int64_t cap = (int64_t)CHAIN_PER_HOP * (cq - 1);
  cap = cap < CHAIN_PIECES ? cap : CHAIN_PIECES;
  if ((nc + per - 1) / per > cap)
    per = (nc + cap - 1) / cap;
  /* A piece past the message limit (f->piece): the broadcast in pieces. */
  return per <= mlsba__mpi_dfac_piece_cols(f, p) ? per : 0;
}

/* Steps 4 and 5 on a large row of a node column of CHAIN_RANKS ranks or
 * more: U's block row (its owner's, solved, at u) goes down the column
 * as a pipeline, in pieces of per columns, each rank receiving piece j
 * from the rank before it (in the column's order from the owner, root)
 * and forwarding it to the next while it updates the columns of piece j,
 * so the step's U moves while the column updates. A binomial tree sent
 * the whole row log2(q) times in sequence; van de Geijn's scatter and
 * ring all-gather after it (lu90) about twice the row's time whatever
 * q, in 2 (q - 1) rounds each waiting for the one before, and every
 * column then updated after the whole row had come (lu32c: 0.34 s of a
 * Cluster A GPU column's 1.1 s). The pieces are one step's update
 * (mlsba__mpi_dfac_work_t's whole): each device keeps its share of the
 * whole and its rate there, as a device given them one after another
 * runs them as one queue. Each link carries the row once in and once
 * out, one piece at a time in each direction. */
static void chain_update(mlsba__mpi_dfac_t *f, lu_work_t *w, int64_t k0,
                         int64_t p, int64_t lc0, int64_t lc1, int64_t per,
                         int root, int in_flight) {
  int cq, me;
  MPI_Comm_size(f->col, &cq);
  MPI_Comm_rank(f->col, &me);
  size_t es = f->es;
  char *u = w->u + (size_t)((lc0 - w->lcs) * p) * es;
  int64_t nc = lc1 - lc0, pieces = (nc + per - 1) / per;
  int pos = (me - root + cq) % cq, prev = (me - 1 + cq) % cq,
      next = (me + 1) % cq;
  MPI_Request *recv = w->reqs, send = MPI_REQUEST_NULL;
  /* Every piece's receive posted at once: they match in order. */
  for (int64_t j = 0; pos > 0 && j < pieces; j++) {
    int64_t c = j * per, n = (nc - c < per ? nc - c : per) * p;
    MPI_Irecv(u + (size_t)(c * p) * es, (int)n, f->type, prev, U_TAG, f->col,
              &recv[j]);
  }
  int done = !in_flight;
  for (int64_t j = 0; j < pieces; j++) {
    int64_t c = j * per, cols = nc - c < per ? nc - c : per;
    if (pos > 0)
      MPI_Wait(&recv[j], MPI_STATUS_IGNORE);
    if (pos < cq - 1) {
      MPI_Wait(&send, MPI_STATUS_IGNORE);
      MPI_Isend(u + (size_t)(c * p) * es, (int)(cols * p), f->type, next, U_TAG,
                f->col, &send);
    }
    mlsba__mpi_dfac_phase(f, MLSBA__MPI_SWAP);
    update_part(f, w, k0, p, lc0 + c, lc0 + c + cols, nc, j == 0);
    mlsba__mpi_dfac_phase(f, MLSBA__MPI_UPDATE);
    if (!done)
      done = mlsba__mpi_deliver_test(&w->deliver);
  }
  MPI_Wait(&send, MPI_STATUS_IGNORE);
  mlsba__mpi_dfac_phase(f, MLSBA__MPI_SWAP);
}

/* Steps 4 and 5 for this rank's local columns [lc0, lc1) past the
 * panel: U's block row there, solved by its owner in the node column
 * with the panel's L11, each of the node's devices solving its own
 * columns as the step's split gives them (factor_update.c), down the
 * column into w->u (its columns from w->lcs on, leading dimension p),
 * and the columns updated: as a pipeline (chain_update) where the row is
 * large and the column long, else one broadcast and then the update
 * (in_pieces nonzero: update_in_pieces(), the next panel in flight
 * when in_flight is nonzero). Collective over the node column, whose
 * ranks all hold the same columns. */
static void solve_update(mlsba__mpi_dfac_t *f, lu_work_t *w, const void *panel,
                         int64_t k0, int64_t p, int64_t lc0, int64_t lc1,
                         int in_pieces, int in_flight) {
  int64_t nc = lc1 - lc0, ldp = f->m - k0;
  if (nc <= 0)
    return;
  size_t owner = mlsba__layout_row_owner(f->layout, f->mycol, k0 / f->nb);
  char *u = w->u + (size_t)((lc0 - w->lcs) * p) * f->es;
  if (owner == (size_t)f->me) {
    lu_solve_t s = {.f = f,
                    .l11 = panel,
                    .ldl = ldp,
                    .p = p,
                    .a12 = mlsba__mpi_dfac_at(f, local_row(f, k0), lc0),
                    .u = w->alone ? NULL : u};
    mlsba__mpi_dfac_work_t work = {.cols = nc,
                                   .solve = 1,
                                   .unit_flops = (double)(p * p),
                                   .run = solve_columns,
                                   .user = &s};
    mlsba__mpi_dfac_update(f, &work);
  }
  int root = mlsba__mpi_dfac_col_rank(f, owner);
  int64_t per = w->alone ? 0 : chain_piece_cols(f, p, nc);
  if (per > 0) {
    chain_update(f, w, k0, p, lc0, lc1, per, root, in_pieces && in_flight);
    return;
  }
  /* A rank alone in its node column: the update reads it in place
   * (w->ua). */
  if (!w->alone)
    bcast_u(f, u, p * nc, root);
  mlsba__mpi_dfac_phase(f, MLSBA__MPI_SWAP);
  if (in_pieces)
    update_in_pieces(f, w, k0, p, lc0, lc1, in_flight);
  else
    update(f, w, k0, p, lc0, lc1);
  mlsba__mpi_dfac_phase(f, MLSBA__MPI_UPDATE);
}

/* Steps 1 and 2 of panel k1 (p1 columns): factored by its node column,
 * and on its way with piv to every rank, each receiving its own rows of
 * it into panel (factor_deliver.c); every rank calls it once a step, in
 * order. */
static void start_panel(const mlsba__mpi_dfac_t *f, lu_work_t *w, int64_t k1,
                        int64_t p1, void *panel, int *piv) {
  mlsba__mpi_dfac_beside(f, 1);
  if (mlsba__layout_bcol_column(f->layout, k1 / f->nb) == f->mycol)
    mlsba__mpi_lu_panel(f, k1, p1, piv, w->scratch, w->gather);
  mlsba__mpi_deliver_start(&w->deliver, k1, p1, panel, piv, (int)p1 + 1);
  mlsba__mpi_dfac_beside(f, 0);
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
  if (err == 0)
    err = mlsba__lapack_check("mlsba_mpi_getrf");
  if ((err = mlsba__mpi_dfac_open(desc, prec, a, err,
                                  mlsba__mpi_dfac_panels(opts),
                                  "mlsba_mpi_getrf", &f)) != 0)
    return err;
  lu_work_t w = {0};
  err = work_alloc(&f, &w);
  if ((err = mlsba__mpi_agree(f.comm, err)) != 0 ||
      (err = mlsba__mpi_dfac_node_open(&f, opts, "mlsba_mpi_getrf")) != 0) {
    work_free(&f, &w);
    mlsba__mpi_dfac_close(&f);
    return err;
  }
  *info = 0;
  size_t in_column;
  (void)mlsba__layout_column_ranks(f.layout, f.mycol, &in_column);
  w.alone = in_column == 1;
  int64_t kmax = f.m < f.n ? f.m : f.n;
  char *cur = f.panel, *nxt = w.panel2;
  int *pcur = w.piv, *pnxt = w.piv2;
  mlsba__mpi_dfac_phase(&f, MLSBA__MPI_OTHER);
  start_panel(&f, &w, 0, kmax < f.nb ? kmax : f.nb, nxt, pnxt);
  mlsba__mpi_dfac_phase(&f, MLSBA__MPI_PANEL);
  for (int64_t k0 = 0; k0 < kmax; k0 += f.nb) {
    int64_t p = kmax - k0 < f.nb ? kmax - k0 : f.nb;
    char *x = cur;
    cur = nxt;
    nxt = x;
    int *y = pcur;
    pcur = pnxt;
    pnxt = y;
    mlsba__mpi_deliver_wait(&w.deliver);
    mlsba__mpi_dfac_phase(&f, MLSBA__MPI_WAIT);
    for (int64_t i = 0; i < p; i++)
      ipiv[k0 + i] = k0 + pcur[i];
    if (pcur[p] > 0 && *info == 0)
      *info = k0 + pcur[p];
    int64_t *pairs = w.moves + 4 * f.nb;
    int64_t nmoves = compose_moves(ipiv, k0, p, w.moves, pairs);
    int64_t k1 = k0 + p, p1 = kmax - k1 < f.nb ? kmax - k1 : f.nb;
    w.lcs = mlsba__mpi_dfac_cols_before(&f, (size_t)f.me, k1);
    /* The next panel's columns, where this rank holds them. */
    int64_t lcn = w.lcs;
    if (k1 < kmax && mlsba__layout_bcol_column(f.layout, k1 / f.nb) == f.mycol)
      lcn = mlsba__mpi_dfac_cols_before(&f, (size_t)f.me, k1 + p1);
    step_moves(&f, &w, pairs, nmoves, lcn, 1);
    mlsba__mpi_dfac_phase(&f, MLSBA__MPI_SWAP);
    /* A rank alone in its node column holds every row in the global
     * order: its rows of L are the panel's own, U's block row its own. */
    if (w.alone) {
      w.la = cur + (size_t)p * f.es;
      w.ldl = f.m - k0;
      w.ua = mlsba__mpi_dfac_at(&f, k0, w.lcs);
      w.ldu = f.lda;
    } else {
      mlsba__mpi_dfac_my_panel_rows(&f, k0, p, cur, k1, w.l);
      w.la = w.l;
      w.ldl = f.lrows - mlsba__mpi_dfac_rows_before(&f, (size_t)f.me, k1);
      w.ua = w.u;
      w.ldu = p;
    }
    mlsba__mpi_dfac_phase(&f, MLSBA__MPI_OTHER);
    /* The next panel's columns first where this rank holds them. */
    if (lcn > w.lcs)
      solve_update(&f, &w, cur, k0, p, w.lcs, lcn, 0, 0);
    if (k1 < kmax)
      start_panel(&f, &w, k1, p1, nxt, pnxt);
    mlsba__mpi_dfac_phase(&f, MLSBA__MPI_PANEL);
    step_moves(&f, &w, pairs, nmoves, lcn, 0);
    mlsba__mpi_dfac_phase(&f, MLSBA__MPI_SWAP);
    solve_update(&f, &w, cur, k0, p, lcn, f.lcols, 1, k1 < kmax);
    mlsba__mpi_dfac_step_done(&f, "mlsba_mpi_getrf", k0 / f.nb);
  }
  int e = mlsba__mpi_agree(f.comm, left_moves(&f, &w, ipiv, kmax));
  err = err ? err : e;
  mlsba__mpi_dfac_phase(&f, MLSBA__MPI_SWAP);
  mlsba__mpi_dfac_node_close(&f, report);
  work_free(&f, &w);
  mlsba__mpi_dfac_close(&f);
  return err;
}
