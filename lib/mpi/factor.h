/* LU and Cholesky across ranks (<mlsba/mpi.h>): what the factorizations'
 * modules share. factor_layout.c makes the descriptions
 * (mlsba_mpi_factor_matrix) and opens a run on one (this file's
 * mlsba__mpi_dfac_t: the layout, this rank's local array and its node
 * column's communicator); factor_lu.c, factor_chol.c and factor_solve.c
 * are the steps.
 *
 * Every step works on the layout's structure (lib/partition/layout.h): a
 * block column belongs to one node column, whose ranks all hold the same
 * block columns and split its block rows between them; local rows and
 * columns follow the global order. So the rows of a rank from a global
 * row on, and its columns from a global column on, are always the tail of
 * its local array: each step's trailing part is one dense rectangle. */
#ifndef MLSBA_MPI_FACTOR_H
#define MLSBA_MPI_FACTOR_H

#include <stddef.h>
#include <stdint.h>

#include "../partition/layout.h"
#include "internal.h"

/* The layout behind a description made by mlsba_mpi_factor_matrix();
 * NULL for any other description. */
const mlsba__layout_t *
mlsba__mpi_factor_layout_of(const mlsba_mpi_matrix_t *desc);

/* The phases of a step on a rank (mlsba_mpi_factor_report_t's). */
enum {
  MLSBA__MPI_PANEL,
  MLSBA__MPI_WAIT,
  MLSBA__MPI_SWAP,
  MLSBA__MPI_UPDATE,
  MLSBA__MPI_OTHER,
  MLSBA__MPI_PHASES
};

/* One run of a factorization or a solve on this rank. */
typedef struct mlsba__mpi_dfac {
  MPI_Comm comm; /* the description's */
  MPI_Comm col;  /* this rank's node column, ordered by rank */
  int me;
  const mlsba__layout_t *layout;
  int64_t m, n, nb;
  size_t mycol;         /* this rank's node column */
  int64_t lrows, lcols; /* its local array, in elements */
  int64_t lda;          /* the description's leading dimension */
  mlsba_precision_t prec;
  size_t es;         /* element size */
  MPI_Datatype type; /* MPI_DOUBLE or MPI_FLOAT */
  char *a;           /* the local array */
  /* The panel's buffer (m x nb elements; NULL for a solve), into which
   * factor_deliver.c receives the rows this rank reads (a factorization
   * keeps a second one of its own for the next step's). */
  void *panel;
  /* Nonzero: no numbers are computed, every phase's time is charged
   * (mlsba_mpi_factor_opts_t::skip_compute, SMPI only); the buffers are
   * then shared between the simulated ranks (mlsba__mpi_dfac_alloc). */
  int skip;
  /* The most elements one MPI message carries: a step's larger messages
   * (a panel's rows, U's block row, the interchanged rows) go in pieces
   * of at most this many, so that neither a count nor its bytes pass
   * 2^31 (MPI's int count: the check that kept whole messages below it,
   * max(M, N) x nb x 16 bytes, refused Keeneland's 64 nodes at seed 004's
   * tile). 2^30 bytes; MLSBA_MPI_PIECE_BYTES lowers it (the
   * tests' knob: every message in many pieces at small sizes). */
  int64_t piece;
  /* LU's panels of at most this many rows, on a node column of 4 ranks
   * or more, are gathered onto one rank and factored there
   * (factor_panel.c); MLSBA_MPI_GATHER_ROWS sets it (0: never; the
   * tests' knob, so that small matrices take the pivot search across
   * ranks too), the same on every rank (the smallest). */
  int64_t gather_rows;
  /* The node's devices that share the trailing update (factor_update.c);
   * NULL: the calling thread updates alone. */
  struct mlsba__mpi_dfac_node *node;
  /* Where this rank's time goes (the report's phases): seconds per
   * phase, and at the last step's end, the call's start, the clock's
   * last reading, and MLSBA_VERBOSE's level. */
  double phase[MLSBA__MPI_PHASES], step0[MLSBA__MPI_PHASES], t0, mark;
  int verbose;
} mlsba__mpi_dfac_t;

/* Whole columns of `rows` elements per piece of a message (f->piece):
 * 1 at least (a column fits, by the size checks). */
