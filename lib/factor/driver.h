/* The factorization driver, internal view: the state of one
 * factorization in parts, each written by the file that owns it, and the
 * seams between the files of lib/factor. Calls go down this list, never
 * up: a file calls only the files below it (tests/factor_files.py checks
 * the objects against this list).
 *
 *   gels.c       the driver ?gels: a QR (of A^T where A is wide), Q
 *                applied, a triangle solve
 *   ormqr.c      ?ormqr: Q of a QR applied block by block, on the
 *                platform's cores as the solves' threads
 *   sv.c         the drivers ?gesv and ?posv: a factorization, a solve
 *   solves.c     the solves ?getrs and ?potrs: their arguments, the
 *                platform's cores as the kernels' threads
 *   factor.c     the public calls: arguments, options, the problem
 *   drive.c      the step loop: the first panel, each step planned and
 *                run, the report, the last phase (ops->finish)
 *   real_step.c  the real step's executor: what each device holds, the
 *                accelerators' columns settled, the run, a redo
 *   solve.c      a panel's solve split between the devices after the
 *                update (ops->solve: lower Cholesky)
 *   recover.c    failures: a device dropped, the streamed columns' copy,
 *                the redo of a step on the cores
 *   real_run.c   one run of a step's units on real devices: the load
 *                (the cores' function, the OpenCL half), what each did
 *   sharing.c    the cores' function of the update: cores share the ends
 *                of their shares
 *   sim_step.c   the simulated step's executor: virtual times, and the
 *                numbers computed on the calling thread
 *   context.c    the parts allocated and freed at once; what is
 *                resolved once (cfg) and the devices in use
 *   resident.c   the columns an OpenCL device keeps between steps: when
 *                they come back, and the host's replay when they cannot
 *   ops.c        one table per factorization (factor.h)
 *   cl_lu.c      LU's OpenCL half (cl.h)
 *   cl_chol.c    Cholesky's OpenCL half
 *   cl_qr.c      QR's OpenCL half
 *   cl_share.c   what the OpenCL halves share, and the driver's calls
 *                into them (cl_none.c in a build without OpenCL)
 *   models.c     the devices' flop-rate models: simulated profiles, what
 *                a step teaches them, the files of opts.model_dir
 *   plan.c       the per-step planner (pure: no clock, no executor, no
 *                I/O): the ways a step may run, their splits, the one
 *                kept, the layout of its shares; every split the driver
 *                makes (a solve's, a redo's) is made here
 *   step.c       a step and its next panel: its flops, its time, its
 *                factorization on the panel's core
 *   split.c      the split of one step (pure; factor.h)
 *   lu.c         LU's kernels
 *   chol.c       Cholesky's kernels
 *   qr.c         QR's kernels
 *   kernels.c    what the kernels share
 *   rhs.c        a block of right-hand sides solved with the factors
 *   log.c        what a factorization tells: the report's warnings, the
 *                lines of opts.log (or stderr with MLSBA_VERBOSE)
 *
 * Where the OpenCL half and resident.c meet, the residency
 * (mlsba__factor_residency_t) is the interface: resident.c decides when
 * columns come and go, the OpenCL code records what it sent, counts what
 * it moved and reads columns back when asked; neither sees the rest of
 * the context. */
#ifndef MLSBA_FACTOR_DRIVER_H
#define MLSBA_FACTOR_DRIVER_H

#include <pthread.h>

#include "../core/error.h"
#include "../platform/platform.h"
#include "../runtime/executor.h"
#include "factor.h"

/* ---- the parts ----------------------------------------------------------- */

/* What is resolved once, at the start (context.c), and only read after
 * (but panel_dev). */
