/* GEMM on an OpenCL device through CLBlast, the pieces that other OpenCL
 * code of the library uses too (the MPI layer's node kernel): how many
 * columns of B and C fit beside A, and the product itself. */
#ifndef MLSBA_LOADS_GEMM_GEMM_CLBLAST_H
#define MLSBA_LOADS_GEMM_GEMM_CLBLAST_H

#include <stddef.h>
#include <stdint.h>

#include "mlsba.h"
#include "mlsba/opencl.h"

/* Columns of B (k tall) and C (m tall) that fit the device beside an
 * m x k A, within its global memory and its largest single allocation
 * (both within mem_limit_mb), at most n; 0 when A and one column do not
 * fit, or for a double product on a device without doubles. */
int64_t mlsba__gemm_cl_columns(const mlsba_opencl_env_t *env,
                               mlsba_precision_t precision, int64_t m,
                               int64_t k, int64_t n);

/* Enqueues C = A B + beta C on queue without waiting: A m x k, B k x n
 * and C m x n, column-major, packed (leading dimensions m, k, m) from the
 * start of their buffers. Returns 0 or the CLBlast status (OpenCL codes
 * are CLBlast's too). */
cl_int mlsba__gemm_cl_multiply(mlsba_precision_t precision, size_t m, size_t n,
                               size_t k, cl_mem a, cl_mem b, double beta,
                               cl_mem c, cl_command_queue *queue);

#endif
