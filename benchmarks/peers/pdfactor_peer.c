/* ScaLAPACK's PDGETRF and PDPOTRF as the peers of mlsba_mpi_getrf and
 * mlsba_mpi_potrf (mlsba-inpa --op getrf|potrf): the homogeneous 2-D
 * block-cyclic factorizations on the same ranks, size and block, the
 * system's BLAS on one thread per rank, each rank pinned to the core named
 * for it (as pdgemm-peer does), on the squarest process grid.
 *
 *   mpirun -np P pdfactor-peer --op getrf|potrf --size N --block B
 *                              [--cores 0,1,1] [--runs R]
 *
 * The matrix is mlsba-inpa's kind: random in [-0.5, 0.5) for LU,
 * symmetric with N on the diagonal for Cholesky, each run on a fresh copy.
 * Prints one JSON line on rank 0: the median factorization time of R runs
 * (between barriers, as mlsba-inpa times its own), its GFLOPS (2/3 N^3,
 * 1/3 N^3), and HPL's scaled residual of a solve with the last run's
 * factors (PDGETRS/PDPOTRS), ||A x - b||_oo / (eps (||A||_oo ||x||_oo +
 * ||b||_oo) N), which must be below 16 for "verified". */
#define _GNU_SOURCE
#include <float.h>
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scalapack.h"

/* ScaLAPACK's factorizations, solves and what checks them. */
void pdgetrf_(const int *m, const int *n, double *a, const int *ia,
              const int *ja, const int *desca, int *ipiv, int *info);
void pdpotrf_(const char *uplo, const int *n, double *a, const int *ia,
              const int *ja, const int *desca, int *info);
void pdgetrs_(const char *trans, const int *n, const int *nrhs, const double *a,
              const int *ia, const int *ja, const int *desca, const int *ipiv,
              double *b, const int *ib, const int *jb, const int *descb,
              int *info);
void pdpotrs_(const char *uplo, const int *n, const int *nrhs, const double *a,
              const int *ia, const int *ja, const int *desca, double *b,
              const int *ib, const int *jb, const int *descb, int *info);
void pdgemv_(const char *trans, const int *m, const int *n, const double *alpha,
             const double *a, const int *ia, const int *ja, const int *desca,
             const double *x, const int *ix, const int *jx, const int *descx,
             const int *incx, const double *beta, double *y, const int *iy,
             const int *jy, const int *descy, const int *incy);
double pdlange_(const char *norm, const int *m, const int *n, const double *a,
                const int *ia, const int *ja, const int *desca, double *work);

/* An element of [-0.5, 0.5) from (seed, i, j) alone (mlsba-inpa's). */
static double noise(uint64_t seed, int64_t i, int64_t j) {
  uint64_t x = seed ^ (uint64_t)i * 0x9E3779B97F4A7C15u ^
               (uint64_t)j * 0xC2B2AE3D27D4EB4Fu;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9u;
  x ^= x >> 29;
  return (double)(x >> 11) / 9007199254740992.0 - 0.5;
}

