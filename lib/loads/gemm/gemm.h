/* The built-in GEMM load, internal view: checking a product, finding the
 * slices of B and C that a device works on, and the two halves of its
 * device code (BLIS on cores, CLBlast on OpenCL devices). */
#ifndef MLSBA_LOADS_GEMM_GEMM_H
#define MLSBA_LOADS_GEMM_GEMM_H

#include "mlsba.h"

/* Bytes per element. */
size_t mlsba__gemm_elem(const mlsba_gemm_t *g);
/* Checks sizes, pointers and precision; names the problem. */
int mlsba__gemm_check(const mlsba_gemm_t *g);
/* Columns off.. of B and C. */
const void *mlsba__gemm_b_slice(const mlsba_gemm_t *g, int64_t off);
void *mlsba__gemm_c_slice(const mlsba_gemm_t *g, int64_t off);

/* The CPU half (gemm_blis.c): an mlsba_cpu_fn on an mlsba_gemm_t. */
int mlsba__gemm_blis(void *gemm, int64_t first, int64_t count);

#ifdef MLSBA_HAVE_OPENCL
struct mlsba_opencl_ops;
/* The OpenCL half (gemm_clblast.c). */
const struct mlsba_opencl_ops *mlsba__gemm_clblast_ops(void);
#endif

#endif
