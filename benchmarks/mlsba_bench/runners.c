#include "runners.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/timing.h"
#include "openblas.h"
#include "report.h"

void bench_row_free(bench_row_t *r) {
  mlsba_balance_result_free(&r->res);
  free(r->own_load);
  free(r->own_time);
  memset(r, 0, sizeof *r);
}

static void verify(bench_t *B, bench_row_t *r) {
  r->verified = -1;
  if (B->sim)
    return;
  int ok = 0;
  if (mlsba_gemm_verify(&B->g, 12345, &r->rel_error, &ok) == 0)
    r->verified = ok;
}

static void on_iteration(void *ctx, const mlsba_iteration_t *it) {
  bench_progress_run(ctx, it);
}

static void on_log(void *ctx, const char *line) {
  bench_progress_log(ctx, line);
}

/* A simulated platform computes nothing: the product runs as a 1 x n x 1
 * stand-in. Its models are keyed by the shape asked for, so that they are
 * found again for that shape and never for another, and a device's link
 * moves the columns of the shape asked for. */
static int bench_load(const bench_t *B, mlsba_load_t **load) {
  int err = mlsba_load_gemm(&B->g, load);
  if (err || !B->sim)
    return err;
  char shape[128];
  snprintf(shape, sizeof shape, "precision=%s m=%lld k=%lld",
           B->a->precision ? "double" : "single", (long long)B->a->m,
           (long long)B->a->k);
  double elem = B->a->precision ? 8 : 4;
  if ((err = mlsba_load_set_shape(*load, shape)) != 0 ||
      (err = mlsba_load_set_unit_bytes(*load, (double)(B->a->m + B->a->k) *
                                                  elem)) != 0)
    mlsba_load_destroy(*load);
  return err;
}

int bench_run_algorithm(bench_t *B, mlsba_algorithm_t algo, int use_models,
                        bench_row_t *r) {
  mlsba_balance_opts_t o;
  mlsba_balance_opts_init(&o);
  o.algorithm = algo;
  o.eps = B->a->eps;
  o.max_iter = B->a->max_iter;
  o.sharing = B->a->keep_shared ? MLSBA_SHARING_KEEP : MLSBA_SHARING_CHECK;
  o.kinds = B->a->separate_kinds ? MLSBA_KINDS_SEPARATE : MLSBA_KINDS_POOL;
  o.progress = on_iteration;
  o.progress_ctx = B;
  o.log = on_log;
  o.log_ctx = B;
  o.model_dir = use_models ? B->models : NULL;
  bench_progress_start(B, mlsba_algorithm_name(algo));
  mlsba_load_t *load = NULL;
  int err = bench_load(B, &load);
  if (!err)
    err = mlsba_balance_load(B->ex, load, &o, &r->res);
  mlsba_load_destroy(load);
  bench_progress_end(B);
  if (err)
    return err;
  snprintf(r->name, sizeof r->name, "%s", mlsba_algorithm_name(algo));
  r->iterations = (int)r->res.iterations;
  r->converged = r->res.converged;
  r->stop = (int)r->res.stop;
  r->makespan = r->steady = r->res.makespan;
  r->steady_min = r->steady_max = r->steady;
  r->imbalance = r->res.imbalance;
  r->load = r->res.load;
  r->time = r->res.time;
  if (r->res.save_error)
    fprintf(stderr, "%s: warning: models not saved in '%s': %s\n", bench_prog,
            B->models, mlsba_strerror(r->res.save_error));
  verify(B, r);
  return 0;
}

/* One device with the whole product: a warm-up run, then the one shown as
 * this row's run; bench_measure_steady times it like the others. */
