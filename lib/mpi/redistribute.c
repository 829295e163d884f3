/* A matrix from one layout to another (mlsba_mpi_redistribute): every
 * block of the source owned here is cut along the target's block
 * boundaries (and every block of the target owned here along the
 * source's), so each piece lies in one source block and one target
 * block. Both sides list the same pieces between two ranks, the sender
 * from its source blocks and the receiver from its target blocks, and
 * order them alike (by peer, then by the piece's global column and row),
 * so one message to each peer that has pieces moves them all without any
 * index on the wire. The messages are point to point, not one
 * MPI_Alltoallv: SimGrid's SMPI (the simulated clusters) aborts in
 * Alltoallv on communicators whose size is not a power of two, and a rank
 * can unpack one peer's pieces while the others' still travel.
 *
 * Cost: every element that changes rank is packed, sent and unpacked
 * once (sent straight from and into the local arrays where it lies in
 * large runs of both: see the segments below), every other copied once:
 * O(M N / Q) per rank against the product's O(M N K / Q) flops. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "matrix.h"

typedef struct {
  int peer;
  int64_t col, row, rows, cols; /* global */
  int64_t lrow, lcol;           /* in this rank's local array */
} piece_t;

typedef struct {
  piece_t *p;
  size_t n, cap;
} pieces_t;

static int by_peer_then_place(const void *x, const void *y) {
  const piece_t *a = x, *b = y;
  if (a->peer != b->peer)
    return a->peer < b->peer ? -1 : 1;
  if (a->col != b->col)
    return a->col < b->col ? -1 : 1;
  return a->row < b->row ? -1 : a->row > b->row;
}

static int push(pieces_t *ps, piece_t p) {
  if (ps->n == ps->cap) {
    size_t more = ps->cap ? 2 * ps->cap : 256;
    piece_t *q = realloc(ps->p, more * sizeof *q);
    if (q == NULL)
      return mlsba__fail(MLSBA_ENOMEM, "out of memory for the redistribution");
    ps->p = q;
    ps->cap = more;
  }
  ps->p[ps->n++] = p;
  return 0;
}

/* This rank's blocks of mine, cut along other's block boundaries; each
 * piece's peer is other's owner of it. */
static int cut(const mlsba_mpi_matrix_t *mine, const mlsba_mpi_matrix_t *other,
               pieces_t *ps) {
  int err = 0;
  for (size_t k = 0; !err && k < mine->nown; k++) {
    const mlsba_mpi_block_t *b = &mine->own[k];
    for (int64_t j = b->col; !err && j < b->col + b->cols;) {
      int64_t bj = j / other->nb, j1 = (bj + 1) * other->nb;
      j1 = j1 < b->col + b->cols ? j1 : b->col + b->cols;
      for (int64_t i = b->row; !err && i < b->row + b->rows;) {
        int64_t bi = i / other->mb, i1 = (bi + 1) * other->mb;
        i1 = i1 < b->row + b->rows ? i1 : b->row + b->rows;
        int peer = mlsba__mpi_matrix_owner_of(other, bi, bj, NULL, NULL);
        if (peer < 0 || peer >= other->q)
          return mlsba__fail(MLSBA_EINVAL,
                             "the owner of block (%lld, %lld) is rank %d, "
                             "outside the communicator",
                             (long long)bi, (long long)bj, peer);
        err = push(ps, (piece_t){peer, j, i, i1 - i, j1 - j,
                                 b->local_row + (i - b->row),
                                 b->local_col + (j - b->col)});
        i = i1;
      }
      j = j1;
    }
  }
  if (!err && ps->n > 1)
    qsort(ps->p, ps->n, sizeof *ps->p, by_peer_then_place);
  return err;
}

/* Elements to or from each peer, and where each peer's run starts; none
 * to or from this rank itself (me), whose pieces are copied directly. */
static int counts_of(const pieces_t *ps, int q, int me, int *count,
                     int *displ) {
  int64_t *c = calloc((size_t)q, sizeof *c);
  if (c == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "out of memory");
  for (size_t k = 0; k < ps->n; k++)
    if (ps->p[k].peer != me)
      c[ps->p[k].peer] += ps->p[k].rows * ps->p[k].cols;
  int64_t at = 0;
  for (int r = 0; r < q; r++) {
    count[r] = (int)c[r];
    displ[r] = (int)at;
    at += c[r];
  }
  free(c);
  if (at > INT_MAX)
    return mlsba__fail(MLSBA_EINVAL,
                       "the redistribution moves %lld elements through one "
                       "rank, above the %d an MPI count holds",
                       (long long)at, INT_MAX);
  return 0;
}

