/* Matrices from their global indices: element (i, j) is a hash of (seed,
 * matrix, i, j), so a rank makes exactly its own rectangles without
 * asking anyone. */
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