static double element(int chol, int64_t n, int64_t i, int64_t j) {
  if (!chol)
    return noise(1, i, j);
  return i == j ? (double)n : noise(1, i < j ? i : j, i < j ? j : i);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, np;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  int n = 0, nb = 0, runs = 3, chol = -1;
  const char *cores = NULL;
  for (int i = 1; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : "0";
    if (!strcmp(argv[i], "--op") && ++i)
      chol = !strcmp(v, "potrf") ? 1 : !strcmp(v, "getrf") ? 0 : -1;
    else if (!strcmp(argv[i], "--size") && ++i)
      n = atoi(v);
    else if (!strcmp(argv[i], "--block") && ++i)
      nb = atoi(v);
    else if (!strcmp(argv[i], "--runs") && ++i)
      runs = atoi(v);
    else if (!strcmp(argv[i], "--cores") && ++i)
      cores = v;
  }
  if (n < 1 || nb < 1 || runs < 1 || chol < 0) {
    if (me == 0)
      fprintf(stderr, "usage: pdfactor-peer --op getrf|potrf --size N "
                      "--block B [--cores C0,C1,...] [--runs R]\n");
    MPI_Finalize();
    return 2;
  }
  if (cores)
    pin(cores, me);
  int nprow, npcol, myrow, mycol, zero = 0, one = 1, info;
  int ctx = squarest_grid(np, &nprow, &npcol, &myrow, &mycol);
  int lr = numroc_(&n, &nb, &myrow, &zero, &nprow);
  int lc = numroc_(&n, &nb, &mycol, &zero, &npcol);
  int lcv = numroc_(&one, &nb, &mycol, &zero, &npcol);
  int lld = lr > 1 ? lr : 1, desc[9], descv[9];
  descinit_(desc, &n, &n, &nb, &nb, &zero, &zero, &ctx, &lld, &info);
  descinit_(descv, &n, &one, &nb, &nb, &zero, &zero, &ctx, &lld, &info);
  size_t elems = (size_t)lld * (size_t)(lc > 0 ? lc : 1);
  double *a = malloc(elems * sizeof *a), *t = malloc((size_t)runs * sizeof *t);
  double *x = calloc((size_t)lld, sizeof *x),
         *r = calloc((size_t)lld, sizeof *r);
  double *work = malloc((size_t)(lr + lc + 2 * nb + 1) * sizeof *work);
  int *ipiv = malloc((size_t)(lr + nb + 1) * sizeof *ipiv);
  int lapack_info = 0;
  for (int run = 0; run < runs; run++) {
    for (int j = 0; j < lc; j++)
      for (int i = 0; i < lr; i++)
        a[(size_t)j * lld + i] =
            element(chol, n, global_of(i, nb, myrow, nprow),
                    global_of(j, nb, mycol, npcol));
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (chol)
      pdpotrf_("L", &n, a, &one, &one, desc, &info);
    else
      pdgetrf_(&n, &n, a, &one, &one, desc, ipiv, &info);
    MPI_Barrier(MPI_COMM_WORLD);
    t[run] = MPI_Wtime() - t0;
    lapack_info = info;
  }
  /* b in x, solved in place; r = A x - b with A regenerated. */
  for (int i = 0; lcv > 0 && i < lr; i++)
    x[i] = r[i] = noise(2, global_of(i, nb, myrow, nprow), -1);
  double bnorm = pdlange_("I", &n, &one, r, &one, &one, descv, work);
  if (chol)
    pdpotrs_("L", &n, &one, a, &one, &one, desc, x, &one, &one, descv, &info);
  else
    pdgetrs_("N", &n, &one, a, &one, &one, desc, ipiv, x, &one, &one, descv,
             &info);
  for (int j = 0; j < lc; j++)
    for (int i = 0; i < lr; i++)
      a[(size_t)j * lld + i] = element(chol, n, global_of(i, nb, myrow, nprow),
                                       global_of(j, nb, mycol, npcol));
  double pone = 1, mone = -1;
  pdgemv_("N", &n, &n, &pone, a, &one, &one, desc, x, &one, &one, descv, &one,
          &mone, r, &one, &one, descv, &one);
  double rn = pdlange_("I", &n, &one, r, &one, &one, descv, work);
  double an = pdlange_("I", &n, &n, a, &one, &one, desc, work);
  double xn = pdlange_("I", &n, &one, x, &one, &one, descv, work);
  double res = rn / (DBL_EPSILON / 2 * (an * xn + bnorm) * n);
  qsort(t, (size_t)runs, sizeof *t, cmp);
  double flops = (chol ? 1.0 : 2.0) * n * (double)n * n / 3;
  int ok = lapack_info == 0 && info == 0 && res < 16;
  if (me == 0)
    printf("{\"peer\": \"scalapack-%s\", \"n\": %d, \"block\": %d, "
           "\"grid\": \"%dx%d\", \"runs\": %d, \"seconds\": %.6f, "
           "\"gflops\": %.3f, \"info\": %d, \"residual\": %.4g, "
           "\"verified\": %s}\n",
           chol ? "pdpotrf" : "pdgetrf", n, nb, nprow, npcol, runs, t[runs / 2],
           flops / t[runs / 2] * 1e-9, lapack_info, res, ok ? "true" : "false");
  free(a);
  free(t);
  free(x);
  free(r);
  free(work);
  free(ipiv);
  Cblacs_gridexit(ctx);
  MPI_Finalize();
  return ok ? 0 : 1;
}
