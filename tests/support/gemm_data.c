#include "gemm_data.h"

#include <math.h>
#include <stdlib.h>

#include "random_models.h"

void gemm_data_make(mlsba_gemm_t *g, int64_t m, int64_t n, int64_t k,
                    mlsba_precision_t precision, uint64_t seed) {
  size_t s =
      precision == MLSBA_PRECISION_DOUBLE ? sizeof(double) : sizeof(float);
  size_t na = (size_t)(m * k), nb = (size_t)(k * n), nc = (size_t)(m * n);
  void *a = malloc(na * s), *b = malloc(nb * s), *c = malloc(nc * s);
  if (!a || !b || !c)
    abort();
  rng_t r = {.state = seed};
  for (size_t i = 0; i < na + nb + nc; i++) {
    double v = i < na + nb ? 2 * rng_uniform(&r) - 1 : NAN;
    void *base = i < na ? a : i < na + nb ? b : c;
    size_t at = i < na ? i : i < na + nb ? i - na : i - na - nb;
    if (precision == MLSBA_PRECISION_DOUBLE)
      ((double *)base)[at] = v;
    else
      ((float *)base)[at] = (float)v;
  }
  *g = (mlsba_gemm_t){
      .m = m, .n = n, .k = k, .precision = precision, .a = a, .b = b, .c = c};
}

void gemm_data_free(mlsba_gemm_t *g) {
  free((void *)g->a);
  free((void *)g->b);
  free(g->c);
}

void gemm_data_reference(const mlsba_gemm_t *g) {
  int dbl = g->precision == MLSBA_PRECISION_DOUBLE;
  for (int64_t j = 0; j < g->n; j++)
    for (int64_t i = 0; i < g->m; i++) {
      double sum = 0;
      for (int64_t p = 0; p < g->k; p++) {
        double a = dbl ? ((const double *)g->a)[p * g->m + i]
                       : ((const float *)g->a)[p * g->m + i];
        double b = dbl ? ((const double *)g->b)[j * g->k + p]
                       : ((const float *)g->b)[j * g->k + p];
        sum += a * b;
      }
      if (dbl)
        ((double *)g->c)[j * g->m + i] = sum;
      else
        ((float *)g->c)[j * g->m + i] = (float)sum;
    }
}
