/* mlsba-bench --op getrf|potrf|geqrf. Rows: the per-step FPM split ("mlsba"),
 * seed 003's constant ratio of peaks, seed 004's fixed slice; with
 * --compare also the cores alone, each accelerator alone (so that PPE is
 * hybrid / (cores alone + accelerators alone), as seed 003 defines it)
 * and, on real devices, the system LAPACK's own routine on all cores.
 * Real rows run in interleaved rounds and report the median. */
#include "factor.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../plot.h"
#include "common/cli.h"
#include "common/output.h"
#include "common/text.h"
#include "openblas.h"
#include "report.h"

enum { ROUNDS_REAL = 3, MAX_SHOWN_STEPS = 16 };

typedef struct {
  char name[96];     /* "mlsba", "constant-ratio", "device:gpu0", ... */
  char kernels[160]; /* the OpenBLAS row: its version and kernels */
  int lapack;        /* 1: the system LAPACK, not libmlsba */
  mlsba_factor_split_t split;
  mlsba_factor_ways_t ways;
  unsigned char *use; /* NULL: every device */
  double seconds[BENCH_MAX_ROUNDS];
  int rounds;
  double median, gflops, residual, ppe;
  double fastest, slowest; /* of its rounds: its spread */
  int verified;            /* -1: not checked (virtual time) */
  int64_t info;
  mlsba_factor_report_t rep; /* of the last round (libmlsba rows) */
  /* Per round of a libmlsba row on real devices, from its report: how
   * the call began (its devices warm from saved models, or cold,
   * learning theirs inside it) and the seconds of the round outside the
   * steps (the round less the report's seconds), of which the models read
   * and saved, and the kernel choice where it ran inside the call. */
  unsigned warm[BENCH_MAX_ROUNDS], cold[BENCH_MAX_ROUNDS];
  double outside_s[BENCH_MAX_ROUNDS], models_s[BENCH_MAX_ROUNDS];
  double read_s[BENCH_MAX_ROUNDS], save_s[BENCH_MAX_ROUNDS];
  double kernels_s[BENCH_MAX_ROUNDS];
} frow_t;

typedef struct {
  const bench_args_t *a;
  const mlsba_platform_t *pl;
  mlsba_executor_t *ex;
  int sim;
  const char *models;
  size_t p;
  int64_t m, n;    /* the matrix's rows and columns (m = n but QR's) */
  void *a0, *work; /* the matrix, and the copy each run factorizes */
  void *tau;       /* QR's scalars */
  size_t bytes;
  int64_t *ipiv;
  int *lipiv;
  int cores; /* the platform has CPU cores (real ones) */
} fbench_t;

static const char *op_name(const bench_args_t *a) {
  return a->op == BENCH_OP_GETRF   ? "getrf"
         : a->op == BENCH_OP_POTRF ? "potrf"
                                   : "geqrf";
}

/* A matrix LU factorizes without trouble, or a symmetric positive
 * definite one (n on the diagonal) for Cholesky. */
static void fill(fbench_t *F) {
  unsigned s = 12345;
  int dbl = F->a->precision == MLSBA_PRECISION_DOUBLE;
  for (int64_t j = 0; j < F->n; j++)
    for (int64_t i = 0; i < F->m; i++) {
      s = s * 1103515245u + 12345u;
      double v = ((s >> 8) & 0xFFFF) / 32768.0 - 1.0;
      if (F->a->op == BENCH_OP_POTRF && i < j)
        v = dbl ? ((double *)F->a0)[j + i * F->n]
                : ((float *)F->a0)[j + i * F->n];
      if (F->a->op == BENCH_OP_POTRF && i == j)
        v = (double)F->n;
      if (dbl)
        ((double *)F->a0)[i + j * F->m] = v;
      else
        ((float *)F->a0)[i + j * F->m] = (float)v;
    }
}

/* On a simulated platform the cores are the first device of each group
 * (the drivers and the lone cores), the accelerators the others; on real
 * ones the CPU devices are the cores. */
static int is_core(const fbench_t *F, size_t i) {
  if (!F->sim)
    return mlsba_platform_device_type(F->pl, i) == MLSBA_DEVICE_CPU;
  for (size_t g = 0; g < mlsba_platform_num_groups(F->pl); g++)
    if (mlsba_platform_group_device(F->pl, g, 0) == i)
      return 1;
  return 0;
}

/* An accelerator of its own: on a simulated platform every device that
 * is not a core; on a real one an OpenCL device that does not compute
 * on the cores (a GPU, not pocl beside them, which takes no units by
 * default). */
