/* What every fuzz target asks of the partitioners: on models that the
 * library accepted, every algorithm gives 0 and loads that sum to n within
 * every max_load (alpha the sum of each group), or an error with a
 * message. A breach aborts, which libFuzzer and the replay test report;
 * time is bounded by libFuzzer's -timeout. */
#ifndef MLSBA_FUZZ_CHECK_PARTITION_H
#define MLSBA_FUZZ_CHECK_PARTITION_H

#include <stdint.h>
#include <stdlib.h>

#include "mlsba.h"

/* MLFBA2 builds every group point 1..n by definition: only small n. */
#define FUZZ_MLFBA2_MAX_N 2000

static inline void fuzz_check_partition(const mlsba_model_t *const *models,
                                        const size_t *size, size_t q,
                                        int64_t n) {
  size_t p = 0;
  for (size_t g = 0; g < q; g++)
    p += size[g];
  int64_t *alpha = calloc(q, sizeof *alpha), *beta = calloc(p, sizeof *beta);
  size_t *points = calloc(q, sizeof *points);
  for (int a = 0; alpha && beta && points && a < MLSBA_ALGO_COUNT; a++) {
    if (a == MLSBA_ALGO_MLFBA2 && n > FUZZ_MLFBA2_MAX_N)
      continue;
    int err = mlsba_partition_groups((mlsba_algorithm_t)a, models, size, q, n,
                                     NULL, alpha, beta, points, NULL);
    if (err) {
      if (mlsba_last_error()[0] == 0)
        abort(); /* an error without a message */
      if (err == MLSBA_ENOCONV)
        abort(); /* the library's own check of its loads failed */
      continue;
    }
    int64_t sum = 0;
    for (size_t g = 0, j = 0; g < q; g++) {
      int64_t gsum = 0;
      for (size_t k = 0; k < size[g]; k++, j++) {
        int64_t cap = mlsba_model_max_load(models[j]);
        if (beta[j] < 0 || beta[j] > n || (cap >= 0 && beta[j] > cap))
          abort();
        gsum += beta[j];
      }
      if (gsum != alpha[g])
        abort();
      sum += gsum;
    }
    if (sum != n)
      abort();
  }
  free(alpha);
  free(beta);
  free(points);
}

#endif
