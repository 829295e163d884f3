/* The random matrices of mlsba-bench, shared with its StarPU peer so that
 * both multiply the same A and B: entries in [-1, 1) from a 64-bit linear
 * congruential generator, A first, then B. */
#ifndef MLSBA_BENCHMARKS_GEMM_FILL_H
#define MLSBA_BENCHMARKS_GEMM_FILL_H

#include <stddef.h>
#include <stdint.h>

#include "mlsba.h"

static inline void bench_fill_random(mlsba_gemm_t *g, uint64_t seed) {
  size_t na = (size_t)(g->m * g->k), nb = (size_t)(g->k * g->n);
  uint64_t s = seed;
  for (size_t i = 0; i < na + nb; i++) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    double v = (double)(s >> 11) * 0x1p-52 - 1;
    void *base = i < na ? (void *)g->a : (void *)g->b;
    size_t at = i < na ? i : i - na;
    if (g->precision == MLSBA_PRECISION_DOUBLE)
      ((double *)base)[at] = v;
    else
      ((float *)base)[at] = (float)v;
  }
}

#endif