static int own_accelerator(const fbench_t *F, size_t i) {
  if (is_core(F, i))
    return 0;
  return F->sim || mlsba_executor_device_shares_cores(F->ex, i) == 0;
}

static int add_row(frow_t *rows, size_t *used, const char *name,
                   mlsba_factor_split_t split, unsigned char *use) {
  frow_t *r = &rows[(*used)++];
  memset(r, 0, sizeof *r);
  snprintf(r->name, sizeof r->name, "%s", name);
  r->split = split;
  /* The seeds' baselines place their tasks statically (seed 003's panel
   * on the CPU, seed 004's tasks where their output lives); "+ways": the
   * same split with the per-step choices the models make for mlsba. */
  r->ways = split != MLSBA_FACTOR_SPLIT_FPM && !strstr(name, "+ways")
                ? MLSBA_FACTOR_WAYS_STATIC
                : MLSBA_FACTOR_WAYS_AUTO;
  r->use = use;
  r->ppe = NAN;
  r->verified = -1;
  return 0;
}

static size_t plan_rows(fbench_t *F, frow_t *rows) {
  const bench_args_t *a = F->a;
  size_t used = 0;
  if (!a->compare) {
    const char *n = a->algo_name;
    mlsba_factor_split_t s =
        !strncmp(n, "constant-ratio", 14) ? MLSBA_FACTOR_SPLIT_CONSTANT_RATIO
        : !strncmp(n, "fixed-slice", 11)  ? MLSBA_FACTOR_SPLIT_FIXED_SLICE
        : !strncmp(n, "kernel-slice", 12) ? MLSBA_FACTOR_SPLIT_KERNEL_SLICE
                                          : MLSBA_FACTOR_SPLIT_FPM;
    add_row(rows, &used, s == MLSBA_FACTOR_SPLIT_FPM ? "mlsba" : a->algo_name,
            s, NULL);
    return used;
  }
  add_row(rows, &used, "mlsba", MLSBA_FACTOR_SPLIT_FPM, NULL);
  add_row(rows, &used, "constant-ratio", MLSBA_FACTOR_SPLIT_CONSTANT_RATIO,
          NULL);
  add_row(rows, &used, "fixed-slice", MLSBA_FACTOR_SPLIT_FIXED_SLICE, NULL);
  /* On real cores alone every slice is the same: the faithful seed-004
   * row is for the simulated platforms' accelerators. */
  if (F->sim)
    add_row(rows, &used, "kernel-slice", MLSBA_FACTOR_SPLIT_KERNEL_SLICE, NULL);
  /* On real devices every step runs one way: the rows would repeat. */
  if (F->sim) {
    add_row(rows, &used, "constant-ratio+ways",
            MLSBA_FACTOR_SPLIT_CONSTANT_RATIO, NULL);
    add_row(rows, &used, "fixed-slice+ways", MLSBA_FACTOR_SPLIT_FIXED_SLICE,
            NULL);
    add_row(rows, &used, "kernel-slice+ways", MLSBA_FACTOR_SPLIT_KERNEL_SLICE,
            NULL);
  }
  unsigned char *cores = calloc(F->p, 1);
  size_t ncores = 0, naccel = 0;
  for (size_t i = 0; cores && i < F->p; i++) {
    cores[i] = (unsigned char)is_core(F, i);
    ncores += cores[i];
    naccel += (size_t)own_accelerator(F, i);
  }
  if (naccel > 0 && ncores > 0)
    add_row(rows, &used, "cores-only", MLSBA_FACTOR_SPLIT_FPM, cores);
  else
    free(cores);
  for (size_t i = 0; i < F->p; i++) {
    if (!own_accelerator(F, i))
      continue;
    unsigned char *one = calloc(F->p, 1);
    if (one == NULL)
      break;
    one[i] = 1;
    char name[96];
    snprintf(name, sizeof name, "device:%s",
             mlsba_platform_device_name(F->pl, i));
    add_row(rows, &used, name, MLSBA_FACTOR_SPLIT_FPM, one);
  }
  const char *why = NULL;
  if (!F->sim && openblas_load(&why) == 0) {
    add_row(rows, &used, "openblas", MLSBA_FACTOR_SPLIT_FPM, NULL);
    rows[used - 1].lapack = 1;
    snprintf(rows[used - 1].kernels, sizeof rows[used - 1].kernels, "%s",
             openblas_label());
  } else if (!F->sim) {
    printf("no OpenBLAS row: %s\n", why);
  }
  return used;
}

