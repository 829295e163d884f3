/* What mlsba-bench shows: the progress of the routine, the table of one
 * run or of --compare, and the JSON report (docs/bench-report.md). */
#ifndef MLSBA_BENCH_REPORT_H
#define MLSBA_BENCH_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "runners.h"

/* Progress (nothing unless B->progress): a routine starts, runs, logs,
 * ends; the steady rounds go by. */
void bench_progress_start(bench_t *B, const char *what);
void bench_progress_run(bench_t *B, const mlsba_iteration_t *it);
void bench_progress_log(bench_t *B, const char *line);
void bench_progress_round(bench_t *B, int round, int rounds);
void bench_progress_end(bench_t *B);

/* The problem and the platform, before anything runs. */
void bench_print_header(const bench_t *B);
/* One algorithm's row: the table per group and device, how the routine
 * ended, the headline number. */
void bench_print_detail(const bench_t *B, const bench_row_t *r);
/* --compare: every row by its steady median. */
void bench_print_compare(const bench_t *B, const bench_row_t *rows, size_t n);
/* The cores' kernels as the `cores run:` line shows them: the
 * description, then how the choice was made in this process and what it
 * cost ("; chosen in this process: timed, 0.83 s"). */
void bench_kernels_text(const mlsba_cpu_kernels_t *k, char *buf, size_t size);
/* The report's `cpu_kernels` object (docs/bench-report.md): the kernels,
 * per class and precision, and the choice's source and cost. */
json_t *bench_kernels_json(const mlsba_cpu_kernels_t *k);
/* The report of one row, or of all rows ({"results": [...]}). */
json_t *bench_report_json(const bench_t *B, const bench_row_t *rows, size_t n);

#endif
