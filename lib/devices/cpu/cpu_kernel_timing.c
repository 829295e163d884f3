/* What the choice of kernels times: one shape per class, as the library
 * runs it, small enough that every kernel set on every class and both
 * precisions take well under a second together.
 *
 *   product   768 x 256 x 768, C = A B: a core's block of columns of a
 *             product (the GEMM load, the all-cores baseline)
 *   update    1024 x 768 x 192, C -= A B: a factorization's trailing
 *             update with its block of 192, and the MPI node kernel's
 *   triangle  TRMM then TRSM of a unit lower triangle of 192 on 768
 *             columns, from the left and from the right (transposed): the
 *             solves of LU and Cholesky (the TRSM undoes the TRMM, so the
 *             values stay put from round to round)
 *   panel     3072 x 128 x 128, C -= A B: the products inside a panel's
 *             recursive LU and the narrow runs of an update */
#include <stdlib.h>

#include "../../core/clock.h"
#include "cpu_blas.h"
#include "cpu_kernels.h"

enum { NB = 192, ROWS = 1024, WIDTH = 768 };

struct mlsba__cpu_timing {
  void *a, *b, *x; /* room for the largest operand of each role */
  int filled;      /* the precision the values are in, or -1 */
};

/* Elements: a, 768 x 768; b, 768 x 256 (and 192 x 1024); x, 1024 x 1024. */
enum { A_SIZE = 768 * 768, B_SIZE = 768 * 256, X_SIZE = 1024 * 1024 };

mlsba__cpu_timing_t *mlsba__cpu_timing_create(void) {
  mlsba__cpu_timing_t *ws = calloc(1, sizeof *ws);
  if (ws == NULL)
    return NULL;
  ws->a = malloc(sizeof(double) * A_SIZE);
  ws->b = malloc(sizeof(double) * B_SIZE);
  ws->x = malloc(sizeof(double) * X_SIZE);
  ws->filled = -1;
  if (!ws->a || !ws->b || !ws->x) {
    mlsba__cpu_timing_destroy(ws);
    return NULL;
  }
  return ws;
}

void mlsba__cpu_timing_destroy(mlsba__cpu_timing_t *ws) {
  if (ws == NULL)
    return;
  free(ws->a);
  free(ws->b);
  free(ws->x);
  free(ws);
}

/* Values of magnitude below 1/128, so that a triangle of 192 is far from
 * singular and nothing grows towards overflow (a slow path). */
static void fill(void *v, size_t n, int dbl, unsigned seed) {
  for (size_t i = 0; i < n; i++) {
    double x = (double)((i * 37 + seed) % 101) / 101.0 - 0.5;
    if (dbl)
      ((double *)v)[i] = x / 64;
    else
      ((float *)v)[i] = (float)(x / 64);
  }
}

static void fill_all(mlsba__cpu_timing_t *ws, mlsba_precision_t p) {
  int dbl = p == MLSBA_PRECISION_DOUBLE;
  fill(ws->a, A_SIZE, dbl, 1);
  fill(ws->b, B_SIZE, dbl, 2);
  fill(ws->x, X_SIZE, dbl, 3);
  ws->filled = (int)p;
}

static void *offset(const mlsba__cpu_timing_t *ws, void *base, size_t n) {
  return (char *)base + n * (ws->filled == MLSBA_PRECISION_DOUBLE
                                 ? sizeof(double)
                                 : sizeof(float));
}

double mlsba__cpu_class_time(mlsba__cpu_timing_t *ws, int id,
                             mlsba_precision_t p, mlsba__cpu_class_t c,
                             double *flops) {
  if (ws->filled != (int)p)
    fill_all(ws, p);
  double t0 = mlsba__now();
  switch (c) {
  case MLSBA__CPU_PRODUCT:
    mlsba__cpu_gemm_with(id, p, 'N', 'N', 768, 256, 768, 1.0, ws->a, 768, ws->b,
                         768, 0.0, ws->x, 768);
    *flops = 2.0 * 768 * 256 * 768;
    break;
  case MLSBA__CPU_UPDATE:
    mlsba__cpu_gemm_with(id, p, 'N', 'N', ROWS, WIDTH, NB, -1.0, ws->a, ROWS,
                         ws->b, NB, 1.0, ws->x, ROWS);
    *flops = 2.0 * ROWS * WIDTH * NB;
    break;
  case MLSBA__CPU_PANEL:
    mlsba__cpu_gemm_with(id, p, 'N', 'N', 3072, 128, 128, -1.0, ws->a, 3072,
                         ws->b, 128, 1.0, ws->x, 3072);
    *flops = 2.0 * 3072 * 128 * 128;
    break;
  default: { /* the triangle: LU's solve, then Cholesky's */
    void *left = ws->x, *right = offset(ws, ws->x, (size_t)NB * WIDTH);
    for (int trmm = 1; trmm >= 0; trmm--)
      mlsba__cpu_triangle_with(id, trmm, p, 'L', 'L', 'N', 'U', NB, WIDTH, 1.0,
                               ws->a, NB, left, NB);
    for (int trmm = 1; trmm >= 0; trmm--)
      mlsba__cpu_triangle_with(id, trmm, p, 'R', 'L', 'T', 'U', WIDTH, NB, 1.0,
                               ws->a, NB, right, WIDTH);
    *flops = 4.0 * NB * NB * WIDTH;
  }
  }
  return mlsba__now() - t0;
}