typedef struct {
  mlsba_executor_t *ex;
  const mlsba_platform_t *pl;
  mlsba_factor_opts_t o; /* the caller's, as checked by factor.c */
  size_t p, q;           /* devices (file order), groups */
  size_t *group_size;    /* q */
  const size_t *group_dev;
  int virt; /* every device simulated: virtual time */
  /* The core that factorizes panels, or -1; recover.c moves it to a
   * surviving device when it fails (a simulated one). */
  long panel_dev;
  double unit_ref; /* flops of a simulated profile's unit: 2 n^2 */
  int ways_static; /* every step runs the same way (the seeds') */
  /* The split: the rule of every step (o.split), and whether a slice is
   * tuned from the first update, the models splitting until it is
   * (fixed-slice without the caller's fractions, kernel-slice; the
   * latter from the kernels' speeds alone). */
  mlsba_factor_split_t split;
  int tunes_slice, slice_of_kernels;
  /* Where a splittable panel's solve runs (o.solve, with AUTO made SPLIT
   * for static steps on a simulated platform). */
  mlsba_factor_solve_t solve;
  /* A reproducible split (o.reproducible or MLSBA_REPRODUCIBLE): fixed
   * fractions, no sharing between cores, no model read or saved. */
  int reproducible;
  /* Where models are kept: o.model_dir, or the per-user cache where
   * o.model_cache and MLSBA_MODEL_CACHE allow it (models.c decides). */
  int model_cache;
  /* Where the log's lines go (log.c; NULL: nowhere). */
  mlsba_log_fn log;
  void *log_ctx;
} mlsba__factor_cfg_t;

/* The devices that take units: chosen at the start (context.c), a
 * device dropped when it fails (recover.c). */
typedef struct {
  unsigned char *active; /* p */
} mlsba__factor_devices_t;

/* The devices' models (models.c). */
typedef struct {
  mlsba_model_t **rate; /* p flop-rate models by units */
  /* The folder they are read from and saved to (NULL: none), the
   * per-user cache or not (its problems are only warnings), whether it
   * may be written, and each device's file in it (p; NULL where the
   * device keeps none), all settled before the matrix is touched. */
  const char *dir;
  char *dir_buf; /* the cache's path, owned */
  int cache, writable;
  char **path;
  unsigned char *warm; /* p: an accelerator's first share has run */
  /* p: the model came from the folder and no step has checked it yet
   * against what the device does now (models.c replaces a stale one). */
  unsigned char *saved;
  /* p: the model is a core's first guess (models.c, seed_cold_cores), not
   * a measurement: the device's first measured step replaces it, and it
   * is never saved. */
  unsigned char *seeded;
  double panel_s;     /* the last panel measured (or simulated) */
  double panel_flops; /* its flops */
  /* The panel before it, measured on real devices (0: none yet): the
   * next panel's estimate takes the faster rate of the two. */
  double prev_panel_s, prev_panel_flops;
} mlsba__factor_models_t;

/* What the planner keeps from step to step (plan.c). */
typedef struct {
  double *fraction; /* p: the slice, once tuned or given (NULL: none) */
  /* The way chosen at the step of way_units units (0: none yet). */
  int64_t way_units;
  int way_on_core, way_apart, way_look, way_diag;
  int64_t *cand; /* p: a way's split, while the ways are compared */
  int64_t *rows; /* p: a solve's split, while the ways are compared */
} mlsba__factor_memory_t;

/* The step's shares: the planner's split (a redo's too), laid out for
 * the executor (plan.c). After a real run a core's load is what it
 * updated (real_run.c: the cores take from each other's shares); the
 * first panel's step has none (drive.c). */
typedef struct {
  size_t p;
  int64_t *load;     /* p units, file order */
  int64_t *exec_off; /* p: where the executor's numbering puts each share */
  int64_t *log_off;  /* p: where its logical units begin */
} mlsba__factor_layout_t;

/* Buffers of a step: the devices' times, the simulated executor's work
 * (sim_step.c), the last phase's loads (drive.c). */
typedef struct {
  double *time; /* p: each device's time in the step */
  long *team;   /* p: the cores that may factorize a panel (step.c) */
  int64_t *clip, *one;
  double *extra;
} mlsba__factor_scratch_t;

/* p: bytes host -> device, device -> host, and transfers, per device
 * (each written by the thread that drives it, in the OpenCL code). */
typedef struct {
  int64_t *to_dev, *from_dev, *moves;
} mlsba__factor_traffic_t;

/* The columns OpenCL devices keep (resident.c decides, the OpenCL code
 * sends and reads them): device i holds columns [lo[i], hi[i]). The host
 * copy of a resident column c is left as it was before the step of panel
 * sent_row[c], a checkpoint nothing writes until the column comes back.
 * applied: the first panel whose update is not yet done. Upper Cholesky
 * (ops->returns_block_row): each next panel's block row of the resident
 * columns comes back after its step, so only rows from top_row down are
 * still the checkpoint. */
