/* Seed 001's master and workers (mlsba_mpi_master_worker), its modules:
 *   master_worker.c          the call: its options agreed on, the phases;
 *   master_worker_devices.c  a worker's devices, timed at a few column
 *                            counts, and what the master learns of them
 *                            and of the links;
 *   master_worker_split.c    the master's three splits of K;
 *   master_worker_run.c      the run: A, B's columns and C over the links,
 *                            the check of C, the report. */
#ifndef MLSBA_MPI_MASTER_WORKER_H
#define MLSBA_MPI_MASTER_WORKER_H

#include "internal.h"

/* Column counts each worker times its devices at: simulated devices cost
 * nothing to time, real ones a few small products. */
enum { MLSBA__MW_PROBE_SIM = 33, MLSBA__MW_PROBE_REAL = 3 };

/* What a device is to the partitioners. */
enum { MLSBA__MW_CORE = 0, MLSBA__MW_ACCELERATOR = 1, MLSBA__MW_IDLE = 2 };

typedef struct mlsba__mw {
  MPI_Comm comm;
  int rank, q, workers;
  const mlsba_mpi_master_worker_opts_t *o;
  size_t elem;
  /* A worker's devices. */
  mlsba_platform_t *pl;
  mlsba_executor_t *ex;
  size_t p;
  int simulated;
  int *kind; /* p: DEV_* */
  /* Everyone: devices per rank (0 for the master), and every worker
   * device's kind and columns, rank after rank, file order. */
  int *ndev;
  size_t total;
  int *kind_all;
  int64_t *cols;
  mlsba_link_t *links;
  /* The master: every device's probe, npts (x, t) pairs each. */
  int npts;
  double *probe;
  char *names;
} mlsba__mw_t;

/* ---- master_worker_devices.c ------------------------------------------ */

/* Collective: a worker's platform ("%r" expanded), its executor, and
 * what each device is; the master opens nothing. */
int mlsba__mw_open_worker(mlsba__mw_t *W);
/* Runs units[] (file order) on the worker's devices, each device's
 * columns at pos[] of B' and C' (scratch while probing); time[] per
 * device. */
int mlsba__mw_run_devices(mlsba__mw_t *W, const int64_t units[],
                          const int64_t pos[], const void *a, const void *b,
                          void *c, double time[]);
/* Collective: every worker's device count, kinds, names and probe times
 * on the master, the counts and kinds on every rank. */
int mlsba__mw_gather_devices(mlsba__mw_t *W);
/* Collective: every worker's link from the master, measured or its
 * platform's. */
int mlsba__mw_find_links(mlsba__mw_t *W);

/* ---- master_worker_split.c -------------------------------------------- */

/* Collective: the master partitions K by opts.split; every rank learns
 * every device's columns (W->cols), r the split's predictions. */
int mlsba__mw_partition(mlsba__mw_t *W, mlsba_mpi_mw_result_t *r);

/* ---- master_worker_run.c ---------------------------------------------- */

/* The first of rank's devices in the flat order (rank >= 1). */
size_t mlsba__mw_first_device(const mlsba__mw_t *W, int rank);
/* The columns of K worker rank was given. */
int64_t mlsba__mw_worker_columns(const mlsba__mw_t *W, int rank);
/* Collective: the run with the split of W->cols, then the check of C on
 * the master and the report in r. */
int mlsba__mw_run(mlsba__mw_t *W, mlsba_mpi_mw_result_t *r);

#endif
