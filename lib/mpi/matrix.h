/* Distributed matrices inside the layer: the description every kind
 * shares (matrix.c), the product's rectangles, and the moves between
 * layouts (redistribute.c). */
#ifndef MLSBA_MPI_MATRIX_H
#define MLSBA_MPI_MATRIX_H

#include "internal.h"

enum {
  MLSBA__MATRIX_OWNER = 0, /* an owner function (the application's) */
  MLSBA__MATRIX_SCALAPACK, /* a 2-D block-cyclic descriptor */
  MLSBA__MATRIX_RECTS      /* one rectangle per rank (the product's) */
};

struct mlsba_mpi_matrix {
  MPI_Comm comm; /* the caller's: not duplicated */
  int rank, q, kind;
  int64_t m, n, mb, nb; /* global size, block size */
  int64_t gm, gn;       /* blocks: ceil(m / mb) x ceil(n / nb) */
  /* MLSBA__MATRIX_OWNER */
  mlsba_mpi_owner_fn owner;
  void *user;
  /* Frees user with the description, when the layer made user for it
   * (the factorizations' layouts: factor_layout.c); NULL otherwise. */
  void (*free_user)(void *user);
  /* MLSBA__MATRIX_SCALAPACK: the grid, and this rank's place in it (-1
   * outside the grid) */
  int nprow, npcol, rsrc, csrc, myrow, mycol;
  mlsba_mpi_grid_order_t order;
  /* MLSBA__MATRIX_RECTS: rank r's rectangle rect[4 r ...] = row0, rows,
   * col0, cols in elements, on block boundaries, in the rectangles' own
   * order of the blocks: perm[0][v] is the block row of the matrix at
   * place v of that order, perm[1] the block column's (NULL: the
   * matrix's own order), inv[] the inverse */
  int64_t *rect;
  int64_t *perm[2], *inv[2];
  /* This rank: its local array (ld x lcols) and its blocks. */
  int64_t ld, lcols;
  size_t nown;
  mlsba_mpi_block_t *own;
};

/* The process row and column of rank r (below nprow x npcol) on d's
 * ScaLAPACK grid, as its order places the ranks. */
static inline void mlsba__mpi_matrix_grid_of(const mlsba_mpi_matrix_t *d, int r,
                                             int *row, int *col) {
  *row = d->order == MLSBA_MPI_ROW_MAJOR ? r / d->npcol : r % d->nprow;
  *col = d->order == MLSBA_MPI_ROW_MAJOR ? r % d->npcol : r / d->nprow;
}

/* The owner of block (bi, bj) and the block's local place there; -1
 * outside the grid. */
int mlsba__mpi_matrix_owner_of(const mlsba_mpi_matrix_t *d, int64_t bi,
                               int64_t bj, int64_t *local_row,
                               int64_t *local_col);
/* The product's layout of an m x n matrix in b x b blocks: rank r holds
 * the rectangle rect[4 r ...] (row0, rows, col0, cols in elements; an
 * empty one owns nothing), column-major with leading dimension rows.
 * Local: comm is only kept. */
int mlsba__mpi_matrix_rects(MPI_Comm comm, int64_t m, int64_t n, int64_t b,
                            const int64_t *rect, mlsba_mpi_matrix_t **out);
/* As mlsba__mpi_matrix_rects, the rectangles laid over the blocks in
 * another order: block row (column) v of the rectangles' grid is block
 * row rperm[v] (column cperm[v]) of the matrix; NULL keeps the matrix's
 * order. Each permutation must keep a short last block last (rperm[last]
 * is the last block row when b does not divide m). Copied. Local. */
int mlsba__mpi_matrix_rects_perm(MPI_Comm comm, int64_t m, int64_t n, int64_t b,
                                 const int64_t *rect, const int64_t *rperm,
                                 const int64_t *cperm,
                                 mlsba_mpi_matrix_t **out);

/* A buffer kept from one redistribution to the next. */
typedef struct mlsba__mpi_scratch {
  char *buf;
  size_t bytes;
  /* The last redistribution's elements on this rank: those that stayed
   * (copied locally), went to other ranks and came from them; for the
   * multiplier's MLSBA_VERBOSE lines. */
  int64_t kept, sent, received;
} mlsba__mpi_scratch_t;

/* mlsba_mpi_redistribute() with its pack and unpack buffers in scratch,
 * grown as needed and kept for the next call. */
int mlsba__mpi_redistribute_with(const mlsba_mpi_matrix_t *from,
                                 const void *src, const mlsba_mpi_matrix_t *to,
                                 void *dst, mlsba_precision_t prec,
                                 mlsba__mpi_scratch_t *scratch);
void mlsba__mpi_scratch_free(mlsba__mpi_scratch_t *scratch);

#endif
