/* SLBA internals shared with the multi-level partitioners. */
#ifndef MLSBA_PARTITION_SLBA_H
#define MLSBA_PARTITION_SLBA_H

#include "mlsba.h"

/* Loads that are exactly representable and safe to sum: 2^53. */
#define MLSBA__MAX_UNITS (INT64_C(1) << 53)

struct mlsba__bisect;

/* SLBA over models already checked with mlsba__fpm_check_usable(), n in
 * [0, MLSBA__MAX_UNITS], with the granularity and line search of opts
 * (filled in). info may be NULL. ws: NULL, or a workspace initialised for
 * p elements that callers running many SLBAs reuse. */
int mlsba__slba(const mlsba_model_t *const models[], size_t p, int64_t n,
                const mlsba_partition_opts_t *opts, int64_t loads[],
                mlsba_partition_info_t *info, struct mlsba__bisect *ws);

/* SLBA for n units from start[], an optimal distribution of fewer units
 * (or one below an optimum of n): only the refinement runs, one unit at a
 * time. For a group point next to one already built (Procedure 1). */
int mlsba__slba_from(const mlsba_model_t *const models[], size_t p, int64_t n,
                     const int64_t start[], int64_t loads[],
                     mlsba_partition_info_t *info, struct mlsba__bisect *ws);

/* Validate the common arguments of a partitioning call (models, p, n,
 * loads); fn names the call in the error message. */
int mlsba__check_partition_args(const char *fn,
                                const mlsba_model_t *const models[], size_t p,
                                int64_t n, const int64_t loads[]);

/* The promise of every partitioner, checked on every call of a public
 * entry: loads[0..p-1] within [0, min(max_load, n)] and summing to n. O(p),
 * negligible beside the partitioning. A breach is a bug in the library;
 * it is reported as MLSBA_ENOCONV with a message naming algo, rather than
 * handing wrong loads to the caller (the library never aborts). */
int mlsba__check_loads(const char *algo, const mlsba_model_t *const models[],
                       size_t p, int64_t n, const int64_t loads[]);

#endif