int bench_run_device_alone(bench_t *B, size_t dev, bench_row_t *r) {
  int64_t *max = calloc(B->p, sizeof *max);
  r->own_load = calloc(B->p, sizeof *r->own_load);
  r->own_time = calloc(B->p, sizeof *r->own_time);
  int err = max && r->own_load && r->own_time ? 0 : MLSBA_ENOMEM;
  if (!err)
    err = mlsba_executor_max_loads(B->ex, &B->g, max);
  if (!err && max[dev] < B->g.n)
    err = 1;
  mlsba_load_t *load = NULL;
  if (!err)
    err = bench_load(B, &load);
  if (!err) {
    r->own_load[dev] = B->g.n;
    /* A first run warms up (CLBlast builds its kernels). */
    for (int k = 0; k < 2 && !err; k++)
      err = mlsba_executor_run(B->ex, load, r->own_load, MLSBA_DRIVE_SHARED,
                               r->own_time, NULL);
  }
  mlsba_load_destroy(load);
  free(max);
  if (err)
    return err;
  snprintf(r->name, sizeof r->name, "device:%s",
           mlsba_platform_device_name(B->pl, dev));
  r->load = r->own_load;
  r->time = r->own_time;
  r->makespan = r->steady = r->own_time[dev];
  r->steady_min = r->steady_max = r->steady;
  r->iterations = 1;
  r->converged = 1;
  r->stop = -1;
  verify(B, r);
  return 0;
}

/* The cores of the platform; BLIS gets one thread per core. */
static unsigned platform_cores(const bench_t *B) {
  unsigned cores = 0;
  for (size_t j = 0; j < B->p; j++)
    cores += mlsba_platform_device_type(B->pl, j) == MLSBA_DEVICE_CPU;
  return cores;
}

/* One multithreaded product of the whole problem by a BLAS, in *seconds. */
static int blas_once(bench_t *B, int blas, double *seconds) {
  double t0 = timing_now();
  int err = 0;
  if (blas == BENCH_BLAS_OPENBLAS)
    openblas_gemm(&B->g, B->g.n, platform_cores(B));
  else
    err = mlsba_gemm_blis(&B->g, platform_cores(B));
  *seconds = timing_now() - t0;
  /* OpenBLAS's threads spin for a while after a call: let them sleep
   * before the next row runs, so that it is not slowed by them. */
  if (blas == BENCH_BLAS_OPENBLAS)
    nanosleep(&(struct timespec){.tv_nsec = 200000000}, NULL);
  return err;
}

/* A BLAS's row: warmed up, as a device alone is, then run once. */
static int blas_row(bench_t *B, int blas, bench_row_t *r) {
  double t;
  int err = blas_once(B, blas, &t);
  if (!err)
    err = blas_once(B, blas, &t);
  if (err)
    return err;
  unsigned cores = platform_cores(B);
  snprintf(r->name, sizeof r->name, "%s-all-cores",
           blas == BENCH_BLAS_OPENBLAS ? "openblas" : "blis");
  snprintf(r->kernels, sizeof r->kernels, "%.220s, %u thread%s",
           blas == BENCH_BLAS_OPENBLAS ? openblas_label()
                                       : B->kernels.description,
           cores, cores == 1 ? "" : "s");
  r->blas = blas;
  r->makespan = r->steady = r->steady_min = r->steady_max = t;
  r->iterations = 1;
  r->converged = 1;
  r->stop = -1;
  verify(B, r);
  return 0;
}

/* What a user would run instead: BLIS with one thread per core of the
 * platform, on the whole product (unpinned, BLIS's own threading), with
 * the kernels libmlsba chose. */
int bench_run_blis(bench_t *B, bench_row_t *r) {
  if (platform_cores(B) == 0 || B->sim)
    return 1;
  return blas_row(B, BENCH_BLAS_BLIS, r);
}

int bench_run_openblas(bench_t *B, bench_row_t *r, const char **why) {
  *why = "";
  if (platform_cores(B) == 0 || B->sim || openblas_load(why) != 0)
    return 1;
  return blas_row(B, BENCH_BLAS_OPENBLAS, r);
}

/* Seconds of one single-thread product of the first ncols columns. */
static double one_thread(bench_t *B, int blas, int64_t ncols) {
  mlsba_gemm_t slice = B->g;
  slice.n = ncols;
  double t0 = timing_now();
  if (blas == BENCH_BLAS_OPENBLAS)
    openblas_gemm(&slice, ncols, 1);
  else
    (void)mlsba_gemm_blis(&slice, 1); /* checked: B->g is valid */
  return timing_now() - t0;
}

/* GFLOPS of core device j in row r's final run; 0 for other devices. */
static double core_rate(const bench_t *B, const bench_row_t *r, size_t j) {
  if (r->load == NULL || r->time == NULL || r->load[j] <= 0 ||
      r->time[j] <= 0 ||
      mlsba_platform_device_type(B->pl, j) != MLSBA_DEVICE_CPU)
    return 0;
  return B->flop / (double)B->g.n * (double)r->load[j] / r->time[j] * 1e-9;
}