static inline int64_t mlsba__mpi_dfac_piece_cols(const mlsba__mpi_dfac_t *f,
                                                 int64_t rows) {
  int64_t per = rows > 0 ? f->piece / rows : f->piece;
  return per < 1 ? 1 : per;
}

/* The phases' clock: simulated time under SMPI, else the host's. */
double mlsba__mpi_dfac_clock(void);
/* Charges the time since the last mark to phase ph and marks now. */
void mlsba__mpi_dfac_phase(mlsba__mpi_dfac_t *f, int ph);
/* The end of step k (every rank calls it once a step, in order): the
 * node's step times (mlsba__mpi_dfac_node_step_done), and with
 * MLSBA_VERBOSE=2 the step's phases printed. */
void mlsba__mpi_dfac_step_done(mlsba__mpi_dfac_t *f, const char *call,
                               int64_t k);
/* mlsba__mpi_dfac_open()'s panels: bits of what the run needs, the
 * panels' buffers and whether it skips the numbers (from the options:
 * mlsba__mpi_dfac_panels()). */
enum { MLSBA__DFAC_PANELS = 1, MLSBA__DFAC_SKIP = 2 };
int mlsba__mpi_dfac_panels(const mlsba_mpi_factor_opts_t *opts);

/* Checks what every factorization and solve needs (desc one of
 * mlsba_mpi_factor_matrix()'s, prec, a where the rank owns elements),
 * plus this rank's own verdict `err` on the call's other arguments (0, or
 * a code with its message set), and agrees on them across the ranks: a
 * fault on any rank fails every rank with that rank's message. Then opens
 * the node column's communicator. Collective. Returns 0 or the agreed
 * code (nothing to close then). panels: nonzero to allocate the panels'
 * buffers (the factorizations). */
int mlsba__mpi_dfac_open(const mlsba_mpi_matrix_t *desc, mlsba_precision_t prec,
                         const void *a, int err, int panels, const char *call,
                         mlsba__mpi_dfac_t *f);
void mlsba__mpi_dfac_close(mlsba__mpi_dfac_t *f);
/* A run's buffer: private, or shared between SMPI's simulated ranks when
 * the run skips the numbers (f->skip). */
void *mlsba__mpi_dfac_alloc(const mlsba__mpi_dfac_t *f, size_t bytes);
void mlsba__mpi_dfac_free(const mlsba__mpi_dfac_t *f, void *p);

/* Rank r's local rows (columns) before global row (column) g: the local
 * index of g when r holds it, else of the first row it holds after g. */
int64_t mlsba__mpi_dfac_rows_before(const mlsba__mpi_dfac_t *f, size_t r,
                                    int64_t g);
int64_t mlsba__mpi_dfac_cols_before(const mlsba__mpi_dfac_t *f, size_t r,
                                    int64_t g);
/* For each block row of rank r from global row g0 on: calls back with the
 * block's first global row, its row count, and its first local row. */
#define MLSBA__MPI_FOR_RANK_ROWS(f, r, g0, G, LEN, LR, BODY)                   \
  do {                                                                         \
    int64_t cnt_, lr_ = 0;                                                     \
    const int64_t *blk_ = mlsba__layout_rank_rows((f)->layout, (r), &cnt_);    \
    for (int64_t i_ = 0; i_ < cnt_; i_++) {                                    \
      int64_t s_ = blk_[i_] * (f)->nb, e_ = s_ + (f)->nb;                      \
      e_ = e_ < (f)->m ? e_ : (f)->m;                                          \
      int64_t from_ = s_ > (g0) ? s_ : (g0);                                   \
      if (from_ < e_) {                                                        \
        int64_t G = from_, LEN = e_ - from_, LR = lr_ + (from_ - s_);          \
        BODY;                                                                  \
      }                                                                        \
      lr_ += e_ - s_;                                                          \
    }                                                                          \
  } while (0)
/* Copies rows x cols elements between two column-major arrays. */
void mlsba__mpi_copy_block(size_t es, int64_t rows, int64_t cols,
                           const void *src, int64_t lds, void *dst,
                           int64_t ldd);
