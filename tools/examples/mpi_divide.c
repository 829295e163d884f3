/* An application's own load across MPI ranks: y[i] = f(x[i]) for N
 * elements, numbered globally. Every rank passes the same load; libmlsba
 * gives each rank a range [offset, offset + count) in proportion to what
 * its devices (those it is bound to) can do, balances its devices on it,
 * and tells every rank every share. The application then moves its own
 * data: here, the ranks gather y on rank 0 by those shares.
 *
 * Build: mpicc mpi_divide.c $(pkg-config --cflags --libs mlsba-mpi) -lm
 * Run:   mpirun -np 2 ./mpi_divide */
#include <math.h>
#include <mlsba.h>
#include <mlsba/mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 1 << 20 };

static double f(double x) {
  for (int k = 0; k < 64; k++)
    x = sqrt(x + 1.0);
  return x;
}

/* Units [first, first + count): global numbers, within this rank's range. */
static int compute(void *user, int64_t first, int64_t count) {
  double *y = user;
  for (int64_t i = first; i < first + count; i++)
    y[i] = f((double)i / N);
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double *y = calloc(N, sizeof *y); /* each rank writes its range only */
  mlsba_load_t *load = NULL;
  if (y == NULL || mlsba_load_create("sqrt64", N, &load) ||
      mlsba_load_set_cpu(load, compute, y)) {
    fprintf(stderr, "rank %d: %s\n", rank, mlsba_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  mlsba_mpi_divide_opts_t opts;
  mlsba_mpi_divide_opts_init(&opts); /* "auto": the devices of the binding */
  mlsba_mpi_divide_result_t res;
  int err = mlsba_mpi_divide(MPI_COMM_WORLD, load, &opts, &res);
  if (err) { /* the same error on every rank, naming the failing one */
    if (rank == 0)
      fprintf(stderr, "mpi_divide: %s\n", mlsba_mpi_last_error());
    MPI_Finalize();
    return 1;
  }
  /* Every rank knows every share: gather y by them. */
  int *counts = malloc((size_t)size * sizeof *counts);
  int *displs = malloc((size_t)size * sizeof *displs);
  for (int r = 0; r < size; r++) {
    counts[r] = (int)res.counts[r];
    displs[r] = (int)res.offsets[r];
  }
  MPI_Gatherv(rank == 0 ? MPI_IN_PLACE : y + res.offset, (int)res.count,
              MPI_DOUBLE, y, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  int ok = 1;
  if (rank == 0) {
    for (int64_t i = 0; i < N; i += 997)
      ok &= fabs(y[i] - f((double)i / N)) < 1e-12;
    for (int r = 0; r < size; r++)
      printf("rank %d: units %lld..%lld, %.4f s\n", r,
             (long long)res.offsets[r],
             (long long)(res.offsets[r] + res.counts[r] - 1), res.time[r]);
    printf("%u distributions, stop %s, imbalance %.1f%%: %s\n", res.iterations,
           mlsba_mpi_stop_name(res.stop), 100 * res.imbalance,
           ok ? "y is right" : "y is WRONG");
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  mlsba_mpi_divide_result_free(&res);
  mlsba_load_destroy(load);
  free(counts);
  free(displs);
  free(y);
  MPI_Finalize();
  return ok ? 0 : 1;
}