typedef struct {
  int stream; /* opts.stream: every share streams */
  /* The load of every real run (real_run.c sets its units per run), so
   * that an OpenCL device keeps its state, and its columns, from step to
   * step. */
  mlsba_load_t *work;
  int64_t *lo, *hi;  /* p */
  int64_t *sent_row; /* n (1 without an OpenCL device) */
  int64_t applied, top_row;
  int64_t *cap;           /* p: the columns an OpenCL device can hold */
  unsigned char *streams; /* p: it streams its share of this step */
  void **env;             /* p: its mlsba_opencl_env_t, once it ran */
  unsigned char *lost;    /* p: its columns could not come back */
  mlsba__factor_traffic_t traffic;
} mlsba__factor_residency_t;

/* The cores' shares of a step as they go (sharing.c): core i has logical
 * units [next[i], end[i]) left, has updated did[i] units (another device:
 * its share), and began (started[i]). */
typedef struct {
  pthread_mutex_t mu;
  int mu_ready;
  int64_t *next, *end, *did;
  unsigned char *started;
} mlsba__factor_shares_t;

typedef struct mlsba__factor_ctx {
  mlsba__factor_problem_t *P;
  /* The report: drive.c fills the steps, recover.c the devices dropped,
   * the planner's callers its overhead. */
  mlsba_factor_report_t *R;
  mlsba__factor_cfg_t cfg;
  mlsba__factor_devices_t dev;
  mlsba__factor_models_t models;
  mlsba__factor_memory_t plan;
  mlsba__factor_layout_t lay;
  mlsba__factor_scratch_t scratch;
  mlsba__factor_residency_t res;
  mlsba__factor_shares_t shares;
  size_t step;  /* the next report entry (drive.c) */
  double clock; /* virtual seconds so far (drive.c) */
} mlsba__factor_ctx_t;

/* ---- a step -------------------------------------------------------------- */

/* How a step runs (the planner's answer; its split is in the layout). */
typedef struct {
  long ahead_dev; /* who updates the next panel's columns first */
  double ahead_s; /* its time for them (virtual) */
  int lookahead;  /* the next panel is factorized inside the update */
  int64_t need;   /* the next panel's units, updated first (lookahead) */
  /* Simulated lower Cholesky without lookahead: the panel's core first
   * updates the next panel's diagonal block and factorizes it, then its
   * share; the rest of the panel's columns are units like the others. */
  int diag_first;
  int solve_apart;  /* the next panel's solve split (ops->solve) */
  int fpm;          /* the models decided the split */
  double predicted; /* the update's time as the models predict it */
  /* A device whose saved model gives it nothing, given `probe` units
   * to measure it again (plan.c; probe_dev -1: none). */
  long probe_dev;
  int64_t probe;
} mlsba__factor_plan_t;

/* One step: the update after panel [j, j + jb), and the next panel. The
 * executors' device functions get the step: what they reach is below. */
typedef struct mlsba__factor_step {
  int64_t j, jb;   /* the panel factorized */
  int64_t jn, jbn; /* the next panel (jbn = 0: none) */
  int64_t units;
  double unit_flops;
  int may_look; /* the step may run with lookahead (ops->lookahead) */
  mlsba__factor_plan_t plan;
  double panel_s; /* the next panel's time, measured or virtual */
  int stop;       /* the next panel stopped the factorization */
  /* Which devices finished their share (cores mark it as they end), and
   * a redo after a failure: the logical unit of each of its units (NULL:
   * the step's own layout). */
  unsigned char *done;
  const int64_t *remap;
  int panel_done;
  int sharing; /* the cores take from each other's shares */
  /* What the device functions reach. */
  mlsba__factor_problem_t *P;
  const mlsba__factor_cfg_t *cfg;
  const mlsba__factor_layout_t *lay;
  mlsba__factor_shares_t *shares;
  mlsba__factor_residency_t *res;
} mlsba__factor_step_t;

/* ---- roles --------------------------------------------------------------- */

/* Device i computes on one host core (a core's kernels, pinned). */
static inline int mlsba__factor_is_core(const mlsba__factor_cfg_t *c,
                                        size_t i) {
  return (mlsba__platform_device_roles(c->pl, i) & MLSBA__ROLE_CORE) != 0;
}

/* Device i is an accelerator with memory of its own (the OpenCL half). */
static inline int mlsba__factor_is_accel(const mlsba__factor_cfg_t *c,
                                         size_t i) {
  return (mlsba__platform_device_roles(c->pl, i) & MLSBA__ROLE_OWN_MEMORY) != 0;
}

/* ---- the files ----------------------------------------------------------- */

/* drive.c: one factorization on the executor's devices, from the open
 * context to the saved models. */
