/* A factored panel delivered to the ranks that need its rows
 * (mlsba__mpi_deliver_*), point to point from the ranks that hold them.
 *
 * A rank reads only some block rows of a step's L: LU its own block rows
 * (and the diagonal block's, L11, where it owns block row k: U's solve),
 * Cholesky those and the block rows of its own block columns. Broadcasting
 * the whole panel to every rank through a tree sent each rank m x nb
 * elements a step and every inner rank of the tree several copies of
 * them, unpipelined: on the 90 simulated nodes at N = 16384, 89% of the
 * makespan went to it. Here the ranks of the panel's node column, which
 * hold its block rows after the factorization, each send every other rank
 * the blocks of theirs that it needs, one message a pair: a rank receives
 * what it reads and nothing else, and the sending is spread over the
 * node column's ranks instead of one root. The pivots (or Cholesky's
 * info) go from the diagonal block's owner to every rank outside its
 * node column (those in it computed them), a few bytes each.
 *
 * A message is the rows of the blocks the pair shares, in ascending
 * order, as one column-major matrix (those rows x p, its rows the leading
 * dimension), packed contiguous by the sender from its local array: Open
 * MPI moves a contiguous message in one copy by the receiver, a strided
 * one only while the sender is inside MPI. Where those blocks are
 * consecutive rows (a rank alone in its node column, the common case of
 * few ranks) the receiver takes the message straight into the panel's
 * buffer through a vector type; else into a buffer, unpacked after the
 * wait. A
 * sender's own needs are copied at the start. A run that skips the
 * numbers (SMPI) packs and unpacks nothing, every message from and into
 * one shared buffer, and charges the copies to the simulated clock.
 *
 * Cholesky's block row b is read by its owner in every node column and by
 * every rank of the node column that holds block column b. Sent straight
 * from the panel's node column, each of its ranks sent its rows about
 * 2 x (node columns) times a step: on 16 simulated Keeneland nodes (4 x 4)
 * its ranks' links took twice as long as the update, and every other
 * rank waited for them half of its time. So the block row goes once to
 * its owner in each node column (the row broadcast), and that owner
 * forwards it to the other ranks of its node column that hold block
 * column b (the transpose down the columns, as ScaLAPACK's PDPOTRF
 * sends L): a forwarder posts its messages as soon as the rows they
 * carry have come, at its next call into the library's progress (between
 * the pieces of its update; under SMPI, between slices of its update's
 * simulated time) or in mlsba__mpi_deliver_wait. */
#include <stdlib.h>
#include <string.h>

#include "../core/bigmem.h"
#include "../core/error.h"
#include "factor.h"

/* The tags of the rows and of the pivots (on the description's
 * communicator, which carries no other point-to-point message of the
 * factorizations). */
enum { ROWS_TAG = 3218, PIV_TAG = 3219 };

