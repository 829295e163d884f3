/* One factorization on an executor's devices: the step loop (run.c) and
 * what it keeps between steps. */
#ifndef MLSBA_FACTOR_RUN_H
#define MLSBA_FACTOR_RUN_H

#include <pthread.h>

#include "factor.h"

typedef struct mlsba__factor_run {
  mlsba_executor_t *ex;
  const mlsba_platform_t *pl;
  mlsba__factor_problem_t *P;
  mlsba_factor_opts_t o;
  mlsba_factor_report_t *R;
  size_t p, q;
  size_t *group_size, *group_dev;
  int virt;          /* every device simulated: virtual time */
  long panel_dev;    /* the core that factorizes panels, or -1 */
  long ahead_dev;    /* this step's: who updates the next panel first */
  double ahead_s;    /* its time for those units (virtual) */
  int64_t way_units; /* the step at whose size the way was chosen */
  int way_on_core, way_apart, way_look,
      way_diag;          /* that way (choose_and_split) */
  double unit_ref;       /* flops of a sim profile's unit: 2 n^2 */
  mlsba_model_t **rate;  /* p flop-rate models by units */
  unsigned char *active; /* p: takes update units */
  unsigned char *warm;   /* p: an accelerator's first share has run */
  double *fraction;      /* the fixed slice, once tuned */
  int64_t *load, *exec_off, *log_off, *clip, *one;
  double *time, *extra;
  double clock;       /* virtual seconds so far */
  double panel_flops; /* of the last panel measured (real devices) */
  double panel_s;     /* its time */
  size_t step;        /* the next report entry */
  /* Real devices: the load of every run of the factorization (its units
   * set per run), so that an OpenCL device keeps its state, and its
   * resident columns, from step to step. */
  mlsba_load_t *work;
  /* Resident columns (OpenCL devices, see update_cl.c): device i holds
   * columns [res_lo[i], res_hi[i]) (p each). The host copy of a resident
   * column c is left as it was before the step of panel sent_row[c] (n),
   * a checkpoint nothing writes until the column comes back. applied: the
   * first panel whose update is not yet done. Upper Cholesky: each next
   * panel's block row of the resident columns comes back after its step
   * (the panel solves it), so only rows from top_row down are still the
   * checkpoint. */
  int64_t *res_lo, *res_hi, *sent_row, applied, top_row;
  int64_t *cl_cap;        /* p: the columns an OpenCL device can hold */
  unsigned char *streams; /* p: an accelerator streamed its share */
  void **cl_env;          /* p: its mlsba_opencl_env_t, once it ran */
  /* p: bytes host -> device, device -> host, transfers, per device (each
   * written by the thread that drives it). */
  int64_t *to_dev, *from_dev, *moves;
  /* The cores' shares of a step as they go (run.c, "cores share the
   * ends of their shares"): core i has logical units [next[i], end[i])
   * left, has updated did[i] units (another device: its share), and
   * began (started[i]). */
  pthread_mutex_t share_mu;
  int share_mu_ready;
  int64_t *next, *end, *did;
  unsigned char *started;
} mlsba__factor_run_t;

/* One step: the panel whose update it is, and the next. */
typedef struct mlsba__factor_step {
  mlsba__factor_run_t *F;
  int64_t j, jb;   /* the panel factorized */
  int64_t jn, jbn; /* the next panel (jbn = 0: none) */
  int64_t units, need;
  double unit_flops;
  int may_look;  /* the step may run with lookahead (LU, lower Cholesky) */
  int lookahead; /* it does (the way chosen: run.c) */
  /* Simulated lower Cholesky without lookahead: the panel's core first
   * updates the next panel's diagonal block and factorizes it, then its
   * share; the rest of the panel's columns are units like the others. */
  int diag_first;
  double panel_s; /* the next panel's time, measured or virtual */
  int stop;       /* a Cholesky panel was not positive definite */
  /* Which devices finished their share (cores mark it as they end), and
   * a redo after a failure: the logical unit of each of its units (NULL:
   * the step's own layout). */
  unsigned char *done;
  const int64_t *remap;
  int panel_done;
  int solve_apart; /* lower Cholesky: the panel's solve split (run.c) */
  int sharing;     /* the cores take from each other's shares */
} mlsba__factor_step_t;

/* The device whose share begins at the executor's unit first (-1: none). */
long mlsba__factor_share_device(const mlsba__factor_run_t *F, int64_t first);

/* The OpenCL half of the update (update_cl.c): LU columns on an OpenCL
 * device with CLBlast. Sets it on load; MLSBA_ENOTSUP without OpenCL. */
int mlsba__factor_set_opencl(mlsba_load_t *load, mlsba__factor_step_t *st);

/* Whether OpenCL device i keeps its share of this step, units [*lo,
 * *hi), resident (else it streams them); if so *lo and *hi become its
 * columns (LU: the units' columns; Cholesky: a share of the middle pairs,
 * one run of columns; a share of two runs streams). */
int mlsba__factor_cl_resident(const mlsba__factor_step_t *st, size_t i,
                              int64_t *lo, int64_t *hi);
/* Reads resident columns [c0, c1) of device i back into the matrix
 * (through host scratch, so that a failed read leaves the checkpoint as it
 * was), each from its sent_row down. Synchronous; the residency is the
 * caller's to change. 0 or MLSBA_EDEVICE / MLSBA_EDEVMEM. */
int mlsba__factor_cl_fetch(mlsba__factor_run_t *F, size_t i, int64_t c0,
                           int64_t c1);
/* Upper Cholesky: rows [r0, r1) (the next panel's block row) of device
 * i's resident columns back into the matrix (each within its triangle).
 * Synchronous. 0 or MLSBA_EDEVICE / MLSBA_EDEVMEM. */
int mlsba__factor_cl_fetch_rows(mlsba__factor_run_t *F, size_t i, int64_t r0,
                                int64_t r1);
/* Releases device i's resident buffer (its columns are the host's). */
void mlsba__factor_cl_release(mlsba__factor_run_t *F, size_t i);

int mlsba__factor_run_open(mlsba__factor_run_t *F, mlsba_executor_t *ex,
                           mlsba__factor_problem_t *P,
                           const mlsba_factor_opts_t *o,
                           mlsba_factor_report_t *R);
int mlsba__factor_run(mlsba__factor_run_t *F);
void mlsba__factor_run_close(mlsba__factor_run_t *F);

/* factor.c: the models of the update kernel kept in opts.model_dir. */
void mlsba__factor_run_load_models(mlsba__factor_run_t *F);
int mlsba__factor_run_save(mlsba__factor_run_t *F);

#endif