int mlsba__factor_drive(mlsba_executor_t *ex, mlsba__factor_problem_t *P,
                        const mlsba_factor_opts_t *o, mlsba_factor_report_t *R);

/* real_step.c */
/* Real devices: what each can hold of this step (an accelerator's
 * memory) becomes its model's max_load, which the split respects. */
int mlsba__factor_real_caps(mlsba__factor_ctx_t *C, mlsba__factor_step_t *st);
/* A real step, planned and laid out: *failed names a device that failed
 * (-1: none). */
int mlsba__factor_real_step(mlsba__factor_ctx_t *C, mlsba__factor_step_t *st,
                            long *failed);

/* recover.c */
/* A simulated device that failed is dropped and its units go to the
 * others (nothing of the step was computed yet): 1 when it was, 0 when it
 * may not be (the panel's core, or not in use). */
int mlsba__factor_drop_sim(mlsba__factor_ctx_t *C, long failed);
/* An accelerator dropped: no more units, noted in the report. */
void mlsba__factor_drop_accel(mlsba__factor_ctx_t *C, size_t i);
/* The devices whose columns could not come back (res.lost), dropped. */
void mlsba__factor_drop_lost(mlsba__factor_ctx_t *C);
/* Every trailing column, from the panel's first row down, copied before
 * a step in which an accelerator streams its share (*copy NULL when
 * none does). */
int mlsba__factor_backup(const mlsba__factor_ctx_t *C,
                         const mlsba__factor_step_t *st, void **copy);
/* After a run that failed on accelerator `failed`: it is dropped, and
 * what it and the unfinished cores left is done again by the cores. */
int mlsba__factor_redo(mlsba__factor_ctx_t *C, mlsba__factor_step_t *st,
                       long failed, const void *copy);

/* real_run.c */
/* The step's units (units of them: the step's own, or a redo's) in one
 * run of the executor on the layout's shares; the load of each core
 * becomes what it updated. */
int mlsba__factor_real_run(mlsba__factor_ctx_t *C, mlsba__factor_step_t *st,
                           int64_t units, long *failed);
/* The load of the run set for `units` units of the step (what the
 * executor asks the devices' capacity with). */
int mlsba__factor_work_load(mlsba__factor_ctx_t *C, mlsba__factor_step_t *st,
                            int64_t units);

/* sharing.c */
/* Before a run: each core's range of logical units; whether the cores
 * share (two cores, no redo) into st->sharing. */
void mlsba__factor_open_shares(mlsba__factor_step_t *st);
/* The cores' function of the update (mlsba_load_set_cpu): user is the
 * step. */
int mlsba__factor_core_units(void *user, int64_t first, int64_t count);

/* solve.c: the next panel's solve split between the devices after the
 * update (where the plan says so); *seconds its time. */
int mlsba__factor_solve_step(mlsba__factor_ctx_t *C, mlsba__factor_step_t *st,
                             double *seconds);

/* sim_step.c */
/* A simulated step, planned and laid out: the devices' virtual times. */
int mlsba__factor_sim_step(mlsba__factor_ctx_t *C, mlsba__factor_step_t *st,
                           long *failed);
/* Simulated shares load[] in profile time into t[]: within what each
 * device holds in one run, the rest streamed in further runs; device
 * first_dev runs its first `first` units apart, their time in *first_t
 * (-1: none). */
int mlsba__factor_sim_shares(mlsba__factor_ctx_t *C, const int64_t *load,
                             long first_dev, int64_t first, double *t,
                             double *first_t, long *failed);
/* The calling thread computes a simulated step's numbers, in the order a
 * core would. */
void mlsba__factor_compute_on_host(mlsba__factor_ctx_t *C,
                                   mlsba__factor_step_t *st);

/* resident.c */
/* Before a run: each accelerator keeps its share resident or streams it;
 * what it holds beyond the columns it keeps comes back. A device whose
 * read fails: the host replays its columns, and it is returned (the
 * caller drops it and splits the step again); else -1. */
long mlsba__factor_settle(mlsba__factor_ctx_t *C,
                          const mlsba__factor_step_t *st);
/* After a step without lookahead of the columns' panel: what the next
 * panel reads comes back; a device whose read fails is replayed and
 * marked in res.lost. */
void mlsba__factor_return_next_panel(mlsba__factor_ctx_t *C,
                                     const mlsba__factor_step_t *st);
/* At the end (or a stop): every resident column comes back (replayed
 * where it cannot). */
