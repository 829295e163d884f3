/* The balancing routine, internal view: the context it keeps between
 * balancings of one load on one executor, in named parts, and the seams
 * between its files:
 *
 *   balance.c     options, results, the one-shot entry points
 *   context.c     the context: allocated and freed at once; the
 *                 devices in use and what they hold
 *   measure.c     running and measuring: outliers, faults, metrics
 *   partition.c   the adapter to the partitioners
 *   kinds.c       devices of one kind pool their runs
 *   sharing.c     the check of a device that shares the others'
 *                 cores, in one place
 *   saved.c       warm start from saved models, and saving them
 *   routine.c     the iterative routine and its stop rule
 *   balancer.c    the balancer object: balance once, run many times
 */
#ifndef MLSBA_BALANCE_BALANCE_H
#define MLSBA_BALANCE_BALANCE_H

#include <stddef.h>
#include <stdint.h>

#include "../core/error.h"
#include "../partition/measured.h"
#include "../runtime/executor.h"
#include "mlsba.h"

/* Per device: what it can hold and what was measured of it. */
typedef struct {
  int64_t *max;                /* what it can hold (0 when not in use) */
  unsigned char *use;          /* it takes part in the partitioning */
  mlsba__measured_t *measured; /* its own runs */
  unsigned char *warm;         /* its model is checked against the next run:
                                  MLSBA__WARM_SAVED or _LEARNED, else 0 */
} mlsba__bal_devices_t;

/* Where a device's model that the next run checks comes from: a saved
 * file, or this balancer's own runs (a re-balancing). */
enum { MLSBA__WARM_SAVED = 1, MLSBA__WARM_LEARNED = 2 };

/* The partitioning problem over the devices in use, group by group. */
typedef struct {
  const mlsba_model_t **models;
  size_t *dev;  /* the platform device of each partitioned one */
  size_t *size; /* devices per partition group */
  size_t q, p;  /* partition groups, partitioned devices */
  int64_t *alpha, *beta;
  size_t *points;
} mlsba__bal_problem_t;

/* Devices of one kind (mlsba_kinds_t): next chains them from the first
 * (lead), and a kind of two or more has a pool. basis[j] is what device
 * j's model is built from: its own runs or its kind's. */
typedef struct {
  size_t *next, *pool, npools;
  unsigned char *lead, *apart;
  mlsba__measured_t *pools;
  const mlsba__measured_t **basis;
  const mlsba__measured_t **members; /* scratch for pooling */
  size_t *member_dev;
  unsigned char *alike;
} mlsba__bal_kinds_t;

/* The check of a device that shares the others' cores (mlsba_sharing_t). */
typedef struct {
  unsigned char *checked; /* checked once already */
  unsigned char *left;    /* left out by a check (or a saved one) */
  unsigned *trusted;      /* balancings that took a saved decision */
  long checking;          /* the device left out of the run under way */
  int early;              /* ... checked after the first run */
  double bar;             /* the makespan the run without it must beat */
  struct {                /* the run to come back to, and how it ended */
    int stop;
    int64_t max, *load;
    double makespan, imbalance, *time;
  } kept;
} mlsba__bal_sharing_t;

/* Buffers of one step. */
typedef struct {
  double *time;   /* 2 p: a second measurement; group times */
  int64_t *gload; /* q */
  int64_t *gcap;  /* q */
} mlsba__bal_scratch_t;

/* The routine's own bookkeeping. */
typedef struct {
  double *calls;       /* partitioning times, at most 2 max_iter + 1 */
  unsigned ncalls;     /* of them so far */
  double overhead;     /* the last: what led to the next run */
  unsigned cycle_from; /* history rows before it do not count as cycles */
  unsigned long runs;  /* runs of the load made so far, re-measures included */
} mlsba__bal_iter_t;

typedef struct {
  mlsba_executor_t *ex;
  const mlsba_load_t *w;
  mlsba_balance_opts_t o;
  size_t p, q;
  mlsba__bal_devices_t dev;
  mlsba__bal_problem_t part;
  mlsba__bal_kinds_t kinds;
  mlsba__bal_sharing_t sharing;
  mlsba__bal_scratch_t scratch;
  mlsba__bal_iter_t iter;
} mlsba__bal_ctx_t;

/* balance.c */
int mlsba__bal_check_opts(const mlsba_balance_opts_t *o);

/* context.c */
int mlsba__bal_ctx_init(mlsba__bal_ctx_t *C, mlsba_executor_t *ex,
                        const mlsba_load_t *w, const mlsba_balance_opts_t *opts,
                        mlsba_balance_result_t *r);
