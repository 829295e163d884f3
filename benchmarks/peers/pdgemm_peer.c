/* ScaLAPACK's PDGEMM as the peer of mlsba-inpa: the homogeneous 2-D
 * block-cyclic product on the same ranks, N and block, BLAS (BLIS) on one
 * thread per rank. Each rank pins itself to the core named for it, so the
 * ranks share cores as mlsba-inpa's platform files make them.
 *
 *   mpirun -np P pdgemm-peer --size N --block B --cores 0,1,1 [--runs R]
 *
 * Prints one JSON line on rank 0: the median time of R products, its
 * GFLOPS, and whether sampled elements of C matched long-double sums. */
#define _GNU_SOURCE
#include <math.h>
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* BLACS and ScaLAPACK (Fortran symbols; Debian: libscalapack-openmpi-dev). */
void Cblacs_pinfo(int *me, int *np);
void Cblacs_get(int ctx, int what, int *val);
void Cblacs_gridinit(int *ctx, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int ctx, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int ctx);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrc,
            const int *nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb,
               const int *nb, const int *irsrc, const int *icsrc,
               const int *ctx, const int *lld, int *info);
void pdgemm_(const char *ta, const char *tb, const int *m, const int *n,
             const int *k, const double *alpha, const double *a, const int *ia,
             const int *ja, const int *desca, const double *b, const int *ib,
             const int *jb, const int *descb, const double *beta, double *c,
             const int *ic, const int *jc, const int *descc);

static double element(int which, long i, long j) {
  unsigned long long z = (unsigned long long)which * 0x9E3779B97F4A7C15ULL ^
                         (unsigned long long)i * 0xBF58476D1CE4E5B9ULL ^
                         (unsigned long long)j * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  z *= 0xD6E8FEB86659FD93ULL;
  z ^= z >> 32;
  return (double)(z >> 11) * 0x1.0p-52 - 1.0;
}

/* Global index of local index l on process p of np, block nb. */
static long global_of(int l, int nb, int p, int np) {
  return ((long)(l / nb) * np + p) * nb + l % nb;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, np;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  int n = 0, nb = 0, runs = 5;
  const char *cores = NULL;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--size"))
      n = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--block"))
      nb = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--runs"))
      runs = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--cores"))
      cores = argv[i + 1];
  }
  if (n < 1 || nb < 1 || runs < 1) {
    if (me == 0)
      fprintf(stderr, "usage: pdgemm-peer --size N --block B [--cores "
                      "C0,C1,...] [--runs R]\n");
    MPI_Finalize();
    return 2;
  }
  if (cores) { /* the me-th entry of the list */
    const char *s = cores;
    for (int k = 0; k < me && s; k++)
      s = (s = strchr(s, ',')) ? s + 1 : NULL;
    if (s) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(atoi(s), &set);
      sched_setaffinity(0, sizeof set, &set);
    }
  }
  /* The squarest grid of np processes. */
  int nprow = 1;
  for (int r = 1; r * r <= np; r++)
    if (np % r == 0)
      nprow = r;
  int npcol = np / nprow, ctx, myrow, mycol, zero = 0, info;
  Cblacs_get(-1, 0, &ctx);
  Cblacs_gridinit(&ctx, "Row-major", nprow, npcol);
  Cblacs_gridinfo(ctx, &nprow, &npcol, &myrow, &mycol);
  int lr = numroc_(&n, &nb, &myrow, &zero, &nprow);
  int lc = numroc_(&n, &nb, &mycol, &zero, &npcol);
  int lld = lr > 1 ? lr : 1, desc[9];
  descinit_(desc, &n, &n, &nb, &nb, &zero, &zero, &ctx, &lld, &info);
  double *a = malloc((size_t)lld * (size_t)(lc ? lc : 1) * sizeof *a);
  double *b = malloc((size_t)lld * (size_t)(lc ? lc : 1) * sizeof *b);
  double *c = calloc((size_t)lld * (size_t)(lc ? lc : 1), sizeof *c);
  for (int j = 0; j < lc; j++)
    for (int i = 0; i < lr; i++) {
      long gi = global_of(i, nb, myrow, nprow),
           gj = global_of(j, nb, mycol, npcol);
      a[(size_t)j * lld + i] = element(0, gi, gj);
      b[(size_t)j * lld + i] = element(1, gi, gj);
    }
  double one = 1, nil = 0, *t = malloc((size_t)runs * sizeof *t);
  int ione = 1;
  for (int r = 0; r < runs; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    pdgemm_("N", "N", &n, &n, &n, &one, a, &ione, &ione, desc, b, &ione, &ione,
            desc, &nil, c, &ione, &ione, desc);
    MPI_Barrier(MPI_COMM_WORLD);
    t[r] = MPI_Wtime() - t0;
  }
  /* Sampled elements of this rank's C against long-double sums. */
  int ok = 1;
  for (int s = 0; s < 16 && lr > 0 && lc > 0; s++) {
    int i = (int)((s * 7919L) % lr), j = (int)((s * 104729L) % lc);
    long gi = global_of(i, nb, myrow, nprow),
         gj = global_of(j, nb, mycol, npcol);
    long double ref = 0, mag = 0;
    for (long k = 0; k < n; k++) {
      long double p = (long double)element(0, gi, k) * element(1, k, gj);
      ref += p;
      mag += fabsl(p);
    }
    if (fabsl(c[(size_t)j * lld + i] - ref) > 4.0L * n * 0x1.0p-53 * mag)
      ok = 0;
  }
  int all_ok;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  qsort(t, (size_t)runs, sizeof *t, cmp);
  if (me == 0)
    printf("{\"peer\": \"scalapack-pdgemm\", \"n\": %d, \"block\": %d, "
           "\"grid\": \"%dx%d\", \"runs\": %d, \"seconds\": %.6f, "
           "\"gflops\": %.3f, \"verified\": %s}\n",
           n, nb, nprow, npcol, runs, t[runs / 2],
           2.0 * n * (double)n * n / t[runs / 2] * 1e-9,
           all_ok ? "true" : "false");
  free(a);
  free(b);
  free(c);
  free(t);
  Cblacs_gridexit(ctx);
  MPI_Finalize();
  return all_ok ? 0 : 1;
}
