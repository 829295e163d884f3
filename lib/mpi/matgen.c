/* Matrices from their global indices: element (i, j) is a hash of (seed,
 * matrix, i, j), so a rank makes exactly its own rectangles and computes
 * the reference of any element of C from A's row and B's column without
 * asking anyone. */
#include <math.h>
#include <stdint.h>

#include "internal.h"

/* splitmix64's finaliser: every input bit reaches every output bit. */
static uint64_t mix(uint64_t z) {
  z += UINT64_C(0x9E3779B97F4A7C15);
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

double mlsba__mpi_element(uint64_t seed, int which, int64_t i, int64_t j,
                          mlsba_precision_t prec) {
  uint64_t h =
      mix(mix(mix(seed ^ (uint64_t)which) ^ (uint64_t)i) ^ (uint64_t)j);
  double v = (double)(h >> 11) * 0x1.0p-52 - 1.0; /* [-1, 1) */
  return prec == MLSBA_PRECISION_SINGLE ? (double)(float)v : v;
}

void mlsba__mpi_fill(void *dst, uint64_t seed, int which, int64_t r0,
                     int64_t c0, int64_t rows, int64_t cols,
                     mlsba_precision_t prec) {
  for (int64_t j = 0; j < cols; j++)
    for (int64_t i = 0; i < rows; i++) {
      double v = mlsba__mpi_element(seed, which, r0 + i, c0 + j, prec);
      if (prec == MLSBA_PRECISION_DOUBLE)
        ((double *)dst)[j * rows + i] = v;
      else
        ((float *)dst)[j * rows + i] = (float)v;
    }
}

void mlsba__mpi_verify(const void *c, uint64_t seed, int64_t n, int64_t r0,
                       int64_t c0, int64_t rows, int64_t cols,
                       mlsba_precision_t prec, unsigned samples,
                       uint64_t sample_seed, double *max_rel_error, int *ok) {
  double u = prec == MLSBA_PRECISION_DOUBLE ? 0x1.0p-53 : 0x1.0p-24;
  double worst = 0;
  *ok = 1;
  for (unsigned s = 0; s < samples && rows > 0 && cols > 0; s++) {
    /* The corners first (the edges of the rectangle are where a panel
     * offset goes wrong), then random elements. */
    uint64_t h = mix(sample_seed + s);
    int64_t i = s == 0 || s == 2   ? 0
                : s == 1 || s == 3 ? rows - 1
                                   : (int64_t)(h % (uint64_t)rows);
    int64_t j = s == 0 || s == 1   ? 0
                : s == 2 || s == 3 ? cols - 1
                                   : (int64_t)((h >> 32) % (uint64_t)cols);
    long double ref = 0, mag = 0;
    for (int64_t k = 0; k < n; k++) {
      long double a = mlsba__mpi_element(seed, 0, r0 + i, k, prec);
      long double b = mlsba__mpi_element(seed, 1, k, c0 + j, prec);
      ref += a * b;
      mag += fabsl(a * b);
    }
    double got = prec == MLSBA_PRECISION_DOUBLE
                     ? ((const double *)c)[j * rows + i]
                     : (double)((const float *)c)[j * rows + i];
    double err = (double)(fabsl((long double)got - ref) / (mag > 0 ? mag : 1));
    if (!(err <= 4.0 * (double)n * u))
      *ok = 0;
    if (!(err <= worst))
      worst = err;
  }
  *max_rel_error = worst;
}