void mlsba__factor_flush_resident(mlsba__factor_ctx_t *C);
/* Device i's resident columns replayed on the host up to panel j_stop:
 * they are the host's again. */
void mlsba__factor_replay(mlsba__factor_ctx_t *C, size_t i, int64_t j_stop);
/* Releases what the OpenCL devices hold. */
void mlsba__factor_release_resident(mlsba__factor_ctx_t *C);

/* cl_*.c: the OpenCL half, through the operation's table (ops->cl). */
/* Sets the load's OpenCL code for the step. */
int mlsba__factor_set_opencl(mlsba_load_t *load, mlsba__factor_step_t *st);
/* Whether OpenCL device i keeps its share of this step, units [*lo,
 * *hi), resident (else it streams them); if so *lo and *hi become its
 * columns. */
int mlsba__factor_cl_resident(const mlsba__factor_step_t *st, size_t i,
                              int64_t *lo, int64_t *hi);
/* Reads resident columns [c0, c1) of device i back into the matrix
 * (through host scratch, so that a failed read leaves the checkpoint as it
 * was). Synchronous; the residency is the caller's to change. 0 or
 * MLSBA_EDEVICE / MLSBA_EDEVMEM. */
int mlsba__factor_cl_fetch(mlsba__factor_residency_t *res,
                           const mlsba__factor_problem_t *P, size_t i,
                           int64_t c0, int64_t c1);
/* ops->returns_block_row: rows [r0, r1) of device i's resident columns
 * back into the matrix. Synchronous. */
int mlsba__factor_cl_fetch_rows(mlsba__factor_residency_t *res,
                                const mlsba__factor_problem_t *P, size_t i,
                                int64_t r0, int64_t r1);
/* Releases device i's resident buffer (its columns are the host's). */
void mlsba__factor_cl_release(mlsba__factor_residency_t *res, size_t i);

/* context.c */
int mlsba__factor_ctx_open(mlsba__factor_ctx_t *C, mlsba_executor_t *ex,
                           mlsba__factor_problem_t *P,
                           const mlsba_factor_opts_t *o,
                           mlsba_factor_report_t *R);
void mlsba__factor_ctx_close(mlsba__factor_ctx_t *C);

/* models.c */
int mlsba__factor_models_open(mlsba__factor_ctx_t *C);
void mlsba__factor_models_close(mlsba__factor_ctx_t *C);
/* Real devices: what each device's share of the step taught its model. */
void mlsba__factor_learn(mlsba__factor_ctx_t *C,
                         const mlsba__factor_step_t *st);
/* The panel the step factorized: its time and flops kept for the next
 * panel's estimate. */
void mlsba__factor_learn_panel(mlsba__factor_ctx_t *C,
                               const mlsba__factor_step_t *st);
/* The models saved back to their folder: a file that cannot be written
 * is a warning of the report (the factors are done), never an error. */
void mlsba__factor_models_save(const mlsba__factor_ctx_t *C);
/* Every model back to cold (the planner could not use them): the rest of
 * the factorization splits as a first one would. */
int mlsba__factor_models_forget(mlsba__factor_ctx_t *C);

/* plan.c */
/* The step's plan into st->plan and its split into C->lay.load (memory:
 * the slice and the way kept, which it updates). */
int mlsba__factor_plan(const mlsba__factor_ctx_t *C, mlsba__factor_memory_t *M,
                       mlsba__factor_step_t *st, int64_t load[]);
/* The same after a device was dropped on real devices, the device that
 * updates the next panel's columns kept. */
int mlsba__factor_replan(const mlsba__factor_ctx_t *C,
                         mlsba__factor_memory_t *M, mlsba__factor_step_t *st,
                         int64_t load[]);
/* The first panel: whether its solve is split (simulated lower
 * Cholesky, where the models predict it shorter). */
int mlsba__factor_plan_first(const mlsba__factor_ctx_t *C,
                             mlsba__factor_memory_t *M,
                             mlsba__factor_step_t *st);
/* A redo's units split by the models between the cores in use. */
int mlsba__factor_plan_redo(const mlsba__factor_ctx_t *C, int64_t units,
                            double unit_flops, int64_t load[]);
/* The split of the solve's rows (like an update whose unit is a row of
 * nb^2 flops) between the devices `able`; *predicted its time. */
int mlsba__factor_split_solve(const mlsba__factor_ctx_t *C,
                              const mlsba__factor_memory_t *M,
                              const mlsba__factor_step_t *st,
                              const unsigned char *able, int64_t *load,
                              double *predicted);