/* Local element (lr, lc) of this rank. */
void *mlsba__mpi_dfac_at(const mlsba__mpi_dfac_t *f, int64_t lr, int64_t lc);
/* This rank's place in comm (rank) of its node column's communicator. */
int mlsba__mpi_dfac_col_rank(const mlsba__mpi_dfac_t *f, size_t rank);

/* This rank's rows from global row g on, taken from the panel of step k0
 * (m - k0 rows, p columns), packed into out (their count rows, leading
 * dimension that count). Returns the count. */
int64_t mlsba__mpi_dfac_my_panel_rows(const mlsba__mpi_dfac_t *f, int64_t k0,
                                      int64_t p, const void *panel, int64_t g,
                                      void *out);

/* LU's panel of step k (rows [k0, m) of columns [k0, k0 + p)) factorized
 * in place by the ranks of block column k's node column, each on its own
 * rows (factor_panel.c): on return their local arrays hold L and the
 * diagonal block's owner U11 too, as LAPACK's ?getrf leaves a panel;
 * piv[0..p) the pivots (1-based rows of the panel, LAPACK's choice: the
 * first of the largest |value|) and piv[p] the first zero pivot (1-based
 * in the panel, 0 if none), the same on every rank of the node column.
 * Collective over that node column only. scratch:
 * mlsba__mpi_lu_panel_bytes() bytes; gather: mlsba__mpi_lu_gather_bytes()
 * bytes (where that is not 0; else NULL), for a short panel gathered
 * onto one rank (factor_panel.c). */
void mlsba__mpi_lu_panel(const mlsba__mpi_dfac_t *f, int64_t k0, int64_t p,
                         int *piv, void *scratch, void *gather);
size_t mlsba__mpi_lu_panel_bytes(const mlsba__mpi_dfac_t *f);
size_t mlsba__mpi_lu_gather_bytes(const mlsba__mpi_dfac_t *f);
/* The default of mlsba__mpi_dfac_t's gather_rows. */
int64_t mlsba__mpi_lu_gather_rows(void);

/* ---- factor_pivot.c: LU's pivot search across a node column -------- */

/* A slot of the search: a header of MLSBA__PIVOT_HEAD doubles (the
 * candidate's |value|, or -1 where the rank has no row left; its global
 * row; nonzero where the slot carries the current row; the rows' width
 * in elements; the element's size in bytes; how many of the candidate
 * row's first elements every rank reads, the rest read by the root
 * alone), the candidate's row, then the current row. */
enum {
  MLSBA__PIVOT_VALUE,
  MLSBA__PIVOT_GROW,
  MLSBA__PIVOT_HAS_CUR,
  MLSBA__PIVOT_WIDTH,
  MLSBA__PIVOT_ELEM,
  MLSBA__PIVOT_NEED,
  MLSBA__PIVOT_HEAD
};
/* The largest node column whose search is one flat round. */
enum { MLSBA__PIVOT_FLAT_MAX = 32 };
/* A slot's bytes for rows of nb elements of es bytes (a multiple of 16),
 * and the scratch the exchange needs on a column of cq ranks. */
size_t mlsba__mpi_pivot_slot(int64_t nb, size_t es);
size_t mlsba__mpi_pivot_scratch(int cq, size_t slot);
/* Every rank of col passes its slot `mine` and gets in `all` the best
 * candidate of all the slots (the larger |value|, a NaN above any
 * number, a row above none, on a tie the smaller global row) and the
 * current row from the one slot that has it: the same on every rank,
 * but that only rank `root` (of col) is sure to get the best candidate's
 * row whole, every other rank its first NEED elements (the rest of its
 * row in `all` is any slot's). One flat round on a column of at most
 * flat_max ranks, else ceil(log2 q) rounds (factor_pivot.c). Collective
 * over col. */
void mlsba__mpi_pivot_exchange(MPI_Comm col, int flat_max, size_t slot,
                               int root, const void *mine, void *all,
                               void *scratch);

/* ---- factor_deliver.c: a factored panel to the ranks that read it ---- */

/* A panel in flight: each rank receives only the block rows of it that it
 * reads (LU: its own; Cholesky: its own and its block columns'), point to
 * point from the ranks of the panel's node column that hold them, and
 * the pivots (LU) or the info (Cholesky) from the diagonal block's owner.
 * One panel in flight at a time; every rank calls start and wait once a
 * step, in order. */
