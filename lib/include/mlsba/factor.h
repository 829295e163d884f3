/*
 * libmlsba: hybrid dense factorizations on one node (included by
 * <mlsba.h>).
 *
 * mlsba_getrf() (LU with partial pivoting), mlsba_potrf() (Cholesky) and
 * mlsba_geqrf() (Householder QR; mlsba_ormqr() applies its Q,
 * mlsba_gels() solves least squares with it) keep LAPACK's semantics
 * (column-major with a leading dimension, ipiv 1-based, info for a zero pivot
 * or a matrix that is not positive definite, tau) and run on an executor's
 * devices: right-looking and blocked, the panel on a core with LAPACK,
 * the next panel's columns updated first so that its factorization
 * overlaps the rest of the update (lookahead), and every trailing update
 * split between the devices by their speed functions at that step's size
 * (MLSBA over the processing groups).
 */
#ifndef MLSBA_FACTOR_H
#define MLSBA_FACTOR_H

#include <mlsba/balance.h>
#include <mlsba/executor.h>
#include <mlsba/loads.h>

#ifdef __cplusplus
extern "C" {
#endif

/** \name Hybrid factorizations
 *
 *  The trailing update of step k is a product of height h_k and width
 *  n_k (in units: columns for LU, pairs of columns {c, n_k - 1 - c} for
 *  Cholesky, whose columns do not cost the same but whose pairs do). Its
 *  split follows the devices' speed functions at the step's size, so an
 *  accelerator's share shrinks as the update does. Simulated devices take
 *  virtual time: a share of x units at step k takes t(x) w_k / u, t the
 *  device's profile time, w_k the flops of one unit of the step and u
 *  those of a unit of the profile (sim_unit_flops; by default 2 n^2, a
 *  column of an n x n x n product). The panel takes its flops at the
 *  rate of its core's profile at nb units.
 *
 *  Thread safety: one call at a time per executor. */
/**@{*/

/** How each step's update is split between the devices. */
typedef enum mlsba_factor_split {
  /** Per step: MLSBA over the groups with the device models at the
   *  step's size, the panel's time added to the core that factors it
   *  (the default). */
  MLSBA_FACTOR_SPLIT_FPM = 0,
  /** A constant ratio of the devices' peak speeds (the hybrid HPL of Shi
   *  et al., eq. 1: Ratio = GPU peak / CPU peak). */
  MLSBA_FACTOR_SPLIT_CONSTANT_RATIO,
  /** A fixed slice tuned once from the kernels' speeds (Song and
   *  Dongarra's tile sizes): the model-optimal split of the first update,
   *  kept as fractions for every later step. */
  MLSBA_FACTOR_SPLIT_FIXED_SLICE,
  /** Song & Dongarra's slice as their paper tunes it, from the kernels' speeds
   *  alone: the models' split of the first update with no panel counted
   *  (every core alike), kept as fractions. */
  MLSBA_FACTOR_SPLIT_KERNEL_SLICE,
  MLSBA_FACTOR_SPLIT_COUNT /**< number of splits */
} mlsba_factor_split_t;

/** Lower Cholesky: where a panel's solve (L21 = A21 L11^-T) runs. */
typedef enum mlsba_factor_solve {
  /** Per step, the way the models predict shorter on simulated devices;
   *  on real devices, on the core (the default). */
  MLSBA_FACTOR_SOLVE_AUTO = 0,
  /** On the panel's core, inside its share (it overlaps the update). */
  MLSBA_FACTOR_SOLVE_CORE,
  /** Split by rows between the devices in use that can take it (cores
   *  and simulated devices) after the update, as the update is split:
   *  the panel's core then factorizes only the diagonal block, which
   *  shortens the chain of panels every step waits for. */
  MLSBA_FACTOR_SOLVE_SPLIT,
  MLSBA_FACTOR_SOLVE_COUNT /**< number of choices */
} mlsba_factor_solve_t;

/** How each step runs besides its split: who updates the next panel's
 *  columns, whether the next panel is factorized inside the update
 *  (lookahead), and where a lower Cholesky panel's solve runs. */
typedef enum mlsba_factor_ways {
  /** On simulated platforms, per step the way the models predict
   *  shortest (the default); on real devices the panel's core updates
   *  the next panel's columns and factorizes it inside its share. */
  MLSBA_FACTOR_WAYS_AUTO = 0,
  /** Every step alike, as the papers place their tasks statically: the
   *  panel's core updates the next panel's columns first and factorizes
   *  the whole panel inside its share (its solve too, unless `solve` is
   *  MLSBA_FACTOR_SOLVE_SPLIT). On real devices the same as AUTO. */
  MLSBA_FACTOR_WAYS_STATIC,
  MLSBA_FACTOR_WAYS_COUNT /**< number of choices */
} mlsba_factor_ways_t;

/** \brief Name of a split as the tools spell it ("fpm", "constant-ratio",
 *  "fixed-slice"); NULL for an unknown value. */
MLSBA_EXTERN const char *mlsba_factor_split_name(mlsba_factor_split_t split);

/** Options of the expert calls; initialise with mlsba_factor_opts_init(). */
typedef struct mlsba_factor_opts {
  /** Block size nb: the panel's width; 0 (the default) takes
   *  mlsba_factor_default_block(). */
  int64_t block;
  mlsba_factor_split_t split; /**< default MLSBA_FACTOR_SPLIT_FPM */
  /** NULL: every device takes update columns but one that computes on
   *  the other devices' cores (pocl beside the cores); else p flags in
   *  file order, 0 for a device that takes none (the core that factors
   *  the panels still takes the next panel's columns). At least one
   *  device must be in use. Cores, simulated devices and OpenCL devices
   *  take units of both factorizations. */
  const unsigned char *use;
  /** Directory of saved models of the update kernel (NULL: the per-user
   *  cache, see model_cache): the first step of a factorization starts
   *  from them, and the models the steps measured are saved back
   *  (atomically). Real devices only. Checked before the matrix is
   *  touched: a folder that is missing is created when its parent
   *  exists; one that cannot be created or written is refused
   *  (MLSBA_EIO). A saved model that makes no sense (a rate outside 1 to
   *  1e20 flops per second) is ignored. Once the matrix is touched the
   *  factorization finishes: a model that cannot be saved is a warning
   *  of the report, not an error. Each device's file is named after the
   *  device, escaped as the balancer's are ("core/0" is core%2F0). */
  const char *model_dir;
  /** On a simulated platform: 1 (default) computes the factors on the
   *  calling thread, so the result is right; 0 only advances virtual
   *  time (the matrix is left as it was; for experiments at sizes the
   *  host cannot compute quickly). */
  int compute;
  /** On a simulated platform: the flops of one unit of the devices'
   *  profiles (0, the default: 2 n^2, a column of an n x n x n product,
   *  which is what the sample desktop's profiles are at n = 8400). */
  double sim_unit_flops;
  /** Lower Cholesky: where the solve of each panel's rows below its
   *  diagonal block runs (nb^2 flops a row). MLSBA_FACTOR_SOLVE_AUTO (0,
   *  the default): on simulated devices, at every step the way the models
   *  predict shorter; on real devices on the panel's core. */
  mlsba_factor_solve_t solve;
  /** With MLSBA_FACTOR_SPLIT_FIXED_SLICE: p fractions in file order, the
   *  share of every update's units each device takes (>= 0, not all 0;
   *  those of devices not in use are ignored; the core that factors the
   *  panels still takes the next panel's columns). NULL (default): the
   *  slice is tuned from the first update. */
  const double *fraction;
  /** OpenCL devices: 0 (default) keeps a device's columns resident in
   *  its memory from step to step where they fit (Cholesky: a share of
   *  the middle pairs, one run of columns); 1 streams them at every step
   *  (sent and read back whole), for comparison. */
  int stream;
  /** How each step runs besides its split (default
   *  MLSBA_FACTOR_WAYS_AUTO); MLSBA_FACTOR_WAYS_STATIC for the papers'
   *  baselines as they place their tasks. */
  mlsba_factor_ways_t ways;
  /** Where model_dir is NULL: 1 (the default) keeps the models in the
   *  per-user cache, $MLSBA_CACHE_DIR/HOST (MLSBA_CACHE_DIR=none: no
   *  cache), else $XDG_CACHE_HOME/mlsba/HOST or ~/.cache/mlsba/HOST as
   *  mlsba-bench does, so that a program's second factorization of a
   *  size starts from what the first learnt; 0 keeps none. The
   *  environment variable MLSBA_MODEL_CACHE=0 turns it off for every
   *  call (1 leaves the options to decide; other values are refused). A
   *  cache that cannot be read or written never fails a factorization:
   *  it is a warning of the report. */
  int model_cache;
  /** 1: a reproducible split. Every update is split by fixed fractions
   *  (opts.fraction, else even between the devices in use), the cores do
   *  not take from each other's shares, no model is read, learnt or
   *  saved: two runs on the same platform, with the same kernels, give
   *  bitwise the same factors and pivots. 0 (the default): the split
   *  follows the devices' measured speeds (the factors are right to the
   *  same residual, and may differ in their last bits from run to run
   *  where the kernels depend on the shapes a split makes). The
   *  environment variable MLSBA_REPRODUCIBLE=1 turns it on for every
   *  call. See docs/factorizations.md, "What is reproducible". */
  int reproducible;
  /** Receives one line per event worth telling: each step's split (units
   *  and time per device), what the models learnt, where they were read
   *  and saved, warnings; NULL: none, unless the environment variable
   *  MLSBA_VERBOSE is set (not "0"), which sends them to stderr. The
   *  library prints nothing otherwise. Called on the calling thread. */
  mlsba_log_fn log;
  void *log_ctx;
} mlsba_factor_opts_t;

/** What a factorization did, step by step. Arrays are owned by the
 *  report: release with mlsba_factor_report_free(). Step 0 is the first
 *  panel alone; step k >= 1 is the update after panel k - 1. */
typedef struct mlsba_factor_report {
  int virtual_time;       /**< 1 on a simulated platform (seconds virtual) */
  double seconds;         /**< the whole factorization */
  double flops;           /**< the operation's nominal count (LU: m n^2 -
                               n^3 / 3 for m >= n; Cholesky: n^3 / 3) */
  double gflops;          /**< flops / seconds / 1e9 */
  double overhead_s;      /**< splitting time summed over the steps */
  size_t p;               /**< devices of the platform */
  size_t steps;           /**< entries of the per-step arrays */
  long panel_device;      /**< the core that factors the panels (file order) */
  unsigned lost;          /**< devices dropped after a failure */
  unsigned char *dropped; /**< p flags: 1 when the device failed */
  int64_t *units;         /**< per step: units of the update */
  double *step_seconds;   /**< per step: its time */
  double *panel_seconds;  /**< per step: the panel factorized in it */
  /** share[k * p + i]: device i's units in step k (a core's: what it
   *  updated, the end of another core's share that it took included) */
  int64_t *share;
  double *time; /**< time[k * p + i]: device i's time in step k */
  /** per step: the device that updated the next panel's columns (the
   *  panel's core, or a faster device in use; -1: no lookahead) */
  long *ahead_device;
  /** Bytes sent from the host to the OpenCL devices, and back, over the
   *  factorization (0 without OpenCL devices), and the transfers (each
   *  write or read enqueued) that moved them. */
  int64_t bytes_to_devices, bytes_from_devices, transfers;
  /** Problems that did not stop the factorization (its factors, ipiv
   *  and info are handed back): a model that could not be read or
   *  saved, a cache that could not be made. The count, and the first
   *  one's message ("" when none). */
  unsigned warnings;
  char warning[256];
  /** How the call began, and what it spent outside its steps (added):
   *  the devices in use that started from a saved model of the update
   *  (warm), and those that started without one, learning theirs inside
   *  the call (cold: the call's first update is split by what is known
   *  of the cores, another core's saved model or the kernel choice's
   *  speed, the later ones by what they measured). Both 0 on a simulated
   *  platform (its models are the profiles) and with `reproducible` (no
   *  model is used). */
  unsigned models_warm, models_cold;
  /** Wall seconds spent settling the models' folder and reading the
   *  saved models, and saving the models learnt: outside `seconds`. */
  double models_read_s, models_save_s;
  /** Wall seconds of the cores' kernel choice (docs/cpu-kernels.md) where
   *  the process's first use of the kernels fell inside this call (an
   *  executor opened on cores makes it before any call; a platform
   *  without cores does not): its whole setup, timed or read from the
   *  cache, inside `call_s`. 0 when it was made before the call. */
  double kernels_s;
  /** The whole call by the wall clock, from its entry to its return:
   *  `seconds` (the steps and the last phase) and what came before and
   *  after them (the arguments, the context, the models read and saved,
   *  the kernel choice where it ran inside). On a simulated platform
   *  `seconds` is virtual and this is real. */
  double call_s;
} mlsba_factor_report_t;

/** \brief Defaults: the block by precision and size, the per-step FPM
 *  split, every device, models in the per-user cache, computed results. */
MLSBA_EXTERN void mlsba_factor_opts_init(mlsba_factor_opts_t *opts);

/** \brief The block a factorization of an m x n matrix takes when the
 *  options leave it at 0: min(m, n) / 16 in multiples of 64, from 128 to
 *  192 in double precision and to 256 in single (a deeper product runs
 *  faster, worth the wider panels from about 16 steps on). */
MLSBA_EXTERN int64_t mlsba_factor_default_block(mlsba_precision_t prec,
                                                int64_t m, int64_t n);

/** \brief The block mlsba_geqrf() (and mlsba_gels()) takes when the
 *  options leave it at 0: 128, or 64 for fewer than 1024 columns (a
 *  tall-skinny matrix's panels then outlast its few columns' update),
 *  whatever the precision. QR's
 *  panel is 3 nb^2 h flops (?geqrf and ?larft) for an update of 4 nb h a
 *  column, 1.5x the weight of LU's panel at the same block; the first
 *  step waits for it and the last steps wait on it (benchmarks/RESULTS.md:
 *  faster than LU's block on this machine's cores and on the simulated
 *  desktop). */
MLSBA_EXTERN int64_t mlsba_geqrf_default_block(mlsba_precision_t prec,
                                               int64_t m, int64_t n);

/** \brief LU with partial pivoting, A = P L U, as LAPACK's ?getrf.
 *  \param ex    the devices: a real platform (cores; OpenCL devices with
 *               CLBlast, their columns kept in their memory from step to
 *               step where they fit) or a simulated one.
 *  \param prec  single (float) or double.
 *  \param m, n  the matrix's size, >= 0.
 *  \param a     m x n, column-major, leading dimension lda >= max(1, m);
 *               overwritten by L (unit diagonal, not stored) and U.
 *  \param ipiv  min(m, n) row indices, 1-based: row i was swapped with
 *               row ipiv[i].
 *  \param[out] info  0, or i > 0 when U(i, i) (1-based) is exactly zero:
 *               the factorization is complete, U is singular.
 *  \return 0; MLSBA_EINVAL for a bad argument (the message names it);
 *          MLSBA_EIO for a model folder that cannot be written (before
 *          the matrix is touched); MLSBA_ENOMEM; MLSBA_EDEVICE when every
 *          device failed (or a real core failed inside its share, whose
 *          columns may be half done). A device that fails during a step is
 * dropped and its columns are taken back by the others; where it was the one
 * that factorizes the panels, the panels move to a surviving device (a core
 * where there is one). */
MLSBA_EXTERN int mlsba_getrf(mlsba_executor_t *ex, mlsba_precision_t prec,
                             int64_t m, int64_t n, void *a, int64_t lda,
                             int64_t *ipiv, int64_t *info);
/** \brief mlsba_getrf() with options and a report.
 *  \param opts    NULL for defaults.
 *  \param report  may be NULL; else filled, and freed by the caller with
 *                 mlsba_factor_report_free() even after an error. */
MLSBA_EXTERN int mlsba_getrf_ex(mlsba_executor_t *ex, mlsba_precision_t prec,
                                int64_t m, int64_t n, void *a, int64_t lda,
                                int64_t *ipiv, int64_t *info,
                                const mlsba_factor_opts_t *opts,
                                mlsba_factor_report_t *report);

/** \brief Cholesky factorization of a symmetric positive definite
 *  matrix, as LAPACK's ?potrf: A = L L^T (uplo 'L') or U^T U ('U').
 *  Only the triangle uplo names is read and overwritten; the other is
 *  left as it was.
 *  \param[out] info  0, or i > 0 when the leading minor of order i is
 *               not positive definite (the factorization stopped).
 *  \return as mlsba_getrf(). */
MLSBA_EXTERN int mlsba_potrf(mlsba_executor_t *ex, mlsba_precision_t prec,
                             char uplo, int64_t n, void *a, int64_t lda,
                             int64_t *info);
/** \brief mlsba_potrf() with options and a report. */
MLSBA_EXTERN int mlsba_potrf_ex(mlsba_executor_t *ex, mlsba_precision_t prec,
                                char uplo, int64_t n, void *a, int64_t lda,
                                int64_t *info, const mlsba_factor_opts_t *opts,
                                mlsba_factor_report_t *report);

/** \brief QR factorization, A = Q R, as LAPACK's ?geqrf: R in the upper
 *  triangle (upper trapezoid when m < n), the Householder vectors below
 *  it and their scalars in tau, so that LAPACK's ?orgqr and ?ormqr form
 *  or apply Q from the result (Q = H_1 ... H_k, H_i = I - tau_i v_i
 *  v_i^T, v_i(i) = 1, k = min(m, n)). Each panel is factorized by
 *  LAPACK's ?geqrf on one core, with ?larft's T of its block reflector;
 *  every trailing update C = C - V T^T V^T C (?larfb's) is split between
 *  the devices by their speed functions at that step's size. Units are
 *  trailing columns, as LU's; OpenCL devices keep theirs resident, as
 *  LU's, and update them with CLBlast. The block by default:
 *  mlsba_geqrf_default_block().
 *  \param a     m x n, column-major (lda >= max(1, m)), any shape.
 *  \param tau   min(m, n) scalars of the precision (float or double).
 *  \param[out] info  0 (kept for symmetry with LAPACK's).
 *  \return as mlsba_getrf(); MLSBA_EINVAL names the bad argument (also a
 *          block wider than 8192 in double, 16384 in single). */
MLSBA_EXTERN int mlsba_geqrf(mlsba_executor_t *ex, mlsba_precision_t prec,
                             int64_t m, int64_t n, void *a, int64_t lda,
                             void *tau, int64_t *info);
/** \brief mlsba_geqrf() with options and a report (report.flops: LAPACK's
 *  count, 2 m n^2 - 2 n^3 / 3 for m >= n, 2 n m^2 - 2 m^3 / 3 else). */
MLSBA_EXTERN int mlsba_geqrf_ex(mlsba_executor_t *ex, mlsba_precision_t prec,
                                int64_t m, int64_t n, void *a, int64_t lda,
                                void *tau, int64_t *info,
                                const mlsba_factor_opts_t *opts,
                                mlsba_factor_report_t *report);

/** \brief Apply Q of a QR factorization, as LAPACK's ?ormqr: C = Q C,
 *  Q^T C (side 'L'), C Q or C Q^T (side 'R'), Q = H_1 ... H_k the
 *  product of the k reflectors mlsba_geqrf() (or LAPACK's ?geqrf) left in
 *  a and tau. Blocked as LAPACK's: each block of reflectors is one block
 *  reflector I - V T V^T (T by LAPACK's ?larft) applied as ?larfb does,
 *  by two GEMMs and three TRMMs of the cores' kernels. C's columns (side
 *  'L') or rows ('R') are independent: from 16 of them on, the calling
 *  thread runs each product with a thread for each core of the platform;
 *  fewer run on the calling thread alone, as every call on a simulated
 *  platform (whose devices compute nothing). OpenCL devices take no
 *  part. C equals LAPACK's result to rounding.
 *  \param ex     the devices (a real or simulated platform).
 *  \param prec   single (float) or double, as the factors.
 *  \param side   'L' (Q from the left) or 'R' (from the right).
 *  \param trans  'N' (Q), 'T' or 'C' (Q^T; the same, the matrix is real).
 *  \param m, n   C's size, >= 0.
 *  \param k      the reflectors, 0 <= k <= the order of Q (m for side
 *                'L', n for 'R').
 *  \param a      the reflectors as mlsba_geqrf() left them: column i
 *                below the diagonal holds v_i (v_i(i) = 1 is not stored;
 *                what lies on and above the diagonal is not read); the
 *                order of Q x k, lda >= max(1, that order).
 *  \param tau    their k scalars.
 *  \param c      m x n (ldc >= max(1, m)), overwritten by the product.
 *  \param[out] info  0 (as LAPACK's, which reports only bad arguments).
 *  \return 0; MLSBA_EINVAL naming the bad argument (checked in LAPACK's
 *          order, then a, tau, c or info NULL), C then left as it was;
 *          MLSBA_ENOMEM (C left as it was). */
MLSBA_EXTERN int mlsba_ormqr(mlsba_executor_t *ex, mlsba_precision_t prec,
                             char side, char trans, int64_t m, int64_t n,
                             int64_t k, const void *a, int64_t lda,
                             const void *tau, void *c, int64_t ldc,
                             int64_t *info);

/** \brief Release the arrays of a report (not the struct itself); a
 *  zeroed report is accepted. */
MLSBA_EXTERN void mlsba_factor_report_free(mlsba_factor_report_t *report);

/** \brief The scaled residual of an LU factorization,
 *  ||P L U - A||_1 / (||A||_1 max(m, n) eps), eps the unit roundoff of
 *  the precision (2^-53 or 2^-24), computed in double. HPL and LAPACK's
 *  tests call a factorization right when it is below 16
 *  (MLSBA_FACTOR_RESIDUAL_OK).
 *  \param a    the matrix before the factorization (lda).
 *  \param lu   what mlsba_getrf() left (ldlu), with its ipiv.
 *  \param[out] residual  0 for an empty matrix, or a zero one whose
 *              factors are zero; infinite (never below 16) when A or the
 *              factors hold a NaN or an Inf, or A is zero and they not.
 *  \return 0, MLSBA_EINVAL or MLSBA_ENOMEM. */
MLSBA_EXTERN int mlsba_getrf_residual(mlsba_precision_t prec, int64_t m,
                                      int64_t n, const void *a, int64_t lda,
                                      const void *lu, int64_t ldlu,
                                      const int64_t *ipiv, double *residual);
/** \brief The scaled residual of a Cholesky factorization,
 *  ||L L^T - A||_1 / (||A||_1 n eps) (or U^T U), A symmetric from its
 *  triangle uplo; 0 and infinite as mlsba_getrf_residual() says. */
MLSBA_EXTERN int mlsba_potrf_residual(mlsba_precision_t prec, char uplo,
                                      int64_t n, const void *a, int64_t lda,
                                      const void *f, int64_t ldf,
                                      double *residual);
/** \brief The scaled residuals of a QR factorization, as LAPACK's tests
 *  of ?geqrf measure them: ||A - Q R||_1 / (||A||_1 max(m, n) eps) and,
 *  unless orthogonality is NULL, ||I - Q^T Q||_1 / (n eps), Q (m x
 *  min(m, n)) formed by LAPACK's ?orgqr from the factors, in double.
 *  \param qr, tau  what mlsba_geqrf() left (ldqr).
 *  \return 0, MLSBA_EINVAL or MLSBA_ENOMEM. */
MLSBA_EXTERN int mlsba_geqrf_residual(mlsba_precision_t prec, int64_t m,
                                      int64_t n, const void *a, int64_t lda,
                                      const void *qr, int64_t ldqr,
                                      const void *tau, double *residual,
                                      double *orthogonality);
/** The threshold below which a scaled residual says "right". */
#define MLSBA_FACTOR_RESIDUAL_OK 16.0
/**@}*/

/** \name Solves with the factors, and the drivers
 *
 *  LAPACK's ?getrs, ?potrs, ?gesv and ?posv on the factors of
 *  mlsba_getrf() and mlsba_potrf(): B is n x nrhs, column-major with
 *  leading dimension ldb >= max(1, n), overwritten by the solution X;
 *  and ?gels, least squares on mlsba_geqrf() (B max(m, n) x nrhs).
 *  From 3 right-hand sides on, the calling thread runs the cores'
 *  kernels (TRSM) with a thread for each core of the platform; one or two
 *  are solved on the calling thread alone (TRSV), as every right-hand
 *  side on a simulated platform (whose devices compute nothing). OpenCL
 *  devices take no part.
 *
 *  The pivots are int64_t, as mlsba_getrf() gives them; LAPACK's are
 *  int: mlsba_ipiv_to_lapack() and mlsba_ipiv_from_lapack() convert
 *  them, checked, either way.
 *
 *  Thread safety: one call at a time per executor. */
/**@{*/

/** \brief Solve A X = B (trans 'N') or A^T X = B ('T' or 'C') with the
 *  LU factors of mlsba_getrf(), as LAPACK's ?getrs.
 *  \param ex     the devices (a real or simulated platform).
 *  \param prec   single (float) or double, as the factors.
 *  \param trans  'N', 'T' or 'C' (the same as 'T': the matrix is real).
 *  \param n      the order of A, >= 0; \param nrhs the columns of B, >= 0.
 *  \param a      the factors L and U as mlsba_getrf() left them (lda).
 *  \param ipiv   their n pivots, 1-based; each must lie in 1..n.
 *  \param b      n x nrhs (ldb), overwritten by X.
 *  \param[out] info  0 (as LAPACK's, which reports only bad arguments).
 *  \return 0; MLSBA_EINVAL naming the bad argument (a, b, ipiv or info
 *          NULL, a negative size, lda or ldb below max(1, n), a pivot out
 *          of range, an unknown trans); MLSBA_ENOMEM; MLSBA_EDEVICE when
 *          a core's run fails. */
MLSBA_EXTERN int mlsba_getrs(mlsba_executor_t *ex, mlsba_precision_t prec,
                             char trans, int64_t n, int64_t nrhs, const void *a,
                             int64_t lda, const int64_t *ipiv, void *b,
                             int64_t ldb, int64_t *info);

/** \brief Solve A X = B with the Cholesky factor of mlsba_potrf(), as
 *  LAPACK's ?potrs: uplo 'L' (A = L L^T) or 'U' (A = U^T U), only that
 *  triangle of a read.
 *  \return as mlsba_getrs(). */
MLSBA_EXTERN int mlsba_potrs(mlsba_executor_t *ex, mlsba_precision_t prec,
                             char uplo, int64_t n, int64_t nrhs, const void *a,
                             int64_t lda, void *b, int64_t ldb, int64_t *info);

/** \brief Solve A X = B, as LAPACK's ?gesv: mlsba_getrf() on A (n x n,
 *  overwritten by its factors, ipiv its n pivots), then mlsba_getrs().
 *  Every argument is checked before A is touched.
 *  \param[out] info  0, or i > 0 when U(i, i) is exactly zero: A is
 *               singular, its factors are complete and B is left as it
 *               was.
 *  \return as mlsba_getrf() and mlsba_getrs(). */
MLSBA_EXTERN int mlsba_gesv(mlsba_executor_t *ex, mlsba_precision_t prec,
                            int64_t n, int64_t nrhs, void *a, int64_t lda,
                            int64_t *ipiv, void *b, int64_t ldb, int64_t *info);
/** \brief mlsba_gesv() with the factorization's options and report (as
 *  mlsba_getrf_ex(): opts NULL for defaults; report may be NULL, else
 *  freed by the caller with mlsba_factor_report_free()). */
MLSBA_EXTERN int mlsba_gesv_ex(mlsba_executor_t *ex, mlsba_precision_t prec,
                               int64_t n, int64_t nrhs, void *a, int64_t lda,
                               int64_t *ipiv, void *b, int64_t ldb,
                               int64_t *info, const mlsba_factor_opts_t *opts,
                               mlsba_factor_report_t *report);

/** \brief Solve A X = B, A symmetric positive definite, as LAPACK's
 *  ?posv: mlsba_potrf() on the triangle uplo of A (overwritten by the
 *  factor), then mlsba_potrs().
 *  \param[out] info  0, or i > 0 when the leading minor of order i is
 *               not positive definite: B is left as it was.
 *  \return as mlsba_potrf() and mlsba_potrs(). */
MLSBA_EXTERN int mlsba_posv(mlsba_executor_t *ex, mlsba_precision_t prec,
                            char uplo, int64_t n, int64_t nrhs, void *a,
                            int64_t lda, void *b, int64_t ldb, int64_t *info);
/** \brief mlsba_posv() with the factorization's options and report. */
MLSBA_EXTERN int mlsba_posv_ex(mlsba_executor_t *ex, mlsba_precision_t prec,
                               char uplo, int64_t n, int64_t nrhs, void *a,
                               int64_t lda, void *b, int64_t ldb, int64_t *info,
                               const mlsba_factor_opts_t *opts,
                               mlsba_factor_report_t *report);

/** \brief Least squares and least-norm solutions with a full-rank
 *  matrix, as LAPACK's ?gels: for trans 'N' and m >= n, X minimizes
 *  ||B - A X||_2; for 'N' and m < n, X is the solution of A X = B of
 *  least norm; for 'T' (or 'C') the same with A^T (least norm for m >= n,
 *  least squares for m < n). A tall A is factorized by mlsba_geqrf_ex()
 *  in place; a wide one (m < n) is, where LAPACK takes its LQ (?gelqf),
 *  transposed into a copy whose QR mlsba_geqrf_ex() computes, and the
 *  factors are written back transposed: A then holds ?gelqf's L and
 *  reflectors (the LQ of A is the transposed QR of A^T), and X is
 *  LAPACK's least-norm solution to rounding. Then Q is applied as
 *  mlsba_ormqr() applies it and R (or L) solved by the cores' kernels. A
 *  and B are scaled first where their largest entry is near under- or
 *  overflow, as LAPACK's ?gels does.
 *  \param trans  'N', 'T' or 'C'.
 *  \param m, n   A's size, >= 0; \param nrhs B's columns, >= 0.
 *  \param a      m x n (lda >= max(1, m)), overwritten by the factors
 *                of its QR (m >= n) or its LQ (m < n), as LAPACK's.
 *  \param b      max(m, n) x nrhs (ldb >= max(1, m, n)): the right-hand
 *                sides in its first m rows (trans 'N') or n ('T'),
 *                overwritten by X in its first n rows ('N') or m ('T').
 *                For a least-squares problem (trans 'N' with m >= n, 'T'
 *                with m < n), the rows after X hold, as LAPACK's, the
 *                residual's components: the sum of their squares is
 *                column j's residual sum of squares.
 *  \param[out] info  0, or i > 0 when the i-th diagonal entry of R (or
 *                L) is exactly zero: A is not of full rank, no solution
 *                is computed, A holds its factors and B is left as it was
 *                (LAPACK's leaves B partly transformed).
 *  \return 0; MLSBA_EINVAL naming the bad argument (A and B then left
 *          as they were); as mlsba_geqrf() for the factorization. */
MLSBA_EXTERN int mlsba_gels(mlsba_executor_t *ex, mlsba_precision_t prec,
                            char trans, int64_t m, int64_t n, int64_t nrhs,
                            void *a, int64_t lda, void *b, int64_t ldb,
                            int64_t *info);
/** \brief mlsba_gels() with the factorization's options and report (as
 *  mlsba_geqrf_ex(); the report is of the QR of A, or of A^T when m <
 *  n). */
MLSBA_EXTERN int mlsba_gels_ex(mlsba_executor_t *ex, mlsba_precision_t prec,
                               char trans, int64_t m, int64_t n, int64_t nrhs,
                               void *a, int64_t lda, void *b, int64_t ldb,
                               int64_t *info, const mlsba_factor_opts_t *opts,
                               mlsba_factor_report_t *report);

/** \brief The pivots of mlsba_getrf() as LAPACK's ?getrs, ?getri or
 *  ?gecon take them (int): lapack_ipiv[i] = ipiv[i]. mlsba_getrf() takes
 *  sizes up to INT_MAX, so its pivots always fit; any other value is
 *  refused.
 *  \return 0; MLSBA_EINVAL for n < 0, an array NULL (n > 0) or a pivot
 *          outside 1..INT_MAX (naming it; lapack_ipiv then unwritten). */
MLSBA_EXTERN int mlsba_ipiv_to_lapack(int64_t n, const int64_t *ipiv,
                                      int *lapack_ipiv);
/** \brief LAPACK's pivots (?getrf's) as mlsba_getrs() takes them.
 *  \return 0; MLSBA_EINVAL for n < 0, an array NULL (n > 0) or a pivot
 *          below 1 (naming it; ipiv then unwritten). */
MLSBA_EXTERN int mlsba_ipiv_from_lapack(int64_t n, const int *lapack_ipiv,
                                        int64_t *ipiv);
/**@}*/

#ifdef __cplusplus
}
#endif

#endif /* MLSBA_FACTOR_H */
