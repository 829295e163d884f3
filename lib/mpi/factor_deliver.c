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
 * its owner in each node column (the row broadcast), and passes from
 * that owner down a chain through the other ranks of its node column
 * that hold block column b (the transpose down the columns, as
 * ScaLAPACK's PDPOTRF sends L). A large panel's messages go in pieces of
 * columns, cut alike, and a forwarder posts each piece as soon as the
 * rows it carries have come, at its next call into the library's
 * progress (between the pieces of its update; under SMPI, every 2 ms of
 * its update's simulated time) or in mlsba__mpi_deliver_wait. */
#include <stdlib.h>
#include <string.h>

#include "../core/bigmem.h"
#include "../core/error.h"
#include "factor.h"

/* The tags of the rows and of the pivots (on the description's
 * communicator, which carries no other point-to-point message of the
 * factorizations). */
enum { ROWS_TAG = 3218, PIV_TAG = 3219 };

/* Cholesky's messages go in PIPE pieces of columns where the panel is
 * at least PIPE_BYTES (every one cut alike, so that a forward passes on
 * each piece as soon as its rows have come: a pipeline down each node
 * column and along the rows' tree); under SMPI a sender keeps WINDOW
 * pieces of a message in flight, the next posted as one lands (SimGrid
 * shares a link between its flows: posted at once, the pieces would
 * all land at the end). */
enum { PIPE = 8, WINDOW = 2 };
static const double PIPE_BYTES = 64.0 * 1024 * 1024;

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
          (size_t)mlsba__mpi_dfac_piece_cols(f, f->m) +
      PIPE;
  d->npmax = (int)pieces;
  d->most = (3 * (size_t)q + 2) * pieces;
  d->reqs = malloc(d->most * sizeof *d->reqs);
  d->piece_of = malloc((d->most + 1) * sizeof *d->piece_of);
  d->q_ready = malloc(3 * (size_t)q * sizeof *d->q_ready);
  d->q_posted = d->q_ready ? d->q_ready + q : NULL;
  d->q_flight = d->q_ready ? d->q_ready + 2 * (size_t)q : NULL;
  d->got = calloc(2 * (size_t)q * pieces, 1);
  d->pos = malloc((size_t)q * sizeof *d->pos);
  const mlsba__layout_dims_t *cd = mlsba__layout_dims(f->layout);
  for (size_t c = 0; d->pos && c < cd->columns; c++) {
    size_t count;
    const size_t *rk = mlsba__layout_column_ranks(f->layout, c, &count);
    for (size_t i = 0; i < count; i++)
      d->pos[rk[i]] = i;
  }
  d->count = calloc(7 * (size_t)q, sizeof *d->count);
  d->types = malloc(2 * (size_t)q * sizeof *d->types);
  d->src_of = malloc((d->most + 1) * sizeof *d->src_of);
  d->index = malloc((d->most + 1) * sizeof *d->index);
  d->parent =
      malloc(2 * mlsba__layout_dims(f->layout)->columns * sizeof *d->parent);
  d->cut = calloc(mlsba__layout_dims(f->layout)->columns, 1);
  /* Per rank: the message's kind (pending()); and (Cholesky) which
   * sources each forward waits for, q x q. */
  d->flags = calloc(2 * (size_t)q + (lower ? (size_t)q * (size_t)q : 0) + 1, 1);
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
    /* Plus a chain's forward down this rank's node column (block rows
     * of its block columns that other ranks of it own: at most the
     * panel's rows). */
    d->send = mlsba__big_alloc(
        ((size_t)f->lrows * most + (lower ? (size_t)f->m : 0)) * nb * f->es +
        1);
  }
  if (!d->reqs || !d->count || !d->types || !d->recv || !d->send ||
      !d->src_of || !d->index || !d->flags || !d->parent || !d->piece_of ||
      !d->q_ready || !d->got || !d->pos || !d->cut)
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
  free(d->cut);
  free(d->flags);
  free(d->piece_of);
  free(d->q_ready);
  free(d->got);
  free(d->pos);
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
 * a rank of another node column: its owner of block row b takes it from
 * the owner in the parent of its node column in the step's tree over the
 * node columns (d->parent: the panel's at the root, the next panel's its
 * first child, straight from the holders), and the other ranks of the
 * node column that read b as a row of their block columns take it down
 * a chain from that owner, each from the rank above it (cyclically: the
 * top from the bottom; the top from the owner where the step cuts the
 * node column's ring, cut_rings()), piece by piece. From the owner to
 * each one (a star), the owner's link sent its rows once for every other
 * rank of its node column, one after the other: on 64 simulated
 * Keeneland nodes (8 x 8, nb = 960) 7 x 265 MB a step at 4 GB/s, and the
 * next panel's node column took its rows of block columns the same way,
 * from their holder, before it could factor that panel. */
static size_t sender(const mlsba__mpi_deliver_t *d, size_t r, size_t cr,
                     int64_t b) {
  const mlsba__layout_t *l = d->f->layout;
  if (!d->lower || cr == d->c || b == d->k)
    return mlsba__layout_row_owner(l, d->c, b);
  size_t owner = mlsba__layout_row_owner(l, cr, b), n;
  if (owner == r)
    return mlsba__layout_row_owner(l, d->parent[cr], b);
  const size_t *rk = mlsba__layout_column_ranks(l, cr, &n);
  if (d->pos[r] == 0 && d->cut[cr] && d->pos[owner] != n - 1)
    return owner;
  return rk[(d->pos[r] + n - 1) % n];
}

/* Whether node column cr's chains close a ring this step (d->cut).
 * One message goes a step from each rank of a node column to the next
 * below it (the bottom's to the top), carrying every chain's rows that
 * pass that way, and a forward's piece goes only once all its rows have
 * come. A chain from the owner at position o passes every link of the
 * ring but the one into o, and forwards what it received on every link
 * but the one out of o: the link from a to a + 1 waits for the link
 * into a wherever some chain's owner is neither a nor a + 1. With
 * owners at three or more positions (or two not next to each other)
 * that holds on every link, and each message waited for the one before
 * it round the ring: the ranks of the node column waited forever (16
 * simulated ranks, 4 x 4, once the walks dealt a node column's rows
 * 0 1 1 0 ...; homogeneous on 3 x 4). There the top takes each chain's
 * rows from its owner instead of the bottom (the ring cut at its wrap:
 * the bottom's message to the top carries only its own rows, and the
 * links wait for each other only downwards); elsewhere the chains are
 * as before. Every rank computes the same from the layout. */
static int ring_closes(const mlsba__mpi_deliver_t *d, size_t cr) {
  const mlsba__layout_t *l = d->f->layout;
  const mlsba__layout_dims_t *dims = mlsba__layout_dims(l);
  size_t n, at[2], seen = 0;
  (void)mlsba__layout_column_ranks(l, cr, &n);
  if (cr == d->c || n <= 2)
    return 0;
  int64_t end = dims->brows < dims->bcols ? dims->brows : dims->bcols;
  for (int64_t b = d->k + 1; b < end; b++) {
    if (mlsba__layout_bcol_column(l, b) != cr)
      continue;
    size_t o = d->pos[mlsba__layout_row_owner(l, cr, b)];
    if ((seen > 0 && o == at[0]) || (seen > 1 && o == at[1]))
      continue;
    if (seen == 2)
      return 1; /* a third position */
    at[seen++] = o;
  }
  if (seen < 2)
    return 0;
  size_t gap = (at[1] + n - at[0]) % n;
  return gap != 1 && gap != n - 1;
}

static void cut_rings(mlsba__mpi_deliver_t *d) {
  for (size_t cr = 0; cr < mlsba__layout_dims(d->f->layout)->columns; cr++)
    d->cut[cr] = (unsigned char)ring_closes(d, cr);
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

/* The per-rank flags: the message to r a forward (1), held back (2), to
 * the next panel's node column (4); and whether a forward to r waits for
 * s. */
static unsigned char *pending(mlsba__mpi_deliver_t *d) { return d->flags; }
static unsigned char *waits_for(mlsba__mpi_deliver_t *d, size_t r) {
  return d->flags + (size_t)d->q + r * (size_t)d->q;
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
  memset(d->flags, 0, 2 * q + (d->lower ? q * q : 0));
  for (size_t s = 0; s < q; s++)
    first[s] = last[s] = -1;
  FOR_NEED(d, b, len, src, r, {
    if (src == me && r == me)
      own += len * d->p;
    else if (src == me) {
      d->count[r] += len * d->p;
      /* Forwarded: this rank receives the block row first. */
      if (mlsba__layout_row_owner(f->layout, d->c, b) != me) {
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

/* The columns of a message's pieces (rows of them): Cholesky's step cuts
 * every message alike (d->pc), LU's each by its size. */
static int64_t cut(const mlsba__mpi_deliver_t *d, int64_t rows) {
  return d->lower ? d->pc : mlsba__mpi_dfac_piece_cols(d->f, rows);
}

/* A message's pieces: whole columns, at most cut() of them each. */
static int pieces(const mlsba__mpi_deliver_t *d, int64_t rows) {
  int64_t per = cut(d, rows);
  return (int)((d->p + per - 1) / per);
}

/* Whether source s's piece j has come, has been unpacked. */
static unsigned char *got(mlsba__mpi_deliver_t *d, size_t s, int j) {
  return d->got + s * (size_t)d->npmax + (size_t)j;
}
static unsigned char *unpacked(mlsba__mpi_deliver_t *d, size_t s, int j) {
  return d->got + ((size_t)d->q + s) * (size_t)d->npmax + (size_t)j;
}

/* Piece j of the rows received from s into d->recv (not straight into
 * the panel) put in their places in the panel, once. */
static void unpack(mlsba__mpi_deliver_t *d, size_t s, int j) {
  const mlsba__mpi_dfac_t *f = d->f;
  size_t me = (size_t)f->me, q = (size_t)d->q;
  const int64_t *first = d->count + 4 * q, *off = d->count + 6 * q;
  if (f->skip || *unpacked(d, s, j) || first[s] >= 0 || d->count[q + s] == 0)
    return;
  *unpacked(d, s, j) = 1;
  int64_t ldp = f->m - d->k0, p = d->p, cur = 0, rows = d->count[q + s] / p;
  int64_t per = cut(d, rows), j0 = j * per, c = p - j0 < per ? p - j0 : per;
  FOR_NEED(d, b, len, src, r, {
    if (r == me && src == s) {
      block_in(
          f, d->recv + (size_t)(off[s] + j0 * rows + cur) * f->es, rows, len, c,
          (char *)d->panel + (size_t)(b * f->nb - d->k0 + j0 * ldp) * f->es,
          ldp);
      cur += len;
    }
  });
}

/* Packs piece j of the forward to r (the block rows it carries, come by
 * now) from the panel into the send buffer, the sources' rows of that
 * piece unpacked first. */
static void pack_forward(mlsba__mpi_deliver_t *d, size_t r, int j) {
  const mlsba__mpi_dfac_t *f = d->f;
  size_t me = (size_t)f->me, q = (size_t)d->q;
  const int64_t *soff = d->count + 2 * q;
  int64_t ldp = f->m - d->k0, p = d->p, cur = 0, rows = d->count[r] / p;
  int64_t per = cut(d, rows), j0 = j * per, c = p - j0 < per ? p - j0 : per;
  mlsba__mpi_dfac_charge_copy(f, (double)(rows * c));
  if (f->skip)
    return;
  for (size_t s = 0; s < q; s++)
    if (waits_for(d, r)[s])
      unpack(d, s, j);
  FOR_NEED(d, b, len, src, rr, {
    if (src == me && rr == r) {
      block_in(f,
               (const char *)d->panel +
                   (size_t)(b * f->nb - d->k0 + j0 * ldp) * f->es,
               ldp, len, c,
               d->send + (size_t)(soff[r] + j0 * rows + cur) * f->es, rows);
      cur += len;
    }
  });
}

/* Posts the pieces of the message to r that are ready (a forward's
 * packed first), under SMPI at most WINDOW of Cholesky's in flight; the
 * receiver cuts the same pieces. */
static void post(mlsba__mpi_deliver_t *d, size_t r) {
  const mlsba__mpi_dfac_t *f = d->f;
  size_t q = (size_t)d->q;
  const int64_t *soff = d->count + 2 * q;
  int64_t rows = d->count[r] / d->p, per = cut(d, rows);
  char *buf = d->send + (f->skip ? 0 : (size_t)soff[r] * f->es);
  int window = d->lower && mlsba__mpi_is_smpi();
  while (d->q_posted[r] < d->q_ready[r] &&
         !(window && d->q_flight[r] >= WINDOW)) {
    int j = d->q_posted[r];
    int64_t j0 = j * per, c = d->p - j0 < per ? d->p - j0 : per;
    if (pending(d)[r] & 1)
      pack_forward(d, r, j);
    d->src_of[d->nreq] = -1 - (int)r;
    d->q_flight[r]++;
    MPI_Isend(buf + (size_t)(j0 * rows) * f->es, (int)(c * rows), f->type,
              (int)r, ROWS_TAG, f->comm, &d->reqs[d->nreq++]);
    d->q_posted[r]++;
    d->unposted--;
  }
}

/* The holder's sends held back, released. */
static void release(mlsba__mpi_deliver_t *d) {
  for (size_t t = 0; t < (size_t)d->q; t++)
    if (pending(d)[t] & 2) {
      pending(d)[t] &= (unsigned char)~2;
      d->q_ready[t] = pieces(d, d->count[t] / d->p);
    }
}

/* Notes request i done: a receive's piece come, a sent piece gone (the
 * held-back sends released once the next panel's node column has its
 * rows). */
static void done(mlsba__mpi_deliver_t *d, int i) {
  size_t q = (size_t)d->q;
  int s = d->src_of[i];
  if (s >= 0) {
    *got(d, (size_t)s, d->piece_of[i]) = 1;
    return;
  }
  if (s < -(int)q)
    return; /* the pivots or the info */
  size_t r = (size_t)(-1 - s);
  d->q_flight[r]--;
  if ((pending(d)[r] & 4) && --d->first_left == 0)
    release(d);
}

/* Marks the forwards' pieces whose rows have all come ready, and posts
 * every destination's ready pieces. */
static void advance(mlsba__mpi_deliver_t *d) {
  size_t q = (size_t)d->q;
  for (size_t r = 0; r < q; r++) {
    if (d->count[r] == 0 || (size_t)d->f->me == r)
      continue;
    if ((pending(d)[r] & 1) && d->q_ready[r] < d->np) {
      int j = d->q_ready[r];
      for (; j < d->np; j++) {
        size_t s = 0;
        while (s < q && (!waits_for(d, r)[s] || *got(d, s, j)))
          s++;
        if (s < q)
          break;
      }
      d->q_ready[r] = j;
    }
    post(d, r);
  }
}

/* Moves the messages on: the requests done noted, the pieces they make
 * ready posted; block: until every piece of this rank's is posted. */
static void progress(mlsba__mpi_deliver_t *d, int block) {
  advance(d);
  while (d->unposted > 0) {
    int n = 0;
    if (block)
      MPI_Waitsome(d->nreq, d->reqs, &n, d->index, MPI_STATUSES_IGNORE);
    else
      MPI_Testsome(d->nreq, d->reqs, &n, d->index, MPI_STATUSES_IGNORE);
    if (n == MPI_UNDEFINED) {
      /* Every request done (MPI_Testall's, which notes none): every
       * piece has come and gone. */
      memset(d->got, 1, (size_t)d->q * (size_t)d->npmax);
      memset(d->q_flight, 0, (size_t)d->q * sizeof *d->q_flight);
      d->first_left = 0;
      release(d);
      n = 0;
    }
    for (int i = 0; i < n; i++)
      done(d, d->index[i]);
    advance(d);
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
  d->first_left = 0;
  d->unposted = 0;
  /* Cholesky's pieces: PIPE of them where the panel is large, each
   * within f->piece. */
  int64_t most = mlsba__mpi_dfac_piece_cols(f, f->m);
  d->pc = (double)(f->m - k0) * (double)p * (double)f->es >= PIPE_BYTES
              ? (p + PIPE - 1) / PIPE
              : p;
  d->pc = d->pc < most ? d->pc : most;
  d->np = (int)((p + d->pc - 1) / d->pc);
  column_tree(d);
  if (d->lower)
    cut_rings(d);
  size_t me = (size_t)f->me, q = (size_t)d->q;
  int holder = d->c == f->mycol;
  int64_t own = count_messages(d), sent = 0, ldp = f->m - k0;
  memset(d->got, 0, 2 * q * (size_t)d->npmax);
  /* Where each destination's blocks go in the send buffer (soff), where
   * each source's land in d->recv (roff), and the packing's cursors. */
  int64_t *soff = d->count + 2 * q, *cur = d->count + 3 * q,
          *roff = d->count + 6 * q;
  for (size_t r = 0; r < q; r++) {
    soff[r] = sent;
    cur[r] = 0;
    sent += d->count[r];
    d->q_ready[r] = d->q_posted[r] = d->q_flight[r] = 0;
    if (d->count[r] > 0)
      d->unposted += pieces(d, d->count[r] / p);
  }
  mlsba__mpi_dfac_charge_copy(
      f, (double)(holder ? sent + own : own)); /* forwards: as they go */
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
   * columns (cut(): within f->piece, its counts and bytes below 2^31),
   * received in the same cuts. */
  const int64_t *first = d->count + 4 * q;
  for (size_t s = 0, o = 0; s < q; s++) {
    int64_t n = d->count[q + s], rows = n / p;
    int64_t per = cut(d, rows);
    d->types[s] = d->types[q + s] = MPI_DATATYPE_NULL;
    roff[s] = (int64_t)o;
    if (n == 0)
      continue;
    /* straight into the panel; a vector type unless the whole panel */
    int straight = first[s] >= 0 && !f->skip, vec = straight && rows != ldp;
    char *at = straight
                   ? (char *)panel + (size_t)(first[s] * f->nb - k0) * f->es
                   : d->recv + (f->skip ? 0 : o * f->es);
    for (int64_t j = 0, piece = 0; j < p; j += per, piece++) {
      int64_t c = p - j < per ? p - j : per;
      d->src_of[d->nreq] = (int)s;
      d->piece_of[d->nreq] = (int)piece;
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
  int root = (int)mlsba__layout_row_owner(f->layout, d->c, d->k);
  if (!holder) {
    d->src_of[d->nreq] = -1 - (int)q;
    MPI_Irecv(piv, npiv, MPI_INT, root, PIV_TAG, f->comm, &d->reqs[d->nreq++]);
  }
  /* The next panel's node column first: it factors that panel as soon
   * as its L arrives, while the others only update; Cholesky's holders
   * send to the others once those messages have gone, and the forwards
   * go piece by piece as their rows come (progress()). */
  for (int pass = 0; pass < 2; pass++) {
    for (size_t r = 0; r < q; r++) {
      size_t cr = mlsba__layout_rank_column(f->layout, r);
      if ((cr == d->next) != (pass == 0) || r == me)
        continue;
      if ((int)me == root && cr != d->c) {
        d->src_of[d->nreq] = -1 - (int)q;
        MPI_Isend(piv, npiv, MPI_INT, (int)r, PIV_TAG, f->comm,
                  &d->reqs[d->nreq++]);
      }
      if (d->count[r] == 0 || pending(d)[r])
        continue;
      if (pass == 0 && d->lower) {
        pending(d)[r] = 4; /* done() counts its pieces */
        d->first_left += pieces(d, d->count[r] / p);
      }
      if (pass == 1 && d->lower && d->first_left > 0 && cr != d->c) {
        pending(d)[r] = 2; /* held back: done() releases it */
        continue;
      }
      d->q_ready[r] = pieces(d, d->count[r] / p);
      post(d, r);
    }
  }
  advance(d);
}

int mlsba__mpi_deliver_progress(mlsba__mpi_deliver_t *d) {
  if (d->f != NULL && d->nreq > 0)
    progress(d, 0);
  return d->f != NULL && d->nreq > 0 && d->unposted > 0;
}

int mlsba__mpi_deliver_test(mlsba__mpi_deliver_t *d) {
  if (d->nreq > 0)
    progress(d, 0);
  int posted = d->unposted == 0;
  /* SMPI moves a message without its ranks inside MPI, and charges each
   * MPI_Test a little simulated time. Not while some pieces wait for
   * rows: progress() must see each receive done. */
  if (mlsba__mpi_is_smpi() || d->nreq == 0 || !posted)
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
  size_t q = (size_t)d->q;
  int64_t got_n = 0;
  for (size_t s = 0; s < q; s++) {
    for (size_t t = s; t < 2 * q; t += q)
      if (d->types[t] != MPI_DATATYPE_NULL)
        MPI_Type_free(&d->types[t]);
    got_n += d->count[q + s];
  }
  mlsba__mpi_dfac_charge_copy(f, (double)got_n);
  for (size_t s = 0; s < q && !f->skip; s++) {
    int np = d->count[q + s] > 0 ? pieces(d, d->count[q + s] / d->p) : 0;
    for (int j = 0; j < np; j++)
      unpack(d, s, j);
  }
}