typedef struct mlsba__mpi_deliver {
  const mlsba__mpi_dfac_t *f;
  int lower; /* Cholesky's needs, else LU's */
  int q;     /* the ranks */
  int64_t k, k0, p;
  size_t c;          /* the panel's node column */
  void *panel;       /* where its rows land (m - k0 rows, that leading dim.) */
  MPI_Request *reqs; /* the rows' receives first, then the rest */
  size_t most;       /* reqs' room: every message in its pieces */
  int nreq;
  int *src_of;          /* each request's source (a receive), else -1 - its
                           destination (a piece of rows sent), else -1 - q */
  int *piece_of;        /* each receive's piece */
  int *index;           /* MPI_Testsome's completed requests */
  unsigned char *flags; /* factor_deliver.c's per-rank flags */
  int first_left;       /* pieces to the next panel's node column not yet
                           gone, the others held back until then */
  int64_t unposted;     /* pieces of this rank's messages not yet posted */
  int64_t pc;           /* Cholesky: every message's piece, in columns */
  int np, npmax;        /* Cholesky: pieces a message, their most */
  int *q_ready, *q_posted, *q_flight; /* per destination: the pieces of
                           its message ready to go, posted, in flight */
  unsigned char *got;  /* q x npmax: a source's pieces arrived, unpacked */
  size_t *pos;         /* each rank's place in its node column */
  size_t next;         /* the next panel's node column */
  size_t *parent;      /* 2 x node columns: each one's parent in the step's tree
                          of the row broadcast (Cholesky), and that tree's order */
  unsigned char *cut;  /* node columns: whose chain (Cholesky) is cut at its
                          wrap this step (factor_deliver.c's cut_rings) */
  int64_t *count;      /* 7 q: elements sent to and received from each rank,
                          offsets, cursors, each source's first and last
                          block row (first -2: not consecutive), and where
                          its rows land in recv */
  MPI_Datatype *types; /* 2 q: the receives straight into the panel (a
                          full piece's, the last piece's) */
  char *send, *recv;   /* the messages' buffers */
} mlsba__mpi_deliver_t;

/* The buffers for f's panels; lower: Cholesky. Returns 0 or
 * MLSBA_ENOMEM (then close it all the same). Not collective. */
int mlsba__mpi_deliver_open(const mlsba__mpi_dfac_t *f, int lower,
                            mlsba__mpi_deliver_t *d);
void mlsba__mpi_deliver_close(mlsba__mpi_deliver_t *d);
/* Panel k0 (p columns), factored in the local arrays of its node
 * column's ranks, on its way into each rank's panel buffer (the rows it
 * reads), and piv (npiv ints, the diagonal block owner's) to every rank
 * outside that node column. */
void mlsba__mpi_deliver_start(mlsba__mpi_deliver_t *d, int64_t k0, int64_t p,
                              void *panel, int *piv, int npiv);
/* Posts the forwards (Cholesky's rows that this rank passes on down its
 * node column) whose rows have come; never waits. Returns nonzero while
 * some of this rank's messages are still to post. */
int mlsba__mpi_deliver_progress(mlsba__mpi_deliver_t *d);
/* Whether the messages have all gone (nonzero), progressing them; under
 * SMPI, which moves them meanwhile, whether every forward is posted. */
int mlsba__mpi_deliver_test(mlsba__mpi_deliver_t *d);
/* Waits for them, and puts the rows received in place. */
void mlsba__mpi_deliver_wait(mlsba__mpi_deliver_t *d);

/* ---- factor_update.c: the trailing update on the node's devices ------ */

typedef struct mlsba__mpi_dfac_node mlsba__mpi_dfac_node_t;

/* Opens this rank's node for f (opts->platform; "auto", the rank's bound
 * cores, by default) before the matrix is touched, and agrees on the
 * outcome: a platform that fails on one rank fails every rank with its
 * message. Collective. */
int mlsba__mpi_dfac_node_open(mlsba__mpi_dfac_t *f,
                              const mlsba_mpi_factor_opts_t *opts,
                              const char *call);
/* The end of a step on this rank (every rank calls it once a step, in
 * order): its time, since the previous step's end, goes to the report's
 * step_s, and the step's update time to step_update_s. */
