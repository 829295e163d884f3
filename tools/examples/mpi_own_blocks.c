/* C = A^T B across MPI ranks on the application's own distributed data,
 * never replicated: libmlsba balances the ranks first and says which
 * blocks of A, B and C each rank owns; each rank then makes only its own
 * blocks (here from a formula; an application would read them from its
 * files or compute them), and the fill callback hands them over. The
 * library moves what the product needs between ranks; each rank gets its
 * own blocks of C back. Sizes need not be multiples of the block.
 *
 * Build: mpicc mpi_own_blocks.c $(pkg-config --cflags --libs mlsba-mpi)
 * Run:   mpirun -np 2 ./mpi_own_blocks [M N K [B [PLATFORM]]]
 *        (defaults 700 500 300, 64, auto) */
#include <mlsba.h>
#include <mlsba/mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Multiples of 1/8: every sum below is exact in double. */
static double a_at(int64_t i, int64_t j) {
  return (double)((i + 2 * j) % 7 - 3) / 4;
}
static double b_at(int64_t i, int64_t j) {
  return (double)((3 * i + j) % 5 - 2) / 2;
}

/* What this rank holds of one matrix: its rectangle of own blocks. */
typedef struct {
  int64_t row, col, rows, cols;
  double *x; /* rows x cols, column-major */
} part_t;

/* The rank's own blocks of d as one array (the product's layout gives a
 * rank one rectangle of every matrix, which may be empty). */
static void make_part(const mlsba_mpi_matrix_t *d, int which, part_t *p) {
  memset(p, 0, sizeof *p);
  size_t n = mlsba_mpi_matrix_num_blocks(d);
  for (size_t k = 0; k < n; k++) {
    mlsba_mpi_block_t b;
    mlsba_mpi_matrix_block(d, k, &b);
    if (k == 0) {
      p->row = b.row;
      p->col = b.col;
    }
    if (b.row + b.rows - p->row > p->rows)
      p->rows = b.row + b.rows - p->row;
    if (b.col + b.cols - p->col > p->cols)
      p->cols = b.col + b.cols - p->col;
  }
  p->x = malloc((size_t)(p->rows * p->cols + 1) * sizeof *p->x);
  for (int64_t j = 0; j < p->cols; j++)
    for (int64_t i = 0; i < p->rows; i++)
      p->x[j * p->rows + i] = which == 0 ? a_at(p->row + i, p->col + j)
                                         : b_at(p->row + i, p->col + j);
}

/* The library asks only for this rank's own rectangle of A (0) or B (1). */
static int fill(void *user, int which, int64_t row, int64_t col, int64_t rows,
                int64_t cols, void *dst, int64_t ld) {
  const part_t *p = &((const part_t *)user)[which];
  if (row < p->row || col < p->col || row + rows > p->row + p->rows ||
      col + cols > p->col + p->cols)
    return 1; /* not ours: never happens */
  for (int64_t j = 0; j < cols; j++)
    memcpy((double *)dst + j * ld,
           p->x + (col - p->col + j) * p->rows + (row - p->row),
           (size_t)rows * sizeof(double));
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  mlsba_mpi_multiply_opts_t opts;
  mlsba_mpi_multiply_opts_init(&opts);
  opts.m = argc > 3 ? atoll(argv[1]) : 700;
  opts.n = argc > 3 ? atoll(argv[2]) : 500;
  opts.k = argc > 3 ? atoll(argv[3]) : 300;
  opts.block = argc > 4 ? atoll(argv[4]) : 64;
  if (argc > 5)
    opts.platform = argv[5];
  opts.transa = 'T'; /* A is stored k x m */
  part_t part[2];
  opts.fill = fill;
  opts.fill_user = part;
  /* Balance first: the layout, and so which blocks are whose, comes from
   * the ranks' speeds. */
  mlsba_mpi_multiplier_t *mult = NULL;
  int err = mlsba_mpi_multiplier_create(MPI_COMM_WORLD, &opts, &mult);
  if (err) {
    if (rank == 0)
      fprintf(stderr, "mpi_own_blocks: %s\n", mlsba_mpi_last_error());
    MPI_Finalize();
    return 1;
  }
  make_part(mlsba_mpi_multiplier_matrix(mult, 0), 0, &part[0]);
  make_part(mlsba_mpi_multiplier_matrix(mult, 1), 1, &part[1]);
  printf("rank %d owns A(%lld.., %lld..) %lld x %lld, B %lld x %lld\n", rank,
         (long long)part[0].row, (long long)part[0].col,
         (long long)part[0].rows, (long long)part[0].cols,
         (long long)part[1].rows, (long long)part[1].cols);
  mlsba_mpi_result_t res;
  err = mlsba_mpi_multiplier_run(mult, &res);
  int ok = err == 0;
  /* This rank's own blocks of C, at (c_row0, c_col0): check a corner. */
  if (!err && res.c && res.c_rows > 0) {
    int64_t i = res.c_rows - 1, j = res.c_cols - 1, gi = res.c_row0 + i,
            gj = res.c_col0 + j;
    double want = 0;
    for (int64_t p = 0; p < opts.k; p++)
      want += a_at(p, gi) * b_at(p, gj);
    ok = ((const double *)res.c)[j * res.c_rows + i] == want;
  }
  if (!err && rank == 0)
    printf("C = A^T B, %lld x %lld x %lld on %d ranks: %.3f s in all, %.3f "
           "s of product, checked %s\n",
           (long long)opts.m, (long long)opts.n, (long long)opts.k, res.nodes,
           res.wall_s, res.split.product_s, res.verified == 1 ? "yes" : "no");
  if (err && rank == 0)
    fprintf(stderr, "mpi_own_blocks: %s\n", mlsba_mpi_last_error());
  if (!err)
    mlsba_mpi_result_free(&res);
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  free(part[0].x);
  free(part[1].x);
  mlsba_mpi_multiplier_destroy(mult);
  MPI_Finalize();
  return all_ok ? 0 : 1;
}