/* Where piece p's column j lies in a local array of leading dimension
 * ld, in bytes of es. */
static size_t local_at(const piece_t *p, int64_t j, int64_t ld, size_t es) {
  return ((size_t)(p->lcol + j) * (size_t)ld + (size_t)p->lrow) * es;
}

/* Large moves between two ranks go without the pack and unpack copies
 * where they can. The pieces between two ranks, in their common order,
 * fall into segments: pieces of one column strip of the matrix (the
 * same global columns), whose elements travel column by column. A
 * segment that lies in one run of a rank's local array (one column, or
 * pieces that make whole columns of it) is sent from, or received into,
 * that array itself: a message of its own, no copy but MPI's (one, with
 * shared memory's single copy). On the 2-D block-cyclic grids of one
 * row of ranks that PDGEMM users run (every local column whole), C comes
 * back from a product's layout of whole-height rectangles with no copy
 * on either side. Both ranks find the same segments from the pieces'
 * global places, and take a pair's segments one message each only when
 * they are few and large (below, the pack into one message per pair
 * costs less than the messages). */
enum { SEG_MAX = 256, SEG_MIN_ELEMS = 16384 };

/* A segment: pieces [lo, hi) of one column strip, n elements, at `at`
 * elements into the pair's part of the buffer; run: its place in the
 * local array in elements when it lies in one run there, else -1. */
typedef struct {
  size_t lo, hi;
  int64_t n, at, run;
  int peer;
} seg_t;

/* Where the local array holds segment pieces [lo, hi) in one run (in
 * elements), or -1: one column, or pieces stacked row after row that
 * fill the local columns whole. */
static int64_t seg_run(const pieces_t *ps, size_t lo, size_t hi, int64_t ld) {
  const piece_t *f = &ps->p[lo];
  int64_t rows = 0;
  for (size_t k = lo; k < hi; k++) {
    if (ps->p[k].lcol != f->lcol || ps->p[k].lrow != f->lrow + rows)
      return -1;
    rows += ps->p[k].rows;
  }
  if (f->cols > 1 && (f->lrow != 0 || rows != ld))
    return -1;
  return f->lcol * ld + f->lrow;
}

/* The segments of every peer's pieces but this rank's (me), in order,
 * with their place in that peer's part of the buffer; *n of them, in
 * *out (malloc'ed; NULL when none). A peer whose segments are too many
 * or too small keeps one packed message: none of its segments are
 * listed, and direct[peer] is 0. */
static int segments_of(const pieces_t *ps, int q, int me, int64_t ld,
                       unsigned char *direct, seg_t **out, size_t *n) {
  *out = NULL;
  *n = 0;
  memset(direct, 0, (size_t)q);
  size_t cap = 0;
  for (size_t k = 0; k < ps->n;) {
    int peer = ps->p[k].peer;
    size_t end = k;
    while (end < ps->n && ps->p[end].peer == peer)
      end++;
    if (peer == me) {
      k = end;
      continue;
    }
    /* The pair's segments: a new one at every change of strip. */
    size_t first = *n, segs = 0;
    int64_t elems = 0, at = 0;
    for (size_t i = k; i < end;) {
      size_t j = i + 1;
      while (j < end && ps->p[j].col == ps->p[i].col &&
             ps->p[j].cols == ps->p[i].cols)
        j++;
      int64_t rows = 0;
      for (size_t x = i; x < j; x++)
        rows += ps->p[x].rows;
      if (*n == cap) {
        size_t more = cap ? 2 * cap : 64;
        seg_t *g = realloc(*out, more * sizeof *g);
        if (g == NULL)
          return mlsba__fail(MLSBA_ENOMEM, "out of memory");
        *out = g;
        cap = more;
      }
      (*out)[(*n)++] =
          (seg_t){i, j, rows * ps->p[i].cols, at, seg_run(ps, i, j, ld), peer};
      at += rows * ps->p[i].cols;
      elems += rows * ps->p[i].cols;
      segs++;
      i = j;
    }
    if (segs > SEG_MAX || elems < SEG_MIN_ELEMS * (int64_t)segs)
      *n = first; /* one packed message for this pair */
    else
      direct[peer] = 1;
    k = end;
  }
  return 0;
}

/* Segment g between the local array and buf (to_buf: array to buffer),
 * column by column, each column's pieces in order. */
