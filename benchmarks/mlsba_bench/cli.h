/* mlsba-bench's command line: what the user asked for, parsed and
 * checked, before anything runs. */
#ifndef MLSBA_BENCH_CLI_H
#define MLSBA_BENCH_CLI_H

#include <stdint.h>

#include "mlsba.h"

typedef struct {
  const char *platform, *json, *plot, *models;
  mlsba_algorithm_t algo;
  int compare, quiet, progress, keep_shared, separate_kinds;
  int64_t m, n, k;
  mlsba_precision_t precision;
  double eps;
  unsigned max_iter;
  /* --op: the product (0), or a factorization of order n (getrf, potrf,
   * geqrf; geqrf also of m x n);
   * --block its nb; algo_name the --algo given, which a factorization
   * reads as a split (mlsba_factor_split_t); --rounds the interleaved
   * rounds of its real rows (0: the default, 3). */
  enum { BENCH_OP_GEMM = 0, BENCH_OP_GETRF, BENCH_OP_POTRF, BENCH_OP_GEQRF } op;
  int64_t block, rounds;
  const char *algo_name;
} bench_args_t;

/* What bench_parse_args() returns besides 0 (go on) and an exit status
 * for bad input (2, after one line on stderr): --help or --version done. */
#define BENCH_ARGS_DONE (-1)

/* The most --rounds a factorization's rows take. */
#define BENCH_MAX_ROUNDS 99

int bench_parse_args(int argc, char **argv, bench_args_t *a);

extern const char *const bench_prog;

#endif
