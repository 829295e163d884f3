/* Random matrices for GEMM tests, and a naive reference product. */
#ifndef MLSBA_TESTS_GEMM_DATA_H
#define MLSBA_TESTS_GEMM_DATA_H

#include <stdint.h>

#include "mlsba.h"

/* A product with random A and B in [-1, 1), C filled with NaN so that a
 * column nobody computed cannot pass verification. Free with
 * gemm_data_free. */
void gemm_data_make(mlsba_gemm_t *g, int64_t m, int64_t n, int64_t k,
                    mlsba_precision_t precision, uint64_t seed);
void gemm_data_free(mlsba_gemm_t *g);

/* C = A x B by the definition, column by column in double. */
void gemm_data_reference(const mlsba_gemm_t *g);

#endif