static void seg_copy(const pieces_t *ps, const seg_t *g, char *local,
                     int64_t ld, char *buf, size_t es, int to_buf) {
  int64_t cols = ps->p[g->lo].cols;
  size_t at = 0;
  for (int64_t j = 0; j < cols; j++)
    for (size_t k = g->lo; k < g->hi; k++) {
      size_t len = (size_t)ps->p[k].rows * es;
      char *x = local + local_at(&ps->p[k], j, ld, es);
      if (to_buf)
        memcpy(buf + at, x, len);
      else
        memcpy(x, buf + at, len);
      at += len;
    }
}

/* Every piece for a peer without segments from the local array into buf,
 * in order, and every segment of a peer with them that does not lie in
 * one run of the local array into its place. */
static void pack(const pieces_t *ps, int me, const unsigned char *direct,
                 const seg_t *seg, size_t nseg, const int *sd,
                 const char *local, int64_t ld, char *buf, size_t es) {
  for (size_t k = 0, at = 0; k < ps->n; k++) {
    int peer = ps->p[k].peer;
    if (peer == me || direct[peer])
      continue;
    if (k == 0 || ps->p[k - 1].peer != peer)
      at = (size_t)sd[peer] * es;
    for (int64_t j = 0; j < ps->p[k].cols; j++) {
      size_t len = (size_t)ps->p[k].rows * es;
      memcpy(buf + at, local + local_at(&ps->p[k], j, ld, es), len);
      at += len;
    }
  }
  for (size_t i = 0; i < nseg; i++)
    if (seg[i].run < 0)
      seg_copy(ps, &seg[i], (char *)(uintptr_t)local, ld,
               buf + (size_t)(sd[seg[i].peer] + seg[i].at) * es, es, 1);
}

/* The pieces that stay on this rank, straight from src to dst: the two
 * lists hold them in the same order. */
static void copy_own(const pieces_t *out, const pieces_t *in, int me,
                     const char *src, int64_t lds, char *dst, int64_t ldd,
                     size_t es) {
  size_t i = 0, o = 0;
  while (o < out->n && out->p[o].peer != me)
    o++;
  while (i < in->n && in->p[i].peer != me)
    i++;
  for (; o < out->n && i < in->n && out->p[o].peer == me && in->p[i].peer == me;
       o++, i++)
    for (int64_t j = 0; j < out->p[o].cols; j++)
      memcpy(dst + local_at(&in->p[i], j, ldd, es),
             src + local_at(&out->p[o], j, lds, es),
             (size_t)out->p[o].rows * es);
}

/* Every piece from rank peer (not this one) from buf, which holds that
 * peer's message, into the local array, in order. */
static void unpack_from(const pieces_t *ps, int peer, char *local, int64_t ld,
                        const char *buf, size_t es) {
  size_t k = 0, at = 0;
  while (k < ps->n && ps->p[k].peer != peer)
    k++;
  for (; k < ps->n && ps->p[k].peer == peer; k++)
    for (int64_t j = 0; j < ps->p[k].cols; j++) {
      size_t len = (size_t)ps->p[k].rows * es;
      memcpy(local + local_at(&ps->p[k], j, ld, es), buf + at, len);
      at += len;
    }
}

/* One exchange's layouts, pieces and buffers. */
typedef struct {
  const mlsba_mpi_matrix_t *from, *to;
  const pieces_t *out, *in;
  const seg_t *oseg, *iseg; /* the segments sent and received */
  size_t noseg, niseg;
  const unsigned char *odirect, *idirect;
  const void *src;
  void *dst;
  const char *sbuf;
  char *rbuf;
  const int *sc, *sd, *rc, *rd;
  /* Room for every request (2 q + the segments + 1), and what each
   * receive holds: a peer's packed message (its rank), or a segment to
   * unpack (-2 - its index), or one already in place (-1). */
  MPI_Request *req;
  long *what;
} exchange_t;

/* Point to point, once every rank has agreed that all is ready: the
 * pieces to every peer and from every peer, each message unpacked as
 * soon as it is in; the pieces that stay here (out's and in's for this
 * rank) copied while the messages travel. A pair with segments moves one
 * message a segment, from and into the local arrays where a segment lies
 * in one run there, else through the buffers; any other pair one packed
 * message. */
