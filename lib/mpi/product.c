/* The heterogeneous two-dimensional blocked product (Clarke et al. §4,
 * after ScaLAPACK's SUMMA): C = op(A) op(B), rank r holding the rectangle
 * rows [row0, row0 + rows) x columns [col0, col0 + cols) of C, the same
 * rows of op(A) over its arrangement column's share of k, and the same
 * columns of op(B) over its own share of k (plan.c). Step p (of
 * ceil(k / b), the last one narrower when b does not divide k) needs, on
 * every rank, its rows of block column p of op(A) (the panel A_(b),
 * rows x kb) and its columns of block row p of op(B) (the panel B_(b),
 * kb x cols):
 *  - block column p of op(A) lies in one column of the arrangement; it
 *    travels to the other columns down a binomial tree over the columns,
 *    each rank receiving its rows from the ranks of its parent column
 *    whose rows overlap its own, then passing them on to the overlapping
 *    ranks of its child columns (farthest first). Every rank still
 *    receives its rows once; a rank's link carries its rows out at most
 *    log2(columns) times, where the owners sending straight to every
 *    column would carry them once per column (31 times at 1000 nodes);
 *  - block row p of op(B) lies, in each column of the arrangement, in the
 *    one rank whose share of k holds it; it broadcasts it down its
 *    column (a tree, as SUMMA does).
 * Then every rank's devices update C' += A_(b) B_(b), split by columns,
 * while the next step's panels travel (two sets of panels take turns). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "internal.h"

typedef struct {
  int64_t col;
  int *ranks; /* by increasing row */
  int count;
} column_t;

typedef struct {
  const mlsba__mpi_layout_t *lay;
  int me;
  column_t *cols;
  int ncols;
  int64_t steps;     /* ceil(k / b) */
  int *col_of_panel; /* steps entries: the column holding block column p */
  int mycol;
} plan_t;

/* Ranks in arrangement order: by column, then by row. */
typedef struct {
  int64_t col, row;
  int rank;
} place_t;

static int by_place(const void *x, const void *y) {
  const place_t *a = x, *b = y;
  if (a->col != b->col)
    return a->col < b->col ? -1 : 1;
  return a->row < b->row ? -1 : a->row > b->row;
}

/* Safe twice: plan_make frees what it made when it fails, and its caller
 * frees the plan on every path. */
static void plan_free(plan_t *P) {
  if (P->cols)
    free(P->cols[0].ranks);
  free(P->cols);
  free(P->col_of_panel);
  P->cols = NULL;
  P->col_of_panel = NULL;
}

static int plan_make(const mlsba__mpi_layout_t *lay, int me, plan_t *P) {
  memset(P, 0, sizeof *P);
  P->lay = lay;
  P->me = me;
  int q = lay->q;
  P->steps = (lay->k + lay->b - 1) / lay->b;
  int *order = malloc((size_t)q * sizeof *order);
  P->cols = calloc((size_t)q, sizeof *P->cols);
  /* At most 2^31 steps (k fits an int); a plan larger than memory fails
   * here, as the caller's message says. */
  P->col_of_panel = P->steps <= INT_MAX
                        ? malloc((size_t)P->steps * sizeof *P->col_of_panel)
                        : NULL;
  place_t *pl = malloc((size_t)q * sizeof *pl);
  if (!order || !P->cols || !P->col_of_panel || !pl) {
    free(order);
    free(pl);
    plan_free(P);
    return mlsba__fail(MLSBA_ENOMEM, "out of memory");
  }
  for (int r = 0; r < q; r++)
    pl[r] = (place_t){lay->part[r].col0, lay->part[r].row0, r};
  qsort(pl, (size_t)q, sizeof *pl, by_place);
  for (int r = 0; r < q; r++)
    order[r] = pl[r].rank;
  free(pl);
  P->cols[0].ranks = order; /* the columns share the sorted array */
  for (int64_t p = 0; p < P->steps; p++)
    P->col_of_panel[p] = -1;
  for (int i = 0; i < q; i++) {
    int r = order[i];
    const mlsba__mpi_part_t *x = &lay->part[r];
    column_t *c = &P->cols[P->ncols > 0 ? P->ncols - 1 : 0];
    if (P->ncols == 0 || x->col0 != c->col) {
      c = &P->cols[P->ncols++];
      c->col = x->col0;
      c->ranks = order + i;
      c->count = 0;
      for (int64_t k = x->ak0; k < x->ak0 + x->aks; k += lay->b)
        P->col_of_panel[k / lay->b] = P->ncols - 1;
    }
    c->count++;
    if (r == me)
      P->mycol = P->ncols - 1;
  }
  for (int64_t p = 0; p < P->steps; p++)
    if (P->col_of_panel[p] < 0) {
      plan_free(P);
      return mlsba__fail(MLSBA_EINVAL,
                         "block column %lld of op(A) has no owner in the "
                         "layout",
                         (long long)p);
    }
  return 0;
}