int mlsba__mpi_deliver_open(const mlsba__mpi_dfac_t *f, int lower,
                            mlsba__mpi_deliver_t *d) {
  int q;
  MPI_Comm_size(f->comm, &q);
  memset(d, 0, sizeof *d);
  d->f = f;
  d->lower = lower;
  d->q = q;
  size_t nb = (size_t)(f->nb < f->n ? f->nb : f->n);
  size_t panel_bytes = (size_t)f->m * nb * f->es + 1;
  /* A message is at most the panel's m x nb: in pieces of whole
   * columns (f->piece), at most `pieces` of them. */
  size_t pieces =
      (size_t)((int64_t)nb + mlsba__mpi_dfac_piece_cols(f, f->m) - 1) /
      (size_t)mlsba__mpi_dfac_piece_cols(f, f->m);
  d->most = (3 * (size_t)q + 2) * pieces;
  d->reqs = malloc(d->most * sizeof *d->reqs);
  d->count = calloc(8 * (size_t)q, sizeof *d->count);
  d->types = malloc(2 * (size_t)q * sizeof *d->types);
  d->src_of = malloc((d->most + 1) * sizeof *d->src_of);
  d->index = malloc((d->most + 1) * sizeof *d->index);
  d->parent =
      malloc(2 * mlsba__layout_dims(f->layout)->columns * sizeof *d->parent);
  /* Per rank: arrived, unpacked, forward pending; and (Cholesky) which
   * sources each forward waits for, q x q. */
  d->flags = calloc(3 * (size_t)q + (lower ? (size_t)q * (size_t)q : 0) + 1, 1);
  d->recv = mlsba__mpi_dfac_alloc(f, panel_bytes);
  /* Under SMPI every message reads one shared buffer (skip). A real
   * run's holds a step's sends: each of this rank's rows goes at most to
   * its owner in every node column and, for Cholesky, to every rank of
   * the node column that holds its block column. */
  if (f->skip) {
    d->send = mlsba__mpi_dfac_alloc(f, panel_bytes);
  } else {
    const mlsba__layout_dims_t *dims = mlsba__layout_dims(f->layout);
    size_t tallest = 0, count;
    for (size_t c = 0; lower && c < dims->columns; c++) {
      (void)mlsba__layout_column_ranks(f->layout, c, &count);
      tallest = count > tallest ? count : tallest;
    }
    size_t most = dims->columns + tallest;
    /* On huge pages (core/bigmem.h): a holder packs its first panel's
     * messages into this buffer untouched, inside the timed call and on
     * the path every other rank waits on (a fault per 4 KiB page, about
     * 20 us each here: 8 MiB, two ranks' rows of a 4096 panel, cost
     * 40 ms in 4 KiB pages). */
    d->send = mlsba__big_alloc((size_t)f->lrows * nb * f->es * most + 1);
  }
  if (!d->reqs || !d->count || !d->types || !d->recv || !d->send ||
      !d->src_of || !d->index || !d->flags || !d->parent)
    return mlsba__fail(MLSBA_ENOMEM, "out of memory for the panel's "
                                     "messages");
  return 0;
}

void mlsba__mpi_deliver_close(mlsba__mpi_deliver_t *d) {
  if (d->f == NULL)
    return;
  free(d->reqs);
  free(d->count);
  free(d->types);
  free(d->src_of);
  free(d->index);
  free(d->parent);
  free(d->flags);
  mlsba__mpi_dfac_free(d->f, d->recv);
  if (d->f->skip)
    mlsba__mpi_dfac_free(d->f, d->send);
  else
    free(d->send);
  memset(d, 0, sizeof *d);
}

/* Whether rank r (in node column cr) receives block row b of the panel
 * of block column k. Cholesky reads none of the diagonal block's rows
 * (L11) outside the panel's node column, but a rank alone in its node
 * column receives them too: its message is then the panel's rows from
 * the top, contiguous where the receive lands, and Open MPI copies a
 * contiguous message in one go (CMA) whenever the receiver is inside MPI;
 * with a gap of L11's rows it moved it in fragments, each only while its
 * sender was inside MPI, so the message came at the sender's next wait,
 * a panel's time after its update. p x p elements more; SMPI, which
 * moves a message whatever its layout, receives only what is read. */
static int needs(const mlsba__mpi_deliver_t *d, size_t r, size_t cr,
                 int64_t b) {
  const mlsba__layout_t *l = d->f->layout;
  size_t alone;
  if (d->lower && b == d->k && cr != d->c && !mlsba__mpi_is_smpi()) {
    (void)mlsba__layout_column_ranks(l, cr, &alone);
    return alone == 1;
  }
  if (d->lower)
    return b > d->k && (mlsba__layout_row_owner(l, cr, b) == r ||
                        mlsba__layout_bcol_column(l, b) == cr);
  return mlsba__layout_row_owner(l, cr, b) == r;
}

