/*
 * libmlsba's self-adaptive balancing: the iterative routine that runs a
 * load, learns every device's model from the runs and re-partitions until
 * the devices finish together, and the balancer that balances a load once
 * and runs it many times. Part of <mlsba.h>, which includes it.
 */
#ifndef MLSBA_BALANCE_H
#define MLSBA_BALANCE_H

#include <mlsba/executor.h>
#include <mlsba/partition.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The built-in product (mlsba_gemm_t) is in <mlsba/loads.h>; the calls
 * below that take one name its struct. */
struct mlsba_gemm;

/* ---------------------------------------------------------------------- */
/** \name Self-adaptive balancing (Ilic & Sousa §V.A)
 *
 *  The iterative routine: run, measure every device, add one point per
 *  device to its model, re-partition with the chosen algorithm, run again,
 *  until the times agree within eps at both levels (between groups and
 *  inside each group) or the distribution stops moving. */
/**@{*/

/** Why a device is out of the result (mlsba_balance_result_t.dropped). */
typedef enum mlsba_dropped {
  MLSBA_DROPPED_NONE = 0,  /**< in use */
  MLSBA_DROPPED_FAULT = 1, /**< it failed in a run (MLSBA_ON_FAULT_CONTINUE) */
  MLSBA_DROPPED_LEFT_OUT   /**< the others ran faster without it (sharing) */
} mlsba_dropped_t;

/** One iteration, as reported to the progress callback. */
typedef struct mlsba_iteration {
  unsigned int iteration;  /**< 1-based */
  const int64_t *load;     /**< per device, file order */
  const double *time;      /**< per device, from the common start */
  double makespan;         /**< largest device time */
  double imbalance;        /**< (max - min) / max over loaded devices; min
                                over those below their cap (a device given
                                all it can hold may finish early) */
  double overhead_s;       /**< partitioning time that led to this run */
  unsigned int remeasured; /**< runs repeated because of outliers */
} mlsba_iteration_t;

/** How the devices of a platform form processing groups. */
typedef enum mlsba_grouping {
  /** The platform's groups: discovery pairs accelerator i with core i,
   *  whose thread drives it and computes too (MLSBA). */
  MLSBA_GROUPING_PLATFORM = 0,
  /** Every device alone (single-level balancing of all devices). */
  MLSBA_GROUPING_FLAT
} mlsba_grouping_t;

/** What the routine does when a device fails during a run (an OpenCL
 *  error, out of device memory, a CPU function returning nonzero). */
typedef enum mlsba_on_fault {
  /** Drop the device, re-partition among the others and run again; the
   *  result counts the device in lost (the default). */
  MLSBA_ON_FAULT_CONTINUE = 0,
  /** Stop and return the device's error. */
  MLSBA_ON_FAULT_STOP
} mlsba_on_fault_t;

/** Devices that compute on the cores of other devices of the platform (an
 *  OpenCL CPU device such as pocl beside the core devices; a sim device
 *  with contends_with) slow those devices with every unit they take. */
typedef enum mlsba_sharing {
  /** After the first run, and again once the routine has settled (or
   *  half of max_iter has gone by), run once without such a device; when
   *  that run is faster than the run with it (after the first run: that
   *  run balanced at the speeds it showed, less 2 eps), the device is left
   *  out (left_out in the result) and the others are balanced afresh (the
   *  default). With a model directory the decision is saved for the next
   *  run. */
  MLSBA_SHARING_CHECK = 0,
  /** Keep every device. */
  MLSBA_SHARING_KEEP
} mlsba_sharing_t;

/** Devices of one kind (the same hardware: the cores of one CPU model, or
 *  devices whose platform entries name the same "kind") are alike until
 *  their runs say otherwise. */
typedef enum mlsba_kinds {
  /** Their runs are pooled: every run of one counts for the model of
   *  each, which learns their speed with a fraction of the runs. A device
   *  whose mean speed stands more than three standard errors (of the
   *  noise measured on them) from the others' at its load is modelled
   *  from its own runs, as long as it does (the default). */
  MLSBA_KINDS_POOL = 0,
  /** Every device is modelled from its own runs only. */
  MLSBA_KINDS_SEPARATE
} mlsba_kinds_t;