/* Posts one message of a strided piece: count runs of len elements,
 * stride apart, at base. A simulated node moves the same number of
 * elements as one contiguous run (at base, which the caller places so
 * that pieces never overlap): its bytes are never read, and SimGrid then
 * neither packs them nor copies its shared buffers. */
static void post(int send, int sim, void *base, int count, int64_t len,
                 int64_t stride, MPI_Datatype elem, int peer, int tag,
                 MPI_Comm comm, MPI_Request *req, MPI_Datatype *type) {
  int n = 1;
  *type = MPI_DATATYPE_NULL;
  if ((sim || count == 1) && count * len > INT_MAX) {
    /* Over an int's count: len elements as one unit, count of them (len
     * <= N fits an int, as the layer refuses a larger N). */
    MPI_Type_contiguous((int)len, elem, type);
    MPI_Type_commit(type);
    n = count;
  } else if (sim || count == 1) { /* the basic type: SMPI copies nothing */
    n = (int)(count * len);
  } else {
    MPI_Type_vector(count, (int)len, (int)stride, elem, type);
    MPI_Type_commit(type);
  }
  MPI_Datatype t = *type == MPI_DATATYPE_NULL ? elem : *type;
  if (send)
    MPI_Isend(base, n, t, peer, tag, comm, req);
  else
    MPI_Irecv(base, n, t, peer, tag, comm, req);
}

enum { TAG_A = 1 };

/* Posts, for every rank of column c whose rows overlap this rank's, one
 * message of the overlapping rows of A's panel (kb columns): received
 * into or sent from panel (bm rows, leading dimension bm; on a simulated
 * node, the piece of row i lies at i kb elements). Returns the number
 * posted. */
static int post_overlaps(int send, int sim, char *panel, int64_t bm, int64_t kb,
                         const mlsba__mpi_layout_t *lay, int me,
                         const column_t *c, MPI_Datatype elem, size_t es,
                         MPI_Comm comm, MPI_Request *req, MPI_Datatype *type) {
  int n = 0;
  int64_t lo = lay->part[me].row0, hi = lo + lay->part[me].rows;
  for (int i = 0; i < c->count; i++) {
    int r = c->ranks[i];
    const mlsba__mpi_part_t *x = &lay->part[r];
    int64_t r0 = x->row0 > lo ? x->row0 : lo;
    int64_t e = x->row0 + x->rows, r1 = e < hi ? e : hi;
    if (r0 >= r1)
      continue;
    int64_t first = r0 - lo;
    post(send, sim, panel + (size_t)(sim ? first * kb : first) * es, (int)kb,
         r1 - r0, bm, elem, r, TAG_A, comm, &req[n], &type[n]);
    n++;
  }
  return n;
}

/* An MPI_Ibcast of count elements in pieces whose counts fit an int (a
 * panel of B is b x bn elements: 2^31 at b = 4096, N = 2^19). */
enum { PIECE = INT_MAX / 2 };
static int ibcast_pieces(char *buf, int64_t count, MPI_Datatype elem, size_t es,
                         int root, MPI_Comm comm, MPI_Request *req) {
  int n = 0;
  for (int64_t done = 0; done < count; done += PIECE, n++) {
    int64_t len = count - done < PIECE ? count - done : PIECE;
    MPI_Ibcast(buf + (size_t)done * es, (int)len, elem, root, comm, &req[n]);
  }
  return n;
}

static void free_types(MPI_Datatype *type, int n) {
  for (int i = 0; i < n; i++)
    if (type[i] != MPI_DATATYPE_NULL)
      MPI_Type_free(&type[i]);
}

/* The rank of column col that holds block row p of op(B) there. */
static int b_owner(const mlsba__mpi_layout_t *lay, const column_t *col,
                   int64_t kk) {
  for (int i = 0; i < col->count; i++) {
    const mlsba__mpi_part_t *x = &lay->part[col->ranks[i]];
    if (kk >= x->bk0 && kk < x->bk0 + x->bks)
      return i;
  }
  return 0; /* plan.c's shares of k tile it in every column */
}