static void exchange(const exchange_t *X, mlsba_precision_t prec) {
  const mlsba_mpi_matrix_t *from = X->from, *to = X->to;
  int q = from->q, me = from->rank, nr = 0, ns = 0;
  size_t es = mlsba__mpi_elem(prec);
  MPI_Datatype t = prec == MLSBA_PRECISION_DOUBLE ? MPI_DOUBLE : MPI_FLOAT;
  MPI_Request *req = X->req;
  long *what = X->what;
  /* A fixed tag: between two ranks the messages pair off in the order
   * both post them, as MPI keeps the order of messages of a pair. */
  enum { TAG = 0x5d15 };
  char *dst = X->dst;
  const char *src = X->src;
  for (int r = 0; r < q; r++)
    if (r != me && !X->idirect[r] && X->rc[r] > 0) {
      MPI_Irecv(X->rbuf + (size_t)X->rd[r] * es, X->rc[r], t, r, TAG,
                from->comm, &req[nr]);
      what[nr++] = r;
    }
  for (size_t i = 0; i < X->niseg; i++) {
    const seg_t *g = &X->iseg[i];
    char *at = g->run >= 0 ? dst + (size_t)g->run * es
                           : X->rbuf + (size_t)(X->rd[g->peer] + g->at) * es;
    MPI_Irecv(at, (int)g->n, t, g->peer, TAG, from->comm, &req[nr]);
    what[nr++] = g->run >= 0 ? -1 : -2 - (long)i;
  }
  for (int i = 1; i < q; i++) { /* the nearest peers after me first */
    int r = (me + i) % q;
    if (!X->odirect[r] && X->sc[r] > 0)
      MPI_Isend(X->sbuf + (size_t)X->sd[r] * es, X->sc[r], t, r, TAG,
                from->comm, &req[nr + ns++]);
    for (size_t k = 0; X->odirect[r] && k < X->noseg; k++) {
      const seg_t *g = &X->oseg[k];
      if (g->peer != r)
        continue;
      const char *at = g->run >= 0 ? src + (size_t)g->run * es
                                   : X->sbuf + (size_t)(X->sd[r] + g->at) * es;
      MPI_Isend(at, (int)g->n, t, r, TAG, from->comm, &req[nr + ns++]);
    }
  }
  copy_own(X->out, X->in, me, src, from->ld, dst, to->ld, es);
  for (int done = 0; done < nr; done++) {
    int i = 0;
    MPI_Waitany(nr, req, &i, MPI_STATUS_IGNORE);
    if (i == MPI_UNDEFINED)
      break;
    if (what[i] >= 0)
      unpack_from(X->in, (int)what[i], dst, to->ld,
                  X->rbuf + (size_t)X->rd[what[i]] * es, es);
    else if (what[i] <= -2) {
      const seg_t *g = &X->iseg[-2 - what[i]];
      seg_copy(X->in, g, dst, to->ld,
               X->rbuf + (size_t)(X->rd[g->peer] + g->at) * es, es, 0);
    }
  }
  MPI_Waitall(ns, req + nr, MPI_STATUSES_IGNORE);
}

static int check_args(const mlsba_mpi_matrix_t *from, const void *src,
                      const mlsba_mpi_matrix_t *to, const void *dst,
                      mlsba_precision_t prec) {
  if (from == NULL || to == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_mpi_redistribute: %s is NULL",
                       from ? "to" : "from");
  int same = MPI_UNEQUAL;
  MPI_Comm_compare(from->comm, to->comm, &same);
  if (same != MPI_IDENT && same != MPI_CONGRUENT)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_mpi_redistribute: the two "
                                     "layouts are on different communicators");
  if (from->m != to->m || from->n != to->n)
    return mlsba__fail(MLSBA_EINVAL,
                       "mlsba_mpi_redistribute: from is %lld x %lld, to is "
                       "%lld x %lld",
                       (long long)from->m, (long long)from->n, (long long)to->m,
                       (long long)to->n);
  if ((src == NULL && from->nown > 0) || (dst == NULL && to->nown > 0))
    return mlsba__fail(MLSBA_EINVAL,
                       "mlsba_mpi_redistribute: %s is NULL where this rank "
                       "owns blocks",
                       src == NULL && from->nown > 0 ? "src" : "dst");
  if (prec != MLSBA_PRECISION_DOUBLE && prec != MLSBA_PRECISION_SINGLE)
    return mlsba__fail(MLSBA_EINVAL, "unknown precision %d", (int)prec);
  return 0;
}

/* Room for n bytes in s (what it had, when it had enough: a buffer reused
 * from call to call is not faulted in again). */
static char *scratch_room(mlsba__mpi_scratch_t *s, size_t n) {
  if (s->bytes < n) {
    free(s->buf);
    /* Copied into and out of only: 4 KiB pages (operands.c's
     * copy_alloc says why not huge ones). */
    s->buf = malloc(n ? n : 1);
    s->bytes = s->buf ? n : 0;
  }
  return s->buf;
}