/* The rank that sends block row b to rank r (in node column cr), which
 * needs it: its holder in the panel's node column, except (Cholesky) for
 * a rank of another node column than the next panel's: one that reads it
 * only as a row of its block columns takes it from that column's owner
 * of block row b, and that owner from its owner in the parent of its
 * node column in the step's tree over the node columns (d->parent: the
 * panel's at the root, the next panel's its first child). The next
 * panel's node column, on the critical path, takes every row straight
 * from the holders. */
static size_t sender(const mlsba__mpi_deliver_t *d, size_t r, size_t cr,
                     int64_t b) {
  const mlsba__layout_t *l = d->f->layout;
  if (!d->lower || cr == d->c || cr == d->next || b == d->k)
    return mlsba__layout_row_owner(l, d->c, b);
  size_t owner = mlsba__layout_row_owner(l, cr, b);
  return owner != r ? owner : mlsba__layout_row_owner(l, d->parent[cr], b);
}

/* The step's tree over the node columns (Cholesky's row broadcast), on
 * more than TREE_COLUMNS of them: the panel's node column at the root,
 * the next panel's a leaf under it (it factors that panel as soon as its
 * rows come: it forwards nothing), the others in turn from the next one
 * on, the i-th (from 1) the child of the (i / 2)-th, the root the 0-th:
 * a binary tree under one child of the root. Sent straight from the
 * panel's node column, its holders sent every block row to each other
 * node column one after the other over their links: on 64 simulated
 * Keeneland nodes (8 x 8) at nb = 960, the fixed slice, 29.8% of their
 * time was not compute (mostly waiting for L), 28.0% with the tree
 * (673.6 against 657.9 GF a node). On 16 (4 x 4) the tree's extra hop cost more
 * than the panel column's one message fewer saved (838.1 against 841.2 GF a
 * node): up to 4 node columns every one takes its rows straight. */
enum { TREE_COLUMNS = 4 };
static void column_tree(mlsba__mpi_deliver_t *d) {
  size_t cols = mlsba__layout_dims(d->f->layout)->columns, at = 0;
  size_t *order = d->parent + cols;
  order[at++] = d->c;
  for (size_t i = 1; i < cols; i++) {
    size_t c = (d->next + i) % cols;
    if (c != d->c)
      order[at++] = c;
  }
  for (size_t i = 1; i < at; i++)
    d->parent[order[i]] = order[i / 2];
  d->parent[d->c] = d->parent[d->next] = d->c;
  for (size_t i = 0; cols <= TREE_COLUMNS && i < cols; i++)
    d->parent[i] = d->c;
}

/* Calls back for every (block row b from the panel's first on, rank r
 * that needs it), r's node column walked in order; with the block's rows
 * `len` and the rank `src` that sends it to r (sender()). */
#define FOR_NEED(d, B, LEN, SRC, R, BODY)                                      \
  do {                                                                         \
    const mlsba__mpi_dfac_t *f_ = (d)->f;                                      \
    const mlsba__layout_dims_t *dims_ = mlsba__layout_dims(f_->layout);        \
    for (int64_t B = (d)->k; B < dims_->brows; B++) {                          \
      int64_t LEN = f_->m - B * f_->nb < f_->nb ? f_->m - B * f_->nb : f_->nb; \
      for (size_t c_ = 0; c_ < dims_->columns; c_++) {                         \
        size_t n_;                                                             \
        const size_t *rk_ = mlsba__layout_column_ranks(f_->layout, c_, &n_);   \
        /* LU: the one owner of b in the column; Cholesky: every rank of       \
         * the column that holds block column b, else that owner. */           \
        int all_ = (d)->lower &&                                               \
                   mlsba__layout_bcol_column(f_->layout, B) == c_ &&           \
                   B > (d)->k;                                                 \
        for (size_t i_ = 0; i_ < n_; i_++) {                                   \
          size_t R =                                                           \
              all_ ? rk_[i_] : mlsba__layout_row_owner(f_->layout, c_, B);     \
          if (all_ || needs((d), R, c_, B)) {                                  \
            size_t SRC = sender((d), R, c_, B);                                \
            BODY;                                                              \
          }                                                                    \
          if (!all_)                                                           \
            break;                                                             \
        }                                                                      \
      }                                                                        \
    }                                                                          \
  } while (0)