/* Devices that can take rows of a solve: the panel's core and, of the
 * devices in use, cores and simulated devices. */
void mlsba__factor_solve_devices(const mlsba__factor_ctx_t *C,
                                 unsigned char *able);
/* The shares laid out for the executor (the layout's offsets). */
void mlsba__factor_lay_out(const mlsba__factor_cfg_t *cfg,
                           const mlsba__factor_plan_t *plan,
                           mlsba__factor_layout_t *lay);
/* The device whose share begins at the executor's unit first (-1: none). */
long mlsba__factor_share_device(const mlsba__factor_layout_t *lay,
                                int64_t first);
/* The slice without device i (dropped). */
void mlsba__factor_plan_forget(mlsba__factor_memory_t *M, size_t i);

/* step.c */
/* A step of the context over columns [j, j + jb) (units 0: no update). */
void mlsba__factor_step_init(mlsba__factor_ctx_t *C, mlsba__factor_step_t *st,
                             int64_t j, int64_t jb);
/* The next panel's flops on the panel's core. */
double mlsba__factor_next_panel_flops(const mlsba__factor_ctx_t *C,
                                      const mlsba__factor_step_t *st);
/* The virtual time of flops of a panel of width jb on the panel's core. */
double mlsba__factor_sim_panel_time(const mlsba__factor_ctx_t *C, double flops,
                                    int64_t jb);
/* The next panel's time as the split sees it: virtual, or the faster of
 * the last two panels measured scaled by the flops. */
double mlsba__factor_panel_estimate(const mlsba__factor_ctx_t *C,
                                    const mlsba__factor_step_t *st);
/* diag_first: the time of the whole next diagonal block's update on the
 * panel's core (0 otherwise), and its part that x units leave out. */
double mlsba__factor_diag_update_time(const mlsba__factor_ctx_t *C,
                                      const mlsba__factor_step_t *st);
double mlsba__factor_diag_rest_time(const mlsba__factor_ctx_t *C,
                                    const mlsba__factor_step_t *st, int64_t x);
/* The next panel, as far as its core factorizes it (its diagonal block
 * only where its solve is split). */
int mlsba__factor_panel_on_core(mlsba__factor_problem_t *P,
                                const mlsba__factor_step_t *st);
/* The next panel after an update or first: on a simulated platform the
 * calling thread computes it whole, else its core as far as it
 * factorizes it. */
int mlsba__factor_panel_alone(const mlsba__factor_ctx_t *C,
                              const mlsba__factor_step_t *st);
/* The step's next panel has a solve that may be split. */
int mlsba__factor_solve_splittable(const mlsba__factor_ctx_t *C,
                                   const mlsba__factor_step_t *st);
/* The cores that may factorize a panel together, into team (p entries,
 * the panel's core first): the active cores (on a simulated platform the
 * active devices of the panel core's kind). Returns their count. */
size_t mlsba__factor_team(const mlsba__factor_ctx_t *C, long *team);
/* How many of the `most` members of the team share the step's next
 * panel's columns and factorize it (1: the panel's core alone). */
size_t mlsba__factor_team_size(const mlsba__factor_ctx_t *C,
                               const mlsba__factor_step_t *st, size_t most);
/* The next panel's virtual time on k members, and each member's part of
 * the next panel's columns (0 for k = 1: the split counts them as the
 * panel's core's units). */
double mlsba__factor_team_panel_time(const mlsba__factor_ctx_t *C,
                                     const mlsba__factor_step_t *st, size_t k);
double mlsba__factor_team_ahead_time(const mlsba__factor_ctx_t *C,
                                     const mlsba__factor_step_t *st, size_t k);

/* log.c */
/* Where the lines go: opts.log, else stderr where MLSBA_VERBOSE is set. */
void mlsba__factor_log_open(mlsba__factor_cfg_t *c);
/* 1 when lines go somewhere (so that a caller formats them). */
int mlsba__factor_logging(const mlsba__factor_ctx_t *C);
/* One line, where lines go. */
void mlsba__factor_log(const mlsba__factor_ctx_t *C, const char *fmt, ...)
    MLSBA__PRINTF(2, 3);
/* A problem that does not stop the factorization: counted in the
 * report, the first kept, and logged. */
void mlsba__factor_warn(const mlsba__factor_ctx_t *C, const char *fmt, ...)
    MLSBA__PRINTF(2, 3);

#endif