void mlsba__mpi_scratch_free(mlsba__mpi_scratch_t *s) {
  free(s->buf);
  s->buf = NULL;
  s->bytes = 0;
}

int mlsba_mpi_redistribute(const mlsba_mpi_matrix_t *from, const void *src,
                           const mlsba_mpi_matrix_t *to, void *dst,
                           mlsba_precision_t prec) {
  mlsba__mpi_scratch_t s = {NULL, 0, 0, 0, 0};
  int err = mlsba__mpi_redistribute_with(from, src, to, dst, prec, &s);
  mlsba__mpi_scratch_free(&s);
  return err;
}

/* One agreement a redistribution (each is a collective, a few ms on
 * ranks that share a core under load): every rank's arguments, pieces,
 * buffers and requests ready, or every rank returns the first error. A
 * rank whose arguments are wrong prepares nothing and only agrees. */
int mlsba__mpi_redistribute_with(const mlsba_mpi_matrix_t *from,
                                 const void *src, const mlsba_mpi_matrix_t *to,
                                 void *dst, mlsba_precision_t prec,
                                 mlsba__mpi_scratch_t *scratch) {
  const mlsba_mpi_matrix_t *any = from ? from : to;
  int err = check_args(from, src, to, dst, prec);
  if (any == NULL) /* no communicator to tell the others on */
    return err;
  if (err)
    return mlsba__mpi_agree(any->comm, err);
  int q = from->q;
  pieces_t out = {0}, in = {0};
  int *sc = malloc((size_t)q * 4 * sizeof *sc), *sd = sc + q, *rc = sc + 2 * q,
      *rd = sc + 3 * q;
  unsigned char *direct = malloc(2 * (size_t)q + 1);
  seg_t *oseg = NULL, *iseg = NULL;
  size_t noseg = 0, niseg = 0;
  char *sbuf = NULL, *rbuf = NULL;
  MPI_Request *req = NULL;
  long *what = NULL;
  size_t es = mlsba__mpi_elem(prec);
  err = sc && direct ? 0 : mlsba__fail(MLSBA_ENOMEM, "out of memory");
  if (!err && (err = cut(from, to, &out)) == 0 &&
      (err = cut(to, from, &in)) == 0 &&
      (err = counts_of(&out, q, from->rank, sc, sd)) == 0 &&
      (err = counts_of(&in, q, from->rank, rc, rd)) == 0 &&
      (err = segments_of(&out, q, from->rank, from->ld, direct, &oseg,
                         &noseg)) == 0)
    err = segments_of(&in, q, from->rank, to->ld, direct + q, &iseg, &niseg);
  if (!err) {
    size_t ns = (size_t)(q ? sd[q - 1] + sc[q - 1] : 0);
    size_t nr = (size_t)(q ? rd[q - 1] + rc[q - 1] : 0);
    sbuf = scratch_room(scratch, (ns + nr + 1) * es);
    rbuf = sbuf ? sbuf + ns * es : NULL;
    if (!sbuf)
      err = mlsba__fail(MLSBA_ENOMEM,
                        "out of memory for the redistribution's buffers "
                        "(%zu and %zu elements)",
                        ns, nr);
  }
  if (!err) {
    size_t most = 2 * (size_t)q + noseg + niseg + 1;
    req = malloc(most * sizeof *req);
    what = malloc(most * sizeof *what);
    if (!req || !what)
      err = mlsba__fail(MLSBA_ENOMEM, "out of memory");
  }
  if (!err) { /* what this rank keeps, sends and receives */
    scratch->kept = 0;
    for (size_t k = 0; k < out.n; k++)
      if (out.p[k].peer == from->rank)
        scratch->kept += out.p[k].rows * out.p[k].cols;
    scratch->sent = q ? sd[q - 1] + sc[q - 1] : 0;
    scratch->received = q ? rd[q - 1] + rc[q - 1] : 0;
  }
  if ((err = mlsba__mpi_agree(from->comm, err)) == 0) {
    pack(&out, from->rank, direct, oseg, noseg, sd, src, from->ld, sbuf, es);
    exchange_t X = {from,  to,     &out,       &in, oseg, iseg, noseg,
                    niseg, direct, direct + q, src, dst,  sbuf, rbuf,
                    sc,    sd,     rc,         rd,  req,  what};
    exchange(&X, prec);
  }
  free(req);
  free(what);
  free(oseg);
  free(iseg);
  free(direct);
  free(out.p);
  free(in.p);
  free(sc);
  return err;
}
