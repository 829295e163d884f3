/* ScaLAPACK's PDGEMM as the peer of mlsba-inpa: the homogeneous 2-D
 * block-cyclic product on the same ranks, sizes and block, the system's
 * BLAS on one thread per rank. Each rank pins itself to the core named
 * for it, so the ranks share cores as mlsba-inpa's platform files make
 * them.
 *
 *   mpirun -np P pdgemm-peer --size N | -m M -n N -k K  --block B
 *                            [--transa] [--transb] --cores 0,1,1
 *                            [--runs R] [--mlsba PLATFORM [--lib-block LB]]
 *                            [--dgemm] [--fresh] [--same]
 *                            [--model-dir DIR]
 *
 * Prints one JSON line on rank 0: the median time of R products, their
 * whole time, its GFLOPS, and whether sampled elements of C matched
 * long-double sums. With --mlsba, the same R products on the same data
 * in the same ScaLAPACK layout go through libmlsba's multiplier instead,
 * as a PDGEMM user who switches would call it: the multiplier made (its
 * balancing on every rank's PLATFORM, "%r" the rank), then R calls of
 * mlsba_mpi_multiplier_run_dist() on the descriptors, each moving A and
 * B into its layout (blocks of LB, default B) and C back; the whole time
 * counts the balancing. With --dgemm (one rank), the system BLAS's own
 * DGEMM on the whole matrices instead: the best multithreaded GEMM a
 * user of one node calls (its threads: OPENBLAS_NUM_THREADS). With
 * --fresh, every rank changes one element of its A and B before each
 * run (the last run's A and B the real ones), so that every product has
 * other operands than the one before: the multiplier then moves A and B
 * every run, where by default it sees them unchanged and moves them only
 * once (result.reused). With --same (and not --fresh), every run tells
 * the multiplier that A and B are unchanged
 * (mlsba_mpi_multiplier_run_dist_flags(): nothing compared, and no copy
 * kept when the first run moves them, as an application that knows it
 * says). The JSON's fill_s, product_s and back_s split the multiplier's runs
 * (back: C's check and hand back), move_s their moves, move_back_s the
 * part of them that moved C back into ScaLAPACK's layout; calls_s the
 * runs' own wall times (result.wall_s, summed: what calls_s leaves of
 * the split is the runs' agreements and reports) and runs_s every run's
 * time as timed here, barriers included (what whole_s leaves of it is
 * the multiplier's creation, its balancing and the descriptions). With
 * --model-dir DIR, the multiplier keeps its balancing there for the next
 * job (opts.model_dir; from_saved: this job ran the one saved); snapped:
 * the runs that used the caller's own split (result.snapped). */
#define _GNU_SOURCE
#include <math.h>
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef MLSBA_PEER_WITH_MLSBA
#include <mlsba/mpi.h>
#endif

#include "scalapack.h"

/* The system BLAS and ScaLAPACK's product. */
void dgemm_(const char *ta, const char *tb, const int *m, const int *n,
            const int *k, const double *alpha, const double *a, const int *lda,
            const double *b, const int *ldb, const double *beta, double *c,
            const int *ldc);
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

