/* mlsba-bench's pictures, drawn by gnuplot (PNG and SVG). */
#ifndef MLSBA_BENCH_PLOT_H
#define MLSBA_BENCH_PLOT_H

#include <stddef.h>
#include <stdint.h>

#include "mlsba.h"

/* Writes into dir (created if missing):
 *  speed.png/.svg     every device's speed function (the model the routine
 *                     built, with its measured points) and the line of the
 *                     final distribution, slope 1 / makespan (the paper's
 *                     Fig. 3);
 *  timeline.png/.svg  every device's time in the first and the last run
 *                     (the paper's Fig. 4);
 * and the data and gnuplot script behind them. hist_load and hist_time
 * hold `runs` rows of p values. Returns 0 or -1 with a message on stderr
 * naming what failed. */
int bench_plot(const char *dir, const mlsba_platform_t *pl,
               const mlsba_model_t *const *models, const int64_t *hist_load,
               const double *hist_time, size_t runs, double makespan);

#endif
