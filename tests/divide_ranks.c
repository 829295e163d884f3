/* An application's own load across ranks through <mlsba/mpi.h>, as a
 * test drives it (test_divide starts it under mpirun):
 *
 *   divide_ranks PLATFORM N          balance N units with a divider, run
 *                                    once more and report, per rank, the
 *                                    share and the units its callbacks
 *                                    computed in that run:
 *                                    "rank R share O C units A B K"
 *                                    (K calls covering [A, B), or "units
 *                                    none")
 *   divide_ranks PLATFORM N mismatch rank 1 passes one unit more
 *   divide_ranks PLATFORM N steps K  balance, then run K time steps and
 *                                    print one line per step (rank 0):
 *                                    "step S split C0/C1/.. imbalance I
 *                                    makespan M wall W runs R rebalanced
 *                                    B drift D"
 *   divide_ranks PLATFORM N fail U   the callback fails (returns 3) on
 *                                    unit U
 *
 * A failure prints "error: <message>" on rank 0 and exits 1 on every
 * rank. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mlsba.h>
#include <mlsba/mpi.h>

/* The units the callbacks computed since the last reset: a bitmap, so a
 * unit computed twice or a range outside the share shows. */
typedef struct {
  unsigned char *seen;
  int64_t n;
  long calls, twice, outside;
  int64_t fail_at; /* the unit the callback fails on (-1: none) */
} record_t;

static int compute(void *user, int64_t first, int64_t count) {
  record_t *r = user;
  __atomic_add_fetch(&r->calls, 1, __ATOMIC_RELAXED);
  if (r->fail_at >= first && r->fail_at < first + count)
    return 3;
  for (int64_t u = first; u < first + count; u++) {
    if (u < 0 || u >= r->n) {
      __atomic_add_fetch(&r->outside, 1, __ATOMIC_RELAXED);
      continue;
    }
    if (__atomic_exchange_n(&r->seen[u], 1, __ATOMIC_RELAXED))
      __atomic_add_fetch(&r->twice, 1, __ATOMIC_RELAXED);
  }
  return 0;
}

/* "units A B K": the computed units are exactly [A, B) (else "units
 * scattered"). */
static void describe_units(const record_t *r, char *buf, size_t size) {
  int64_t a = -1, b = -1;
  int scattered = r->twice || r->outside;
  for (int64_t u = 0; u < r->n; u++) {
    if (!r->seen[u])
      continue;
    if (a < 0)
      a = u;
    else if (u != b)
      scattered = 1;
    b = u + 1;
  }
  if (a < 0)
    snprintf(buf, size, "units none");
  else if (scattered)
    snprintf(buf, size, "units scattered");
  else
    snprintf(buf, size, "units %lld %lld %ld", (long long)a, (long long)b,
             r->calls);
}

/* One time step, and its line on rank 0. */
static int run_step(mlsba_mpi_divider_t *d, long step, int rank) {
  mlsba_run_info_t info;
  memset(&info, 0, sizeof info);
  int err = mlsba_mpi_divider_run(d, &info);
  if (err || rank != 0)
    return err;
  const mlsba_mpi_divide_result_t *r = mlsba_mpi_divider_result(d);
  printf("step %ld split ", step);
  for (int i = 0; i < r->nodes; i++)
    printf("%s%lld", i ? "/" : "", (long long)r->counts[i]);
  printf(" imbalance %.6f makespan %.6f wall %.6f runs %u rebalanced %d "
         "drift %g\n",
         info.imbalance, info.makespan, info.wall_s, info.runs, info.rebalanced,
         info.drift);
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 3) {
    MPI_Finalize();
    return 2;
  }
  int64_t n = strtoll(argv[2], NULL, 10);
  const char *mode = argc > 3 ? argv[3] : "";
  long steps = argc > 4 && !strcmp(mode, "steps") ? atol(argv[4]) : 0;
  if (!strcmp(mode, "mismatch") && rank == 1)
    n++;
  record_t rec = {.seen = calloc((size_t)n, 1), .n = n, .fail_at = -1};
  if (argc > 4 && !strcmp(mode, "fail"))
    rec.fail_at = strtoll(argv[4], NULL, 10);
  mlsba_load_t *load = NULL;
  mlsba_load_create("divide-test", n, &load);
  mlsba_load_set_cpu(load, compute, &rec);
  mlsba_mpi_divide_opts_t o;
  mlsba_mpi_divide_opts_init(&o);
  o.platform = argv[1];
  mlsba_mpi_divider_t *d = NULL;
  int err = mlsba_mpi_divider_create(MPI_COMM_WORLD, load, &o, &d);
  char line[512] = "";
  for (long s = 1; !err && s <= steps; s++)
    err = run_step(d, s, rank);
  if (!err) {
    memset(rec.seen, 0, (size_t)n);
    rec.calls = rec.twice = rec.outside = 0;
    err = mlsba_mpi_divider_run(d, NULL);
  }
  if (!err) {
    const mlsba_mpi_divide_result_t *r = mlsba_mpi_divider_result(d);
    char units[128];
    describe_units(&rec, units, sizeof units);
    snprintf(line, sizeof line, "rank %d share %lld %lld %s stop %s", rank,
             (long long)r->offset, (long long)r->count, units,
             mlsba_mpi_stop_name(r->stop));
  }
  if (err && rank == 0)
    printf("error: %s\n", mlsba_mpi_last_error());
  char *all = rank == 0 ? calloc((size_t)size, sizeof line) : NULL;
  MPI_Gather(line, sizeof line, MPI_CHAR, all, sizeof line, MPI_CHAR, 0,
             MPI_COMM_WORLD);
  for (int i = 0; !err && rank == 0 && i < size; i++)
    printf("%s\n", all + (size_t)i * sizeof line);
  free(all);
  mlsba_mpi_divider_destroy(d);
  mlsba_load_destroy(load);
  free(rec.seen);
  MPI_Finalize();
  return err ? 1 : 0;
}
