/* Seed 001's master-worker mode through <mlsba/mpi.h> on the
 * application's own A and B, as a test drives it (test_master_worker
 * starts it under mpirun):
 *
 *   master_worker_ranks PLATFORM N M K SPLIT [LINKS [mismatch]]
 *
 * Rank 0 compares the whole C the call returns with a serial product of
 * the same A and B and prints "C right max_error E columns C1 C2 ..." (or
 * "C WRONG at (i, j) ..."); LINKS is measure (default) or platform;
 * mismatch: rank 1 passes one column more. A failure prints "error:
 * <message>" on rank 0 and exits 1 on every rank. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mlsba.h>
#include <mlsba/mpi.h>

/* Small integers, so that every product and sum is exact in double. */
static double element(int which, int64_t i, int64_t j) {
  return (double)((i * 7 + j * 13 + which * 5) % 11) - 5;
}

static int fill(void *user, int which, int64_t row, int64_t col, int64_t rows,
                int64_t cols, void *dst, int64_t ld) {
  (void)user;
  for (int64_t j = 0; j < cols; j++)
    for (int64_t i = 0; i < rows; i++)
      ((double *)dst)[j * ld + i] = element(which, row + i, col + j);
  return 0;
}

/* The whole C against the serial triple loop; prints the verdict. */
static int compare(const mlsba_mpi_mw_result_t *r, int64_t n, int64_t m,
                   int64_t k) {
  double worst = 0;
  for (int64_t j = 0; j < k; j++)
    for (int64_t i = 0; i < n; i++) {
      double ref = 0;
      for (int64_t l = 0; l < m; l++)
        ref += element(0, i, l) * element(1, l, j);
      double got = ((const double *)r->c)[j * n + i];
      if (got != ref) {
        printf("C WRONG at (%lld, %lld): %g, not %g\n", (long long)i,
               (long long)j, got, ref);
        return 1;
      }
      worst = fmax(worst, fabs(got - ref));
    }
  printf("C right max_error %g columns", worst);
  for (int w = 0; w < r->workers; w++)
    printf(" %lld", (long long)r->worker[w].columns);
  printf("\n");
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc < 6) {
    MPI_Finalize();
    return 2;
  }
  mlsba_mpi_mw_opts_t o;
  mlsba_mpi_mw_opts_init(&o);
  o.platform = argv[1];
  o.n = strtoll(argv[2], NULL, 10);
  o.m = strtoll(argv[3], NULL, 10);
  o.k = strtoll(argv[4], NULL, 10);
  int bad_split = mlsba_mpi_mw_split_from_name(argv[5], &o.split);
  if (argc > 6 && !strcmp(argv[6], "platform"))
    o.links = MLSBA_MPI_MW_LINKS_PLATFORM;
  if (argc > 7 && !strcmp(argv[7], "mismatch") && rank == 1)
    o.k++;
  o.fill = fill;
  mlsba_mpi_mw_result_t r;
  int err =
      bad_split ? bad_split : mlsba_mpi_master_worker(MPI_COMM_WORLD, &o, &r);
  int status = 0;
  if (err) {
    if (rank == 0)
      printf("error: %s\n", mlsba_mpi_last_error());
    status = 1;
  } else {
    if (rank == 0)
      status = r.c == NULL || r.verified != 1 || compare(&r, o.n, o.m, o.k);
    else
      status = r.c != NULL; /* a worker's result holds no C */
    mlsba_mpi_mw_result_free(&r);
  }
  int any = 0;
  MPI_Allreduce(&status, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  fflush(stdout);
  MPI_Finalize();
  return any;
}
