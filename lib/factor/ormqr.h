/* Q of a QR factorization applied to a matrix (ormqr.c), internal view:
 * the checks of mlsba_ormqr and its application with room the caller
 * holds, so that mlsba_gels (gels.c) takes all its memory before it
 * writes anything. */
#ifndef MLSBA_FACTOR_ORMQR_H
#define MLSBA_FACTOR_ORMQR_H

#include <stddef.h>
#include <stdint.h>

#include "mlsba.h"

/* The arguments LAPACK's ?ormqr checks (and the executor, precision and
 * NULL arrays), the bad one named in the message with fn. */
int mlsba__ormqr_check(const char *fn, mlsba_executor_t *ex,
                       mlsba_precision_t prec, char side, char trans, int64_t m,
                       int64_t n, int64_t k, const void *a, int64_t lda,
                       const void *tau, const void *c, int64_t ldc,
                       const int64_t *info);

/* Bytes of the room mlsba__ormqr_apply() needs for this call on ex
 * (left: side L): T of every block of reflectors, W, and a partial W for
 * each core that shares the products. */
size_t mlsba__ormqr_work_bytes(mlsba_executor_t *ex, mlsba_precision_t prec,
                               int left, int64_t m, int64_t n, int64_t k);

/* C = op(Q) C or C op(Q) on checked arguments, in work (of
 * mlsba__ormqr_work_bytes() for the same ex); nothing fails. ex must not
 * be running a load (a split that cannot start runs on the calling
 * thread). */
void mlsba__ormqr_apply(mlsba_executor_t *ex, mlsba_precision_t prec, char side,
                        char trans, int64_t m, int64_t n, int64_t k,
                        const void *a, int64_t lda, const void *tau, void *c,
                        int64_t ldc, void *work);

/* Splits C between the cores from `width` free columns (side L) or rows
 * (side R) on; 0 or less: the default. For bench-ormqr and the tests,
 * which place and cross the threshold. */
void mlsba__ormqr_set_split_from(int64_t width);

#endif
