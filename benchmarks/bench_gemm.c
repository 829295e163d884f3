/* GEMM on the real devices of this machine through the executor: every
 * device alone, then all of them at once with the columns shared in
 * proportion to the speeds measured alone (one constant-model step, not
 * the balancer), and the cores alone with the accelerators open but idle.
 *
 *   bench-gemm [--size N] [--precision single|double] [--reps R]
 *
 * Prints per device the load, the time from the common start to its
 * completion and its GFLOPS, and the GFLOPS of the whole product; the
 * product is verified. A first run of every configuration is a warm-up
 * (pocl builds CLBlast's kernels on first use) and is not counted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/timing.h"
#include "mlsba.h"
#include "support/gemm_data.h"

static int run(mlsba_executor_t *ex, mlsba_gemm_t *g, const int64_t *load,
               mlsba_drive_t drive, int reps, size_t p, double *time,
               double *makespan) {
  double *spans = malloc((size_t)(reps + 1) * sizeof *spans);
  double *all = malloc((size_t)(reps + 1) * p * sizeof *all);
  if (!spans || !all)
    return MLSBA_ENOMEM;
  for (int r = 0; r <= reps; r++) { /* r = 0: warm-up */
    int err = mlsba_executor_run_gemm(ex, g, load, drive, all + r * p);
    if (err) {
      free(spans);
      free(all);
      return err;
    }
    spans[r] = 0;
    for (size_t i = 0; i < p; i++)
      spans[r] = all[r * p + i] > spans[r] ? all[r * p + i] : spans[r];
  }
  /* The run with the median makespan, all its device times. */
  double *sorted = malloc((size_t)reps * sizeof *sorted);
  if (!sorted)
    return MLSBA_ENOMEM;
  memcpy(sorted, spans + 1, (size_t)reps * sizeof *sorted);
  *makespan = timing_median(sorted, (size_t)reps);
  for (int r = 1; r <= reps; r++)
    if (spans[r] == *makespan)
      memcpy(time, all + r * p, p * sizeof *time);
  free(sorted);
  free(spans);
  free(all);
  return 0;
}

int main(int argc, char **argv) {
  int64_t size = 2048;
  int reps = 5;
  mlsba_precision_t prec = MLSBA_PRECISION_SINGLE;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      printf("usage: bench-gemm [--size N] [--precision single|double] "
             "[--reps R]\n");
      return 0;
    } else if (!strcmp(argv[i], "--size") && i + 1 < argc) {
      size = atoll(argv[++i]);
    } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--precision") && i + 1 < argc) {
      prec = !strcmp(argv[++i], "double") ? MLSBA_PRECISION_DOUBLE
                                          : MLSBA_PRECISION_SINGLE;
    } else {
      fprintf(stderr, "bench-gemm: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  if (size < 1 || reps < 1) {
    fprintf(stderr, "bench-gemm: --size and --reps must be >= 1\n");
    return 2;
  }
  mlsba_platform_t *pl = NULL;
  mlsba_executor_t *ex = NULL;
  if (mlsba_platform_discover(&pl) || mlsba_executor_create(pl, &ex)) {
    fprintf(stderr, "bench-gemm: %s\n", mlsba_last_error());
    return 1;
  }
  size_t p = mlsba_platform_num_devices(pl);
  mlsba_gemm_t g;
  gemm_data_make(&g, size, size, size, prec, 1);
  double flop = 2.0 * (double)size * (double)size * (double)size;
  int64_t *load = calloc(p, sizeof *load), *max = calloc(p, sizeof *max);
  double *time = calloc(p, sizeof *time), *alone = calloc(p, sizeof *alone);
  if (!load || !max || !time || !alone)
    return 1;
  mlsba_executor_max_loads(ex, &g, max);
  printf("GEMM %lld^3 %s on %zu devices, median of %d runs after a "
         "warm-up\n\n",
         (long long)size, prec ? "double" : "single", p, reps);
  printf("%-24s %10s %10s\n", "device alone", "time [s]", "GFLOPS");
  for (size_t i = 0; i < p; i++) {
    if (max[i] < size) {
      printf("%-24s %10s %10s\n", mlsba_platform_device_name(pl, i), "-",
             "(too small)");
      continue;
    }
    memset(load, 0, p * sizeof *load);
    load[i] = size;
    double span;
    int err = run(ex, &g, load, MLSBA_DRIVE_SHARED, reps, p, time, &span);
    if (err) {
      fprintf(stderr, "bench-gemm: %s\n", mlsba_last_error());
      return 1;
    }
    alone[i] = span;
    printf("%-24s %10.3f %10.1f\n", mlsba_platform_device_name(pl, i), span,
           flop / span * 1e-9);
  }
  /* Columns in proportion to the speeds alone. */
  double total = 0;
  for (size_t i = 0; i < p; i++)
    total += alone[i] > 0 ? 1 / alone[i] : 0;
  int64_t given = 0;
  size_t fastest = 0;
  for (size_t i = 0; i < p; i++) {
    load[i] = alone[i] > 0 ? (int64_t)((double)size / alone[i] / total) : 0;
    given += load[i];
    if (alone[i] > 0 && (alone[fastest] == 0 || alone[i] < alone[fastest]))
      fastest = i;
  }
  load[fastest] += size - given;
  double span;
  int err = run(ex, &g, load, MLSBA_DRIVE_SHARED, reps, p, time, &span);
  double e = 0;
  int ok = 0;
  if (!err)
    err = mlsba_gemm_verify(&g, 1, &e, &ok);
  if (err) {
    fprintf(stderr, "bench-gemm: %s\n", mlsba_last_error());
    return 1;
  }
  printf("\nall devices, columns in proportion to the speeds alone "
         "(verified: %s, max rel error %.2g)\n",
         ok ? "yes" : "NO", e);
  printf("%-24s %10s %10s %10s\n", "device", "load", "time [s]", "GFLOPS");
  for (size_t i = 0; i < p; i++)
    printf("%-24s %10lld %10.3f %10.1f\n", mlsba_platform_device_name(pl, i),
           (long long)load[i], time[i],
           time[i] > 0 ? 2.0 * (double)size * (double)size * (double)load[i] /
                             time[i] * 1e-9
                       : 0.0);
  printf("%-24s %10lld %10.3f %10.1f\n", "whole product", (long long)size, span,
         flop / span * 1e-9);
  /* The cores only, in proportion to their speeds alone, with every
   * accelerator open but given nothing: what an idle accelerator costs. */
  total = 0;
  for (size_t i = 0; i < p; i++)
    if (mlsba_platform_device_type(pl, i) == MLSBA_DEVICE_CPU && alone[i] > 0)
      total += 1 / alone[i];
  given = 0;
  size_t first_core = p;
  for (size_t i = 0; i < p; i++) {
    int core = mlsba_platform_device_type(pl, i) == MLSBA_DEVICE_CPU;
    load[i] =
        core && alone[i] > 0 ? (int64_t)((double)size / alone[i] / total) : 0;
    given += load[i];
    if (core && first_core == p)
      first_core = i;
  }
  load[first_core] += size - given;
  err = run(ex, &g, load, MLSBA_DRIVE_SHARED, reps, p, time, &span);
  if (err) {
    fprintf(stderr, "bench-gemm: %s\n", mlsba_last_error());
    return 1;
  }
  printf("\ncores only, accelerators open and idle\n");
  printf("%-24s %10lld %10.3f %10.1f\n", "whole product", (long long)size, span,
         flop / span * 1e-9);
  gemm_data_free(&g);
  free(load);
  free(max);
  free(time);
  free(alone);
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
  return ok ? 0 : 1;
}
