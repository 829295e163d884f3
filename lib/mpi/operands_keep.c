/* The caller's A and B as the multiplier's last run moved them into its
 * layout (run_dist). A PDGEMM user often multiplies the same operand many
 * times (one fixed A against many B, or the same pair again): moving it
 * again would cost O(M K / Q) per rank and per product for nothing. The
 * run keeps a copy of the elements this rank owns of each operand it
 * moved, with the shape and blocks of the caller's description; the next
 * run compares the caller's arrays against it, element for element
 * (bytes: exact, no hash that could collide), and where every rank finds
 * its part unchanged the operand already in the layout is used again. A
 * copy that cannot be made (out of memory) is only a move not saved. A
 * caller that gives its word on an operand (MLSBA_MPI_SAME_A, _B) tells
 * the library when it changes: its moves keep the description only, no
 * copy (an array of each rank's blocks, and its time), and a run that
 * asks for a comparison after one of them finds nothing to compare
 * with, so it moves the operand again. */
#include <stdlib.h>
#include <string.h>

#include "matrix.h"
#include "multiply.h"

/* Elements of this rank's blocks of d. */
static size_t owned_elements(const mlsba_mpi_matrix_t *d) {
  size_t n = 0;
  for (size_t k = 0; k < d->nown; k++)
    n += (size_t)(d->own[k].rows * d->own[k].cols);
  return n;
}

/* Whether d describes the same layout as the one kept: the same shape,
 * blocks, leading dimension and local places of this rank's blocks. */
static int same_description(const mlsba__mpi_kept_t *k,
                            const mlsba_mpi_matrix_t *d) {
  return k->kind == d->kind && k->m == d->m && k->n == d->n && k->mb == d->mb &&
         k->nb == d->nb && k->ld == d->ld && k->nown == d->nown &&
         (d->nown == 0 ||
          memcmp(k->own, d->own, d->nown * sizeof *d->own) == 0);
}

/* Column j of this rank's block b in the local array x. */
static const char *column_of(const mlsba_mpi_matrix_t *d,
                             const mlsba_mpi_block_t *b, int64_t j,
                             const void *x, size_t es) {
  return (const char *)x +
         ((size_t)(b->local_col + j) * (size_t)d->ld + (size_t)b->local_row) *
             es;
}

int mlsba__mpi_kept_same(const mlsba__mpi_kept_t *k,
                         const mlsba_mpi_matrix_t *d, const void *x, size_t es,
                         int trusted) {
  if (!k->valid || d == NULL || !same_description(k, d) ||
      (x == NULL && d->nown > 0))
    return 0;
  if (trusted)
    return 1;
  if (!k->copied)
    return 0; /* nothing to compare with: taken on the caller's word */
  const char *at = k->copy;
  for (size_t i = 0; i < d->nown; i++) {
    const mlsba_mpi_block_t *b = &d->own[i];
    size_t len = (size_t)b->rows * es;
    for (int64_t j = 0; j < b->cols; j++, at += len)
      if (memcmp(at, column_of(d, b, j, x, es), len) != 0)
        return 0;
  }
  return 1;
}

void mlsba__mpi_kept_take(mlsba__mpi_kept_t *k, const mlsba_mpi_matrix_t *d,
                          const void *x, size_t es, int copy) {
  k->valid = 0;
  size_t bytes = copy ? owned_elements(d) * es : 0;
  if (!copy) { /* no copy to hold: its memory goes back */
    free(k->copy);
    k->copy = NULL;
    k->cap = 0;
  } else if (k->cap < bytes || k->copy == NULL) {
    free(k->copy);
    k->copy = malloc(bytes ? bytes : 1);
    k->cap = k->copy ? bytes : 0;
  }
  mlsba_mpi_block_t *own = d->nown ? malloc(d->nown * sizeof *own) : NULL;
  if ((copy && k->copy == NULL) || (d->nown > 0 && own == NULL)) {
    free(own);
    return; /* not kept: the next run moves it again */
  }
  free(k->own);
  k->own = own;
  if (d->nown > 0)
    memcpy(k->own, d->own, d->nown * sizeof *own);
  k->kind = d->kind;
  k->m = d->m;
  k->n = d->n;
  k->mb = d->mb;
  k->nb = d->nb;
  k->ld = d->ld;
  k->nown = d->nown;
  k->copied = copy;
  char *at = k->copy;
  for (size_t i = 0; copy && i < d->nown; i++) {
    const mlsba_mpi_block_t *b = &d->own[i];
    size_t len = (size_t)b->rows * es;
    for (int64_t j = 0; j < b->cols; j++, at += len)
      memcpy(at, column_of(d, b, j, x, es), len);
  }
  k->valid = 1;
}

void mlsba__mpi_kept_free(mlsba__mpi_kept_t *k) {
  free(k->copy);
  free(k->own);
  memset(k, 0, sizeof *k);
}
