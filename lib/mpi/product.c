/* The heterogeneous two-dimensional blocked product (Clarke et al. §4,
 * after ScaLAPACK's SUMMA): C = A B with A, B and C laid out alike, rank r
 * holding the rectangle rows [row_r, row_r + m_r) x columns [col_r,
 * col_r + n_r) of blocks of each. Step k needs, on every rank, its rows of
 * block column k of A (the panel A_(b), bm x b) and its columns of block
 * row k of B (the panel B_(b), b x bn):
 *  - block column k of A lies in one column of the arrangement; each rank
 *    there sends the rows of it that overlap a rank's rows to that rank
 *    (its row neighbours, in every column);
 *  - block row k of B lies, in each column of the arrangement, in the one
 *    rank whose rows hold k; it sends it down to the others of its column.
 * Then every rank's devices update C' += A_(b) B_(b), split by columns. */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "internal.h"

typedef struct {
  int rank;
  int64_t r0, r1; /* overlapping block rows */
} overlap_t;

typedef struct {
  int64_t col, n;
  int *ranks; /* by increasing row */
  int count;
} column_t;

typedef struct {
  const mlsba__mpi_layout_t *lay;
  int me;
  column_t *cols;
  int ncols;
  int *col_of_block; /* nb entries: the column holding block column k */
  int mycol;
  overlap_t *row_peers; /* ranks whose rows overlap mine */
  int nrow_peers;
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

static void plan_free(plan_t *P) {
  if (P->cols)
    free(P->cols[0].ranks);
  free(P->cols);
  free(P->col_of_block);
  free(P->row_peers);
}

static int plan_make(const mlsba__mpi_layout_t *lay, int me, plan_t *P) {
  memset(P, 0, sizeof *P);
  P->lay = lay;
  P->me = me;
  int q = lay->q;
  int *order = malloc((size_t)q * sizeof *order);
  P->cols = calloc((size_t)q, sizeof *P->cols);
  P->col_of_block = malloc((size_t)lay->nb * sizeof *P->col_of_block);
  P->row_peers = malloc((size_t)q * sizeof *P->row_peers);
  if (!order || !P->cols || !P->col_of_block || !P->row_peers) {
    free(order);
    plan_free(P);
    return mlsba__fail(MLSBA_ENOMEM, "out of memory");
  }
  place_t *pl = malloc((size_t)q * sizeof *pl);
  if (pl == NULL) {
    free(order);
    plan_free(P);
    return mlsba__fail(MLSBA_ENOMEM, "out of memory");
  }
  for (int r = 0; r < q; r++)
    pl[r] = (place_t){lay->col[r], lay->row[r], r};
  qsort(pl, (size_t)q, sizeof *pl, by_place);
  for (int r = 0; r < q; r++)
    order[r] = pl[r].rank;
  free(pl);
  P->cols[0].ranks = order; /* the columns share the sorted array */
  for (int i = 0; i < q; i++) {
    int r = order[i];
    column_t *c = &P->cols[P->ncols > 0 ? P->ncols - 1 : 0];
    if (P->ncols == 0 || lay->col[r] != c->col) {
      c = &P->cols[P->ncols++];
      c->col = lay->col[r];
      c->n = lay->n[r];
      c->ranks = order + i;
      c->count = 0;
    }
    c->count++;
    if (r == me)
      P->mycol = P->ncols - 1;
  }
  for (int c = 0; c < P->ncols; c++)
    for (int64_t k = P->cols[c].col; k < P->cols[c].col + P->cols[c].n; k++)
      P->col_of_block[k] = c;
  for (int r = 0; r < q; r++) {
    int64_t r0 = lay->row[r] > lay->row[me] ? lay->row[r] : lay->row[me];
    int64_t e_r = lay->row[r] + lay->m[r], e_me = lay->row[me] + lay->m[me];
    int64_t r1 = e_r < e_me ? e_r : e_me;
    if (r0 < r1)
      P->row_peers[P->nrow_peers++] = (overlap_t){r, r0, r1};
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
  if (sim || count == 1) { /* the basic type: SMPI then copies nothing */
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

enum { TAG_A = 1, TAG_B = 2 };

int mlsba__mpi_product(MPI_Comm comm, const mlsba__mpi_layout_t *lay,
                       mlsba__mpi_node_t *node, mlsba_precision_t prec,
                       const void *a, const void *b_, void *c,
                       mlsba__mpi_product_stats_t *st) {
  memset(st, 0, sizeof *st);
  int me;
  MPI_Comm_rank(comm, &me);
  plan_t P;
  int err = plan_make(lay, me, &P);
  size_t es = mlsba__mpi_elem(prec);
  MPI_Datatype elem = prec == MLSBA_PRECISION_DOUBLE ? MPI_DOUBLE : MPI_FLOAT;
  int64_t b = lay->b, bm = lay->m[me] * b, bn = lay->n[me] * b;
  int sim = mlsba__mpi_node_simulated(node);
  /* The panels; a simulated node sends from scratch copies of its own
   * sizes, as a real one sends from A' and B'. */
  char *pa = mlsba__mpi_alloc((size_t)(bm * b) * es);
  char *pb = mlsba__mpi_alloc((size_t)(b * bn) * es);
  char *sa = sim ? mlsba__mpi_alloc((size_t)(bm * b) * es) : NULL;
  char *sb = sim ? mlsba__mpi_alloc((size_t)(b * bn) * es) : NULL;
  size_t maxreq = 2 * (size_t)lay->q + 2;
  MPI_Request *req = malloc(maxreq * sizeof *req);
  MPI_Datatype *type = malloc(maxreq * sizeof *type);
  if (!err && (!pa || !pb || (sim && (!sa || !sb)) || !req || !type))
    err = mlsba__fail(MLSBA_ENOMEM, "out of memory for the panels (%lld x "
                      "%lld and %lld x %lld)", (long long)bm, (long long)b,
                      (long long)b, (long long)bn);
  if (!err)
    err = mlsba__mpi_node_shape(node, bm, bn, pa, pb, c);
  err = mlsba__mpi_agree(comm, err);
  if (err)
    goto done;

  MPI_Barrier(comm);
  double t0 = MPI_Wtime();
  const column_t *mine = &P.cols[P.mycol];
  for (int64_t k = 0; k < lay->nb; k++) {
    double tc = MPI_Wtime();
    int nreq = 0;
    const column_t *ck = &P.cols[P.col_of_block[k]];
    /* A: this rank owns part of block column k: send its overlaps. A
     * simulated node's pieces lie b rows of blocks apart in its scratch
     * panel, b x b elements per block row. */
    if (P.col_of_block[k] == P.mycol) {
      for (int i = 0; i < P.nrow_peers; i++) {
        const overlap_t *o = &P.row_peers[i];
        int64_t first = o->r0 - lay->row[me];
        const char *base =
            sim ? sa + (size_t)(first * b * b) * es
                : (const char *)a +
                      (size_t)((k - lay->col[me]) * b * bm + first * b) * es;
        post(1, sim, (void *)base, (int)b, (o->r1 - o->r0) * b, bm, elem,
             o->rank, TAG_A, comm, &req[nreq], &type[nreq]);
        nreq++;
      }
    }
    /* A: receive this rank's rows of it from the owners in column ck. */
    for (int i = 0; i < ck->count; i++) {
      int r = ck->ranks[i];
      int64_t r0 = lay->row[r] > lay->row[me] ? lay->row[r] : lay->row[me];
      int64_t e_r = lay->row[r] + lay->m[r], e_me = lay->row[me] + lay->m[me];
      int64_t r1 = e_r < e_me ? e_r : e_me;
      if (r0 >= r1)
        continue;
      int64_t first = r0 - lay->row[me];
      post(0, sim, pa + (size_t)(sim ? first * b * b : first * b) * es, (int)b,
           (r1 - r0) * b, bm, elem, r, TAG_A, comm, &req[nreq], &type[nreq]);
      nreq++;
    }
    /* B: the owner of block row k in this rank's column sends it down. */
    int owner = -1;
    for (int lo = 0, hi = mine->count - 1; lo <= hi;) {
      int mid = (lo + hi) / 2, r = mine->ranks[mid];
      if (k < lay->row[r])
        hi = mid - 1;
      else if (k >= lay->row[r] + lay->m[r])
        lo = mid + 1;
      else {
        owner = r;
        break;
      }
    }
    if (owner == me) {
      const char *base =
          sim ? sb : (const char *)b_ + (size_t)((k - lay->row[me]) * b) * es;
      for (int i = 0; i < mine->count; i++) {
        post(1, sim, (void *)base, (int)bn, b, bm, elem, mine->ranks[i],
             TAG_B, comm, &req[nreq], &type[nreq]);
        nreq++;
      }
    }
    post(0, 1, pb, 1, b * bn, b * bn, elem, owner, TAG_B, comm, &req[nreq],
         &type[nreq]);
    nreq++;
    MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
    for (int i = 0; i < nreq; i++)
      if (type[i] != MPI_DATATYPE_NULL)
        MPI_Type_free(&type[i]);
    st->comm += MPI_Wtime() - tc;

    /* A rank whose device failed goes on exchanging panels, so that no
     * other rank waits for it; all stop together after the last step. */
    double step = 0, tw = MPI_Wtime();
    if (!err)
      err = mlsba__mpi_node_step(node, &step);
    if (!sim)
      step = MPI_Wtime() - tw;
    mlsba__mpi_spend(sim ? step : 0);
    st->compute += step;
  }
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
  err = mlsba__mpi_agree(comm, err);
done:
  plan_free(&P);
  mlsba__mpi_free(pa);
  mlsba__mpi_free(pb);
  mlsba__mpi_free(sa);
  mlsba__mpi_free(sb);
  free(req);
  free(type);
  return err;
}
