/* The CPU twin of cl/laswp.cl (cl/laswp_cpu.c). */
#ifndef MLSBA_CL_LASWP_CPU_H
#define MLSBA_CL_LASWP_CPU_H

#include <stddef.h>
#include <stdint.h>

/* Columns [0, cols) of a (elements of es bytes, 4 or 8, leading dimension
 * ld): row i interchanged with row piv[i] (0-based) for i = 0 .. k - 1 in
 * order, as laswp_cols_64/_32 do on a device and LAPACK's ?laswp does
 * with k1 = 1, k2 = k, incx = 1 (its pivots 1-based). */
void mlsba__laswp_cols(void *a, size_t es, int64_t ld, int64_t cols, int k,
                       const int *piv);

#endif
