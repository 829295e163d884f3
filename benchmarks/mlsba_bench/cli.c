#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "common/options.h"
#include "common/paths.h"
#include "mlsba-bench_help.h" /* tools/help/mlsba-bench.txt */

const char *const bench_prog = "mlsba-bench";

static int bad_usage(const char *what, const char *arg) {
  return cli_usage_error(bench_prog, what, arg);
}

/* The command line as the table reads it: bench_args_t, and --size and
 * --algo, which are checked once --op is known. */
typedef struct {
  bench_args_t a;
  int64_t size;
  const char *algo;
} cmdline_t;

static const char *const ops[] = {"gemm", "getrf", "potrf", "geqrf", NULL};
static const char *const precisions[] = {"single", "double", NULL};

/* What tools/help/mlsba-bench.txt lists. */
static const opt_t options[] = {
    {"--platform", OPT_TEXT, OPT_AT(cmdline_t, a.platform)},
    {"--algo", OPT_TEXT, OPT_AT(cmdline_t, algo)},
    {"--compare", OPT_FLAG, OPT_AT(cmdline_t, a.compare)},
    {"--json", OPT_TEXT, OPT_AT(cmdline_t, a.json)},
    {"--plot", OPT_TEXT, OPT_AT(cmdline_t, a.plot)},
    {"--models", OPT_TEXT, OPT_AT(cmdline_t, a.models)},
    {"--op", OPT_CHOICE, OPT_AT(cmdline_t, a.op), .choices = ops,
     .must = "gemm, getrf, potrf or geqrf"},
    {"--block", OPT_UNITS, OPT_AT(cmdline_t, a.block), .lo = 1, .hi = 1 << 20,
     .must = "a whole number from 1 to 2^20"},
    {"--rounds", OPT_UNITS, OPT_AT(cmdline_t, a.rounds), .lo = 1,
     .hi = BENCH_MAX_ROUNDS, .must = "a whole number from 1 to 99"},
    {"--precision", OPT_CHOICE, OPT_AT(cmdline_t, a.precision),
     .choices = precisions, .must = "single or double"},
    {"--eps", OPT_REAL, OPT_AT(cmdline_t, a.eps), .max = 1, .below_max = 1,
     .must = "a number in [0, 1)"},
    {"--max-iter", OPT_UNITS, OPT_AT(cmdline_t, a.max_iter), .lo = 1,
     .hi = 100000, .must = "a whole number >= 1"},
    {"--size", OPT_UNITS, OPT_AT(cmdline_t, size), .lo = 1,
     .hi = INT64_C(1) << 30, .must = "a whole number from 1 to 2^30"},
    {"-m", OPT_UNITS, OPT_AT(cmdline_t, a.m), .lo = 1, .hi = INT64_C(1) << 30,
     .must = "a whole number from 1 to 2^30"},
    {"-n", OPT_UNITS, OPT_AT(cmdline_t, a.n), .lo = 1, .hi = INT64_C(1) << 30,
     .must = "a whole number from 1 to 2^30"},
    {"-k", OPT_UNITS, OPT_AT(cmdline_t, a.k), .lo = 1, .hi = INT64_C(1) << 30,
     .must = "a whole number from 1 to 2^30"},
    {"--quiet", OPT_FLAG, OPT_AT(cmdline_t, a.quiet)},
    {"--progress", OPT_FLAG, OPT_AT(cmdline_t, a.progress)},
    {"--keep-shared", OPT_FLAG, OPT_AT(cmdline_t, a.keep_shared)},
    {"--separate-kinds", OPT_FLAG, OPT_AT(cmdline_t, a.separate_kinds)},
};

/* A factorization: --size N (its order, default 4096), or for QR -m M -n
 * N (any shape), a split for --algo (mlsba is the per-step FPM split). */
