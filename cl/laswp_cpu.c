/* Row interchanges of a block of columns: the CPU twin of cl/laswp.cl. */
#include "laswp_cpu.h"

#include <string.h>

void mlsba__laswp_cols(void *a, size_t es, int64_t ld, int64_t cols, int k,
                       const int *piv) {
  for (int64_t c = 0; c < cols; c++) {
    char *x = (char *)a + (size_t)(c * ld) * es;
    for (int i = 0; i < k; i++) {
      char t[8];
      memcpy(t, x + (size_t)i * es, es);
      memcpy(x + (size_t)i * es, x + (size_t)piv[i] * es, es);
      memcpy(x + (size_t)piv[i] * es, t, es);
    }
  }
}