/* Element (i, j) of op(X) for X stored with trans. */
static double op_element(int which, char trans, long i, long j) {
  return trans == 'T' ? element(which, j, i) : element(which, i, j);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, np;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  int m = 0, n = 0, k = 0, nb = 0, runs = 5, lib_block = 0;
  char transa = 'N', transb = 'N';
  const char *cores = NULL, *mlsba = NULL, *model_dir = NULL;
  int dgemm = 0, fresh = 0, same = 0;
  for (int i = 1; i < argc; i++) {
    const char *v = i + 1 < argc ? argv[i + 1] : "0";
    if (!strcmp(argv[i], "--transa"))
      transa = 'T';
    else if (!strcmp(argv[i], "--transb"))
      transb = 'T';
    else if (!strcmp(argv[i], "--size") && ++i)
      m = n = k = atoi(v);
    else if (!strcmp(argv[i], "-m") && ++i)
      m = atoi(v);
    else if (!strcmp(argv[i], "-n") && ++i)
      n = atoi(v);
    else if (!strcmp(argv[i], "-k") && ++i)
      k = atoi(v);
    else if (!strcmp(argv[i], "--block") && ++i)
      nb = atoi(v);
    else if (!strcmp(argv[i], "--runs") && ++i)
      runs = atoi(v);
    else if (!strcmp(argv[i], "--cores") && ++i)
      cores = v;
    else if (!strcmp(argv[i], "--mlsba") && ++i)
      mlsba = v;
    else if (!strcmp(argv[i], "--lib-block") && ++i)
      lib_block = atoi(v);
    else if (!strcmp(argv[i], "--dgemm"))
      dgemm = 1;
    else if (!strcmp(argv[i], "--fresh"))
      fresh = 1;
    else if (!strcmp(argv[i], "--same"))
      same = 1;
    else if (!strcmp(argv[i], "--model-dir") && ++i)
      model_dir = v;
  }
#ifndef MLSBA_PEER_WITH_MLSBA
  if (mlsba)
    m = 0; /* built without the MPI layer */
#endif
  if (m < 1 || n < 1 || k < 1 || nb < 1 || runs < 1 || (dgemm && np != 1)) {
    if (me == 0)
      fprintf(stderr, "usage: pdgemm-peer --size N | -m M -n N -k K --block "
                      "B [--transa] [--transb] [--cores C0,C1,...] [--runs "
                      "R] [--mlsba PLATFORM [--lib-block LB]]\n");
    MPI_Finalize();
    return 2;
  }
  if (cores)
    pin(cores, me);
  int nprow, npcol, myrow, mycol, zero = 0, info;
  int ctx = squarest_grid(np, &nprow, &npcol, &myrow, &mycol);
  /* A as stored (m x k, or k x m with --transa), B (k x n or n x k), C. */
  int rows[3] = {transa == 'T' ? k : m, transb == 'T' ? n : k, m};
  int cols[3] = {transa == 'T' ? m : k, transb == 'T' ? k : n, n};
  int desc[3][9], lr[3], lc[3];
  double *x[3];
  for (int w = 0; w < 3; w++) {
    lr[w] = numroc_(&rows[w], &nb, &myrow, &zero, &nprow);
    lc[w] = numroc_(&cols[w], &nb, &mycol, &zero, &npcol);
    int lld = lr[w] > 1 ? lr[w] : 1;
    descinit_(desc[w], &rows[w], &cols[w], &nb, &nb, &zero, &zero, &ctx, &lld,
              &info);
    x[w] = calloc((size_t)lld * (size_t)(lc[w] ? lc[w] : 1), sizeof *x[w]);
    for (int j = 0; w < 2 && j < lc[w]; j++)
      for (int i = 0; i < lr[w]; i++)
        x[w][(size_t)j * lld + i] = element(w, global_of(i, nb, myrow, nprow),
                                            global_of(j, nb, mycol, npcol));
  }
  double *a = x[0], *b = x[1], *c = x[2];
  int lld = desc[2][8];
  double one = 1, nil = 0, *t = malloc((size_t)runs * sizeof *t);
  int ione = 1;
  char ta[2] = {transa, 0}, tb[2] = {transb, 0};
  /* The multiplier's runs, summed: where their time went. */
  double whole = 0, balance = 0, moves = 0, fill = 0, product = 0, back = 0,
         moves_back = 0, calls = 0, runs_s = 0;
  unsigned reused = 0;
  int from_saved = 0, snapped = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  double w0 = MPI_Wtime();
#ifdef MLSBA_PEER_WITH_MLSBA
  mlsba_mpi_multiplier_t *mult = NULL;
  mlsba_mpi_matrix_t *d[3] = {NULL, NULL, NULL};
  if (mlsba) {
    mlsba_mpi_multiply_opts_t o;
    mlsba_mpi_multiply_opts_init(&o);
    o.platform = mlsba;
    o.m = m;
    o.n = n;
    o.k = k;
    o.block = lib_block > 0 ? lib_block : nb;
    o.transa = transa;
    o.transb = transb;
    o.verify_samples = 0; /* checked below, as PDGEMM's C is */
    o.model_dir = model_dir;
    int err = mlsba_mpi_multiplier_create(MPI_COMM_WORLD, &o, &mult);
    for (int w = 0; !err && w < 3; w++)
      err = mlsba_mpi_matrix_scalapack(MPI_COMM_WORLD, desc[w], nprow, npcol,
                                       MLSBA_MPI_ROW_MAJOR, &d[w]);
    if (err) {
      if (me == 0)
        fprintf(stderr, "pdgemm-peer: %s\n", mlsba_mpi_last_error());
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    balance = mlsba_mpi_multiplier_balancing(mult)->wall_s;
    from_saved = mlsba_mpi_multiplier_balancing(mult)->from_saved;
  }
#endif
  double a0 = lr[0] > 0 && lc[0] > 0 ? a[0] : 0,
         b0 = lr[1] > 0 && lc[1] > 0 ? b[0] : 0;
  for (int r = 0; r < runs; r++) {
    if (fresh && lr[0] > 0 && lc[0] > 0 && lr[1] > 0 && lc[1] > 0) {
      /* Other operands than the last run's, every run, the last one the
       * real A and B: no library can use a move of the run before. */
      int other = (runs - 1 - r) % 2;
      a[0] = other ? a0 + 1 : a0;
      b[0] = other ? b0 + 1 : b0;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
#ifdef MLSBA_PEER_WITH_MLSBA
    if (mlsba) {
      mlsba_mpi_result_t res;
      unsigned flags = same && !fresh ? MLSBA_MPI_SAME_A | MLSBA_MPI_SAME_B : 0;
      if (mlsba_mpi_multiplier_run_dist_flags(mult, flags, d[0], a, d[1], b,
                                              d[2], c, &res) != 0) {
        if (me == 0)
          fprintf(stderr, "pdgemm-peer: %s\n", mlsba_mpi_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      moves += res.split.move_s;
      moves_back += res.split.move_back_s;
      fill += res.split.fill_s;
      product += res.split.product_s;
      back += res.split.gather_s + res.split.check_s;
      balance += res.split.balance_s; /* a rebalancing, if any */
      reused |= r > 0 ? res.reused : 0;
      snapped += res.snapped;
      calls += res.wall_s;
      mlsba_mpi_result_free(&res);
    } else
#endif
        if (dgemm)
      dgemm_(ta, tb, &m, &n, &k, &one, a, &desc[0][8], b, &desc[1][8], &nil, c,
             &desc[2][8]);
    else
      pdgemm_(ta, tb, &m, &n, &k, &one, a, &ione, &ione, desc[0], b, &ione,
              &ione, desc[1], &nil, c, &ione, &ione, desc[2]);
    MPI_Barrier(MPI_COMM_WORLD);
    t[r] = MPI_Wtime() - t0;
    runs_s += t[r];
  }
  whole = MPI_Wtime() - w0;
#ifdef MLSBA_PEER_WITH_MLSBA
  mlsba_mpi_multiplier_destroy(mult);
  for (int w = 0; w < 3; w++)
    mlsba_mpi_matrix_destroy(d[w]);
#endif
  /* Sampled elements of this rank's C against long-double sums. */
  int ok = 1;
  for (int s = 0; s < 16 && lr[2] > 0 && lc[2] > 0; s++) {
    int i = (int)((s * 7919L) % lr[2]), j = (int)((s * 104729L) % lc[2]);
    long gi = global_of(i, nb, myrow, nprow),
         gj = global_of(j, nb, mycol, npcol);
    long double ref = 0, mag = 0;
    for (long p = 0; p < k; p++) {
      long double e = (long double)op_element(0, transa, gi, p) *
                      op_element(1, transb, p, gj);
      ref += e;
      mag += fabsl(e);
    }
    if (fabsl(c[(size_t)j * lld + i] - ref) > 4.0L * k * 0x1.0p-53 * mag)
      ok = 0;
  }
  int all_ok;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  qsort(t, (size_t)runs, sizeof *t, cmp);
  if (me == 0)
    printf("{\"peer\": \"%s\", \"m\": %d, \"n\": %d, \"k\": %d, "
           "\"transa\": \"%c\", \"transb\": \"%c\", \"block\": %d, "
           "\"grid\": \"%dx%d\", \"runs\": %d, \"seconds\": %.6f, "
           "\"whole_s\": %.6f, \"balance_s\": %.6f, \"move_s\": %.6f, "
           "\"move_back_s\": %.6f, "
           "\"fill_s\": %.6f, \"product_s\": %.6f, \"back_s\": %.6f, "
           "\"calls_s\": %.6f, \"runs_s\": %.6f, "
           "\"reused\": %u, \"from_saved\": %d, \"snapped\": %d, "
           "\"gflops\": %.3f, "
           "\"verified\": %s}\n",
           mlsba   ? "mlsba-multiplier"
           : dgemm ? "blas-dgemm"
                   : "scalapack-pdgemm",
           m, n, k, transa, transb, nb, nprow, npcol, runs, t[runs / 2], whole,
           balance, moves, moves_back, fill, product, back, calls, runs_s,
           reused, from_saved, snapped,
           2.0 * m * (double)n * k / t[runs / 2] * 1e-9,
           all_ok ? "true" : "false");
  for (int w = 0; w < 3; w++)
    free(x[w]);
  free(t);
  Cblacs_gridexit(ctx);
  MPI_Finalize();
  return all_ok ? 0 : 1;
}