void mlsba__mpi_dfac_node_step_done(const mlsba__mpi_dfac_t *f);
/* Fills report (NULL: none) with what the node did, and closes it. */
void mlsba__mpi_dfac_node_close(mlsba__mpi_dfac_t *f,
                                mlsba_mpi_factor_report_t *report);

/* One step's trailing update on this rank: its local trailing columns
 * [0, cols) are the units. run updates columns [c0, c1) single threaded
 * (it is called from several threads at once on disjoint ranges);
 * column_flops gives one column's flops (NULL: every column costs
 * unit_flops). solve: nonzero for a solve that comes before the step's
 * update (LU's block row of U, each device solving its own columns): its
 * time is the report's other compute, it is not a step, and it teaches
 * the devices' update models nothing. whole (0: cols): the columns of the
 * step's update of which these cols are one piece, the pieces given in
 * order, the first at offset 0 (first nonzero): the split is the whole's
 * and each device's rate its rate at its share of the whole, scaled to
 * the piece, as a device given the pieces one after another runs them as
 * one queue (an accelerator's profile pays its fixed cost, the ramp, once
 * a step); the step is counted at its first piece. */
typedef struct mlsba__mpi_dfac_work {
  int64_t cols;
  int64_t whole;
  int first;
  int solve;
  double unit_flops;
  double (*column_flops)(const void *user, int64_t c);
  void (*run)(const void *user, int64_t c0, int64_t c1);
  const void *user;
} mlsba__mpi_dfac_work_t;

/* The update split between f's node's devices by lib/factor's per-step
 * split at this step's size (mlsba__factor_split), the devices' models
 * learnt from their times (real) or taken from their profiles
 * (simulated: virtual time, charged to SMPI's clock). Never fails: what
 * a device could not update, the calling thread does. */
void mlsba__mpi_dfac_update(const mlsba__mpi_dfac_t *f,
                            const mlsba__mpi_dfac_work_t *w);

/* Simulated nodes: on (nonzero), the compute charged from now on (the
 * next panel's, on the node's panel cores) runs beside the next update,
 * which the node's other devices begin meanwhile: the split gives each
 * panel core that much less of it (lib/factor's panel device). off:
 * charged as before again. The credit lapses at the step's end. Nothing
 * on a real node. */
void mlsba__mpi_dfac_beside(const mlsba__mpi_dfac_t *f, int on);
/* Simulated nodes: fn(user) called between slices of each update's
 * simulated time (a rank in a real update calls into MPI between the
 * pieces of its columns; a simulated one spends its time in one call,
 * and forwarded messages would wait for its end), in short slices while
 * it returns nonzero (messages still to post), the rest at once when
 * it returns 0. NULL: none. */
void mlsba__mpi_dfac_progress(const mlsba__mpi_dfac_t *f, int (*fn)(void *),
                              void *user);

/* The threads a real node's panel runs its kernels on (BLIS's threads,
 * from the calling thread while the node's executor is idle): one a core
 * of the node (lib/factor's solves' count), 1 on a node of one core or a
 * simulated one. */
unsigned mlsba__mpi_dfac_threads(const mlsba__mpi_dfac_t *f);

/* The time of a compute phase other than the update (the panel's
 * operations) of `flops` on `rows` rows of this rank, charged on a
 * simulated node at the speed of its panel cores together (the devices
 * of its slowest one's kind that drive no accelerator, each taking a
 * block of rows at least, at the load of its rows x nb elements) to the
 * rank's simulated clock (mlsba__mpi_spend) and its report's other_s;
 * nothing on a real node, whose wall clock has it. */
void mlsba__mpi_dfac_charge(const mlsba__mpi_dfac_t *f, double flops,
                            double rows);
/* The time of copying `elements` elements within this rank's memory (the
 * row interchanges), charged to the same clock and other_s: at the node
 * file's host memory ("memory": latency + bytes / bandwidth) where
 * it gives one; else a copied element costs two flops (a load and a
 * store) at one panel core's speed on a one-block load, its slowest. */
void mlsba__mpi_dfac_charge_copy(const mlsba__mpi_dfac_t *f, double elements);

#endif
