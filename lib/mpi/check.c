/* The check of C after a product, whatever its operands' source
 * (Freivalds): for a vector x made from the seed, C x must equal
 * alpha op(A) (op(B) x) + beta C0 x. Every rank multiplies its own blocks
 * (op(B)' by its part of x, op(A)' by its part of op(B) x, C' by its part
 * of x) and the ranks sum the pieces (three all-reduces of m or k
 * doubles), so the check costs O(m n + m k + k n) flops spread over the
 * ranks, needs no other rank's blocks and no fill of another rank's
 * data, and every element of C takes part.
 *
 * Row i passes when |C x - (alpha op(A) op(B) x + beta C0 x)|_i is at
 * most 4 (k + n + 2) u times the same sums over absolute values: the
 * rounding of any GEMM that adds k products, and of the check's own sums,
 * in the precision's u. A wrong block (garbage, a stale or a missing
 * one) of a double product lies orders of magnitude above that; in single
 * precision a block that misses one panel of a large k can hide under it
 * (the tests compare with exact references instead). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "multiply.h"

struct mlsba__mpi_check {
  double *x;  /* this rank's part of x (its columns of C) */
  double *w0; /* beta C0 x, m, then its absolute sums (m more) */
};

static double at(const void *p, size_t i, mlsba_precision_t prec) {
  return prec == MLSBA_PRECISION_DOUBLE ? ((const double *)p)[i]
                                        : (double)((const float *)p)[i];
}

/* y += M v and yabs += |M| vabs (vabs NULL: |v|), in one pass over M
 * (rows x cols, leading dimension rows). */
static void matvec(const void *mat, int64_t rows, int64_t cols,
                   mlsba_precision_t prec, const double *v, const double *vabs,
                   double *y, double *yabs) {
  for (int64_t j = 0; j < cols; j++) {
    double vj = v[j], aj = vabs ? vabs[j] : fabs(vj);
    size_t col = (size_t)j * (size_t)rows;
    for (int64_t i = 0; i < rows; i++) {
      double e = at(mat, col + (size_t)i, prec);
      y[i] += e * vj;
      yabs[i] += fabs(e) * aj;
    }
  }
}

/* Collective: the sum over ranks of each rank's y (2 len doubles: the
 * values, then the absolute sums), in place. */
static void sum_over_ranks(MPI_Comm comm, double *y, int64_t len) {
  MPI_Allreduce(MPI_IN_PLACE, y, (int)(2 * len), MPI_DOUBLE, MPI_SUM, comm);
}

int mlsba__mpi_check_begin(mlsba__mpi_mult_t *C, const mlsba__mpi_layout_t *lay,
                           const mlsba__mpi_operands_t *ops,
                           mlsba__mpi_check_t **out) {
  const mlsba__mpi_part_t *p = &lay->part[C->rank];
  mlsba__mpi_check_t *k = calloc(1, sizeof *k);
  int err = k ? 0 : mlsba__fail(MLSBA_ENOMEM, "out of memory");
  if (k) {
    k->x = malloc((size_t)(p->cols ? p->cols : 1) * sizeof *k->x);
    k->w0 = calloc((size_t)(2 * lay->m), sizeof *k->w0);
    if (!k->x || !k->w0)
      err = mlsba__fail(MLSBA_ENOMEM, "out of memory for the check of C");
  }
  /* A sum of 2 m doubles in one int count. */
  if (!err && 2 * lay->m > INT32_MAX)
    err = mlsba__fail(MLSBA_EINVAL, "the check of C: m = %lld is too large",
                      (long long)lay->m);
  if ((err = mlsba__mpi_agree(C->comm, err)) != 0) {
    mlsba__mpi_check_free(k);
    return err;
  }
  for (int64_t j = 0; j < p->cols; j++)
    k->x[j] = mlsba__mpi_element(C->o->seed * 31u + 7u, 3, p->col0 + j, 0,
                                 MLSBA_PRECISION_DOUBLE);
  if (C->o->beta != 0 && ops->c)
    matvec(ops->c, p->rows, p->cols, C->o->precision, k->x, NULL,
           k->w0 + p->row0, k->w0 + lay->m + p->row0);
  sum_over_ranks(C->comm, k->w0, lay->m);
  *out = k;
  return 0;
}

void mlsba__mpi_check_free(mlsba__mpi_check_t *k) {
  if (k == NULL)
    return;
  free(k->x);
  free(k->w0);
  free(k);
}

int mlsba__mpi_check_end(mlsba__mpi_mult_t *C, const mlsba__mpi_layout_t *lay,
                         const mlsba__mpi_operands_t *ops,
                         mlsba__mpi_check_t *k, int *ok, double *max_rel) {
  const mlsba__mpi_part_t *p = &lay->part[C->rank];
  mlsba_precision_t prec = C->o->precision;
  int64_t m = lay->m, kk = lay->k;
  /* y = op(B) x, z = alpha op(A) y (alpha is in A'), w = C x; with their
   * absolute sums. */
  double *y = calloc((size_t)(2 * kk), sizeof *y);
  double *z = calloc((size_t)(2 * m), sizeof *z);
  double *w = calloc((size_t)(2 * m), sizeof *w);
  int err = y && z && w && 2 * kk <= INT32_MAX
                ? 0
                : mlsba__fail(MLSBA_ENOMEM, "out of memory for the check of C");
  if ((err = mlsba__mpi_agree(C->comm, err)) != 0)
    goto done;
  if (ops->b)
    matvec(ops->b, p->bks, p->cols, prec, k->x, NULL, y + p->bk0,
           y + kk + p->bk0);
  sum_over_ranks(C->comm, y, kk);
  /* With y's absolute sums |op(B)| |x|: |op(A)| |op(B)| |x| bounds
   * alpha op(A) op(B) x (alpha is in A'). */
  if (ops->a)
    matvec(ops->a, p->rows, p->aks, prec, y + p->ak0, y + kk + p->ak0,
           z + p->row0, z + m + p->row0);
  sum_over_ranks(C->comm, z, m);
  if (ops->c)
    matvec(ops->c, p->rows, p->cols, prec, k->x, NULL, w + p->row0,
           w + m + p->row0);
  sum_over_ranks(C->comm, w, m);
  double u = prec == MLSBA_PRECISION_DOUBLE ? 0x1.0p-53 : 0x1.0p-24;
  double tol = 4.0 * ((double)kk + (double)lay->n + 2) * u, worst = 0;
  *ok = 1;
  for (int64_t i = 0; i < m; i++) {
    double res = fabs(w[i] - z[i] - k->w0[i]), bound = z[m + i] + k->w0[m + i];
    double rel = bound > 0 ? res / bound : res > 0 ? INFINITY : 0;
    if (!(rel <= tol))
      *ok = 0;
    if (!(rel <= worst))
      worst = rel;
  }
  *max_rel = worst;
done:
  free(y);
  free(z);
  free(w);
  return err;
}
