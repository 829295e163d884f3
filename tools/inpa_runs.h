/* mlsba-inpa's product, balanced once and run --repeat times with one
 * multiplier of <mlsba/mpi.h>: every run's times, the whole job's wall
 * time and where it went, and their lines in the table and the JSON
 * report (tools/inpa_runs.c). */
#ifndef MLSBA_TOOLS_INPA_RUNS_H
#define MLSBA_TOOLS_INPA_RUNS_H

#include <jansson.h>

#include "mlsba/mpi.h"

typedef struct {
  int64_t repeat;
  /* The whole job: the multiplier's balancing and every run. */
  double wall_s;
  mlsba_mpi_split_t split; /* summed over the balancing and the runs */
  double *makespan, *wall; /* each run's product and whole call */
  int *rebalanced;         /* each run: it balanced again after drift */
  int verified;            /* every run verified (1), one not (0), n/a -1 */
  double max_rel_error;    /* the largest of the runs' */
  /* The last run, with the balancing in force; makespan_s and gflops are
   * the median run's. */
  mlsba_mpi_result_t last;
} inpa_runs_t;

/* Collective: a multiplier for o, then repeat runs. 0; the library's
 * error code (mlsba_mpi_last_error() says why, on every rank); or 1 when
 * a rank had no memory for the runs' records. */
int inpa_runs(MPI_Comm comm, const mlsba_mpi_multiply_opts_t *o, int64_t repeat,
              inpa_runs_t *runs);
void inpa_runs_free(inpa_runs_t *runs);
/* The table's lines about the job's time (rank 0 prints them). */
void inpa_runs_print(const inpa_runs_t *runs);
/* The report's fields about the shape, the job's time and the runs. */
void inpa_runs_json(const inpa_runs_t *runs, const mlsba_mpi_multiply_opts_t *o,
                    json_t *report);

#endif
