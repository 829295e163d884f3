/* The built-in GEMM load, internal view: checking a product and finding
 * the slices of B and C that a device works on. */
#ifndef MLSBA_RUNTIME_GEMM_H
#define MLSBA_RUNTIME_GEMM_H

#include "mlsba.h"

/* Bytes per element. */
size_t mlsba__gemm_elem(const mlsba_gemm_t *g);
/* Checks sizes, pointers and precision; names the problem. */
int mlsba__gemm_check(const mlsba_gemm_t *g);
/* Columns off.. of B and C. */
const void *mlsba__gemm_b_slice(const mlsba_gemm_t *g, int64_t off);
void *mlsba__gemm_c_slice(const mlsba_gemm_t *g, int64_t off);

#endif