/* Block b's rows of this rank's panel columns (p of them from local
 * column lc), len x p, to or from dst with leading dimension ldd. */
static void block_out(const mlsba__mpi_dfac_t *f, int64_t b, int64_t len,
                      int64_t p, int64_t lc, char *dst, int64_t ldd) {
  int64_t lr = mlsba__layout_row_g2l(f->layout, f->mycol, b) * f->nb;
  for (int64_t j = 0; j < p; j++)
    memcpy(dst + (size_t)(j * ldd) * f->es, mlsba__mpi_dfac_at(f, lr, lc + j),
           (size_t)len * f->es);
}

static void block_in(const mlsba__mpi_dfac_t *f, const char *src, int64_t lds,
                     int64_t len, int64_t p, char *dst, int64_t ldd) {
  for (int64_t j = 0; j < p; j++)
    memcpy(dst + (size_t)(j * ldd) * f->es, src + (size_t)(j * lds) * f->es,
           (size_t)len * f->es);
}

/* The per-rank flags: the rows from s arrived, unpacked into the panel;
 * a forward to r not posted yet; and whether that forward waits for s. */
static unsigned char *arrived(mlsba__mpi_deliver_t *d) { return d->flags; }
static unsigned char *unpacked(mlsba__mpi_deliver_t *d) {
  return d->flags + d->q;
}
static unsigned char *pending(mlsba__mpi_deliver_t *d) {
  return d->flags + 2 * (size_t)d->q;
}
static unsigned char *waits_for(mlsba__mpi_deliver_t *d, size_t r) {
  return d->flags + 3 * (size_t)d->q + r * (size_t)d->q;
}

/* The step's sends (from this rank, every message's elements in
 * d->count[r]) and receives (d->count[q + s]) counted, the forwards
 * marked pending with the sources they wait for; returns the elements
 * this rank copies into its own panel buffer. */
static int64_t count_messages(mlsba__mpi_deliver_t *d) {
  const mlsba__mpi_dfac_t *f = d->f;
  size_t me = (size_t)f->me;
  int64_t own = 0;
  size_t q = (size_t)d->q;
  int64_t *first = d->count + 4 * q, *last = d->count + 5 * q;
  memset(d->count, 0, 2 * q * sizeof *d->count);
  memset(d->flags, 0, 3 * q + (d->lower ? q * q : 0));
  d->pending = 0;
  for (size_t s = 0; s < q; s++)
    first[s] = last[s] = -1;
  FOR_NEED(d, b, len, src, r, {
    if (src == me && r == me)
      own += len * d->p;
    else if (src == me) {
      d->count[r] += len * d->p;
      /* Forwarded: this rank receives the block row first. */
      if (mlsba__layout_row_owner(f->layout, d->c, b) != me) {
        d->pending += !pending(d)[r];
        pending(d)[r] = 1;
        waits_for(d, r)[sender(d, me, f->mycol, b)] = 1;
      }
    } else if (r == me) {
      d->count[q + src] += len * d->p;
      /* A run of consecutive block rows, or broken (first -2). */
      if (first[src] == -1)
        first[src] = b;
      else if (b != last[src] + 1)
        first[src] = -2;
      last[src] = b;
    }
  });
  return own;
}

/* The rows received from s into d->recv (not straight into the panel)
 * put in their places in the panel, once. */
static void unpack(mlsba__mpi_deliver_t *d, size_t s) {
  const mlsba__mpi_dfac_t *f = d->f;
  size_t me = (size_t)f->me, q = (size_t)d->q;
  const int64_t *first = d->count + 4 * q, *off = d->count + 6 * q;
  if (f->skip || unpacked(d)[s] || first[s] >= 0 || d->count[q + s] == 0)
    return;
  unpacked(d)[s] = 1;
  int64_t ldp = f->m - d->k0, p = d->p, cur = 0;
  FOR_NEED(d, b, len, src, r, {
    if (r == me && src == s) {
      block_in(f, d->recv + (size_t)(off[s] + cur) * f->es, d->count[q + s] / p,
               len, p, (char *)d->panel + (size_t)(b * f->nb - d->k0) * f->es,
               ldp);
      cur += len;
    }
  });
}

