/* Wall-clock timing for the tools and benchmarks (the library itself has
 * no clocks): a monotonic clock and the median of repeated timings. */
#ifndef MLSBA_TOOLS_TIMING_H
#define MLSBA_TOOLS_TIMING_H

#include <stdlib.h>
#include <time.h>

/* Seconds on the monotonic clock. */
static inline double timing_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int timing_cmp_(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median of n >= 1 timings; sorts t in place. */
static inline double timing_median(double *t, size_t n) {
  qsort(t, n, sizeof *t, timing_cmp_);
  return t[n / 2];
}

#endif