/** A log line (no newline) and the context given with it. */
typedef void (*mlsba_log_fn)(void *user, const char *message);

typedef struct mlsba_balance_opts {
  mlsba_algorithm_t algorithm; /**< default MLSBA_ALGO_MLSBA */
  double eps;                  /**< default 0.05 */
  unsigned int max_iter;       /**< default 20 */
  /** Shared (default) or devoted driving cores; SLBA-style runs use
   *  devoted cores, whose loads are then 0. */
  mlsba_drive_t drive;
  /** A measured time further than this from the model's prediction, in
   *  relative terms, is re-measured before it is trusted (default 0.25). */
  double outlier;
  /** Called after every iteration; may be NULL. */
  void (*progress)(void *ctx, const mlsba_iteration_t *it);
  void *progress_ctx;
  /** Directory of saved device models (NULL: none). Models saved there
   *  for this host, device, kernel, precision and problem shape start the
   *  routine warm: the first run is drawn from them instead of N/P. A
   *  stored model that the first run contradicts (confirmed by a second
   *  run) is dropped as stale. At the end every model is saved back,
   *  atomically. Corrupt or foreign files are ignored (see stale and
   *  ignored in the result). A missing folder is created when its parent
   *  exists; otherwise (or when it is not a folder) the call returns
   *  MLSBA_EIO naming it, before any run. */
  const char *model_dir; /* NULL: no models kept; "" is refused */
  /** Loads in multiples of this many units (0 or 1: single units);
   *  supported by the SLBA algorithm (MLSBA_ENOTSUP otherwise). */
  int64_t granularity;
  /** How devices form processing groups (default: as the platform says). */
  mlsba_grouping_t grouping;
  /** What a device failure during a run does (default: continue). */
  mlsba_on_fault_t on_fault;
  /** Receives one line per event worth telling (an iteration, a stale or
   *  refused model file, a device dropped after a fault, a re-balance);
   *  may be NULL: the library prints nothing. Called on the thread that
   *  called the library. */
  mlsba_log_fn log;
  void *log_ctx;
  /** mlsba_balancer_run(): when the imbalance of two runs in a row exceeds
   *  this, the balancer re-balances by itself; 0 turns that off. The
   *  default, MLSBA_DRIFT_AUTO (any negative value), follows the noise the
   *  balancing measured: max(2 eps, eps + 4 x variation), variation being
   *  the result's run-to-run variation, so that a machine whose times vary
   *  by 10% from run to run is not re-balanced for its noise alone. */
  double drift;
  /** Whether a device that shares the cores of others must pay its way
   *  (default: checked). */
  mlsba_sharing_t sharing;
  /** Whether devices of one kind pool their runs (default: pooled). */
  mlsba_kinds_t kinds;
  /** A re-balancing (by the balancer itself, or mlsba_balancer_rebalance())
   *  runs the load at most this many times (default 5; 0: max_iter), so
   *  that one mlsba_balancer_run() costs a bounded number of runs. */
  unsigned int rebalance_max_iter;
} mlsba_balance_opts_t;

/** opts.drift: re-balance past a threshold that follows the measured
 *  run-to-run variation (the default). */
#define MLSBA_DRIFT_AUTO (-1.0)

/** What the routine found. Arrays are owned by the result: release with
 *  mlsba_balance_result_free(). */