static int check_factor_args(bench_args_t *a, int64_t size, const char *algo) {
  int qr = a->op == BENCH_OP_GEQRF;
  if (!qr && (a->m || a->n || a->k))
    return bad_usage("--op getrf and potrf take --size N, not -m/-n/-k", "");
  if (qr &&
      (a->k || (a->m || a->n) != (a->m && a->n) || (size && (a->m || a->n))))
    return bad_usage("--op geqrf takes --size N or -m M -n N", "");
  if (size > 65536 || a->m > 65536 || a->n > 65536)
    return bad_usage("the matrix of a factorization is at most 65536 a side",
                     "");
  if (a->m * a->n > INT64_C(1) << 30)
    return bad_usage("the matrix would exceed 2^30 elements", "");
  if (!a->m)
    a->m = a->n = size ? size : 4096;
  a->k = a->n;
  if (a->compare && strcmp(algo, "mlsba"))
    return bad_usage("--algo and --compare exclude each other", "");
  static const char *const splits[] = {"mlsba",
                                       "fpm",
                                       "constant-ratio",
                                       "fixed-slice",
                                       "kernel-slice",
                                       "constant-ratio+ways",
                                       "fixed-slice+ways",
                                       "kernel-slice+ways"};
  int known = 0;
  for (size_t i = 0; i < sizeof splits / sizeof *splits; i++)
    known |= !strcmp(algo, splits[i]);
  if (!known)
    return bad_usage("--algo of a factorization must be mlsba (the per-step "
                     "FPM split), constant-ratio, fixed-slice, kernel-slice "
                     "or one of those with +ways, got ",
                     algo);
  if (a->quiet && a->progress)
    return bad_usage("--quiet and --progress exclude each other", "");
  /* The balancing's options have no use here: taken and ignored, they
   * would say that the run used them. */
  const char *unused = a->eps >= 0         ? "--eps"
                       : a->max_iter       ? "--max-iter"
                       : a->keep_shared    ? "--keep-shared"
                       : a->separate_kinds ? "--separate-kinds"
                                           : NULL;
  if (unused)
    return bad_usage("not an option of --op getrf or potrf (it tunes the "
                     "product's balancing): ",
                     unused);
  return 0;
}

int bench_parse_args(int argc, char **argv, bench_args_t *a) {
  /* The precision left unset until every option is read: a
   * factorization's default is double, the precision users factorize in,
   * the product's single. eps < 0 and max_iter 0: not given (a
   * factorization refuses them). */
  const mlsba_precision_t unset = (mlsba_precision_t)-1;
  cmdline_t c = {
      .a = {.platform = "auto", .eps = -1, .max_iter = 0, .precision = unset},
      .algo = "mlsba"};
  const opts_table_t table = OPTS_TABLE(options);
  int status = 0;
  int outcome =
      opts_read(bench_prog, mlsba_bench_help, &table, argc, argv, &c, &status);
  *a = c.a;
  if (outcome != OPTS_RUN)
    return outcome == OPTS_USAGE || status ? status : BENCH_ARGS_DONE;
  int64_t size = c.size;
  const char *algo = c.algo;
  a->algo_name = algo;
  if (a->precision == unset)
    a->precision = a->op != BENCH_OP_GEMM ? MLSBA_PRECISION_DOUBLE
                                          : MLSBA_PRECISION_SINGLE;
  if (a->op != BENCH_OP_GEMM)
    return check_factor_args(a, size, algo);
  if (a->eps < 0)
    a->eps = 0.05;
  if (a->max_iter == 0)
    a->max_iter = 20;
  if (a->block)
    return bad_usage("--block goes with --op getrf, potrf or geqrf", "");
  if (a->rounds)
    return bad_usage("--rounds goes with --op getrf, potrf or geqrf", "");
  if (size && (a->m || a->n || a->k))
    return bad_usage("--size and -m/-n/-k exclude each other", "");
  if (!size && !a->m && !a->n && !a->k)
    size = 2048;
  if (size)
    a->m = a->n = a->k = size;
  if (!a->m || !a->n || !a->k)
    return bad_usage("-m, -n and -k go together", "");
  if (a->compare && strcmp(algo, "mlsba"))
    return bad_usage("--algo and --compare exclude each other", "");
  if (a->m * a->k > (INT64_C(1) << 31) || a->k * a->n > (INT64_C(1) << 31) ||
      a->m * a->n > (INT64_C(1) << 31))
    return bad_usage("the matrices would exceed 2^31 elements each", "");
  if (mlsba_algorithm_from_name(algo, &a->algo) != 0) {
    char why[512];
    snprintf(why, sizeof why, "%s; --compare runs them all",
             mlsba_last_error());
    return bad_usage("--algo: ", why);
  }
  if (a->quiet && a->progress)
    return bad_usage("--quiet and --progress exclude each other", "");
  return 0;
}