/* The monotonic clock in seconds: both kinds of row time their whole
 * call by it. */
static double monotonic_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* OpenBLAS's own routine on every core (threads = the platform's
 * cores), as a user would call it instead. */
static int run_openblas(fbench_t *F, frow_t *r, double *seconds) {
  int n = (int)F->n;
  unsigned cores = 0;
  for (size_t i = 0; i < F->p; i++)
    cores += mlsba_platform_device_type(F->pl, i) == MLSBA_DEVICE_CPU;
  double t0 = monotonic_s();
  r->info = F->a->op == BENCH_OP_GETRF
                ? openblas_getrf(F->a->precision, n, F->work, F->lipiv, cores)
            : F->a->op == BENCH_OP_POTRF
                ? openblas_potrf(F->a->precision, n, F->work, cores)
                : openblas_geqrf(F->a->precision, (int)F->m, n, F->work, F->tau,
                                 cores);
  *seconds = monotonic_s() - t0;
  for (int64_t i = 0; i < F->n && F->a->op == BENCH_OP_GETRF; i++)
    F->ipiv[i] = F->lipiv[i];
  return 0;
}

/* The block the rows run with: --block, or the library's default. */
static int64_t block_of(const fbench_t *F) {
  if (F->a->block)
    return F->a->block;
  return F->a->op == BENCH_OP_GEQRF
             ? mlsba_geqrf_default_block(F->a->precision, F->m, F->n)
             : mlsba_factor_default_block(F->a->precision, F->m, F->n);
}

/* One round of one row into r (the report of libmlsba rows kept). */
static int run_once(fbench_t *F, frow_t *r) {
  memcpy(F->work, F->a0, F->bytes);
  double seconds = 0;
  if (r->lapack) {
    run_openblas(F, r, &seconds);
  } else {
    mlsba_factor_opts_t o;
    mlsba_factor_opts_init(&o);
    if (F->a->block)
      o.block = F->a->block;
    o.split = r->split;
    o.ways = r->ways;
    o.use = r->use;
    o.model_dir = F->sim ? NULL : F->models;
    o.model_cache = 0; /* --models none keeps none */
    o.compute = !F->sim;
    mlsba_factor_report_free(&r->rep);
    /* On real devices a round is the whole call's wall time, as the
     * OpenBLAS row's is: the models loaded and saved, the context made,
     * not only the steps the report times. */
    double t0 = monotonic_s();
    int err = F->a->op == BENCH_OP_GETRF
                  ? mlsba_getrf_ex(F->ex, F->a->precision, F->n, F->n, F->work,
                                   F->n, F->ipiv, &r->info, &o, &r->rep)
              : F->a->op == BENCH_OP_POTRF
                  ? mlsba_potrf_ex(F->ex, F->a->precision, 'L', F->n, F->work,
                                   F->n, &r->info, &o, &r->rep)
                  : mlsba_geqrf_ex(F->ex, F->a->precision, F->m, F->n, F->work,
                                   F->m, F->tau, &r->info, &o, &r->rep);
    if (err) {
      fprintf(stderr, "%s: %s: %s\n", bench_prog, r->name, mlsba_last_error());
      return err;
    }
    seconds = F->sim ? r->rep.seconds : monotonic_s() - t0;
    if (!F->sim) {
      const mlsba_factor_report_t *R = &r->rep;
      int k = r->rounds;
      r->warm[k] = R->models_warm;
      r->cold[k] = R->models_cold;
      r->outside_s[k] = seconds > R->seconds ? seconds - R->seconds : 0;
      r->read_s[k] = R->models_read_s;
      r->save_s[k] = R->models_save_s;
      r->models_s[k] = R->models_read_s + R->models_save_s;
      r->kernels_s[k] = R->kernels_s;
    }
  }
  r->seconds[r->rounds++] = seconds;
  return 0;
}

/* The scaled residual of the last round. */
static void verify(fbench_t *F, frow_t *r) {
  if (F->sim)
    return;
  double orth = 0;
  int err =
      F->a->op == BENCH_OP_GETRF
          ? mlsba_getrf_residual(F->a->precision, F->n, F->n, F->a0, F->n,
                                 F->work, F->n, F->ipiv, &r->residual)
      : F->a->op == BENCH_OP_POTRF
          ? mlsba_potrf_residual(F->a->precision, 'L', F->n, F->a0, F->n,
                                 F->work, F->n, &r->residual)
          : mlsba_geqrf_residual(F->a->precision, F->m, F->n, F->a0, F->m,
                                 F->work, F->m, F->tau, &r->residual, &orth);
  /* QR: the larger of ||A - QR|| and ||I - Q^T Q||, both scaled. */
  r->residual = orth > r->residual ? orth : r->residual;
  r->verified = !err && r->info == 0 && r->residual < MLSBA_FACTOR_RESIDUAL_OK;
}