/* Sends n elements (rows x d->p, column-major, contiguous at buf) to r
 * in pieces of whole columns (f->piece); the receiver cuts the same. */
static void isend_rows(mlsba__mpi_deliver_t *d, const char *buf, int64_t n,
                       size_t r) {
  const mlsba__mpi_dfac_t *f = d->f;
  int64_t rows = n / d->p, per = mlsba__mpi_dfac_piece_cols(f, rows);
  for (int64_t j = 0; j < d->p; j += per) {
    int64_t c = d->p - j < per ? d->p - j : per;
    MPI_Isend(buf + (size_t)(j * rows) * f->es, (int)(c * rows), f->type,
              (int)r, ROWS_TAG, f->comm, &d->reqs[d->nreq++]);
  }
}

/* Posts the forward to r: the block rows it carries, received by now,
 * packed from the panel (the sources' rows unpacked first). */
static void forward(mlsba__mpi_deliver_t *d, size_t r) {
  const mlsba__mpi_dfac_t *f = d->f;
  size_t me = (size_t)f->me, q = (size_t)d->q;
  const int64_t *soff = d->count + 2 * q;
  int64_t ldp = f->m - d->k0, p = d->p, cur = 0;
  pending(d)[r] = 0;
  d->pending--;
  mlsba__mpi_dfac_charge_copy(f, (double)d->count[r]);
  if (!f->skip) {
    for (size_t s = 0; s < q; s++)
      if (waits_for(d, r)[s])
        unpack(d, s);
    FOR_NEED(d, b, len, src, rr, {
      if (src == me && rr == r) {
        block_in(f,
                 (const char *)d->panel + (size_t)(b * f->nb - d->k0) * f->es,
                 ldp, len, p, d->send + (size_t)(soff[r] + cur) * f->es,
                 d->count[r] / p);
        cur += len;
      }
    });
  }
  isend_rows(d, d->send + (f->skip ? 0 : (size_t)soff[r] * f->es), d->count[r],
             r);
}

/* Notes the receives done (their sources' indices in d->index, n of
 * them) and posts every forward whose rows have all come. */
static void forward_ready(mlsba__mpi_deliver_t *d, int n) {
  size_t q = (size_t)d->q;
  int64_t *left = d->count + 7 * q; /* each source's pieces to come */
  for (int i = 0; i < n; i++) {
    int s = d->src_of[d->index[i]];
    if (--left[s] == 0)
      arrived(d)[s] = 1;
  }
  for (size_t r = 0; r < q && d->pending > 0; r++) {
    if (!pending(d)[r])
      continue;
    size_t s = 0;
    while (s < q && (!waits_for(d, r)[s] || arrived(d)[s]))
      s++;
    if (s == q)
      forward(d, r);
  }
}

/* Posts the holder's sends to the ranks outside the panel's and the next
 * panel's node columns, held back until those to the next panel's have
 * gone (the panel's own ranks, holders too, wait for theirs at once):
 * SimGrid (and
 * a link) shares a sender's bandwidth between its messages, so sent all
 * at once the next panel's rows came no earlier than the rest. */
static void send_deferred(mlsba__mpi_deliver_t *d) {
  const mlsba__mpi_dfac_t *f = d->f;
  size_t q = (size_t)d->q;
  const int64_t *soff = d->count + 2 * q;
  for (size_t r = 0; r < q; r++)
    if (pending(d)[r] == 2) {
      pending(d)[r] = 0;
      isend_rows(d, d->send + (f->skip ? 0 : (size_t)soff[r] * f->es),
                 d->count[r], r);
    }
  d->deferred = 0;
}