/* One step's panels and their exchanges. Two take turns, so that step
 * p + 1's panels travel while step p computes (lookahead 1): a step's
 * receives and the root's sends are posted one step ahead, the relays
 * to farther columns as soon as the rows are in. */
typedef struct {
  char *pa, *pb;
  MPI_Request *req; /* the receives, then the sends */
  MPI_Datatype *type;
  int nrecv, nsend;
  MPI_Request *bc; /* the pieces of B's broadcast */
  int nbc;
  int64_t kb;
  int v, c0; /* this rank's column's place in the step's tree, its root */
} slot_t;

/* What every step shares. */
typedef struct {
  const plan_t *P;
  const mlsba__mpi_layout_t *lay;
  int me, sim, span;
  size_t es;
  MPI_Datatype elem;
  MPI_Comm comm, colcomm;
  const void *a, *b;
} ctx_t;

/* The sends still reading the slot's panel end before it is used again. */
static void wait_sends(slot_t *s) {
  MPI_Waitall(s->nsend, s->req + s->nrecv, MPI_STATUSES_IGNORE);
  free_types(s->type + s->nrecv, s->nsend);
  s->nsend = 0;
}

/* Posts the rows of A's panel from this rank to its child columns in the
 * step's tree (farthest first). */
static void post_children(const ctx_t *x, slot_t *s) {
  const plan_t *P = x->P;
  int nc = P->ncols, at = s->nrecv + s->nsend;
  const mlsba__mpi_part_t *my = &x->lay->part[x->me];
  for (int d = x->span / 2; d > s->v; d /= 2)
    if (s->v + d < nc) {
      int n = post_overlaps(1, x->sim, s->pa, my->rows, s->kb, x->lay, x->me,
                            &P->cols[(s->c0 + s->v + d) % nc], x->elem, x->es,
                            x->comm, s->req + at, s->type + at);
      at += n;
      s->nsend += n;
    }
}

/* Step p's exchanges begin in slot s: the receive of its rows of A's
 * panel from the parent column (or, in the root column, the copy from A'
 * and the sends to the children), and B's broadcast down the column. */
static void start(const ctx_t *x, slot_t *s, int64_t p) {
  const plan_t *P = x->P;
  const mlsba__mpi_layout_t *lay = x->lay;
  const mlsba__mpi_part_t *my = &lay->part[x->me];
  int64_t kk = p * lay->b, bm = my->rows, bn = my->cols;
  wait_sends(s);
  s->kb = lay->k - kk < lay->b ? lay->k - kk : lay->b;
  /* This rank's column's place v in the tree of step p, rooted at the
   * column that holds block column p: the parent of v is v without its
   * highest bit, the children are v + 2^j for 2^j > v. */
  int nc = P->ncols;
  s->c0 = P->col_of_panel[p];
  s->v = (P->mycol - s->c0 + nc) % nc;
  s->nrecv = 0;
  if (s->v > 0) {
    int top = 1;
    while (top * 2 <= s->v)
      top *= 2;
    s->nrecv = post_overlaps(0, x->sim, s->pa, bm, s->kb, lay, x->me,
                             &P->cols[(s->c0 + s->v - top) % nc], x->elem,
                             x->es, x->comm, s->req, s->type);
  } else {
    /* The root column's ranks take their rows from A' (bm x kb at its
     * column kk - ak0: contiguous, as the leading dimension is bm). */
    if (!x->sim)
      memcpy(s->pa, (const char *)x->a + (size_t)((kk - my->ak0) * bm) * x->es,
             (size_t)(bm * s->kb) * x->es);
    post_children(x, s);
  }
  /* B: the owner of block row p in this rank's column broadcasts it. */
  const column_t *mine = &P->cols[P->mycol];
  int owner = b_owner(lay, mine, kk);
  if (mine->ranks[owner] == x->me && !x->sim)
    for (int64_t j = 0; j < bn; j++) /* kb x bn, leading dimension kb */
      memcpy(s->pb + (size_t)(j * s->kb) * x->es,
             (const char *)x->b + (size_t)(j * my->bks + kk - my->bk0) * x->es,
             (size_t)s->kb * x->es);
  s->nbc = ibcast_pieces(s->pb, s->kb * bn, x->elem, x->es, owner, x->colcomm,
                         s->bc);
}

