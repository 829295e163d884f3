/* mlsba-bench's pictures, drawn by gnuplot (PNG and SVG). */
#ifndef MLSBA_BENCH_PLOT_H
#define MLSBA_BENCH_PLOT_H

#include <stddef.h>
#include <stdint.h>

#include "mlsba.h"

/* What the pictures show: the routine's models and runs (p devices). */
typedef struct {
  const mlsba_platform_t *pl;
  const mlsba_model_t *const *models; /* p */
  const int64_t *hist_load;           /* runs x p */
  const double *hist_time;            /* runs x p */
  size_t runs;
  double makespan;              /* of the last run */
  const unsigned char *dropped; /* p values of mlsba_dropped_t, or NULL */
  const int64_t *max_load;      /* p: what each device holds, or NULL */
  int64_t n;                    /* the whole load */
} bench_plot_t;

/* Writes into dir (which exists):
 *  speed.png/.svg     every device's speed function (the model the routine
 *                     built, with its measured points) on a log scale, so
 *                     that devices a hundred times apart are both read;
 *                     its memory limit; the devices left out; and the
 *                     line of the final distribution, slope 1 / makespan
 *                     (the paper's Fig. 3);
 *  timeline.png/.svg  every device's time in the first and the last run
 *                     (the paper's Fig. 4);
 * and the data and gnuplot script behind them (plot.gp). gnuplot runs
 * without a shell, in dir, with the script on its standard input; names
 * reach it only as single-quoted strings, where nothing is special.
 * Returns 0 or -1 with a message on stderr naming what failed. */
int bench_plot(const char *dir, const bench_plot_t *P);

/* A factorization's per-step shares (mlsba-bench --op): up to three rows
 * (the per-step split and its baselines), each device's share of every
 * step's update. */
typedef struct {
  const mlsba_platform_t *pl;
  size_t rows;
  const char *name[3];
  const mlsba_factor_report_t *report[3];
} bench_shares_plot_t;

/* Writes into dir (which exists) shares.png/.svg: one panel per row, the
 * percent of each step's units every device took against the step (so
 * the end-phase shift is seen), with the step's time on a second axis;
 * and shares.dat and plot.gp behind them. 0 or -1 (message on stderr). */
int bench_plot_shares(const char *dir, const bench_shares_plot_t *P);

#endif