/* Moves the forwards on: the receives that have completed noted, the
 * forwards they complete posted; block: until every forward is posted. */
static void progress(mlsba__mpi_deliver_t *d, int block) {
  if (d->deferred > 0) {
    int done = 1;
    MPI_Request *first = d->reqs + d->first_send;
    if (block)
      MPI_Waitall(d->first_sends, first, MPI_STATUSES_IGNORE);
    else
      MPI_Testall(d->first_sends, first, &done, MPI_STATUSES_IGNORE);
    if (!done)
      return;
    send_deferred(d);
  }
  while (d->pending > 0) {
    int n = 0;
    if (block)
      MPI_Waitsome(d->nrecv, d->reqs, &n, d->index, MPI_STATUSES_IGNORE);
    else
      MPI_Testsome(d->nrecv, d->reqs, &n, d->index, MPI_STATUSES_IGNORE);
    if (n == MPI_UNDEFINED) { /* every receive done: every forward ready */
      memset(arrived(d), 1, (size_t)d->q);
      forward_ready(d, 0);
      return;
    }
    forward_ready(d, n);
    if (!block && n == 0)
      return;
  }
}

void mlsba__mpi_deliver_start(mlsba__mpi_deliver_t *d, int64_t k0, int64_t p,
                              void *panel, int *piv, int npiv) {
  const mlsba__mpi_dfac_t *f = d->f;
  d->k = k0 / f->nb;
  d->p = p;
  d->k0 = k0;
  d->panel = panel;
  d->c = mlsba__layout_bcol_column(f->layout, d->k);
  d->next = d->k + 1 < mlsba__layout_dims(f->layout)->bcols
                ? mlsba__layout_bcol_column(f->layout, d->k + 1)
                : d->c;
  d->nreq = 0;
  d->deferred = 0;
  d->first_sends = 0;
  column_tree(d);
  size_t me = (size_t)f->me, q = (size_t)d->q;
  int holder = d->c == f->mycol;
  int64_t own = count_messages(d), sent = 0, ldp = f->m - k0;
  /* Where each destination's blocks go in the send buffer (soff), where
   * each source's land in d->recv (roff), and the packing's cursors. */
  int64_t *soff = d->count + 2 * q, *cur = d->count + 3 * q,
          *roff = d->count + 6 * q;
  for (size_t r = 0; r < q; r++) {
    soff[r] = sent;
    cur[r] = 0;
    sent += d->count[r];
  }
  mlsba__mpi_dfac_charge_copy(f, (double)(holder ? sent + own : own));
  int64_t lc = holder ? mlsba__mpi_dfac_cols_before(f, me, k0) : 0;
  if (holder && !f->skip)
    FOR_NEED(d, b, len, src, r, {
      if (src == me && r == me)
        block_out(f, b, len, p, lc,
                  (char *)panel + (size_t)(b * f->nb - k0) * f->es, ldp);
      else if (src == me) { /* cur: the message's rows so far */
        block_out(f, b, len, p, lc,
                  d->send + (size_t)(soff[r] + cur[r]) * f->es,
                  d->count[r] / p);
        cur[r] += len;
      }
    });
  /* Receives first, then sends; each message in pieces of whole
   * columns (f->piece: its counts and bytes below 2^31), received in the
   * same cuts. */
  const int64_t *first = d->count + 4 * q;
  int64_t *left = d->count + 7 * q;
  for (size_t s = 0, o = 0; s < q; s++) {
    int64_t n = d->count[q + s], rows = n / p;
    int64_t per = mlsba__mpi_dfac_piece_cols(f, rows);
    d->types[s] = d->types[q + s] = MPI_DATATYPE_NULL;
    roff[s] = (int64_t)o;
    left[s] = 0;
    if (n == 0)
      continue;
    /* straight into the panel; a vector type unless the whole panel */
    int straight = first[s] >= 0 && !f->skip, vec = straight && rows != ldp;
    char *at = straight
                   ? (char *)panel + (size_t)(first[s] * f->nb - k0) * f->es
                   : d->recv + (f->skip ? 0 : o * f->es);
    for (int64_t j = 0; j < p; j += per, left[s]++) {
      int64_t c = p - j < per ? p - j : per;
      d->src_of[d->nreq] = (int)s;
      if (!vec) {
        MPI_Irecv(at + (size_t)(j * rows) * f->es, (int)(c * rows), f->type,
                  (int)s, ROWS_TAG, f->comm, &d->reqs[d->nreq++]);
        continue;
      }
      MPI_Datatype *t = &d->types[c == per ? s : q + s];
      if (*t == MPI_DATATYPE_NULL) {
        MPI_Type_vector((int)c, (int)rows, (int)ldp, f->type, t);
        MPI_Type_commit(t);
      }
      MPI_Irecv(at + (size_t)(j * ldp) * f->es, 1, *t, (int)s, ROWS_TAG,
                f->comm, &d->reqs[d->nreq++]);
    }
    if (!straight)
      o += (size_t)n;
  }
  d->nrecv = d->nreq;
  int root = (int)mlsba__layout_row_owner(f->layout, d->c, d->k);
  if (!holder)
    MPI_Irecv(piv, npiv, MPI_INT, root, PIV_TAG, f->comm, &d->reqs[d->nreq++]);
  /* The next panel's node column first: it factors that panel as soon
   * as its L arrives, while the others only update; Cholesky's holders
   * send to the others once those messages have gone, and the forwards
   * wait for their rows (progress()). */
  d->first_send = d->nreq;
  for (int pass = 0; pass < 2; pass++) {
    for (size_t r = 0; r < q; r++) {
      size_t cr = mlsba__layout_rank_column(f->layout, r);
      if ((cr == d->next) != (pass == 0) || r == me)
        continue;
      if ((int)me == root && cr != d->c)
        MPI_Isend(piv, npiv, MPI_INT, (int)r, PIV_TAG, f->comm,
                  &d->reqs[d->nreq++]);
      if (d->count[r] == 0 || pending(d)[r])
        continue;
      if (pass == 1 && d->lower && d->first_sends > 0 && cr != d->c) {
        pending(d)[r] = 2; /* send_deferred() */
        d->deferred++;
        continue;
      }
      isend_rows(d, d->send + (f->skip ? 0 : (size_t)soff[r] * f->es),
                 d->count[r], r);
    }
    if (pass == 0)
      d->first_sends = d->nreq - d->first_send;
  }
}