/* Step p's panels complete in slot s: the rows of A in (and passed on to
 * the child columns), B's broadcast done. */
static void finish(const ctx_t *x, slot_t *s) {
  MPI_Waitall(s->nrecv, s->req, MPI_STATUSES_IGNORE);
  free_types(s->type, s->nrecv);
  if (s->v > 0) { /* the sends now sit after no receive */
    s->nrecv = 0;
    post_children(x, s);
  }
  MPI_Waitall(s->nbc, s->bc, MPI_STATUSES_IGNORE);
}

/* One rank whose devices are all cores: nothing travels, so the whole
 * product is one step, C' += A' B' with k wide panels (every core one
 * GEMM on its columns, as a multithreaded GEMM would run, instead of k/b
 * updates of rank b). */
static int one_step(mlsba__mpi_node_t *node, const mlsba__mpi_layout_t *lay,
                    const void *a, const void *b, void *c,
                    mlsba__mpi_product_stats_t *st) {
  const mlsba__mpi_part_t *my = &lay->part[0];
  double t0 = MPI_Wtime(), step = 0;
  int err = mlsba__mpi_node_shape(node, my->rows, my->cols, NULL, NULL, c);
  if (!err) {
    mlsba__mpi_node_whole(node, a, b, lay->k);
    err = mlsba__mpi_node_step(node, &step);
  }
  int flushed = mlsba__mpi_node_flush(node);
  st->total = st->compute = MPI_Wtime() - t0;
  return err ? err : flushed;
}

/* What a product makes before its steps and a multiplier keeps from one
 * product to the next on the same layout: the plan, the two slots'
 * panels (faulted in once: at N = 4096 on two ranks 8 MB a rank) and
 * the column communicator (a collective split). */
struct mlsba__mpi_product_keep {
  plan_t P;
  slot_t sl[2];
  MPI_Comm colcomm;
  int span;
};

void mlsba__mpi_product_keep_free(mlsba__mpi_product_keep_t *K) {
  if (K == NULL)
    return;
  if (K->colcomm != MPI_COMM_NULL)
    MPI_Comm_free(&K->colcomm);
  plan_free(&K->P);
  for (int i = 0; i < 2; i++) {
    mlsba__mpi_free(K->sl[i].pa);
    mlsba__mpi_free(K->sl[i].pb);
    free(K->sl[i].req);
    free(K->sl[i].type);
    free(K->sl[i].bc);
  }
  free(K);
}

/* Collective: the plan and panels for this rank of lay (*out NULL on an
 * error, agreed on by every rank), then the column communicator. */
static int keep_make(MPI_Comm comm, const mlsba__mpi_layout_t *lay, int me,
                     size_t es, mlsba__mpi_product_keep_t **out) {
  mlsba__mpi_product_keep_t *K = calloc(1, sizeof *K);
  int err = K ? plan_make(lay, me, &K->P)
              : mlsba__fail(MLSBA_ENOMEM, "out of memory");
  const mlsba__mpi_part_t *my = &lay->part[me];
  int64_t b = lay->b, bm = my->rows, bn = my->cols;
  size_t maxreq = 2 * (size_t)lay->q, pieces = (size_t)(b * bn / PIECE + 1);
  if (K)
    K->colcomm = MPI_COMM_NULL;
  for (int i = 0; i < 2 && !err; i++) {
    slot_t *sl = &K->sl[i];
    sl->pa = mlsba__mpi_alloc((size_t)(bm * b) * es);
    sl->pb = mlsba__mpi_alloc((size_t)(b * bn) * es);
    sl->req = malloc(maxreq * sizeof *sl->req);
    sl->type = malloc(maxreq * sizeof *sl->type);
    sl->bc = malloc(pieces * sizeof *sl->bc);
    if (!sl->pa || !sl->pb || !sl->req || !sl->type || !sl->bc)
      err =
          mlsba__fail(MLSBA_ENOMEM,
                      "out of memory for the panels (%lld x %lld and %lld "
                      "x %lld, twice)",
                      (long long)bm, (long long)b, (long long)b, (long long)bn);
  }
  if ((err = mlsba__mpi_agree(comm, err)) != 0) {
    mlsba__mpi_product_keep_free(K);
    *out = NULL;
    return err;
  }
  /* The ranks of this rank's column, by row: the B broadcasts' group. */
  MPI_Comm_split(comm, K->P.mycol,
                 (int)(my->row0 < INT_MAX ? my->row0 : INT_MAX), &K->colcomm);
  K->span = 1;
  while (K->span < K->P.ncols) /* the tree's width: a power of two >= columns */
    K->span *= 2;
  *out = K;
  return 0;
}

