/* A rank that runs a load on its discovered ("auto") devices and tells
 * rank 0 where its callbacks ran: one line per rank on rank 0's standard
 * output, "rank R cores N bound CPUS ran CPUS", the CPU sets as sorted
 * lists of numbers. test_binding starts it under mpirun --bind-to core. */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mlsba.h>

enum { MAX_CPUS = 256 };

/* Marks the CPU every call runs on (a race only sets a flag twice). */
static int record_cpu(void *user, int64_t first, int64_t count) {
  (void)first;
  (void)count;
  int cpu = sched_getcpu();
  if (cpu >= 0 && cpu < MAX_CPUS)
    ((volatile unsigned char *)user)[cpu] = 1;
  return 0;
}

/* "0,3" from a set of CPUs. */
static void print_set(char *buf, size_t size, const unsigned char *set) {
  size_t at = 0;
  buf[0] = '\0';
  for (int c = 0; c < MAX_CPUS && at + 8 < size; c++)
    if (set[c])
      at += (size_t)snprintf(buf + at, size - at, "%s%d", at ? "," : "", c);
  if (at == 0)
    snprintf(buf, size, "-");
}

/* This rank's line, or an error line. */
static void run_rank(int rank, char *line, size_t size) {
  unsigned char bound[MAX_CPUS] = {0}, ran[MAX_CPUS] = {0};
  cpu_set_t mask;
  CPU_ZERO(&mask);
  sched_getaffinity(0, sizeof mask, &mask);
  for (int c = 0; c < MAX_CPUS && c < CPU_SETSIZE; c++)
    bound[c] = (unsigned char)CPU_ISSET(c, &mask);
  mlsba_platform_t *pl = NULL;
  mlsba_executor_t *ex = NULL;
  mlsba_load_t *load = NULL;
  int err = mlsba_platform_discover(&pl);
  size_t p = err ? 0 : mlsba_platform_num_devices(pl), cores = 0;
  for (size_t i = 0; i < p; i++)
    cores += mlsba_platform_device_type(pl, i) == MLSBA_DEVICE_CPU;
  int64_t units[64] = {0};
  double time[64];
  if (!err && p > 64)
    err = MLSBA_EINVAL;
  /* Many calls: a thread that strayed would show on another CPU. */
  for (int k = 0; !err && k < 20; k++) {
    if (!err && !ex)
      err = mlsba_executor_create(pl, &ex);
    if (!err && !load)
      err = mlsba_load_create("where", 64 * (int64_t)p, &load) ||
            mlsba_load_set_cpu(load, record_cpu, ran);
    for (size_t i = 0; i < p; i++)
      units[i] = 64;
    if (!err)
      err = mlsba_executor_run(ex, load, units, MLSBA_DRIVE_SHARED, time, NULL);
  }
  char b[512], r[512];
  print_set(b, sizeof b, bound);
  print_set(r, sizeof r, ran);
  if (err)
    snprintf(line, size, "rank %d error %s", rank, mlsba_last_error());
  else
    snprintf(line, size, "rank %d cores %zu bound %s ran %s", rank, cores, b,
             r);
  mlsba_executor_destroy(ex);
  mlsba_load_destroy(load);
  mlsba_platform_destroy(pl);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char line[1200];
  run_rank(rank, line, sizeof line);
  char *all = rank == 0 ? malloc(sizeof line * (size_t)size) : NULL;
  MPI_Gather(line, sizeof line, MPI_CHAR, all, sizeof line, MPI_CHAR, 0,
             MPI_COMM_WORLD);
  for (int r = 0; rank == 0 && r < size; r++)
    printf("%s\n", all + (size_t)r * sizeof line);
  free(all);
  MPI_Finalize();
  return 0;
}
