/* mlsba-bench --op getrf|potrf: a hybrid factorization instead of the
 * product, with its baselines as rows (docs/bench-report.md). */
#ifndef MLSBA_BENCH_FACTOR_H
#define MLSBA_BENCH_FACTOR_H

#include "cli.h"
#include "mlsba.h"

/* Runs what the arguments ask on pl (sim: every device simulated), prints
 * the table, writes the JSON and the pictures. models: the folder of
 * saved models (NULL: none). Returns the exit status. */
int bench_factor(const bench_args_t *a, const mlsba_platform_t *pl, int sim,
                 const char *models);

#endif
