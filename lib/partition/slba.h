/* SLBA internals shared with the multi-level partitioners. */
#ifndef MLSBA_PARTITION_SLBA_H
#define MLSBA_PARTITION_SLBA_H

#include "mlsba.h"

/* Loads that are exactly representable and safe to sum: 2^53. */
#define MLSBA__MAX_UNITS (INT64_C(1) << 53)

/* SLBA over models already checked with mlsba__fpm_check_usable(), n in
 * [0, MLSBA__MAX_UNITS], granularity >= 1. info may be NULL. */
int mlsba__slba(const mlsba_model_t *const models[], size_t p, int64_t n,
                int64_t granularity, int64_t loads[],
                mlsba_partition_info_t *info);

/* Validate the common arguments of a partitioning call (models, p, n,
 * loads); fn names the call in the error message. */
int mlsba__check_partition_args(const char *fn,
                                const mlsba_model_t *const models[], size_t p,
                                int64_t n, const int64_t loads[]);

#endif