typedef struct mlsba_balance_result {
  unsigned int iterations;
  int converged; /**< balanced or at a fixed point */
  mlsba_stop_reason_t stop;
  double makespan, imbalance; /**< of the last run */
  double overhead_total_s;    /**< partitioning time over all iterations */
  double overhead_per_call_s; /**< its median per call */
  size_t p, q;
  int64_t *load;  /**< p device loads of the last run, file order */
  double *time;   /**< p device times of the last run */
  int64_t *alpha; /**< q group loads */
  size_t *points; /**< q group-model points of the last partitioning */
  /** Every run: history[i * p + j] is device j's load in run i. */
  int64_t *history_load;
  double *history_makespan, *history_imbalance; /**< per run */
  double *history_time;   /**< history_time[i * p + j]: device j in run i */
  mlsba_model_t **models; /**< p device models built from the runs */
  unsigned int warm;      /**< devices started from a stored model */
  unsigned int stale;     /**< stored models dropped as stale */
  unsigned int ignored;   /**< stored files refused (corrupt, foreign) */
  int save_error;         /**< 0, or the error of saving the models */
  unsigned lost;          /**< devices dropped after a fault */
  /** p values of mlsba_dropped_t: why device j is out, or 0 in use. */
  unsigned char *dropped;
  /** Devices left out because the others were faster without them (see
   *  mlsba_sharing_t); their runs without it count in iterations. */
  unsigned left_out;
  /** The eps the routine balanced to (the options'). */
  double eps;
  /** How much the devices' times vary from run to run at one load (runs
   *  within eps of a load count as at it): the largest relative standard
   *  deviation over the devices in use (0 when no load was run twice).
   *  When the routine stops above eps (stop is not MLSBA_STOP_BALANCED), a
   *  variation above eps / 2 says why: the runs cannot tell a better
   *  distribution. */
  double variation;
} mlsba_balance_result_t;

/** \brief Defaults: MLSBA, eps 0.05, 20 iterations, shared cores. */
MLSBA_EXTERN void mlsba_balance_opts_init(mlsba_balance_opts_t *opts);

/** \brief Balance a product over the executor's devices: the first run
 *  gives every device N/P columns (within what it can hold), every later
 *  one the distribution the algorithm draws from the models measured so
 *  far. C holds the product of the last run.
 *  \return 0 (see result->converged), or the first error of a run or of
 *          the partitioner. */
MLSBA_EXTERN int mlsba_balance_gemm(mlsba_executor_t *ex,
                                    const struct mlsba_gemm *g,
                                    const mlsba_balance_opts_t *opts,
                                    mlsba_balance_result_t *result);
/** \brief Balance any load over the executor's devices, as
 *  mlsba_balance_gemm() does for a product. The whole load has been
 *  computed by the last run when the call returns 0. */
MLSBA_EXTERN int mlsba_balance_load(mlsba_executor_t *ex,
                                    const mlsba_load_t *load,
                                    const mlsba_balance_opts_t *opts,
                                    mlsba_balance_result_t *result);
/** \brief Release the arrays of a result (not the struct itself). */
MLSBA_EXTERN void mlsba_balance_result_free(mlsba_balance_result_t *result);
/** \brief An imbalance (a fraction) as the percentage to print with one
 *  decimal ("%.1f%%") against eps (a fraction too): rounded to the
 *  nearest tenth, except that a value under eps is rounded down and one
 *  over eps up where the nearest would land on eps or past it, so that a
 *  balanced run never reads as eps or more (4.96% within 5% is 4.9%, not
 *  5.0%) and an unbalanced one never as eps or less (5.04% is 5.1%). The
 *  library's log, describe() and the tools print every imbalance so. */
MLSBA_EXTERN double mlsba_imbalance_percent(double imbalance, double eps);
/** \brief How the balancing went, in one sentence for a person: balanced
 *  (within eps) or not, in how many runs, why it stopped there, and the
 *  imbalance, e.g. "not balanced: stopped after 4 runs at a fixed point,
 *  imbalance 12.0% (eps 5%): the devices' times vary by 18% from run to
 *  run, so the split is the best the runs can tell". Only a run within
 *  eps is called balanced. Truncated to size - 1 characters.
 *  \return 0 or MLSBA_EINVAL. */
MLSBA_EXTERN int
mlsba_balance_result_describe(const mlsba_balance_result_t *result, char *text,
                              size_t size);
/**@}*/

/* ---------------------------------------------------------------------- */
/** \name Balance once, run many times
 *
 *  The common case of an application: the same load runs again and again
 *  (every time step, every frame). A balancer balances it once, then runs
 *  it with the balanced distribution, measuring every run; when the
 *  imbalance drifts past opts.drift for two runs in a row (a device got
 *  slower, another program took a core), or on request, it re-balances
 *  from the models it has: no cold start, but up to
 *  opts.rebalance_max_iter runs inside that one call (mlsba_run_info_t
 *  says how many, and how long the call took).
 *
 *  Thread safety: one call at a time per balancer; different balancers
 *  may run at once only on different devices. */