void mlsba__bal_ctx_free(mlsba__bal_ctx_t *C);
/* The devices in use and what they hold; MLSBA_ECAPACITY when those left
 * cannot hold the load together. */
int mlsba__bal_set_capacity(mlsba__bal_ctx_t *C, mlsba_balance_result_t *r);
/* One line to the options' log, if any. */
void mlsba__bal_log(const mlsba__bal_ctx_t *C, const char *fmt, ...)
    MLSBA__PRINTF(2, 3);

/* measure.c */
double mlsba__bal_spread(const double *time, const int64_t *load,
                         const int64_t *cap, const size_t *idx, size_t n);
int mlsba__bal_balanced(const mlsba_platform_t *pl, int flat,
                        const int64_t *load, const int64_t *cap,
                        const double *time, double eps, double *group_time,
                        int64_t *group_load, int64_t *group_cap);
double mlsba__bal_largest(const double *time, size_t p);
int mlsba__bal_run_until_done(mlsba__bal_ctx_t *C, mlsba_balance_result_t *r,
                              double *time, int remeasure, unsigned *again,
                              int *dropped);
/* The devices' run-to-run variation (mlsba_balance_result_t.variation):
 * the largest relative standard deviation of single runs at one load over
 * the devices in use, from what their models are built on; *at: which
 * device (-1 when no load was run twice). */
double mlsba__bal_variation(const mlsba__bal_ctx_t *C,
                            const mlsba_balance_result_t *r, long *at);
void mlsba__bal_explain_noise(const mlsba__bal_ctx_t *C,
                              const mlsba_balance_result_t *r);

/* partition.c */
int mlsba__bal_repartition(mlsba__bal_ctx_t *C, mlsba_balance_result_t *r,
                           int64_t *load, double *seconds);
void mlsba__bal_even_start(mlsba__bal_ctx_t *C, int64_t *load);
int mlsba__bal_all_modelled(const mlsba__bal_ctx_t *C,
                            const mlsba_balance_result_t *r);

/* kinds.c */
int mlsba__bal_set_kinds(mlsba__bal_ctx_t *C);
int mlsba__bal_rebuild_models(mlsba__bal_ctx_t *C, mlsba_balance_result_t *r);
int mlsba__bal_all_known_well(const mlsba__bal_ctx_t *C, const int64_t *load);

/* sharing.c */
/* Takes the left-out decisions saved by runs before (warm start). */
int mlsba__bal_sharing_take_saved(mlsba__bal_ctx_t *C,
                                  mlsba_balance_result_t *r);
/* Saves the decision of a check about device j, if one was made. */
int mlsba__bal_sharing_save(const mlsba__bal_ctx_t *C,
                            const mlsba_balance_result_t *r, size_t j);
/* The verdict of the check under way, if any, from the run just made. */
enum { MLSBA__BAL_NO_CHECK, MLSBA__BAL_KEPT, MLSBA__BAL_LEFT_OUT };
int mlsba__bal_sharing_verdict(mlsba__bal_ctx_t *C, mlsba_balance_result_t *r,
                               unsigned it, double makespan, int *verdict);
/* Starts a check when it is time for one; 1 with the run without the
 * device in proposal. */
int mlsba__bal_sharing_begin(mlsba__bal_ctx_t *C, mlsba_balance_result_t *r,
                             unsigned it, int stop, int64_t *proposal,
                             double *overhead);

/* saved.c */
/* Where device j's model lives, and the key that says what it is for:
 * host, device identity (its backend's ident) and driver, kernel, and the
 * load's shape. */
int mlsba__bal_model_file(const mlsba_executor_t *ex, size_t j,
                          const mlsba_load_t *w, const char *dir, char *path,
                          size_t plen, char *key, size_t klen);
int mlsba__bal_load_stored(mlsba__bal_ctx_t *C, mlsba_balance_result_t *r,
                           int *all);
void mlsba__bal_save_models(mlsba__bal_ctx_t *C, mlsba_balance_result_t *r);

/* routine.c */
int mlsba__bal_routine(mlsba__bal_ctx_t *C, mlsba_balance_result_t *r,
                       int start_warm);
/* Cold or warm start of a fresh context. */
int mlsba__bal_first(mlsba__bal_ctx_t *C, mlsba_balance_result_t *r);

/* balancer.c */
/* The imbalance past which a balancer's run counts as drifted. */
double mlsba__bal_drift_threshold(const mlsba_balance_opts_t *o,
                                  double variation);

#endif
