#define _DEFAULT_SOURCE /* mkdtemp */
#include "rank_matrix.h"

#include <stdlib.h>

double rank_noise(int64_t i, int64_t j) {
  uint64_t x =
      (uint64_t)i * 0x9E3779B97F4A7C15u ^ (uint64_t)j * 0xC2B2AE3D27D4EB4Fu;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9u;
  x ^= x >> 29;
  return (double)(x >> 11) / 4503599627370496.0 - 1.0;
}

double *rank_fill_own(const mlsba_mpi_matrix_t *d, rank_element_fn elem,
                      const void *user) {
  int64_t ld, cols;
  mlsba_mpi_matrix_local(d, &ld, &cols);
  double *a = calloc((size_t)(ld * (cols ? cols : 1)), sizeof *a);
  for (size_t b = 0; a && b < mlsba_mpi_matrix_num_blocks(d); b++) {
    mlsba_mpi_block_t k;
    mlsba_mpi_matrix_block(d, b, &k);
    for (int64_t j = 0; j < k.cols; j++)
      for (int64_t i = 0; i < k.rows; i++)
        a[(k.local_col + j) * ld + k.local_row + i] =
            elem(user, k.row + i, k.col + j);
  }
  return a;
}

/* Every block on rank 0, where the whole matrix is (leading dimension m,
 * user the block size). */
static int all_on_zero(void *user, int64_t bi, int64_t bj, int64_t *lr,
                       int64_t *lc) {
  int64_t nb = *(const int64_t *)user;
  *lr = bi * nb;
  *lc = bj * nb;
  return 0;
}

void *rank_gather(const mlsba_mpi_matrix_t *d, const void *a,
                  mlsba_precision_t prec) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int64_t m, n, nb;
  mlsba_mpi_matrix_size(d, &m, &n, &nb, NULL);
  size_t es = prec == MLSBA_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
  mlsba_mpi_matrix_t *g = NULL;
  void *full = rank == 0 ? malloc((size_t)(m * n) * es) : NULL;
  if (mlsba_mpi_matrix_create(MPI_COMM_WORLD, m, n, nb, nb, all_on_zero, &nb,
                              rank == 0 ? m : 1, &g) ||
      mlsba_mpi_redistribute(d, a, g, full, prec)) {
    free(full);
    full = NULL;
  }
  mlsba_mpi_matrix_destroy(g);
  return full;
}

double *rank_whole(int64_t m, int64_t n, rank_element_fn elem,
                   const void *user) {
  double *a = malloc((size_t)(m * n) * sizeof *a);
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < m; i++)
      a[j * m + i] = elem(user, i, j);
  return a;
}

int rank_agreed(int64_t info, int err) {
  int64_t mine[2] = {info, err}, lo[2], hi[2];
  MPI_Allreduce(mine, lo, 2, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(mine, hi, 2, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  return lo[0] == hi[0] && lo[1] == hi[1];
}

int rank_temp_dir(char *dir, int size) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int made = rank != 0 || mkdtemp(dir) != NULL;
  MPI_Bcast(dir, size, MPI_CHAR, 0, MPI_COMM_WORLD);
  MPI_Bcast(&made, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return !made;
}
