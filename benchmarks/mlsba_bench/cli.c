#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "common/paths.h"
#include "mlsba-bench_help.h" /* tools/help/mlsba-bench.txt */

const char *const bench_prog = "mlsba-bench";

static int bad_usage(const char *what, const char *arg) {
  return cli_usage_error(bench_prog, what, arg);
}

static int parse_count(const char *s, int64_t max, int64_t *out) {
  if (*s == '\0' || strspn(s, "0123456789") != strlen(s))
    return -1;
  errno = 0;
  long long v = strtoll(s, NULL, 10);
  if (errno || v < 1 || v > max)
    return -1;
  *out = v;
  return 0;
}

/* Options without a value: the flag each sets. */
static int *flag_of(const char *o, bench_args_t *a) {
  return !strcmp(o, "--compare")          ? &a->compare
         : !strcmp(o, "--quiet")          ? &a->quiet
         : !strcmp(o, "--progress")       ? &a->progress
         : !strcmp(o, "--keep-shared")    ? &a->keep_shared
         : !strcmp(o, "--separate-kinds") ? &a->separate_kinds
                                          : NULL;
}

/* One option with its value v; 0 or the exit status of bad input. */
static int take_value(const char *o, const char *v, bench_args_t *a,
                      const char **algo, int64_t *size) {
  if (!strcmp(o, "--platform")) {
    a->platform = v;
  } else if (!strcmp(o, "--algo")) {
    *algo = v;
  } else if (!strcmp(o, "--json")) {
    a->json = v;
  } else if (!strcmp(o, "--plot")) {
    a->plot = v;
  } else if (!strcmp(o, "--models")) {
    a->models = v;
  } else if (!strcmp(o, "--op")) {
    if (strcmp(v, "gemm") && strcmp(v, "getrf") && strcmp(v, "potrf"))
      return bad_usage("--op must be gemm, getrf or potrf, got ", v);
    a->op = !strcmp(v, "getrf")   ? BENCH_OP_GETRF
            : !strcmp(v, "potrf") ? BENCH_OP_POTRF
                                  : BENCH_OP_GEMM;
  } else if (!strcmp(o, "--block")) {
    if (parse_count(v, 1 << 20, &a->block))
      return bad_usage("--block must be a whole number from 1 to 2^20, got ",
                       v);
  } else if (!strcmp(o, "--rounds")) {
    if (parse_count(v, BENCH_MAX_ROUNDS, &a->rounds))
      return bad_usage("--rounds must be a whole number from 1 to 99, got ", v);
  } else if (!strcmp(o, "--precision")) {
    if (strcmp(v, "single") && strcmp(v, "double"))
      return bad_usage("--precision must be single or double, got ", v);
    a->precision =
        strcmp(v, "double") ? MLSBA_PRECISION_SINGLE : MLSBA_PRECISION_DOUBLE;
  } else if (!strcmp(o, "--eps")) {
    if (cli_parse_double(v, 0, 1, &a->eps) != 0 || !(a->eps < 1))
      return bad_usage("--eps must be a number in [0, 1), got ", v);
  } else if (!strcmp(o, "--max-iter")) {
    int64_t it;
    if (parse_count(v, 100000, &it))
      return bad_usage("--max-iter must be a whole number >= 1, got ", v);
    a->max_iter = (unsigned)it;
  } else {
    int64_t *slot = !strcmp(o, "--size") ? size
                    : !strcmp(o, "-m")   ? &a->m
                    : !strcmp(o, "-n")   ? &a->n
                                         : &a->k;
    if (parse_count(v, INT64_C(1) << 30, slot)) {
      char what[64];
      snprintf(what, sizeof what,
               "%s must be a whole number from 1 to 2^30, got ", o);
      return bad_usage(what, v);
    }
  }
  return 0;
}

/* A factorization: --size N only (its order, default 4096), a split for
 * --algo (mlsba is the per-step FPM split). */
static int check_factor_args(bench_args_t *a, int64_t size, const char *algo) {
  if (a->m || a->n || a->k)
    return bad_usage("--op getrf and potrf take --size N, not -m/-n/-k", "");
  if (size > 65536)
    return bad_usage("--size of a factorization is at most 65536", "");
  a->m = a->n = a->k = size ? size : 4096;
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
  return 0;
}

int bench_parse_args(int argc, char **argv, bench_args_t *a) {
  static const char *const with_value[] = {
      "--platform", "--algo",      "--json",   "--plot",
      "--models",   "--precision", "--eps",    "--size",
      "--max-iter", "-m",          "-n",       "-k",
      "--op",       "--block",     "--rounds", NULL};
  int64_t size = 0;
  const char *algo = "mlsba";
  /* The precision left unset until every option is read: a
   * factorization's default is double, the precision users factorize in,
   * the product's single. */
  const mlsba_precision_t unset = (mlsba_precision_t)-1;
  *a = (bench_args_t){
      .platform = "auto", .eps = 0.05, .max_iter = 20, .precision = unset};
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i];
    if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
      paths_print_help(stdout, mlsba_bench_help);
      return BENCH_ARGS_DONE;
    }
    if (!strcmp(o, "--version")) {
      printf("%s (libmlsba) %s\n", bench_prog, mlsba_version_string());
      return BENCH_ARGS_DONE;
    }
    int *flag = flag_of(o, a);
    if (flag) {
      *flag = 1;
      continue;
    }
    const char *const *known = with_value;
    while (*known && strcmp(*known, o) != 0)
      known++;
    if (*known == NULL)
      return bad_usage(
          strncmp(o, "-", 1) ? "unexpected argument " : "unknown option ", o);
    if (i + 1 >= argc)
      return bad_usage("a value is missing after ", o);
    int status = take_value(o, argv[++i], a, &algo, &size);
    if (status)
      return status;
  }
  a->algo_name = algo;
  if (a->precision == unset)
    a->precision = a->op != BENCH_OP_GEMM ? MLSBA_PRECISION_DOUBLE
                                          : MLSBA_PRECISION_SINGLE;
  if (a->op != BENCH_OP_GEMM)
    return check_factor_args(a, size, algo);
  if (a->block)
    return bad_usage("--block goes with --op getrf or potrf", "");
  if (a->rounds)
    return bad_usage("--rounds goes with --op getrf or potrf", "");
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
