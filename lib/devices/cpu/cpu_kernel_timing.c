/* What the choice of kernels times: one shape per class, as the library
 * runs it, small enough that every kernel set on every class and both
 * precisions take well under a second together. nb is the factorizations'
 * widest default block: 256 in single precision, 192 in double
 * (mlsba_factor_default_block).
 *
 *   product   4096 x 256 x 384, C = A B: a core's block of columns of a
 *             product (the GEMM load, the all-cores baseline), with A and
 *             C (12.6 and 8.4 MB in double) beyond a core's L2 and
 *             sharing the L3, as a product's thousands of rows are: on
 *             768 x 256 x 768 (A, C in the caches) BLIS's zen3 ran within
 *             3% of OpenBLAS either way and won a fresh choice, then ran a
 *             4096 product's blocks 5-10% slower, 8192 x 256 x 8192 30%
 *             (zen3's MC of 72 rows; benchmarks/RESULTS.md, kern35c); n
 *             stays 256, above BLIS's small-matrix path (n of 64 to 128:
 *             zen3 at 0.4-0.6 of OpenBLAS, a shape no product block has)
 *   update    3072 x 384 x nb, C -= A B: a factorization's trailing
 *             update, and the MPI node kernel's rank-b update (thousands
 *             of rows: BLIS's skx kernels ran as fast as OpenBLAS's on
 *             1024 rows, 0.87 of them on 3840)
 *   triangle  TRMM then TRSM of a unit lower triangle of 192 on 768
 *             columns, from the left and from the right (transposed): the
 *             solves of LU and Cholesky (the TRSM undoes the TRMM, so the
 *             values stay put from round to round)
 *   panel     3072 x w x nb for w = 128, 64, 32, then 3072 x w x w for
 *             w = 64, 32, 16, C -= A B: an update's narrow pieces (a
 *             core's last ones, what it takes from another), then the
 *             products of a panel's recursive LU (its halves, 64, 32, ...
 *             wide and deep), the flops weighing each as they come. On
 *             3840 rows OpenBLAS ran 64- and 128-wide pieces at 1.16-1.29
 *             times BLIS's skx, and a rank-128 product of 128 columns at
 *             the same speed */
#include <stdlib.h>
#include <time.h>

#include "../../core/clock.h"
#include "cpu_blas.h"
#include "cpu_kernels.h"

enum { NB = 192, WIDTH = 768, TALL = 3072, NARROW = 128, UPDATE = 384 };
/* The product's m, n and k. */
enum { PM = 4096, PN = 256, PK = 384 };

struct mlsba__cpu_timing {
  void *a, *b, *x; /* room for the largest operand of each role */
  int filled;      /* the precision the values are in, or -1 */
};

/* Elements: a, 4096 x 384 (the product's A; 3072 x 256 the others'); b,
 * 768 x 256; x, 4096 x 288 (the product's C, 4096 x 256; 3072 x 384 the
 * update's). */
enum { A_SIZE = PM * PK, B_SIZE = 768 * 256, X_SIZE = PM * 288 };
_Static_assert(X_SIZE >= PM * PN && X_SIZE >= TALL * UPDATE &&
                   A_SIZE >= TALL * 256 && B_SIZE >= PK * PN,
               "room for every class's operands");

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

/* The calling thread's CPU time in seconds (0 where there is none). */
static double thread_seconds(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
    return 0;
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *offset(const mlsba__cpu_timing_t *ws, void *base, size_t n) {
  return (char *)base + n * (ws->filled == MLSBA_PRECISION_DOUBLE
                                 ? sizeof(double)
                                 : sizeof(float));
}

double mlsba__cpu_class_time(mlsba__cpu_timing_t *ws, int id,
                             mlsba_precision_t p, mlsba__cpu_class_t c,
                             double *flops, double *cpu_s) {
  if (ws->filled != (int)p)
    fill_all(ws, p);
  int64_t nb = p == MLSBA_PRECISION_DOUBLE ? 192 : 256;
  double c0 = thread_seconds(), t0 = mlsba__now();
  switch (c) {
  case MLSBA__CPU_PRODUCT:
    mlsba__cpu_gemm_with(id, p, 'N', 'N', PM, PN, PK, 1.0, ws->a, PM, ws->b, PK,
                         0.0, ws->x, PM);
    *flops = 2.0 * PM * PN * PK;
    break;
  case MLSBA__CPU_UPDATE:
    mlsba__cpu_gemm_with(id, p, 'N', 'N', TALL, UPDATE, nb, -1.0, ws->a, TALL,
                         ws->b, nb, 1.0, ws->x, TALL);
    *flops = 2.0 * TALL * UPDATE * (double)nb;
    break;
  case MLSBA__CPU_PANEL:
    *flops = 0;
    for (int64_t w = NARROW; w >= NARROW / 4; w /= 2) {
      mlsba__cpu_gemm_with(id, p, 'N', 'N', TALL, w, nb, -1.0, ws->a, TALL,
                           ws->b, nb, 1.0, ws->x, TALL);
      *flops += 2.0 * TALL * (double)w * (double)nb;
    }
    for (int64_t w = NARROW / 2; w >= 16; w /= 2) {
      mlsba__cpu_gemm_with(id, p, 'N', 'N', TALL, w, w, -1.0, ws->a, TALL,
                           ws->b, w, 1.0, ws->x, TALL);
      *flops += 2.0 * TALL * (double)w * (double)w;
    }
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
  double t = mlsba__now() - t0;
  if (cpu_s)
    *cpu_s = thread_seconds() - c0;
  return t;
}