int mlsba__mpi_product(MPI_Comm comm, const mlsba__mpi_layout_t *lay,
                       mlsba__mpi_node_t *node, mlsba_precision_t prec,
                       const void *a, const void *b_, void *c,
                       mlsba__mpi_product_stats_t *st) {
  mlsba__mpi_product_keep_t *K = NULL;
  int err = mlsba__mpi_product_keep(comm, lay, node, prec, a, b_, c, st, &K);
  mlsba__mpi_product_keep_free(K);
  return err;
}

int mlsba__mpi_product_keep(MPI_Comm comm, const mlsba__mpi_layout_t *lay,
                            mlsba__mpi_node_t *node, mlsba_precision_t prec,
                            const void *a, const void *b_, void *c,
                            mlsba__mpi_product_stats_t *st,
                            mlsba__mpi_product_keep_t **keep) {
  memset(st, 0, sizeof *st);
  int me;
  MPI_Comm_rank(comm, &me);
  if (lay->q == 1 && !mlsba__mpi_node_simulated(node) &&
      !mlsba__mpi_node_accelerators(node))
    return one_step(node, lay, a, b_, c, st);
  size_t es = mlsba__mpi_elem(prec);
  int err = 0;
  /* Every rank has a keep or none: they are made and freed together. */
  if (*keep == NULL && (err = keep_make(comm, lay, me, es, keep)) != 0)
    return err;
  mlsba__mpi_product_keep_t *K = *keep;
  const plan_t *P = &K->P;
  slot_t *sl = K->sl;
  const mlsba__mpi_part_t *my = &lay->part[me];
  int64_t b = lay->b, bm = my->rows, bn = my->cols;
  int sim = mlsba__mpi_node_simulated(node);
  ctx_t x = {P,
             lay,
             me,
             sim,
             K->span,
             es,
             prec == MLSBA_PRECISION_DOUBLE ? MPI_DOUBLE : MPI_FLOAT,
             comm,
             K->colcomm,
             a,
             b_};
  /* Two slots' panels A_(b) and B_(b); a simulated node moves them as a
   * real one does, but their bytes (SMPI shared memory) are never read. */
  err = mlsba__mpi_node_shape(node, bm, bn, sl[0].pa, sl[0].pb, c);
  if ((err = mlsba__mpi_agree(comm, err)) != 0)
    return err;

  MPI_Barrier(comm);
  double t0 = MPI_Wtime(), tc = t0;
  if (P->steps > 0)
    start(&x, &sl[0], 0);
  st->comm += MPI_Wtime() - tc;
  for (int64_t p = 0; p < P->steps; p++) {
    slot_t *s = &sl[p % 2];
    tc = MPI_Wtime();
    finish(&x, s);
    if (p + 1 < P->steps)
      start(&x, &sl[(p + 1) % 2], p + 1);
    st->comm += MPI_Wtime() - tc;

    /* A rank whose device failed goes on exchanging panels, so that no
     * other rank waits for it; all stop together after the last step. */
    double step = 0, tw = MPI_Wtime();
    mlsba__mpi_node_panels(node, s->pa, s->pb, s->kb);
    if (!err)
      err = mlsba__mpi_node_step(node, &step);
    /* A simulated device's profile is for full panels (b x b blocks of
     * C' updated): a narrower one updates kb / b of them. */
    step = sim ? step * (double)s->kb / (double)b : MPI_Wtime() - tw;
    mlsba__mpi_spend(sim ? step : 0);
    st->compute += step;
  }
  tc = MPI_Wtime();
  wait_sends(&sl[0]);
  wait_sends(&sl[1]);
  st->comm += MPI_Wtime() - tc;
  /* Accelerators still hold their columns of C'; the product ends when
   * C' is whole again. */
  double tf = MPI_Wtime();
  int flushed = mlsba__mpi_node_flush(node);
  st->compute += sim ? 0 : MPI_Wtime() - tf;
  err = err ? err : flushed;
  double wall = MPI_Wtime() - t0;
  /* A simulated node outside SMPI computed in virtual time: its clock is
   * the exchanges it waited for plus the virtual steps. */
  st->total = sim && !mlsba__mpi_is_smpi() ? st->comm + st->compute : wall;
  return mlsba__mpi_agree(comm, err);
}
