/* What one mlsba_executor_run() costs beyond its devices' work: a load
 * whose CPU function does nothing, its units shared evenly by the devices
 * that can take them (cores and simulated devices; an OpenCL device gets
 * none), run again and again on one executor. The factorizations make one
 * run per step.
 *
 *   bench-executor [--platform auto|FILE] [--runs N] [--batches B]
 *
 * Prints the platform, then the microseconds per run of each batch of N
 * runs (default 200) and their median over B batches (default 11). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mlsba.h"

#define UNITS 100

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int nothing(void *user, int64_t first, int64_t count) {
  (void)user;
  (void)first;
  (void)count;
  return 0;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct {
  const char *platform;
  int runs, batches;
} args_t;

static int parse(int argc, char **argv, args_t *a) {
  for (int i = 1; i < argc; i += 2) {
    const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (v && !strcmp(o, "--platform"))
      a->platform = v;
    else if (v && !strcmp(o, "--runs"))
      a->runs = atoi(v);
    else if (v && !strcmp(o, "--batches"))
      a->batches = atoi(v);
    else
      a->runs = 0;
    if (a->runs < 1 || a->batches < 1 || a->batches > 999) {
      fprintf(stderr, "usage: bench-executor [--platform auto|FILE] "
                      "[--runs N] [--batches B]\n"
                      "  N >= 1 (default 200), B 1..999 (default 11)\n");
      return 2;
    }
  }
  return 0;
}

/* UNITS shared evenly by the devices that can take the load. */
static int share(mlsba_executor_t *ex, const mlsba_load_t *w, size_t p,
                 int64_t *units) {
  int64_t *max = calloc(p, sizeof *max);
  int err = max == NULL || mlsba_executor_max_units(ex, w, max) != 0;
  size_t takers = 0;
  for (size_t i = 0; !err && i < p; i++)
    takers += max[i] > 0;
  for (size_t i = 0, k = 0; !err && takers && i < p; i++) {
    units[i] = max[i] > 0 ? UNITS / (int64_t)takers +
                                ((int64_t)k < UNITS % (int64_t)takers)
                          : 0;
    k += max[i] > 0;
  }
  free(max);
  return err || takers == 0;
}

static int bench(mlsba_executor_t *ex, const mlsba_platform_t *pl,
                 const args_t *a) {
  size_t p = mlsba_platform_num_devices(pl);
  mlsba_load_t *w = NULL;
  int64_t *units = calloc(p, sizeof *units);
  double *time = calloc(p, sizeof *time);
  double *us = calloc((size_t)a->batches, sizeof *us);
  int err = units == NULL || time == NULL || us == NULL ||
            mlsba_load_create("nothing", UNITS, &w) != 0 ||
            mlsba_load_set_cpu(w, nothing, NULL) != 0 ||
            share(ex, w, p, units) != 0;
  for (size_t i = 0; !err && i < p; i++)
    printf("%s %lld units\n", mlsba_platform_device_name(pl, i),
           (long long)units[i]);
  for (int b = 0; !err && b < a->batches; b++) {
    double t0 = now();
    for (int r = 0; !err && r < a->runs; r++)
      err = mlsba_executor_run(ex, w, units, MLSBA_DRIVE_SHARED, time, NULL);
    us[b] = (now() - t0) / a->runs * 1e6;
    printf("%s%.1f", b ? " " : "us per run: ", us[b]);
  }
  if (!err) {
    qsort(us, (size_t)a->batches, sizeof *us, by_value);
    printf("\nmedian of %d batches of %d runs: %.1f us per run\n", a->batches,
           a->runs, us[a->batches / 2]);
  }
  mlsba_load_destroy(w);
  free(units);
  free(time);
  free(us);
  return err;
}

int main(int argc, char **argv) {
  args_t a = {.platform = "auto", .runs = 200, .batches = 11};
  if (parse(argc, argv, &a))
    return 2;
  mlsba_platform_t *pl = NULL;
  mlsba_executor_t *ex = NULL;
  int err = !strcmp(a.platform, "auto") ? mlsba_platform_discover(&pl)
                                        : mlsba_platform_load(a.platform, &pl);
  if (!err)
    err = mlsba_executor_create(pl, &ex);
  if (!err)
    err = bench(ex, pl, &a);
  if (err)
    fprintf(stderr, "bench-executor: %s\n",
            *mlsba_last_error() ? mlsba_last_error()
                                : "no device takes a CPU load");
  mlsba_executor_destroy(ex);
  mlsba_platform_destroy(pl);
  return err ? 1 : 0;
}
