/* The MPI divider through a change of speed: balance a load across the
 * ranks once (mlsba_mpi_divider_create()), then run it STEPS times
 * (mlsba_mpi_divider_run()) and print, per step, the split between the
 * ranks and what the step measured, so that a slowdown of one rank (a
 * simulated device's slow_at .. slow_until, or a busy loop started on a
 * real rank's core) and its end show how many re-balances the divider
 * needs to come back within its drift threshold.
 *
 *   divider-drift PLATFORM N STEPS [WORK]
 *
 * PLATFORM: every rank's platform (a pattern: %r the rank; "auto" for the
 * cores of the binding). N: the load's units. WORK: the inner iterations
 * of one unit's computation on real devices (default 2000; simulated
 * devices take their times from their profiles). Rank 0 prints one line
 * per step, flushed at once (benchmarks/divider-drift reads them as they
 * come to start and stop its busy loop):
 *
 *   balanced split C0/C1/.. imbalance I makespan M runs R stop STOP
 *   step S split C0/C1/.. imbalance I makespan M wall W runs R rebalanced B
 *
 * The first line is the creation's balancing (R distributions); then M
 * is the step's last run (the slowest rank's time), W the whole call's
 * time (virtual seconds on simulated ranks), R the runs of the load the
 * call made. Exits 1 with "error: MESSAGE" on rank 0 when a call fails. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mlsba.h>
#include <mlsba/mpi.h>

typedef struct {
  float *cell;
  long work;
} cells_t;

/* A unit: WORK dependent multiply-adds on its cell, so that a rank's time
 * follows its count and its core's speed. */
static int compute(void *user, int64_t first, int64_t count) {
  cells_t *c = user;
  for (int64_t i = first; i < first + count; i++) {
    float v = c->cell[i];
    for (long k = 0; k < c->work; k++)
      v = v * 0.999f + 0.001f;
    c->cell[i] = v;
  }
  return 0;
}

static void print_split(const mlsba_mpi_divide_result_t *r) {
  for (int i = 0; i < r->nodes; i++)
    printf("%s%lld", i ? "/" : "", (long long)r->counts[i]);
}

static void print_step(int step, const mlsba_mpi_divide_result_t *r,
                       const mlsba_run_info_t *info) {
  printf("step %d split ", step);
  print_split(r);
  printf(" imbalance %.3f makespan %.4f wall %.4f runs %u rebalanced %d\n",
         info->imbalance, info->makespan, info->wall_s, info->runs,
         info->rebalanced);
  fflush(stdout);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc < 4) {
    if (rank == 0)
      fprintf(stderr, "usage: divider-drift PLATFORM N STEPS [WORK]\n");
    MPI_Finalize();
    return 2;
  }
  int64_t n = strtoll(argv[2], NULL, 10);
  int steps = atoi(argv[3]);
  cells_t cells = {calloc(n > 0 ? (size_t)n : 1, sizeof(float)),
                   argc > 4 ? atol(argv[4]) : 2000};
  mlsba_load_t *load = NULL;
  int err = cells.cell == NULL || mlsba_load_create("cells", n, &load) ||
            mlsba_load_set_cpu(load, compute, &cells);
  if (err) {
    fprintf(stderr, "divider-drift: cannot create the load\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  mlsba_mpi_divide_opts_t o;
  mlsba_mpi_divide_opts_init(&o);
  o.platform = argv[1];
  mlsba_mpi_divider_t *d = NULL;
  err = mlsba_mpi_divider_create(MPI_COMM_WORLD, load, &o, &d);
  if (!err && rank == 0) {
    const mlsba_mpi_divide_result_t *r = mlsba_mpi_divider_result(d);
    printf("balanced split ");
    print_split(r);
    printf(" imbalance %.3f makespan %.4f runs %u stop %s\n", r->imbalance,
           r->makespan, r->iterations, mlsba_mpi_stop_name(r->stop));
    fflush(stdout);
  }
  for (int s = 1; !err && s <= steps; s++) {
    mlsba_run_info_t info;
    err = mlsba_mpi_divider_run(d, &info);
    if (!err && rank == 0)
      print_step(s, mlsba_mpi_divider_result(d), &info);
  }
  if (err && rank == 0)
    printf("error: %s\n", mlsba_mpi_last_error());
  mlsba_mpi_divider_destroy(d);
  mlsba_load_destroy(load);
  free(cells.cell);
  MPI_Finalize();
  return err ? 1 : 0;
}