int bench_measure_peak(bench_t *B, const bench_row_t *rows, size_t n,
                       int rounds) {
  unsigned cores = platform_cores(B);
  if (B->sim || cores == 0)
    return 0;
  /* The columns a core runs: the most any core ran in a row. */
  int64_t ncols = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; rows[i].load && j < B->p; j++)
      if (mlsba_platform_device_type(B->pl, j) == MLSBA_DEVICE_CPU &&
          rows[i].load[j] > ncols)
        ncols = rows[i].load[j];
  if (ncols == 0)
    ncols = (B->g.n + cores - 1) / cores;
  const char *why;
  int n_blas = openblas_load(&why) == 0 ? 2 : 1;
  double best[2] = {0, 0};
  for (int b = 0; b < n_blas; b++) /* warm up */
    (void)one_thread(B, BENCH_BLAS_BLIS + b, ncols);
  for (int k = 0; k < rounds; k++)
    for (int b = 0; b < n_blas; b++) {
      double t = one_thread(B, BENCH_BLAS_BLIS + b, ncols);
      best[b] = k == 0 || t < best[b] ? t : best[b];
    }
  double flop = B->flop / (double)B->g.n * (double)ncols;
  B->peak_columns = ncols;
  B->peak_rounds = rounds;
  for (int b = 0; b < n_blas; b++) {
    double g = flop / best[b] * 1e-9;
    if (g > B->peak_gflops) {
      B->peak_gflops = g;
      snprintf(B->peak_by, sizeof B->peak_by, "%.170s, 1 thread",
               b ? openblas_label() : B->kernels.description);
    }
  }
  /* A core that ran faster in a row than every round here (the machine's
   * speed moves) is the peak: no core shows more than all of it. */
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < B->p; j++) {
      double g = core_rate(B, &rows[i], j);
      if (g > B->peak_gflops) {
        B->peak_gflops = g;
        snprintf(B->peak_by, sizeof B->peak_by,
                 "%.40s in the %.40s row's final run, faster than every "
                 "round timed alone",
                 mlsba_platform_device_name(B->pl, j), rows[i].name);
      }
    }
  return 0;
}

/* What each row chose, run again in rounds: every round runs every row
 * once (an algorithm's final distribution, a device alone, BLIS), so that
 * a machine whose speed drifts over minutes (a shared VM) weighs on every
 * row alike; steady is the median of the rounds. Virtual times do not
 * drift: on a sim platform steady stays the routine's last run. */
int bench_measure_steady(bench_t *B, bench_row_t *rows, size_t n, int rounds) {
  if (B->sim)
    return 0;
  double *spans = calloc(n * (size_t)rounds, sizeof *spans);
  double *time = calloc(B->p, sizeof *time);
  int err = spans && time ? 0 : MLSBA_ENOMEM;
  for (int k = 0; k < rounds && !err; k++) {
    bench_progress_round(B, k + 1, rounds);
    for (size_t i = 0; i < n && !err; i++) {
      double t = 0;
      if (rows[i].load == NULL) {
        err = blas_once(B, rows[i].blas, &t);
      } else {
        err = mlsba_executor_run_gemm(B->ex, &B->g, rows[i].load,
                                      MLSBA_DRIVE_SHARED, time);
        for (size_t j = 0; j < B->p; j++)
          t = time[j] > t ? time[j] : t;
      }
      spans[i * (size_t)rounds + (size_t)k] = t;
    }
  }
  bench_progress_end(B);
  for (size_t i = 0; i < n && !err; i++) {
    double *t = spans + i * (size_t)rounds;
    rows[i].steady_min = rows[i].steady_max = t[0];
    for (int k = 1; k < rounds; k++) {
      rows[i].steady_min =
          t[k] < rows[i].steady_min ? t[k] : rows[i].steady_min;
      rows[i].steady_max =
          t[k] > rows[i].steady_max ? t[k] : rows[i].steady_max;
    }
    rows[i].steady = timing_median(t, (size_t)rounds);
  }
  free(spans);
  free(time);
  return err;
}
