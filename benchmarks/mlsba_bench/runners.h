/* What mlsba-bench runs: the self-adaptive routine with one algorithm, a
 * device alone with the whole product, BLIS on all cores, and the steady
 * rounds that compare them. Each fills one row of the report. */
#ifndef MLSBA_BENCH_RUNNERS_H
#define MLSBA_BENCH_RUNNERS_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "mlsba.h"

typedef struct {
  char name[96];
  int iterations, converged;
  int verified; /* 1, 0 (WRONG), or -1 unknown (simulated) */
  int stop;     /* mlsba_stop_reason_t of the routine, or -1 (no routine) */
  double makespan, imbalance, rel_error;
  /* Median of rounds of runs of what the row chose, interleaved with the
   * other rows (bench_measure_steady): what a user gets from it,
   * measured like the rows it is compared with. */
  double steady;
  /* The fastest and slowest of those rounds: the row's spread. Two rows
   * whose ranges overlap cannot be ranked by this run. */
  double steady_min, steady_max;
  /* The routine's result (an algorithm's row), owned by the row; zeroed
   * for the other rows. */
  mlsba_balance_result_t res;
  /* A device alone: its own arrays (p values). */
  int64_t *own_load;
  double *own_time;
  /* The final loads and times (p values): res's, own_*, or NULL (BLIS,
   * which runs no distribution). */
  const int64_t *load;
  const double *time;
  /* A multithreaded BLAS on the whole product (load NULL): which, and its
   * kernels ("BLIS 0.9.0, skx kernels (BLIS detected: generic)"). */
  int blas; /* BENCH_BLAS_* */
  char kernels[256];
} bench_row_t;

enum { BENCH_BLAS_NONE = 0, BENCH_BLAS_BLIS, BENCH_BLAS_OPENBLAS };

typedef struct {
  const bench_args_t *a;
  mlsba_platform_t *pl;
  mlsba_executor_t *ex;
  mlsba_gemm_t g;       /* what runs: m = k = 1 on a simulated platform */
  const char *platform; /* the platform file or name, as reported */
  size_t p, q;
  int sim;
  double flop;        /* of the product as asked */
  int progress;       /* 0: none, 1: a line per run, 2: one line in place */
  const char *models; /* directory of saved models, or NULL */
  /* The best single-thread GEMM of this machine on this product's shape
   * (bench_measure_peak; 0 when not measured), what reached it, the
   * columns it ran and the rounds it is the best of. */
  double peak_gflops;
  char peak_by[256];
  int64_t peak_columns;
  int peak_rounds;
  mlsba_cpu_kernels_t kernels; /* what the cores run */
} bench_t;

/* Each returns 0, a negative MLSBA_E* code, or (device alone, BLIS) 1
 * when the row does not apply (the device cannot hold the product; no
 * cores; simulated devices). */
int bench_run_algorithm(bench_t *B, mlsba_algorithm_t algo, int use_models,
                        bench_row_t *r);
int bench_run_device_alone(bench_t *B, size_t dev, bench_row_t *r);
int bench_run_blis(bench_t *B, bench_row_t *r);
/* OpenBLAS on all cores (1 when OpenBLAS is not there; *why says so). */
int bench_run_openblas(bench_t *B, bench_row_t *r, const char **why);
/* The best single-thread GEMM on the columns a core ran in the rows (its
 * largest load; n / cores before any): the cores' kernels and OpenBLAS on
 * one thread each, interleaved rounds, the best round of each, so that it
 * is a peak; a core device that ran faster in a row's final run raises
 * it, and peak_by says so. Sets peak_*. Nothing on a sim platform. */
int bench_measure_peak(bench_t *B, const bench_row_t *rows, size_t n,
                       int rounds);
/* Runs every row's choice again, `rounds` times interleaved; sets steady. */
int bench_measure_steady(bench_t *B, bench_row_t *rows, size_t n, int rounds);
void bench_row_free(bench_row_t *r);

#endif
