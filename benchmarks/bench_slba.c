/* SLBA partitioning time against the number of devices p and the load N:
 * the partitioner must stay O(p log N). Prints the median wall-clock time
 * of repeated calls on random models of the papers' shape.
 *
 *   bench-slba [--reps R] [--seed S]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/timing.h"
#include "mlsba.h"
#include "support/random_models.h"

static int usage(FILE *f, int status) {
  fprintf(f, "usage: bench-slba [--reps R] [--seed S]\n"
             "Median SLBA partitioning time for p devices and N units.\n");
  return status;
}

int main(int argc, char **argv) {
  int reps = 9;
  unsigned long long seed = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
      return usage(stdout, 0);
    if (i + 1 < argc && !strcmp(argv[i], "--reps")) {
      reps = atoi(argv[++i]);
      if (reps < 1 || reps > 1000) {
        fprintf(stderr, "bench-slba: --reps must be in 1..1000\n");
        return 2;
      }
    } else if (i + 1 < argc && !strcmp(argv[i], "--seed")) {
      seed = strtoull(argv[++i], NULL, 10);
    } else {
      fprintf(stderr, "bench-slba: unknown argument '%s'\n", argv[i]);
      return usage(stderr, 2);
    }
  }
  static const size_t ps[] = {4, 64, 1024, 10000};
  static const int64_t ns[] = {1000, 1000000, 1000000000};
  size_t pmax = ps[sizeof ps / sizeof ps[0] - 1];
  mlsba_model_t **models = calloc(pmax, sizeof *models);
  int64_t *loads = calloc(pmax, sizeof *loads);
  double *times = calloc((size_t)reps, sizeof *times);
  if (!models || !loads || !times) {
    fprintf(stderr, "bench-slba: out of memory\n");
    return 1;
  }
  rng_t r = {.state = seed};
  for (size_t i = 0; i < pmax; i++)
    models[i] = random_paper_model(&r, 10, 1e9 / 4);

  printf("SLBA partitioning time, median of %d calls (random models, "
         "seed %llu)\n",
         reps, seed);
  printf("%8s %12s %12s %10s %10s %14s\n", "devices", "N", "time [ms]",
         "us/device", "bisection", "refined units");
  for (size_t a = 0; a < sizeof ps / sizeof ps[0]; a++) {
    for (size_t b = 0; b < sizeof ns / sizeof ns[0]; b++) {
      mlsba_partition_info_t info;
      for (int k = 0; k < reps; k++) {
        double t0 = timing_now();
        int err = mlsba_partition_slba_ex((const mlsba_model_t *const *)models,
                                          ps[a], ns[b], NULL, loads, &info);
        times[k] = timing_now() - t0;
        if (err) {
          fprintf(stderr, "bench-slba: %s\n", mlsba_last_error());
          return 1;
        }
      }
      double med = timing_median(times, (size_t)reps);
      printf("%8zu %12lld %12.3f %10.3f %10u %14lld\n", ps[a], (long long)ns[b],
             1e3 * med, 1e6 * med / (double)ps[a], info.bisection_steps,
             (long long)info.refined);
    }
  }
  for (size_t i = 0; i < pmax; i++)
    mlsba_model_destroy(models[i]);
  free(models);
  free(loads);
  free(times);
  return 0;
}