static int by_value(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

static void summarise(fbench_t *F, frow_t *rows, size_t used) {
  for (size_t i = 0; i < used; i++) {
    frow_t *r = &rows[i];
    double s[BENCH_MAX_ROUNDS];
    memcpy(s, r->seconds, sizeof s);
    qsort(s, (size_t)r->rounds, sizeof *s, by_value);
    r->median = s[r->rounds / 2];
    r->fastest = s[0];
    r->slowest = s[r->rounds - 1];
    double m = (double)F->m, n = (double)F->n;
    double flops = F->a->op == BENCH_OP_GETRF   ? 2.0 / 3.0 * n * n * n
                   : F->a->op == BENCH_OP_POTRF ? n * n * n / 3.0
                   : m >= n ? 2 * m * n * n - 2.0 / 3.0 * n * n * n
                            : 2 * n * m * m - 2.0 / 3.0 * m * m * m;
    r->gflops = r->median > 0 ? flops / r->median / 1e9 : 0;
  }
  /* PPE (seed 003): hybrid / (cores alone + each accelerator alone). */
  double alone = 0;
  int have = 0;
  for (size_t i = 0; i < used; i++)
    if (!strcmp(rows[i].name, "cores-only") ||
        !strncmp(rows[i].name, "device:", 7)) {
      alone += rows[i].gflops;
      have = 1;
    }
  for (size_t i = 0; have && alone > 0 && i < used; i++)
    if (!rows[i].use && !rows[i].lapack) /* the hybrid rows */
      rows[i].ppe = rows[i].gflops / alone;
}

static int run_rows(fbench_t *F, frow_t *rows, size_t used) {
  int rounds = F->sim ? 1 : F->a->rounds ? (int)F->a->rounds : ROUNDS_REAL;
  /* Interleaved: round k of every row before round k + 1 of any, so that
   * a machine whose speed drifts weighs on all rows alike. */
  for (int k = 0; k < rounds; k++)
    for (size_t i = 0; i < used; i++) {
      int err = run_once(F, &rows[i]);
      if (err)
        return err;
      /* OpenBLAS's threads spin (sched_yield) after its call for 2^28
       * cycles of the time-stamp counter, 128 ms at this machine's 2.1
       * GHz: the row after it shared the cores with them (mlsba_sgetrf at
       * n = 2048 here: 0.80 of OpenBLAS right after it, 0.90 as the next
       * rows). A program calls one library or the other. */
      if (rows[i].lapack && !F->sim)
        nanosleep(&(struct timespec){.tv_nsec = 200000000}, NULL);
      if (k == rounds - 1)
        verify(F, &rows[i]);
    }
  return 0;
}

/* ---- what is shown ------------------------------------------------------ */

/* The fastest row by median; whether row i's rounds overlap it (for the
 * fastest itself, whether any other row's do): a ranking within the
 * noise. */
static size_t best_row(const frow_t *rows, size_t used) {
  size_t b = 0;
  for (size_t i = 1; i < used; i++)
    b = rows[i].gflops > rows[b].gflops ? i : b;
  return b;
}

static int within_noise_of_best(const frow_t *rows, size_t used, size_t i) {
  size_t b = best_row(rows, used);
  for (size_t j = 0; j < used; j++)
    if (j != i && (i == b || j == b) && rows[i].rounds > 1 &&
        rows[j].rounds > 1 && rows[i].fastest <= rows[j].slowest &&
        rows[j].fastest <= rows[i].slowest)
      return 1;
  return 0;
}

static void print_rows(const fbench_t *F, const frow_t *rows, size_t used) {
  double best = used ? rows[best_row(rows, used)].gflops : 0;
  int ties = 0;
  printf("%-22s %10s %9s %6s %8s %9s %6s\n", "row",
         F->sim ? "virtual s" : "time (s)", "GFLOPS", "spread", "vs best",
         "residual", "PPE");
  for (size_t i = 0; i < used; i++) {
    const frow_t *r = &rows[i];
    char res[32] = "-", ppe[32] = "-", spread[16] = "-";
    if (r->verified >= 0)
      snprintf(res, sizeof res, "%.3g%s", r->residual, r->verified ? "" : "!");
    if (!isnan(r->ppe))
      snprintf(ppe, sizeof ppe, "%.3f", r->ppe);
    if (r->rounds > 1 && r->median > 0)
      snprintf(spread, sizeof spread, "%.0f%%",
               100.0 * (r->slowest - r->fastest) / r->median);
    int tie = within_noise_of_best(rows, used, i);
    ties |= tie;
    printf("%-22.22s %10.4f %9.2f %6s %7.3f%c %9s %6s\n", r->name, r->median,
           r->gflops, spread, best > 0 ? r->gflops / best : 0, tie ? '~' : ' ',
           res, ppe);
  }
  for (size_t i = 0; i < used; i++)
    if (rows[i].lapack) {
      printf("%s: its own %s, %s, all cores\n", rows[i].name, op_name(F->a),
             rows[i].kernels);
      if (*openblas_weak())
        printf("%s: kernels weaker than this CPU runs (see above)\n",
               rows[i].name);
    }
  if (!F->sim)
    printf("time: the median of %d interleaved rounds; spread: (slowest - "
           "fastest) / median\n",
           rows[0].rounds);
  if (ties)
    printf("~: the rounds of this row and of the fastest overlap: this run "
           "cannot rank them\n");
}

/* "a, b, c" of a row's rounds, with `decimals` decimals. */
static void list_rounds(char *buf, size_t size, const frow_t *r,
                        const double *v, int decimals) {
  size_t len = 0;
  buf[0] = '\0';
  for (int k = 0; k < r->rounds && len < size; k++) {
    int w = snprintf(buf + len, size - len, "%s", k ? ", " : "");
    len += w > 0 ? (size_t)w : 0;
    if (len < size) {
      w = snprintf(buf + len, size - len, "%.*f", decimals, v[k]);
      len += w > 0 ? (size_t)w : 0;
    }
  }
}

/* Per libmlsba row, how each round's call began and what it spent outside
 * its steps: what a cold first call costs beside a warm one. */
static void print_calls(const fbench_t *F, const frow_t *rows, size_t used) {
  if (F->sim)
    return;
  for (size_t i = 0; i < used; i++) {
    const frow_t *r = &rows[i];
    if (r->lapack)
      continue;
    /* Room for every round (at most 99): "partly cold, " each. */
    char starts[1400], devs[500], outside[1000], models[1000], text[4096];
    double cold[BENCH_MAX_ROUNDS];
    size_t len = 0;
    starts[0] = '\0';
    for (int k = 0; k < r->rounds && len < sizeof starts; k++) {
      int w = snprintf(starts + len, sizeof starts - len, "%s%s", k ? ", " : "",
                       !r->cold[k]  ? "warm"
                       : r->warm[k] ? "partly cold"
                                    : "cold");
      len += w > 0 ? (size_t)w : 0;
      cold[k] = (double)r->cold[k];
    }
    list_rounds(devs, sizeof devs, r, cold, 0);
    list_rounds(outside, sizeof outside, r, r->outside_s, 4);
    list_rounds(models, sizeof models, r, r->models_s, 4);
    int w = snprintf(text, sizeof text,
                     "rounds %s (devices learning their models inside the "
                     "call: %s of %u); outside the steps %s s, of which the "
                     "models read and saved %s s",
                     starts, devs, r->warm[0] + r->cold[0], outside, models);
    for (int k = 0; k < r->rounds && w > 0 && (size_t)w < sizeof text; k++)
      if (r->kernels_s[k] > 0) {
        snprintf(text + w, sizeof text - (size_t)w,
                 "; the cores' kernel choice ran inside round %d: %.3f s of "
                 "it",
                 k + 1, r->kernels_s[k]);
        break;
      }
    char lead[128];
    snprintf(lead, sizeof lead, "%s: ", r->name);
    text_wrap(stdout, lead, 4, text);
  }
}

/* Per-step shares of a row, in percent of the step's units, sampled to at
 * most MAX_SHOWN_STEPS lines. */
static void print_steps(const fbench_t *F, const frow_t *r) {
  const mlsba_factor_report_t *R = &r->rep;
  if (R->steps < 2)
    return;
  printf("\nper-step shares of %s (percent of the step's units; "
         "%s):\n%6s %7s",
         r->name, R->virtual_time ? "virtual time" : "last round", "step",
         "units");
  /* Eight columns fit 80; with more devices the cores are summed in one
   * column, beside the first six accelerators, so that theirs stay in
   * sight. */
  size_t col[8], shown = 0;
  int fold = F->p > 8;
  for (size_t i = 0; i < F->p && shown < 8; i++)
    if (!fold || (!is_core(F, i) && shown < 6))
      col[shown++] = i;
  if (fold)
    printf(" %6s", "cores");
  for (size_t c = 0; c < shown; c++)
    printf(" %6.6s", mlsba_platform_device_name(F->pl, col[c]));
  printf(" %9s %6s\n", "time", "ahead");
  size_t every = (R->steps - 1 + MAX_SHOWN_STEPS - 1) / MAX_SHOWN_STEPS;
  for (size_t k = 1; k < R->steps; k++) {
    if ((k - 1) % every != 0 && k != R->steps - 1)
      continue;
    printf("%6zu %7lld", k, (long long)R->units[k]);
    double all = R->units[k] ? 100.0 / (double)R->units[k] : 0.0;
    if (fold) {
      int64_t cores = 0;
      for (size_t i = 0; i < F->p; i++)
        cores += is_core(F, i) ? R->share[k * R->p + i] : 0;
      printf(" %6.1f", all * (double)cores);
    }
    for (size_t c = 0; c < shown; c++)
      printf(" %6.1f", all * (double)R->share[k * R->p + col[c]]);
    long ahead = R->ahead_device ? R->ahead_device[k] : -1;
    printf(" %9.4g %6.6s\n", R->step_seconds[k],
           ahead >= 0 ? mlsba_platform_device_name(F->pl, (size_t)ahead) : "-");
  }
}

static json_t *row_json(const fbench_t *F, const frow_t *r) {
  const bench_args_t *a = F->a;
  json_t *o =
      json_pack("{s:s, s:s, s:s, s:I, s:I, s:s, s:f, s:f}", "op", op_name(a),
                "algorithm", r->name, "platform", mlsba_platform_name(F->pl),
                "n", (json_int_t)F->n, "block", (json_int_t)block_of(F),
                "precision", a->precision ? "double" : "single", "makespan_s",
                r->median, "gflops", r->gflops);
  json_object_set_new(o, "m", json_integer((json_int_t)F->m));
  json_object_set_new(
      o, "verified", r->verified < 0 ? json_null() : json_boolean(r->verified));
  /* JSON holds no NaN or Inf: a residual that is not finite is null, with
   * verified false. */
  json_object_set_new(o, "residual",
                      r->verified < 0 || !isfinite(r->residual)
                          ? json_null()
                          : json_real(r->residual));
  json_object_set_new(o, "info", json_integer((json_int_t)r->info));
  if (!isnan(r->ppe))
    json_object_set_new(o, "ppe", json_real(r->ppe));
  json_t *rounds = json_array();
  for (int k = 0; k < r->rounds; k++)
    json_array_append_new(rounds, json_real(r->seconds[k]));
  json_object_set_new(o, "rounds_s", rounds);
  json_object_set_new(o, "fastest_s", json_real(r->fastest));
  json_object_set_new(o, "slowest_s", json_real(r->slowest));
  if (r->lapack) {
    json_object_set_new(o, "kernels", json_string(r->kernels));
    /* The kernels it runs against the best of the CPU's ISA: a peer on
     * weaker ones is not the best a user could run. */
    json_object_set_new(o, "core_type", json_string(openblas_corename()));
    json_object_set_new(o, "best_core_type", json_string(openblas_best_core()));
    json_object_set_new(o, "weak_kernels", json_boolean(*openblas_weak()));
    return o;
  }
  const mlsba_factor_report_t *R = &r->rep;
  json_object_set_new(o, "overhead_s", json_real(R->overhead_s));
  json_object_set_new(o, "bytes_to_devices",
                      json_integer((json_int_t)R->bytes_to_devices));
  json_object_set_new(o, "bytes_from_devices",
                      json_integer((json_int_t)R->bytes_from_devices));
  json_object_set_new(o, "transfers", json_integer((json_int_t)R->transfers));
  json_object_set_new(o, "panel_device",
                      R->panel_device >= 0
                          ? json_string(mlsba_platform_device_name(
                                F->pl, (size_t)R->panel_device))
                          : json_null());
  json_t *devs = json_array(), *steps = json_array();
  for (size_t i = 0; i < R->p; i++) {
    int64_t units = 0;
    double t = 0;
    for (size_t k = 0; k < R->steps; k++) {
      units += R->share[k * R->p + i];
      t += R->time[k * R->p + i];
    }
    json_array_append_new(devs, json_pack("{s:s, s:I, s:f, s:b}", "name",
                                          mlsba_platform_device_name(F->pl, i),
                                          "units", (json_int_t)units, "time", t,
                                          "used", units > 0));
  }
  for (size_t k = 0; k < R->steps; k++) {
    json_t *sh = json_array(), *tm = json_array();
    for (size_t i = 0; i < R->p; i++) {
      json_array_append_new(sh, json_integer(R->share[k * R->p + i]));
      json_array_append_new(tm, json_real(R->time[k * R->p + i]));
    }
    long ahead = R->ahead_device ? R->ahead_device[k] : -1;
    json_t *step =
        json_pack("{s:I, s:I, s:f, s:f, s:o, s:o}", "step", (json_int_t)k,
                  "units", (json_int_t)R->units[k], "time", R->step_seconds[k],
                  "panel", R->panel_seconds[k], "shares", sh, "times", tm);
    json_object_set_new(step, "ahead",
                        ahead >= 0 ? json_string(mlsba_platform_device_name(
                                         F->pl, (size_t)ahead))
                                   : json_null());
    json_array_append_new(steps, step);
  }
  json_object_set_new(o, "devices", devs);
  json_object_set_new(o, "steps", steps);
  if (!F->sim) {
    /* Per round: how the call began and what it spent outside its steps. */
    json_t *calls = json_array();
    for (int k = 0; k < r->rounds; k++)
      json_array_append_new(
          calls,
          json_pack("{s:i, s:b, s:i, s:i, s:f, s:f, s:f, s:f, s:b}", "round",
                    k + 1, "cold", r->cold[k] > 0, "models_warm",
                    (int)r->warm[k], "models_cold", (int)r->cold[k],
                    "outside_s", r->outside_s[k], "models_read_s", r->read_s[k],
                    "models_save_s", r->save_s[k], "kernels_s", r->kernels_s[k],
                    "kernel_choice_inside", r->kernels_s[k] > 0));
    json_object_set_new(o, "calls", calls);
  }
  return o;
}

static int write_json(const fbench_t *F, const frow_t *rows, size_t used) {
  const char *path = F->a->json;
  json_t *doc;
  if (F->a->compare) {
    json_t *all = json_array();
    for (size_t i = 0; i < used; i++) {
      json_t *o = row_json(F, &rows[i]);
      json_object_set_new(o, "within_noise_of_best",
                          json_boolean(within_noise_of_best(rows, used, i)));
      json_array_append_new(all, o);
    }
    doc = json_pack("{s:o}", "results", all);
  } else {
    doc = row_json(F, &rows[0]);
  }
  /* What the cores run and what their choice cost this process, as the
   * product's report has it (real platforms). */
  if (!F->sim) {
    mlsba_cpu_kernels_t k;
    mlsba_cpu_kernels(&k);
    json_t *kj = bench_kernels_json(&k);
    json_object_set_new(kj, "before_first_call", json_boolean(F->cores));
    json_object_set_new(doc, "cpu_kernels", kj);
  }
  int status =
      output_json(bench_prog, "--json", path, doc, JSON_REAL_PRECISION(9));
  json_decref(doc);
  return status;
}

static int plot(const fbench_t *F, const frow_t *rows, size_t used) {
  const frow_t *shown[3];
  size_t n = 0;
  for (size_t i = 0; i < used && n < 3; i++)
    if (!rows[i].lapack && rows[i].rep.steps > 1 && rows[i].use == NULL)
      shown[n++] = &rows[i];
  bench_shares_plot_t P = {.pl = F->pl, .rows = n};
  for (size_t i = 0; i < n; i++) {
    P.name[i] = shown[i]->name;
    P.report[i] = &shown[i]->rep;
  }
  return bench_plot_shares(F->a->plot, &P) ? 1 : 0;
}

/* "n = 4096", or "m x n = 20000 x 500" for a QR that is not square. */
static const char *size_text(const fbench_t *F) {
  static char text[64];
  if (F->m == F->n)
    snprintf(text, sizeof text, "n = %lld", (long long)F->n);
  else
    snprintf(text, sizeof text, "m x n = %lld x %lld", (long long)F->m,
             (long long)F->n);
  return text;
}

/* ---- the run ------------------------------------------------------------ */

static int open_bench(fbench_t *F, const bench_args_t *a,
                      const mlsba_platform_t *pl, int sim, const char *models) {
  memset(F, 0, sizeof *F);
  F->a = a;
  F->pl = pl;
  F->sim = sim;
  F->models = models;
  F->p = mlsba_platform_num_devices(pl);
  /* A simulated platform computes nothing: a 1 x 1 stand-in. */
  F->m = a->m;
  F->n = a->n;
  size_t es = a->precision ? sizeof(double) : sizeof(float);
  F->bytes = (size_t)(sim ? 1 : F->m * F->n) * es;
  F->a0 = malloc(F->bytes);
  F->work = malloc(F->bytes);
  F->tau = malloc((size_t)(F->m < F->n ? F->m : F->n) * es + 1);
  F->ipiv = calloc((size_t)F->n, sizeof *F->ipiv);
  F->lipiv = calloc((size_t)F->n, sizeof *F->lipiv);
  if (!F->a0 || !F->work || !F->tau || !F->ipiv || !F->lipiv) {
    fprintf(stderr, "%s: out of memory for n = %lld\n", bench_prog,
            (long long)F->n);
    return 1;
  }
  if (!sim)
    fill(F);
  if (mlsba_executor_create(pl, &F->ex) != 0) {
    fprintf(stderr, "%s: %s\n", bench_prog, mlsba_last_error());
    return 1;
  }
  /* The executor opened its cores: their kernels are chosen now, before
   * any row runs (without cores, the first call that uses them makes the
   * choice, inside its round). */
  for (size_t i = 0; !sim && i < F->p; i++)
    F->cores |= mlsba_platform_device_type(pl, i) == MLSBA_DEVICE_CPU;
  return 0;
}

static void close_bench(fbench_t *F, frow_t *rows, size_t used) {
  for (size_t i = 0; i < used; i++) {
    mlsba_factor_report_free(&rows[i].rep);
    free(rows[i].use);
  }
  mlsba_executor_destroy(F->ex);
  free(F->a0);
  free(F->work);
  free(F->tau);
  free(F->ipiv);
  free(F->lipiv);
}

int bench_factor(const bench_args_t *a, const mlsba_platform_t *pl, int sim,
                 const char *models) {
  fbench_t F;
  frow_t *rows = calloc(12 + mlsba_platform_num_devices(pl), sizeof *rows);
  size_t used = 0;
  int status = rows ? open_bench(&F, a, pl, sim, models) : 1;
  int to_stdout = a->json && strcmp(a->json, "-") == 0;
  if (!status) {
    used = plan_rows(&F, rows);
    if (!to_stdout)
      printf("%s, %s, nb = %lld, %s, platform %s (%s)\n", op_name(a),
             size_text(&F), (long long)block_of(&F),
             a->precision ? "double" : "single", mlsba_platform_name(pl),
             sim ? "simulated: virtual time" : "wall clock");
    if (!to_stdout && F.cores) {
      mlsba_cpu_kernels_t k;
      char text[512];
      mlsba_cpu_kernels(&k);
      bench_kernels_text(&k, text, sizeof text);
      snprintf(text + strlen(text), sizeof text - strlen(text),
               " (before the rows: in none of their times)");
      text_wrap(stdout, "cores run: ", 4, text);
    }
    /* Said before the rows run: weak kernels of a system OpenBLAS can
     * also be broken ones (Prescott's faulted in its own ?potrf at 8192
     * on a 16-core Xeon that OpenBLAS 0.3.21 does not know). */
    for (size_t i = 0; i < used && !to_stdout; i++)
      if (rows[i].lapack && *openblas_weak()) {
        printf("%s: %s\n", rows[i].name, openblas_weak());
        fflush(stdout);
      }
    status = run_rows(&F, rows, used) ? 1 : 0;
  }
  if (!status) {
    summarise(&F, rows, used);
    if (!to_stdout) {
      print_rows(&F, rows, used);
      print_calls(&F, rows, used);
      print_steps(&F, &rows[0]);
    }
    if (a->json)
      status = write_json(&F, rows, used);
    if (!status && a->plot) {
      status = plot(&F, rows, used);
      if (!status && !to_stdout)
        printf("pictures in %s\n", a->plot);
    }
    for (size_t i = 0; !status && i < used; i++)
      if (rows[i].verified == 0) {
        fprintf(stderr,
                "%s: %s: the factorization is WRONG (info %lld, "
                "residual %.3g)\n",
                bench_prog, rows[i].name, (long long)rows[i].info,
                rows[i].residual);
        status = 1;
      }
  }
  if (rows)
    close_bench(&F, rows, used);
  free(rows);
  return status;
}