/**@{*/
typedef struct mlsba_balancer mlsba_balancer_t;

/** What one mlsba_balancer_run() measured (and one
 *  mlsba_mpi_divider_run() of <mlsba/mpi.h>, over ranks for devices). */
typedef struct mlsba_run_info {
  double makespan;   /**< largest device time of the run, seconds (of the
                          re-balancing's last run when it re-balanced) */
  double imbalance;  /**< (max - min) / max over loaded devices, min over
                          those below their cap (as mlsba_iteration_t) */
  int rebalanced;    /**< 1 when the run found drift and re-balanced (the
                          load was then computed by the re-balancing) */
  unsigned int runs; /**< runs of the load this call made: 1, more when
                          an outlier was re-measured or it re-balanced */
  double wall_s;     /**< wall-clock time of the call, seconds: every run,
                          the partitionings and the bookkeeping */
  double drift;      /**< the drift threshold the run was judged against
                          (opts.drift, or the one MLSBA_DRIFT_AUTO chose) */
} mlsba_run_info_t;

/** \brief The basic form: balance load over every device of this machine
 *  (the "auto" platform) with the default options. The load has been
 *  computed once when it returns.
 *  \param[out] balancer  destroy with mlsba_balancer_destroy(). */
MLSBA_EXTERN int mlsba_balance(mlsba_load_t *load, mlsba_balancer_t **balancer);
/** \brief The expert form.
 *  \param platform  NULL for the "auto" platform; else it must outlive
 *                   the balancer.
 *  \param opts      NULL for defaults. */
MLSBA_EXTERN int mlsba_balance_ex(const mlsba_platform_t *platform,
                                  mlsba_load_t *load,
                                  const mlsba_balance_opts_t *opts,
                                  mlsba_balancer_t **balancer);
/** \brief Run the whole load once more with the balanced distribution.
 *  \param[out] info  may be NULL. */
MLSBA_EXTERN int mlsba_balancer_run(mlsba_balancer_t *balancer,
                                    mlsba_run_info_t *info);
/** \brief Re-balance now, starting from the models learned so far (the
 *  load is computed by the last run of the routine). */
MLSBA_EXTERN int mlsba_balancer_rebalance(mlsba_balancer_t *balancer);
/** \brief What the last balancing found (distribution, models, history);
 *  owned by the balancer, valid until its next call. */
MLSBA_EXTERN const mlsba_balance_result_t *
mlsba_balancer_result(const mlsba_balancer_t *balancer);
/** \brief The platform the balancer runs on (the discovered one for
 *  mlsba_balance()). */
MLSBA_EXTERN const mlsba_platform_t *
mlsba_balancer_platform(const mlsba_balancer_t *balancer);
/** \brief The model saved in model_dir for a device of the executor and a
 *  load: the file a balancing with opts.model_dir = model_dir starts from
 *  (same name, same key: host, device, driver, kernel, precision, shape),
 *  for partitioning measured devices offline.
 *  \param device     index in file order.
 *  \param[out] path  where the file is, or would be (path_size bytes; may
 *                    be NULL with 0).
 *  \return 0; MLSBA_EIO when none is saved there; MLSBA_EFORMAT when the
 *          file is corrupt or saved for another key; MLSBA_EINVAL. */
MLSBA_EXTERN int mlsba_model_load_saved(mlsba_executor_t *ex, size_t device,
                                        const mlsba_load_t *load,
                                        const char *model_dir,
                                        mlsba_model_t **model, char *path,
                                        size_t path_size);

/** \brief Destroy a balancer, closing its devices; NULL is ignored. */
MLSBA_EXTERN void mlsba_balancer_destroy(mlsba_balancer_t *balancer);
/**@}*/

#ifdef __cplusplus
}
#endif

#endif /* MLSBA_BALANCE_H */