void mlsba__mpi_deliver_progress(mlsba__mpi_deliver_t *d) {
  if (d->f != NULL && d->nreq > 0)
    progress(d, 0);
}

int mlsba__mpi_deliver_test(mlsba__mpi_deliver_t *d) {
  if (d->nreq > 0)
    progress(d, 0);
  int posted = d->pending == 0 && d->deferred == 0;
  /* SMPI moves a message without its ranks inside MPI, and charges each
   * MPI_Test a little simulated time. */
  if (mlsba__mpi_is_smpi() || d->nreq == 0)
    return posted;
  int flag = 0;
  MPI_Testall(d->nreq, d->reqs, &flag, MPI_STATUSES_IGNORE);
  return flag && posted;
}

void mlsba__mpi_deliver_wait(mlsba__mpi_deliver_t *d) {
  const mlsba__mpi_dfac_t *f = d->f;
  progress(d, 1);
  MPI_Waitall(d->nreq, d->reqs, MPI_STATUSES_IGNORE);
  d->nreq = 0;
  d->nrecv = 0;
  size_t q = (size_t)d->q;
  int64_t got = 0;
  for (size_t s = 0; s < q; s++) {
    for (size_t t = s; t < 2 * q; t += q)
      if (d->types[t] != MPI_DATATYPE_NULL)
        MPI_Type_free(&d->types[t]);
    got += d->count[q + s];
  }
  mlsba__mpi_dfac_charge_copy(f, (double)got);
  for (size_t s = 0; s < q; s++)
    unpack(d, s);
}
