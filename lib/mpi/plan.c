/* From INPA's arrangement to the product's layout. The head arranges
 * rectangles on a square grid of g x g cells (lib/partition works on
 * square grids); a cell edge v maps to the block edge round(v B / g) of a
 * dimension of B blocks, so with g = min(row blocks, column blocks) every
 * cell holds at least one block each way and no rank is left without a
 * rectangle of C. A square product whose size is a multiple of the block
 * maps one cell to one block, as before.
 *
 * op(A) (m x k) has C's rows; its columns are cut where the arrangement's
 * columns are, scaled to k, so that block column p of op(A) lies in one
 * column of the arrangement. op(B) (k x n) has C's columns; in each
 * column of the arrangement its rows are cut where the ranks' rows are,
 * scaled to k, so that block row p lies in one rank of each column. Edges
 * fall on multiples of the block (the last one at the matrix's end);
 * where k has fewer blocks than the arrangement has columns or rows,
 * some ranks own no block of op(A) or op(B). */
#include <stdlib.h>

#include "../core/error.h"
#include "matrix.h"
#include "multiply.h"

void mlsba__mpi_grid_init(mlsba__mpi_grid_t *gr, int64_t m, int64_t n,
                          int64_t k, int64_t b) {
  gr->m = m;
  gr->n = n;
  gr->k = k;
  gr->b = b;
  gr->rb = (m + b - 1) / b;
  gr->cb = (n + b - 1) / b;
  gr->kb = (k + b - 1) / b;
  gr->g = gr->rb < gr->cb ? gr->rb : gr->cb;
}

/* Cell edge v (0..g) as an element edge of a dimension of size elements
 * in `blocks` blocks. */
static int64_t edge(const mlsba__mpi_grid_t *gr, int64_t v, int64_t blocks,
                    int64_t size) {
  int64_t at = (v * blocks + gr->g / 2) / gr->g * gr->b;
  return at < size ? at : size;
}

void mlsba__mpi_grid_part(const mlsba__mpi_grid_t *gr, int64_t m, int64_t n,
                          int64_t row, int64_t col, mlsba__mpi_part_t *p) {
  p->row0 = edge(gr, row, gr->rb, gr->m);
  p->rows = edge(gr, row + m, gr->rb, gr->m) - p->row0;
  p->col0 = edge(gr, col, gr->cb, gr->n);
  p->cols = edge(gr, col + n, gr->cb, gr->n) - p->col0;
  p->ak0 = edge(gr, col, gr->kb, gr->k);
  p->aks = edge(gr, col + n, gr->kb, gr->k) - p->ak0;
  p->bk0 = edge(gr, row, gr->kb, gr->k);
  p->bks = edge(gr, row + m, gr->kb, gr->k) - p->bk0;
}

int mlsba__mpi_grid_cell_at(const mlsba__mpi_grid_t *gr, int dim, int64_t at,
                            int64_t *v) {
  int64_t blocks = dim ? gr->cb : gr->rb, size = dim ? gr->n : gr->m;
  /* edge() grows strictly with v (blocks >= g): one v at most. */
  for (int64_t c = 0; c <= gr->g; c++)
    if (edge(gr, c, blocks, size) == at) {
      *v = c;
      return 1;
    }
  return 0;
}

double mlsba__mpi_grid_cells_of(const mlsba__mpi_grid_t *gr, int64_t rows,
                                int64_t cols) {
  double g = (double)gr->g;
  return (double)rows * (double)cols * g * g / ((double)gr->m * (double)gr->n);
}

int64_t mlsba__mpi_grid_blocks_of(const mlsba__mpi_grid_t *gr, int64_t m,
                                  int64_t n) {
  mlsba__mpi_part_t p;
  mlsba__mpi_grid_part(gr, m, n, 0, 0, &p);
  return ((p.rows + gr->b - 1) / gr->b) * ((p.cols + gr->b - 1) / gr->b);
}

int mlsba__mpi_layout_matrices(MPI_Comm comm, const mlsba__mpi_layout_t *lay,
                               char transa, char transb,
                               const int64_t *const perm[3],
                               mlsba_mpi_matrix_t *out[3]) {
  /* The block orders of m, n and k (rows of C, its columns, op(A)'s
   * columns), each NULL for the matrices' own. */
  const int64_t *pm = perm ? perm[0] : NULL, *pn = perm ? perm[1] : NULL,
                *pk = perm ? perm[2] : NULL;
  out[0] = out[1] = out[2] = NULL;
  int64_t *r = malloc((size_t)lay->q * 12 * sizeof *r);
  if (r == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "out of memory");
  int64_t *ra = r, *rb = r + 4 * lay->q, *rc = r + 8 * lay->q;
  for (int i = 0; i < lay->q; i++) {
    const mlsba__mpi_part_t *p = &lay->part[i];
    int64_t a[4] = {p->row0, p->rows, p->ak0, p->aks};
    int64_t b[4] = {p->bk0, p->bks, p->col0, p->cols};
    int64_t c[4] = {p->row0, p->rows, p->col0, p->cols};
    for (int f = 0; f < 4; f++) {
      /* A stored k x m holds the transpose of op(A)'s rectangle. */
      ra[4 * i + f] = transa == 'T' ? a[f ^ 2] : a[f];
      rb[4 * i + f] = transb == 'T' ? b[f ^ 2] : b[f];
      rc[4 * i + f] = c[f];
    }
  }
  int64_t am = transa == 'T' ? lay->k : lay->m, an = lay->m + lay->k - am;
  int64_t bm = transb == 'T' ? lay->n : lay->k, bn = lay->n + lay->k - bm;
  int err = mlsba__mpi_matrix_rects_perm(comm, am, an, lay->b, ra,
                                         transa == 'T' ? pk : pm,
                                         transa == 'T' ? pm : pk, &out[0]);
  if (!err)
    err = mlsba__mpi_matrix_rects_perm(comm, bm, bn, lay->b, rb,
                                       transb == 'T' ? pn : pk,
                                       transb == 'T' ? pk : pn, &out[1]);
  if (!err)
    err = mlsba__mpi_matrix_rects_perm(comm, lay->m, lay->n, lay->b, rc, pm, pn,
                                       &out[2]);
  free(r);
  if (err)
    for (int w = 0; w < 3; w++) {
      mlsba_mpi_matrix_destroy(out[w]);
      out[w] = NULL;
    }
  return err;
}
