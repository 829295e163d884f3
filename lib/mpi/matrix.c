/* Distributed matrices (<mlsba/mpi.h>): a grid of mb x nb blocks, the
 * rank that owns each and where it lies in that rank's local array. Three
 * kinds answer the same questions: an application's owner function,
 * ScaLAPACK's 2-D block-cyclic descriptor (the owner computed, as
 * INDXG2P and NUMROC do), and the product's rectangles (one per rank,
 * made by the multiplier). Every rank lists its own blocks once, when the
 * description is made, so that queries and the redistribution
 * (redistribute.c) never ask the owner function for them again. */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "matrix.h"

/* NUMROC: the rows (or columns) of an n-long dimension in blocks of nb
 * that process p of np holds when block 0 is on process src. */
static int64_t numroc(int64_t n, int64_t nb, int p, int src, int np) {
  int dist = (np + p - src) % np;
  int64_t blocks = n / nb, num = blocks / np * nb, extra = blocks % np;
  if (dist < extra)
    num += nb;
  else if (dist == extra)
    num += n % nb;
  return num;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

int mlsba__mpi_matrix_owner_of(const mlsba_mpi_matrix_t *d, int64_t bi,
                               int64_t bj, int64_t *lr, int64_t *lc) {
  int64_t r = 0, c = 0;
  int rank = -1;
  if (bi < 0 || bj < 0 || bi >= d->gm || bj >= d->gn)
    return -1;
  switch (d->kind) {
  case MLSBA__MATRIX_OWNER:
    rank = d->owner(d->user, bi, bj, &r, &c);
    break;
  case MLSBA__MATRIX_SCALAPACK: {
    int p = (int)((d->rsrc + bi) % d->nprow),
        s = (int)((d->csrc + bj) % d->npcol);
    rank =
        d->order == MLSBA_MPI_ROW_MAJOR ? p * d->npcol + s : s * d->nprow + p;
    r = bi / d->nprow * d->mb;
    c = bj / d->npcol * d->nb;
    break;
  }
  default: { /* rectangles: the one holding the block's first element, at
               its place in the rectangles' order */
    int64_t i = (d->inv[0] ? d->inv[0][bi] : bi) * d->mb,
            j = (d->inv[1] ? d->inv[1][bj] : bj) * d->nb;
    for (int k = 0; k < d->q && rank < 0; k++) {
      const int64_t *x = d->rect + 4 * k;
      if (i >= x[0] && i < x[0] + x[1] && j >= x[2] && j < x[2] + x[3]) {
        rank = k;
        r = i - x[0];
        c = j - x[2];
      }
    }
  }
  }
  if (lr)
    *lr = r;
  if (lc)
    *lc = c;
  return rank;
}

/* The block (bi, bj) whose first element is at local (lr, lc). */
static mlsba_mpi_block_t block_at(const mlsba_mpi_matrix_t *d, int64_t bi,
                                  int64_t bj, int64_t lr, int64_t lc) {
  int64_t i = bi * d->mb, j = bj * d->nb;
  return (mlsba_mpi_block_t){
      i, j, min64(d->mb, d->m - i), min64(d->nb, d->n - j), lr, lc};
}

static int add_own(mlsba_mpi_matrix_t *d, mlsba_mpi_block_t b, size_t *cap) {
  if (d->nown == *cap) {
    size_t more = *cap ? 2 * *cap : 64;
    mlsba_mpi_block_t *o = realloc(d->own, more * sizeof *o);
    if (o == NULL)
      return mlsba__fail(MLSBA_ENOMEM, "out of memory for a rank's blocks");
    d->own = o;
    *cap = more;
  }
  d->own[d->nown++] = b;
  if (b.local_col + b.cols > d->lcols)
    d->lcols = b.local_col + b.cols;
  return 0;
}

/* This rank's blocks, in column-major order of the grid. */
static int list_own(mlsba_mpi_matrix_t *d) {
  size_t cap = 0;
  int err = 0;
  if (d->kind == MLSBA__MATRIX_SCALAPACK) {
    if (d->myrow < 0)
      return 0;
    for (int64_t bj = (d->mycol - d->csrc + d->npcol) % d->npcol;
         !err && bj < d->gn; bj += d->npcol)
      for (int64_t bi = (d->myrow - d->rsrc + d->nprow) % d->nprow;
           !err && bi < d->gm; bi += d->nprow)
        err = add_own(
            d,
            block_at(d, bi, bj, bi / d->nprow * d->mb, bj / d->npcol * d->nb),
            &cap);
    return err;
  }
  if (d->kind == MLSBA__MATRIX_RECTS) {
    const int64_t *x = d->rect + 4 * d->rank;
    for (int64_t vj = x[2] / d->nb;
         !err && x[1] > 0 && x[3] > 0 && vj * d->nb < x[2] + x[3]; vj++)
      for (int64_t vi = x[0] / d->mb; !err && vi * d->mb < x[0] + x[1]; vi++)
        err = add_own(d,
                      block_at(d, d->perm[0] ? d->perm[0][vi] : vi,
                               d->perm[1] ? d->perm[1][vj] : vj,
                               vi * d->mb - x[0], vj * d->nb - x[2]),
                      &cap);
    return err;
  }
  for (int64_t bj = 0; !err && bj < d->gn; bj++)
    for (int64_t bi = 0; !err && bi < d->gm; bi++) {
      int64_t lr = -1, lc = -1;
      int r = mlsba__mpi_matrix_owner_of(d, bi, bj, &lr, &lc);
      if (r < 0 || r >= d->q)
        return mlsba__fail(MLSBA_EINVAL,
                           "the owner of block (%lld, %lld) is rank %d, "
                           "outside the communicator's %d ranks",
                           (long long)bi, (long long)bj, r, d->q);
      mlsba_mpi_block_t b = block_at(d, bi, bj, lr, lc);
      if (r == d->rank && (lr < 0 || lc < 0 || lr + b.rows > d->ld))
        return mlsba__fail(MLSBA_EINVAL,
                           "block (%lld, %lld) lies at local (%lld, %lld), "
                           "outside this rank's %lld rows (ld)",
                           (long long)bi, (long long)bj, (long long)lr,
                           (long long)lc, (long long)d->ld);
      if (r == d->rank)
        err = add_own(d, b, &cap);
    }
  return err;
}

/* The common part of every kind; sizes checked by the caller. */
static int matrix_new(MPI_Comm comm, int kind, int64_t m, int64_t n, int64_t mb,
                      int64_t nb, mlsba_mpi_matrix_t **out) {
  *out = NULL;
  if (comm == MPI_COMM_NULL)
    return mlsba__fail(MLSBA_EINVAL, "a distributed matrix on MPI_COMM_NULL");
  mlsba_mpi_matrix_t *d = calloc(1, sizeof *d);
  if (d == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "out of memory");
  d->comm = comm;
  MPI_Comm_rank(comm, &d->rank);
  MPI_Comm_size(comm, &d->q);
  d->kind = kind;
  d->m = m;
  d->n = n;
  d->mb = mb;
  d->nb = nb;
  d->gm = (m + mb - 1) / mb;
  d->gn = (n + nb - 1) / nb;
  d->myrow = d->mycol = -1;
  *out = d;
  return 0;
}

static int check_sizes(int64_t m, int64_t n, int64_t mb, int64_t nb) {
  if (m < 1 || n < 1 || mb < 1 || nb < 1 || m > INT32_MAX || n > INT32_MAX)
    return mlsba__fail(MLSBA_EINVAL,
                       "a distributed matrix of %lld x %lld in blocks of "
                       "%lld x %lld: sizes must be 1 to 2^31 - 1",
                       (long long)m, (long long)n, (long long)mb,
                       (long long)nb);
  return 0;
}

int mlsba_mpi_matrix_create(MPI_Comm comm, int64_t m, int64_t n, int64_t mb,
                            int64_t nb, mlsba_mpi_owner_fn owner, void *user,
                            int64_t ld, mlsba_mpi_matrix_t **out) {
  if (out == NULL || owner == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_mpi_matrix_create: %s is NULL",
                       out ? "owner" : "matrix");
  int err = check_sizes(m, n, mb, nb);
  if (!err && ld < 1)
    err = mlsba__fail(MLSBA_EINVAL, "leading dimension %lld is below 1",
                      (long long)ld);
  if (err || (err = matrix_new(comm, MLSBA__MATRIX_OWNER, m, n, mb, nb, out)))
    return err;
  (*out)->owner = owner;
  (*out)->user = user;
  (*out)->ld = ld;
  if ((err = list_own(*out)) != 0) {
    mlsba_mpi_matrix_destroy(*out);
    *out = NULL;
  }
  return err;
}

int mlsba_mpi_matrix_scalapack(MPI_Comm comm, const int desc[9], int nprow,
                               int npcol, mlsba_mpi_grid_order_t order,
                               mlsba_mpi_matrix_t **out) {
  if (out == NULL || desc == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_mpi_matrix_scalapack: %s is NULL",
                       out ? "desc" : "matrix");
  *out = NULL;
  int q = 0;
  if (comm != MPI_COMM_NULL)
    MPI_Comm_size(comm, &q);
  if (desc[0] != 1)
    return mlsba__fail(MLSBA_EINVAL,
                       "desc[0] (DTYPE) is %d: only dense descriptors (1)",
                       desc[0]);
  int err = check_sizes(desc[2], desc[3], desc[4], desc[5]);
  if (err)
    return err;
  if (nprow < 1 || npcol < 1 || (int64_t)nprow * npcol > q)
    return mlsba__fail(MLSBA_EINVAL,
                       "a %d x %d process grid on %d ranks: the grid must "
                       "fit the communicator",
                       nprow, npcol, q);
  if (desc[6] < 0 || desc[6] >= nprow || desc[7] < 0 || desc[7] >= npcol)
    return mlsba__fail(MLSBA_EINVAL,
                       "desc RSRC %d, CSRC %d: outside the %d x %d grid",
                       desc[6], desc[7], nprow, npcol);
  if (order != MLSBA_MPI_ROW_MAJOR && order != MLSBA_MPI_COLUMN_MAJOR)
    return mlsba__fail(MLSBA_EINVAL, "unknown grid order %d", (int)order);
  if ((err = matrix_new(comm, MLSBA__MATRIX_SCALAPACK, desc[2], desc[3],
                        desc[4], desc[5], out)) != 0)
    return err;
  mlsba_mpi_matrix_t *d = *out;
  d->nprow = nprow;
  d->npcol = npcol;
  d->rsrc = desc[6];
  d->csrc = desc[7];
  d->order = order;
  d->ld = desc[8];
  if (d->rank < nprow * npcol) {
    mlsba__mpi_matrix_grid_of(d, d->rank, &d->myrow, &d->mycol);
    int64_t rows = numroc(d->m, d->mb, d->myrow, d->rsrc, nprow);
    if (d->ld < (rows > 1 ? rows : 1))
      err = mlsba__fail(MLSBA_EINVAL,
                        "desc LLD %d is below this rank's %lld local rows",
                        desc[8], (long long)rows);
  }
  if (!err)
    err = list_own(d);
  if (err) {
    mlsba_mpi_matrix_destroy(d);
    *out = NULL;
  }
  return err;
}

int mlsba__mpi_matrix_rects(MPI_Comm comm, int64_t m, int64_t n, int64_t b,
                            const int64_t *rect, mlsba_mpi_matrix_t **out) {
  return mlsba__mpi_matrix_rects_perm(comm, m, n, b, rect, NULL, NULL, out);
}

/* A permutation of count blocks and its inverse into d->perm[w], d->inv[w]
 * (none for NULL). */
static int keep_perm(mlsba_mpi_matrix_t *d, int w, const int64_t *perm,
                     int64_t count) {
  if (perm == NULL)
    return 0;
  d->perm[w] = malloc((size_t)count * sizeof *d->perm[w]);
  d->inv[w] = malloc((size_t)count * sizeof *d->inv[w]);
  if (!d->perm[w] || !d->inv[w])
    return mlsba__fail(MLSBA_ENOMEM, "out of memory");
  memcpy(d->perm[w], perm, (size_t)count * sizeof *perm);
  for (int64_t v = 0; v < count; v++)
    d->inv[w][perm[v]] = v;
  return 0;
}

int mlsba__mpi_matrix_rects_perm(MPI_Comm comm, int64_t m, int64_t n, int64_t b,
                                 const int64_t *rect, const int64_t *rperm,
                                 const int64_t *cperm,
                                 mlsba_mpi_matrix_t **out) {
  int err = matrix_new(comm, MLSBA__MATRIX_RECTS, m, n, b, b, out);
  if (err)
    return err;
  mlsba_mpi_matrix_t *d = *out;
  d->rect = malloc((size_t)d->q * 4 * sizeof *d->rect);
  if (d->rect == NULL)
    err = mlsba__fail(MLSBA_ENOMEM, "out of memory");
  else
    memcpy(d->rect, rect, (size_t)d->q * 4 * sizeof *d->rect);
  if (!err)
    err = keep_perm(d, 0, rperm, d->gm);
  if (!err)
    err = keep_perm(d, 1, cperm, d->gn);
  /* A rectangle with no rows or no columns: a rank that owns nothing. */
  d->ld = rect[4 * d->rank + 1] > 0 ? rect[4 * d->rank + 1] : 1;
  if (!err)
    err = list_own(d);
  if (err) {
    mlsba_mpi_matrix_destroy(d);
    *out = NULL;
  }
  return err;
}

void mlsba_mpi_matrix_destroy(mlsba_mpi_matrix_t *d) {
  if (d == NULL)
    return;
  if (d->free_user)
    d->free_user(d->user);
  free(d->rect);
  for (int w = 0; w < 2; w++) {
    free(d->perm[w]);
    free(d->inv[w]);
  }
  free(d->own);
  free(d);
}

void mlsba_mpi_matrix_size(const mlsba_mpi_matrix_t *d, int64_t *m, int64_t *n,
                           int64_t *mb, int64_t *nb) {
  if (m)
    *m = d ? d->m : 0;
  if (n)
    *n = d ? d->n : 0;
  if (mb)
    *mb = d ? d->mb : 0;
  if (nb)
    *nb = d ? d->nb : 0;
}

int mlsba_mpi_matrix_owner(const mlsba_mpi_matrix_t *d, int64_t bi, int64_t bj,
                           int64_t *local_row, int64_t *local_col) {
  return d ? mlsba__mpi_matrix_owner_of(d, bi, bj, local_row, local_col) : -1;
}

size_t mlsba_mpi_matrix_num_blocks(const mlsba_mpi_matrix_t *d) {
  return d ? d->nown : 0;
}

int mlsba_mpi_matrix_block(const mlsba_mpi_matrix_t *d, size_t i,
                           mlsba_mpi_block_t *block) {
  if (d == NULL || block == NULL || i >= d->nown)
    return mlsba__fail(MLSBA_EINVAL,
                       "mlsba_mpi_matrix_block: block %zu of %zu, or NULL", i,
                       d ? d->nown : 0);
  *block = d->own[i];
  return 0;
}

void mlsba_mpi_matrix_local(const mlsba_mpi_matrix_t *d, int64_t *ld,
                            int64_t *cols) {
  if (ld)
    *ld = d ? d->ld : 0;
  if (cols)
    *cols = d ? d->lcols : 0;
}
