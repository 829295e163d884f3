/*
 * libmlsba: multi-level divisible load balancing for heterogeneous machines.
 *
 * One public umbrella header. Everything here is C11 and free of device
 * headers; OpenCL interop lives in <mlsba/opencl.h>.
 *
 * Words: one word per idea, in this header and in the library.
 *  - load: the divisible work (mlsba_load_t, a GEMM, a Mandelbrot image);
 *  - units: how many equal, independent parts a load has (a GEMM's
 *    columns, an image's rows);
 *  - share: the units one device computes in a run. Arrays of shares, one
 *    per device, are named loads[] / load in the API for compatibility
 *    (mlsba_partition(), mlsba_balance_result_t::load);
 *  - backend: the code that drives a type of device (cpu, opencl, sim;
 *    mlsba_device_type_t);
 *  - kind: a class of identical hardware whose devices pool their runs
 *    (mlsba_device_info_t::kind); mlsba_kinds_t is the policy for pooling.
 *
 * Conventions (HACKING.md in the source tree has them all):
 *  - every fallible call returns int: 0 on success, a negative MLSBA_E* code
 *    otherwise; mlsba_strerror() names the code and mlsba_last_error() gives
 *    the message of the last failure in the calling thread;
 *  - objects are opaque handles with create/destroy pairs;
 *  - the caller owns what it passes in; the library frees only what it made;
 *  - the library never prints, exits or aborts the host program.
 */
#ifndef MLSBA_H
#define MLSBA_H

#include <stddef.h>
#include <stdint.h>

#include <mlsba/version.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(MLSBA_SHARED_BUILD)
#define MLSBA_EXTERN __declspec(dllexport)
#elif defined(__GNUC__) || defined(__clang__)
#define MLSBA_EXTERN __attribute__((visibility("default")))
#else
#define MLSBA_EXTERN
#endif

/* ---------------------------------------------------------------------- */
/** \name Version
 *  The macros MLSBA_VERSION_MAJOR, _MINOR, _PATCH and _HEX
 *  (<mlsba/version.h>) describe the header; mlsba_version() describes the
 *  library actually linked, so an application can detect a mismatch. */
/**@{*/
/** \brief Version of the linked library as MLSBA_VERSION_HEX encodes it. */
MLSBA_EXTERN unsigned int mlsba_version(void);
/** \brief Version of the linked library as "major.minor.patch". Static
 *  storage; never NULL. */
MLSBA_EXTERN const char *mlsba_version_string(void);
/**@}*/

/* ---------------------------------------------------------------------- */
/** \name Errors
 *  All error codes in one table: XX(name, value, description). The table
 *  gives the enum, mlsba_err_name() and mlsba_strerror(), so they cannot
 *  drift apart. */
/**@{*/
#define MLSBA_ERRNO_MAP(XX)                                                    \
  XX(EINVAL, -1, "invalid argument")                                           \
  XX(ENOMEM, -2, "out of memory")                                              \
  XX(ECAPACITY, -3, "the devices cannot hold the whole load together")         \
  XX(ERANGE, -4, "value out of range")                                         \
  XX(ENOTSUP, -5, "operation not supported by this build or device")           \
  XX(EIO, -6, "input/output error")                                            \
  XX(EFORMAT, -7, "malformed input file")                                      \
  XX(EDEVICE, -8, "device error")                                              \
  XX(EDEVMEM, -9, "out of device memory")                                      \
  XX(ENOCONV, -10, "did not converge")

/** Error codes: always negative; 0 is success. */
typedef enum {
#define MLSBA_ERRNO_ENUM_(name, value, text) MLSBA_##name = (value),
  MLSBA_ERRNO_MAP(MLSBA_ERRNO_ENUM_)
#undef MLSBA_ERRNO_ENUM_
      MLSBA_ERRNO_MIN_ = -11
} mlsba_errno_t;

/** \brief Short description of an error code ("invalid argument").
 *  \return static storage, never NULL; "unknown error" for unknown codes,
 *          "success" for 0. */
MLSBA_EXTERN const char *mlsba_strerror(int err);
/** \brief Symbolic name of an error code ("MLSBA_EINVAL"). Static storage,
 *  never NULL. */
MLSBA_EXTERN const char *mlsba_err_name(int err);
/** \brief Message describing the last failure of a libmlsba call in the
 *  calling thread ("model 3: speed must be positive, got -1").
 *
 *  The message stays until the next failing call in the same thread; a
 *  successful call does not clear it. Thread-local storage, never NULL
 *  (empty string when nothing failed yet). */
MLSBA_EXTERN const char *mlsba_last_error(void);
/**@}*/

/* ---------------------------------------------------------------------- */
/** \name Functional performance model (FPM)
 *
 *  A device's speed as a function of its load, s(x) in units per second,
 *  built from measured points (x, s). Between points s(x) is linear; below
 *  the first point and beyond the last it is constant. The time to process
 *  a load x is t(x) = x / s(x). An optional max_load caps the load the
 *  device can hold (e.g. accelerator memory).
 *
 *  The partitioners assume the shape of the papers: every line through the
 *  origin crosses s(x) once, i.e. t(x) increases with x. Other shapes are
 *  accepted and give valid partitions, without the optimality guarantee.
 *
 *  Thread safety: a model may be read from several threads at once; writes
 *  need exclusive access. */
/**@{*/
typedef struct mlsba_model mlsba_model_t;

/** Value of max_load meaning "no limit". */
#define MLSBA_NO_MAX_LOAD INT64_C(-1)

/** The values a model accepts (mlsba_model_set_point() and
 *  mlsba_model_set_max_load() refuse the rest with MLSBA_EINVAL and a
 *  message naming the field and the value).
 *
 *  - a load (a point's x, a max_load, the N of a partitioning) is at most
 *    2^53 units, the largest count a double holds exactly; a point's load
 *    is at least 1e-6 units;
 *  - a speed is in [1e-30, 1e30] units per second;
 *  - so a time x / s(x) is in [1e-36, 9.1e45] seconds.
 *
 *  Within these bounds a time, a product of a time and a speed, and a sum
 *  of them over 10^9 devices stay far from overflow and from denormals,
 *  which is what keeps every partitioner finite, exact to the unit and
 *  O(p log N) on every model it accepts. Real devices sit many orders of
 *  magnitude inside them. */
#define MLSBA_LOAD_MAX 9007199254740992.0 /* 2^53 */
#define MLSBA_LOAD_MIN 1e-6
#define MLSBA_SPEED_MIN 1e-30
#define MLSBA_SPEED_MAX 1e30

/** \brief Create an empty model (no points, no max_load).
 *  \param[out] model  receives the new model; the caller destroys it.
 *  \return 0, MLSBA_EINVAL or MLSBA_ENOMEM. */
MLSBA_EXTERN int mlsba_model_create(mlsba_model_t **model);
/** \brief Deep copy of a model. \param[out] copy receives the new model. */
MLSBA_EXTERN int mlsba_model_clone(const mlsba_model_t *model,
                                   mlsba_model_t **copy);
/** \brief Destroy a model. NULL is accepted and ignored. */
MLSBA_EXTERN void mlsba_model_destroy(mlsba_model_t *model);

/** \brief Insert the point (x, speed), or replace the speed of the point
 *  already at exactly x.
 *  \param x      load in units, in [MLSBA_LOAD_MIN, MLSBA_LOAD_MAX].
 *  \param speed  units per second, in [MLSBA_SPEED_MIN, MLSBA_SPEED_MAX].
 *  \return 0, MLSBA_EINVAL (bad value; the model is unchanged) or
 *          MLSBA_ENOMEM. */
MLSBA_EXTERN int mlsba_model_set_point(mlsba_model_t *model, double x,
                                       double speed);
/** \brief Remove every point; max_load is kept. */
MLSBA_EXTERN int mlsba_model_clear(mlsba_model_t *model);
/** \brief Set the largest load the device can hold, in units (0 to
 *  MLSBA_LOAD_MAX), or MLSBA_NO_MAX_LOAD. */
MLSBA_EXTERN int mlsba_model_set_max_load(mlsba_model_t *model,
                                          int64_t max_load);
/** \brief The max_load, or MLSBA_NO_MAX_LOAD (also for a NULL model). */
MLSBA_EXTERN int64_t mlsba_model_max_load(const mlsba_model_t *model);
/** \brief Number of points (0 for a NULL model). */
MLSBA_EXTERN size_t mlsba_model_num_points(const mlsba_model_t *model);
/** \brief The i-th point in increasing x. Either output may be NULL. */
MLSBA_EXTERN int mlsba_model_get_point(const mlsba_model_t *model, size_t i,
                                       double *x, double *speed);
/** \brief Add the cost of moving a device's load to its time: with a
 *  transfer, t(x) = x / s(x) + latency + per_unit x for x > 0 (t(0) = 0: a
 *  device given nothing is sent nothing), while s(x) stays the compute
 *  speed of the points. This is an FPM plus communication: every
 *  partitioner that takes models (SLBA, MLSBA, MLFBA, the baselines, INPA's
 *  node level) then balances compute and transfer together. The model
 *  assumes the transfer does not overlap the device's computation (its
 *  share arrives, then runs, then returns), which is how an accelerator's
 *  share runs through its host link; where a transfer overlaps, fold only
 *  the part that does not. Use it with models of compute alone: a measured
 *  model already counts what its runs moved. Not saved by
 *  mlsba_model_save(); kept by mlsba_model_clone() and mlsba_model_clear().
 *  \param latency   seconds per transfer, finite, in [0, 1e30].
 *  \param per_unit  seconds per unit of load, finite, in [0, 1e30].
 *  \return 0 or MLSBA_EINVAL. */
MLSBA_EXTERN int mlsba_model_set_transfer(mlsba_model_t *model, double latency,
                                          double per_unit);
/** \brief The transfer cost (0, 0 when none was set). Either output may be
 *  NULL. */
MLSBA_EXTERN int mlsba_model_get_transfer(const mlsba_model_t *model,
                                          double *latency, double *per_unit);

/** \brief Save a model to a file that a person can read: a version line,
 *  the key it belongs to (what changes a speed function: host, device,
 *  driver, kernel, precision, problem shape), max_load, the points, and a
 *  checksum. The write is atomic (temporary file, then rename): a crash
 *  during the save leaves the old file or the new one, never half of one.
 *  \param key  one line, no newline. */
MLSBA_EXTERN int mlsba_model_save(const mlsba_model_t *model, const char *path,
                                  const char *key);
/** \brief Load a model saved for key.
 *  \param key  NULL: whatever key the file names (to show a saved file;
 *              its second line, "key ...", says what it is for).
 *  \return 0; MLSBA_EIO when the file cannot be read; MLSBA_EFORMAT when
 *          it is truncated, corrupted (checksum), of another format version,
 *          or saved for another key; the message names the file and says
 *          which. */
MLSBA_EXTERN int mlsba_model_load(const char *path, const char *key,
                                  mlsba_model_t **model);
/** \brief mlsba_model_load() with what the balancer saved beside each
 *  point: runs[i], the runs behind point i's mean, and sd[i], the
 *  standard deviation of their speeds (1 and 0 where the file has none).
 *  \param room  entries of runs and sd (both may be NULL with room 0);
 *               points past it are loaded without them. */
MLSBA_EXTERN int mlsba_model_load_ex(const char *path, const char *key,
                                     mlsba_model_t **model, unsigned *runs,
                                     double *sd, size_t room);

/** \brief Speed s(x) for a load x >= 0. Needs at least one point. */
MLSBA_EXTERN int mlsba_model_speed(const mlsba_model_t *model, double x,
                                   double *speed);
/** \brief Time t(x) = x / s(x) for a load x >= 0 (t(0) = 0), plus the
 *  transfer when one is set (mlsba_model_set_transfer()). */
MLSBA_EXTERN int mlsba_model_time(const mlsba_model_t *model, double x,
                                  double *time);
/** \brief The largest load x finishing by time T: max { x : t(x) <= T },
 *  limited by max_load. Geometrically, the intersection of s(x) with the
 *  line through the origin of slope 1/T. Exact on the piecewise-linear
 *  model (no iteration). The result is at most MLSBA_LOAD_MAX.
 *  \param time  T, finite and >= 0. */
MLSBA_EXTERN int mlsba_model_load_by_time(const mlsba_model_t *model,
                                          double time, double *load);
/**@}*/

/* ---------------------------------------------------------------------- */
/** \name Partitioning
 *
 *  Partitioners are pure functions of (models, N, options): no I/O, no
 *  clocks, no global state besides the thread's last-error message. They
 *  return integer loads that sum exactly to N and respect every max_load. */
/**@{*/

/** How the bisecting algorithms choose the next line between U and L. */
typedef enum mlsba_line_search {
  /** Regula falsi on the sum of the crossings, with the Illinois
   *  safeguard: the line where the sum is interpolated to reach N. Far
   *  fewer steps, and so fewer group-model points (the default). */
  MLSBA_LINE_INTERPOLATE = 0,
  /** The bisector of the angle between U and L, as in the papers. */
  MLSBA_LINE_BISECT_ANGLE
} mlsba_line_search_t;

/** Options of the expert (_ex) partitioning calls. Initialise with
 *  mlsba_partition_opts_init() so that fields added later get defaults. */
typedef struct mlsba_partition_opts {
  /** Loads are multiples of this block (e.g. 128 columns), except one
   *  device that also takes the leftover edge N mod granularity. 0 or 1:
   *  single units. Supported by SLBA. */
  int64_t granularity;
  /** Multiple-CPM: stop when the relative spread of device times,
   *  (max - min) / max, is at most this (default 0.05). */
  double cpm_eps;
  /** Multiple-CPM: at most this many re-partitionings (default 20). */
  unsigned int cpm_max_iter;
  /** SLBA, MLSBA, MLFBA2: how line B is chosen between U and L. */
  mlsba_line_search_t line_search;
} mlsba_partition_opts_t;

/** What a partitioning call found besides the loads. */
typedef struct mlsba_partition_info {
  /** Largest device time predicted by the models, in seconds. */
  double makespan;
  /** Bisection steps taken (Phase 1 / step 1 of SLBA). */
  unsigned int bisection_steps;
  /** Units (or blocks) assigned one at a time by the refinement step. */
  int64_t refined;
} mlsba_partition_info_t;

/** \brief Set every option to its default. */
MLSBA_EXTERN void mlsba_partition_opts_init(mlsba_partition_opts_t *opts);

/** \brief SLBA: partition n units over p devices so that they finish
 *  together (Lastovetsky & Reddy geometric bisection, then integer
 *  refinement). O(p log n).
 *  \param models  p models, each with at least one point.
 *  \param p       number of devices, >= 1.
 *  \param n       units to distribute, >= 0.
 *  \param[out] loads  p loads summing to n, each within its max_load.
 *  \return 0; MLSBA_EINVAL for bad arguments; MLSBA_ECAPACITY when the
 *          max_loads add up to less than n; MLSBA_ENOMEM. On failure loads
 *          is left unspecified. */
MLSBA_EXTERN int mlsba_partition_slba(const mlsba_model_t *const models[],
                                      size_t p, int64_t n, int64_t loads[]);
/** \brief SLBA with options and a report.
 *  \param opts  NULL for defaults.
 *  \param[out] info  may be NULL. */
MLSBA_EXTERN int mlsba_partition_slba_ex(const mlsba_model_t *const models[],
                                         size_t p, int64_t n,
                                         const mlsba_partition_opts_t *opts,
                                         int64_t loads[],
                                         mlsba_partition_info_t *info);

/** Partitioning algorithms over processing groups. */
typedef enum mlsba_algorithm {
  /** Simultaneous multi-level balancing with partial group models (Ilic &
   *  Sousa): Phase 1 bisection building group points with Procedures 1
   *  and 2, Phase 2 integer refinement. */
  MLSBA_ALGO_MLSBA = 0,
  /** Full group models (SLBA for every load 1..N), then SLBA over groups. */
  MLSBA_ALGO_MLFBA2,
  /** SLBA flat over all devices, groups ignored. */
  MLSBA_ALGO_SLBA,
  /** Constant models re-measured at every distribution until balanced
   *  (Clarke et al. §4). */
  MLSBA_ALGO_MULTIPLE_CPM,
  /** Constant models measured once, at the homogeneous distribution. */
  MLSBA_ALGO_SINGLE_CPM,
  /** Even split between groups and between the devices of a group. */
  MLSBA_ALGO_HOMOGENEOUS,
  /** Divisible load theory closed form with affine cost models fitted to
   *  the device models (equal finish times). */
  MLSBA_ALGO_DLT,
  MLSBA_ALGO_COUNT /**< number of algorithms */
} mlsba_algorithm_t;

/** \brief Name of an algorithm as the tools spell it ("mlsba", "mlfba2",
 *  "slba", "multiple-cpm", "single-cpm", "homogeneous", "dlt"); NULL for
 *  an unknown value. */
MLSBA_EXTERN const char *mlsba_algorithm_name(mlsba_algorithm_t algo);
/** \brief The algorithm of a name; MLSBA_EINVAL for an unknown name. */
MLSBA_EXTERN int mlsba_algorithm_from_name(const char *name,
                                           mlsba_algorithm_t *algo);

/** \brief Partition n units over processing groups at both levels at once.
 *
 *  Devices are given group by group: group i is the next group_size[i]
 *  models, in the group's device order.
 *  \param algo        the algorithm.
 *  \param models      p = sum of group_size models, each with a point.
 *  \param group_size  q sizes, each >= 1.
 *  \param q           number of groups, >= 1.
 *  \param n           units to distribute, >= 0.
 *  \param opts        NULL for defaults.
 *  \param[out] alpha  q group loads summing to n.
 *  \param[out] beta   p device loads: group i's devices sum to alpha[i];
 *                     each within its max_load.
 *  \param[out] points q counts of group-model points the algorithm built
 *                     (a single-device group's model is its device model:
 *                     its points count); may be NULL.
 *  \param[out] info   may be NULL; makespan is max device time.
 *  \return 0; MLSBA_EINVAL; MLSBA_ECAPACITY when the devices cannot hold n;
 *          MLSBA_ENOTSUP for a granularity with an algorithm other than
 *          SLBA; MLSBA_ENOMEM. */
MLSBA_EXTERN int mlsba_partition_groups(
    mlsba_algorithm_t algo, const mlsba_model_t *const models[],
    const size_t group_size[], size_t q, int64_t n,
    const mlsba_partition_opts_t *opts, int64_t alpha[], int64_t beta[],
    size_t points[], mlsba_partition_info_t *info);

/** \brief Largest predicted device time of a distribution: max t_i(loads[i]).
 *  Loads must be >= 0; max_load is not checked here. */
MLSBA_EXTERN int mlsba_partition_makespan(const mlsba_model_t *const models[],
                                          size_t p, const int64_t loads[],
                                          double *makespan);

/** The product that seed 001's DLT partitions (Elhiny §4.1): C = A B with A
 *  n x m broadcast to every node, B m x k split by columns, each node's
 *  columns of C (n x its columns) returned to the master, which does not
 *  compute. */
typedef struct mlsba_dlt_problem {
  int64_t n, m, k;     /**< N, M, K, each >= 1 */
  size_t element_size; /**< s: bytes per element, >= 1 */
} mlsba_dlt_problem_t;

/** Which device of a node receives its columns of B first. */
typedef enum mlsba_dlt_order {
  /** The faster of the two for the accelerator and one core, by the sign
   *  of eq. 20 (the accelerator first when they tie, as with no links). */
  MLSBA_DLT_ORDER_RULE = 0,
  /** The accelerator first, as seed 001 §4.2.1.1 assumes (its tables). */
  MLSBA_DLT_ORDER_ACCELERATOR_FIRST,
  /** One core first, then the accelerator, then the other cores. */
  MLSBA_DLT_ORDER_CORE_FIRST
} mlsba_dlt_order_t;

/** One worker node of seed 001's DLT: identical cores and at most one
 *  accelerator, reached by the master over the node's own network link.
 *  Times are in seconds. A core's time for c columns is
 *  core_op_time N M c + core_setup (p_j, e_j of eq. 14); the accelerator's
 *  adds its PCIe transfers: pcie_byte_time s (M + N) c (l_P of eq. 15, B's
 *  columns in, C's out, no latency). Fitted intercepts may be negative. */
typedef struct mlsba_dlt_node {
  size_t cores;               /**< n_j: cores that compute (>= 0) */
  double core_op_time;        /**< p_j: seconds per multiply-add, > 0 */
  double core_setup;          /**< e_j: seconds, finite */
  int accelerator;            /**< 1 when the node has one (0 or 1) */
  double accelerator_op_time; /**< p_{j,a}: > 0 when accelerator is 1 */
  double accelerator_setup;   /**< e_{j,a}: finite */
  double pcie_byte_time;      /**< l_P: seconds per byte, >= 0 */
  double link_byte_time;      /**< l: the node's link, seconds per byte, >= 0 */
  double link_latency;        /**< b: seconds per message, finite */
  mlsba_dlt_order_t order;    /**< the delivery order (0: eq. 20's rule) */
} mlsba_dlt_node_t;

/** What mlsba_partition_dlt_nodes() found besides the parts. */
typedef struct mlsba_dlt_info {
  /** T: every node's time from the start of A's broadcast to the end of
   *  its C's return (eq. 27), common to every node that takes a part. */
  double time;
  /** Devices given nothing because the equal-finish solution gave them a
   *  negative part (too slow, or too late in their node's delivery). */
  size_t dropped;
} mlsba_dlt_info_t;

/** \brief Seed 001's network-aware DLT (Elhiny, eqs. 12-37): the parts of
 *  K's columns of every device of every node such that all finish at the
 *  same time, counting A's broadcast, each node's sequential delivery of
 *  B's columns over its link (one message per device, in the node's
 *  order: by default the accelerator first unless eq. 20 says a core
 *  first is faster), PCIe both ways and C's
 *  return. Closed form, Theta(sum of cores) per solve; a device whose part
 *  comes out negative is dropped and the rest solved again. With every
 *  link at zero this is the compute-only `dlt` of mlsba_partition_groups().
 *  \param nodes  e nodes, each with at least one device.
 *  \param[out] part  one fraction per device, node by node: the
 *                accelerator (when the node has one) then its cores; >= 0,
 *                summing to 1.
 *  \param[out] columns  may be NULL: the parts as integer columns summing
 *                to K (largest remainder).
 *  \param[out] accelerator_first  may be NULL: per node, 1 when the
 *                accelerator's columns are delivered first (its order,
 *                or eq. 20's rule; 1 for a node with no core taking a part).
 *  \param[out] info  may be NULL.
 *  \return 0; MLSBA_EINVAL naming the bad field; MLSBA_ENOMEM. */
MLSBA_EXTERN int mlsba_partition_dlt_nodes(const mlsba_dlt_problem_t *problem,
                                           const mlsba_dlt_node_t nodes[],
                                           size_t e, double part[],
                                           int64_t columns[],
                                           int accelerator_first[],
                                           mlsba_dlt_info_t *info);
/** \brief The time of a given split under the same model: node j's time
 *  (eq. 27) for the parts part[] (laid out as mlsba_partition_dlt_nodes()
 *  gives them, >= 0; they need not add up to 1 nor finish together), its
 *  devices with a part served in the node's delivery order, and the
 *  largest over the nodes. A node given nothing takes no time (it is sent
 *  nothing, A included).
 *  \param accelerator_first  per node, may be NULL: the order to assume;
 *                NULL for each node's order field (and eq. 20's rule).
 *  \param[out] node_time  may be NULL: e times.
 *  \param[out] time  the largest node time.
 *  \return 0 or MLSBA_EINVAL naming the bad argument. */
MLSBA_EXTERN int mlsba_dlt_nodes_time(const mlsba_dlt_problem_t *problem,
                                      const mlsba_dlt_node_t nodes[], size_t e,
                                      const double part[],
                                      const int accelerator_first[],
                                      double node_time[], double *time);
/**@}*/

/* ---------------------------------------------------------------------- */
/** \name Platforms
 *
 *  A platform is a set of devices arranged in processing groups, read from
 *  a platform file (JSON, docs/platform-file.md). Simulated devices carry a
 *  speed profile, which serves as their complete model; real devices (CPU
 *  cores, OpenCL devices) are described and validated here and measured
 *  at run time.
 *
 *  Lifecycle: load (or parse) -> query -> destroy. A platform is read-only
 *  once loaded and may be queried from several threads. */
/**@{*/
typedef struct mlsba_platform mlsba_platform_t;

/** Kinds of device a platform file can name. */
typedef enum mlsba_device_type {
  MLSBA_DEVICE_SIM = 0, /**< simulated: speed profile, virtual time */
  MLSBA_DEVICE_CPU,     /**< one CPU core */
  MLSBA_DEVICE_OPENCL   /**< one OpenCL device */
} mlsba_device_type_t;

/** \brief Read and validate a platform file.
 *  \return 0; MLSBA_EIO when the file cannot be read; MLSBA_EFORMAT for
 *          malformed JSON or a field with a bad value, the message naming
 *          the file, the field (e.g. "devices[2].speed[1]") and the
 *          problem; MLSBA_ENOMEM. */
MLSBA_EXTERN int mlsba_platform_load(const char *path,
                                     mlsba_platform_t **platform);
/** \brief Parse a platform from JSON text; origin names it in messages. */
MLSBA_EXTERN int mlsba_platform_parse(const char *json, const char *origin,
                                      mlsba_platform_t **platform);
/** \brief Destroy a platform; NULL is ignored. */
MLSBA_EXTERN void mlsba_platform_destroy(mlsba_platform_t *platform);

/** \brief The platform's name (its "name" field, or the file name). */
MLSBA_EXTERN const char *mlsba_platform_name(const mlsba_platform_t *platform);
/** \brief Number of devices, in file order. */
MLSBA_EXTERN size_t mlsba_platform_num_devices(const mlsba_platform_t *pl);
/** \brief Name of device i (NULL when out of range). */
MLSBA_EXTERN const char *mlsba_platform_device_name(const mlsba_platform_t *pl,
                                                    size_t i);
/** \brief Type of device i (MLSBA_DEVICE_SIM when out of range). */
MLSBA_EXTERN mlsba_device_type_t
mlsba_platform_device_type(const mlsba_platform_t *pl, size_t i);
/** \brief What simulated speeds count, when the platform file says
 *  ("columns_of"): columns of a product of m x k (a column of B and C
 *  costs 2 m k flops), so that a tool running another shape can tell.
 *  \param[out] m, k  may be NULL.
 *  \return 1 when the file says, 0 when it does not (or pl is NULL). */
MLSBA_EXTERN int mlsba_platform_columns_of(const mlsba_platform_t *pl,
                                           int64_t *m, int64_t *k);
/** \brief The speed profile of simulated device i as a model, owned by the
 *  platform; NULL for a real device or an index out of range. */
MLSBA_EXTERN const mlsba_model_t *
mlsba_platform_device_model(const mlsba_platform_t *pl, size_t i);
/** \brief Number of processing groups. */
MLSBA_EXTERN size_t mlsba_platform_num_groups(const mlsba_platform_t *pl);
/** \brief Number of devices in group g (0 when out of range). */
MLSBA_EXTERN size_t mlsba_platform_group_size(const mlsba_platform_t *pl,
                                              size_t g);
/** \brief Index (in file order) of the k-th device of group g; SIZE_MAX
 *  for a NULL platform or g or k out of range. */
MLSBA_EXTERN size_t mlsba_platform_group_device(const mlsba_platform_t *pl,
                                                size_t g, size_t k);
/** \brief The models of every device group by group, ready for
 *  mlsba_partition_groups(): models[p] and group_size[q].
 *  \return MLSBA_EINVAL naming the first device without a known model (a
 *          real device, measured only at run time). */
MLSBA_EXTERN int mlsba_platform_grouped_models(const mlsba_platform_t *pl,
                                               const mlsba_model_t *models[],
                                               size_t group_size[]);

/** A communication link as an affine cost: moving b bytes in one message
 *  takes latency + b / bandwidth seconds. */
typedef struct mlsba_link {
  double latency;   /**< seconds per message, >= 0 */
  double bandwidth; /**< bytes per second, > 0; 0 when no link is known */
} mlsba_link_t;

/** \brief Device i's host link, the "link" field of the platform file:
 *  how its share reaches it (an accelerator's PCIe bus). bandwidth is 0
 *  when the file gives none (its transfers are in its speed profile, or
 *  cost nothing).
 *  \return 0, or MLSBA_EINVAL for a NULL argument or i out of range. */
MLSBA_EXTERN int mlsba_platform_device_link(const mlsba_platform_t *pl,
                                            size_t i, mlsba_link_t *link);
/** \brief The network link of the rank that loads this platform, the
 *  "network" field of the platform file (bandwidth 0 when none).
 *  \return 0, or MLSBA_EINVAL for a NULL argument. */
MLSBA_EXTERN int mlsba_platform_network(const mlsba_platform_t *pl,
                                        mlsba_link_t *link);
/** \brief A link fitted to measured transfers (seed 001 §5.2.3-5.2.4):
 *  least squares of seconds over bytes, the slope 1 / bandwidth, the
 *  intercept the latency (0 when the fit's is negative: the fit then goes
 *  through the origin).
 *  \param n  transfers, >= 2; bytes >= 0, seconds > 0.
 *  \return 0; MLSBA_EINVAL for bad input or times that do not grow with
 *          the size. */
MLSBA_EXTERN int mlsba_link_fit(const double bytes[], const double seconds[],
                                size_t n, mlsba_link_t *link);
/** \brief Set device i's host link (as the "link" field would): for a
 *  platform being built or described, before it is shared between
 *  threads. A bandwidth of 0 removes the link.
 *  \return 0, or MLSBA_EINVAL naming the bad argument. */
MLSBA_EXTERN int mlsba_platform_set_device_link(mlsba_platform_t *pl, size_t i,
                                                const mlsba_link_t *link);
/** \brief The affine transfer cost of moving a load of x units through a
 *  link when each unit is unit_bytes bytes: one message, so latency +
 *  x unit_bytes / bandwidth seconds, as mlsba_model_set_transfer() takes it
 *  (latency, per_unit). A link with bandwidth 0 costs nothing.
 *  \return 0, or MLSBA_EINVAL for a NULL argument or unit_bytes < 0. */
MLSBA_EXTERN int mlsba_link_transfer(const mlsba_link_t *link,
                                     double unit_bytes, double *latency,
                                     double *per_unit);

/** One worker node of FPM plus communication
 *  (mlsba_partition_nodes_comm()): its devices' models and its network
 *  link from the master. */
typedef struct mlsba_comm_node {
  /** The devices' models: compute, with an accelerator's host link folded
   *  in by mlsba_model_set_transfer() (or already in a measured model). */
  const mlsba_model_t *const *models;
  size_t devices;    /**< >= 1 */
  mlsba_link_t link; /**< the node's link (bandwidth 0: it costs nothing) */
  /** 0: B's columns arrive as one message before any device starts.
   *  Nonzero: seed 001's delivery, one message per device in the order of
   *  models[] (the accelerator first), each device starting when its own
   *  columns have arrived, so that the first devices compute while the
   *  later ones' columns are on the link. */
  int serial;
} mlsba_comm_node_t;

/** \brief FPM plus communication for seed 001's application (the problem
 *  of mlsba_partition_dlt_nodes(): a master that does not compute sends A
 *  and each node's columns of B, and gets its columns of C back). Node
 *  j's time for x columns is its devices' compute, balanced by SLBA over
 *  their models, plus its link's affine cost: l s N M + 3 b + l s (M + N)
 *  x, with l = 1 / bandwidth and b = latency (A, B's columns and C's
 *  columns as one message each, none overlapping the computation). SLBA
 *  over these node models gives each node's share of K, SLBA inside the
 *  node its devices' columns. A serial node (seed 001's delivery) is
 *  solved instead as a chain: device i of models[] finishes at
 *  l s M (x_0 + ... + x_i) + (i + 1) b + t_i(x_i) after A, all of the
 *  node's devices at the same time (a device whose columns would arrive
 *  too late gets none), then C returns: l s N M + b + T + l s N x + b.
 *  \param[out] share  e: columns of each node, summing to K.
 *  \param[out] columns  one per device, node by node: summing to share.
 *  \param[out] makespan  may be NULL: the slowest node's time under the
 *                model.
 *  \return 0; MLSBA_EINVAL naming the bad argument; MLSBA_ECAPACITY when
 *          the devices' max_loads hold less than K; MLSBA_ENOMEM. */
MLSBA_EXTERN int mlsba_partition_nodes_comm(const mlsba_dlt_problem_t *problem,
                                            const mlsba_comm_node_t nodes[],
                                            size_t e, int64_t share[],
                                            int64_t columns[],
                                            double *makespan);
/** What discovery or a driver knows about a device (strings owned by the
 *  platform; empty when unknown). */
typedef struct mlsba_device_info {
  const char *model;          /**< e.g. "pthread-skylake-avx512-..." */
  const char *driver;         /**< driver or library version */
  unsigned int compute_units; /**< cores, or OpenCL compute units */
  uint64_t memory_bytes;      /**< global memory (accelerators), else 0 */
  int core;                   /**< cpu: core index; opencl: -1 */
  int cl_platform, cl_device; /**< opencl: indices; else -1 */
  /** Devices with the same kind are the same hardware, whose runs the
   *  balancer pools (mlsba_kinds_t); "" for a device of no kind. */
  const char *kind;
} mlsba_device_info_t;

/** \brief What is known about device i (all fields zero or empty for a
 *  simulated device). */
MLSBA_EXTERN int mlsba_platform_device_info(const mlsba_platform_t *pl,
                                            size_t i,
                                            mlsba_device_info_t *info);

/** \brief The "auto" platform: every physical CPU core (hwloc; one device
 *  per core, SMT siblings left to it) and every OpenCL device of every
 *  platform, grouped as the MLSBA paper runs them: accelerator i with
 *  core i, every other core alone (an accelerator beyond the last core
 *  forms a group of its own). Works with no OpenCL device at all.
 *  \return 0; MLSBA_EDEVICE when the topology cannot be read. */
MLSBA_EXTERN int mlsba_platform_discover(mlsba_platform_t **platform);

/** \brief Write a platform as a platform file that can be edited and
 *  loaded again (simulated devices with their profiles, real devices with
 *  their indices). The write is atomic: a temporary file, then rename. */
MLSBA_EXTERN int mlsba_platform_save(const mlsba_platform_t *pl,
                                     const char *path);
/**@}*/

/* ---------------------------------------------------------------------- */
/** \name Divisible loads
 *
 *  A load is work that splits into \c units independent units of equal
 *  cost, numbered 0..units-1. The application says what a device does
 *  with a contiguous range of them: a C function for CPU cores
 *  (mlsba_load_set_cpu()), an OpenCL kernel or any OpenCL commands for
 *  OpenCL devices (mlsba_load_set_opencl() in <mlsba/opencl.h>). The
 *  library does the threads, queues, events, timing and balancing. A
 *  device type the load has no code for gets no units; simulated devices
 *  take virtual time from their speed profile and compute nothing.
 *
 *  Units must cost the same on average: if unit i's cost depends on i
 *  (rows of a fractal), number the units so that every contiguous range
 *  samples the whole (see mlsba_load_mandelbrot()).
 *
 *  Ownership: the load does not own what its callbacks point to; that
 *  data, and the load itself, must stay valid until every balancer or
 *  executor that ran the load is destroyed. Thread safety: configure a
 *  load from one thread; once configured it is only read. */
/**@{*/
typedef struct mlsba_load mlsba_load_t;

/** \brief What a CPU core does with units [first, first + count).
 *
 *  Called on a thread pinned to one core (the same thread from run to
 *  run of an executor), concurrently with other cores working on
 *  disjoint ranges: use one thread (a single-threaded BLAS call, no
 *  OpenMP team), and do not run the executor that calls it. count is
 *  >= 1.
 *  \param user  the pointer given to mlsba_load_set_cpu().
 *  \return 0, or nonzero to report a failure (the run fails with
 *          MLSBA_EDEVICE naming the core and the value). */
typedef int (*mlsba_cpu_fn)(void *user, int64_t first, int64_t count);

/** \brief Create a load of units units.
 *  \param name   names the kernel in saved models and messages: letters,
 *                digits, '-', '_' and '.' (e.g. "blur3x3").
 *  \param units  1 to 2^53 (MLSBA_LOAD_MAX).
 *  \param[out] load  the new load; destroy it with mlsba_load_destroy().
 *  \return 0, MLSBA_EINVAL (the message says which argument) or
 *          MLSBA_ENOMEM. */
MLSBA_EXTERN int mlsba_load_create(const char *name, int64_t units,
                                   mlsba_load_t **load);
/** \brief Destroy a load; NULL is ignored. */
MLSBA_EXTERN void mlsba_load_destroy(mlsba_load_t *load);
/** \brief The CPU code of the load (NULL: cores take no units). */
MLSBA_EXTERN int mlsba_load_set_cpu(mlsba_load_t *load, mlsba_cpu_fn fn,
                                    void *user);
/** \brief What besides the kernel changes a device's speed function, for
 *  saved models: the problem shape that is not the partitioned dimension,
 *  the precision, parameters ("width=4096 iter=256"). Models saved for
 *  another shape are not used. One line; default empty. */
MLSBA_EXTERN int mlsba_load_set_shape(mlsba_load_t *load, const char *shape);
/** \brief The bytes one unit moves through a device's host link (a
 *  GEMM's column: a column of B in and of C out, (k + m) times the
 *  element size, which mlsba_load_gemm() sets). A simulated device with a
 *  "link" adds latency + units x bytes / bandwidth to its time (its speed
 *  profile is its compute); default 0. */
MLSBA_EXTERN int mlsba_load_set_unit_bytes(mlsba_load_t *load, double bytes);
/** \brief Number of units. */
MLSBA_EXTERN int64_t mlsba_load_units(const mlsba_load_t *load);
/** \brief The load's name. */
MLSBA_EXTERN const char *mlsba_load_name(const mlsba_load_t *load);
/**@}*/

/* The built-in loads (GEMM, Mandelbrot) are in <mlsba/loads.h>, included
 * at the end; the calls below that take one name its struct. */
struct mlsba_gemm;

/* ---------------------------------------------------------------------- */
/** \name Executing loads */
/**@{*/

/** Who computes in a group with an accelerator. */
typedef enum mlsba_drive {
  /** The group's core enqueues its accelerators' work, computes its own
   *  share, then waits (MLSBA). */
  MLSBA_DRIVE_SHARED = 0,
  /** The core only drives its accelerators and computes nothing (SLBA's
   *  devoted core); its load must be 0. The driver of a group is its first
   *  device. */
  MLSBA_DRIVE_DEVOTED
} mlsba_drive_t;

/** Runs loads on the devices of a platform. Opening it opens every real
 *  device (OpenCL contexts and queues, the topology for pinning). Each
 *  processing group runs on a thread of its own, pinned to the group's
 *  core: the threads start with the first run and are kept, asleep
 *  between runs, until mlsba_executor_destroy() stops them (a platform of
 *  simulated devices only runs in the calling thread and starts none; a
 *  process forked after a run starts threads of its own at its first).
 *  Thread safety: one run at a time per executor; a run started while
 *  another is in flight, from another thread or from a CPU function of
 *  that run, fails with MLSBA_EINVAL. */
typedef struct mlsba_executor mlsba_executor_t;

/** \brief Open the devices of a platform. The platform must outlive the
 *  executor. \return 0, MLSBA_EDEVICE naming the device and the call that
 *  failed, MLSBA_ENOTSUP for an OpenCL device in a build without OpenCL. */
MLSBA_EXTERN int mlsba_executor_create(const mlsba_platform_t *pl,
                                       mlsba_executor_t **ex);
/** \brief Stop the groups' threads and close the devices; NULL is
 *  ignored. Not while a run is in flight. */
MLSBA_EXTERN void mlsba_executor_destroy(mlsba_executor_t *ex);

/** \brief The largest load every device can hold for this product, in
 *  file order: what fits an accelerator's memory (A plus the slices of B
 *  and C, within its global memory, its largest single allocation and its
 *  mem_limit_mb), a simulated device's max_load, n for a core. */
MLSBA_EXTERN int mlsba_executor_max_loads(mlsba_executor_t *ex,
                                          const struct mlsba_gemm *g,
                                          int64_t max_load[]);

/** \brief Measures every device's host link, as seed 001 measured its
 *  PCIe bus: timed writes of 64 KiB to 32 MiB, least squares
 *  (mlsba_link_fit()). Devices without a link of their own (cores, sim
 *  devices) get bandwidth 0. Takes about a second per accelerator; not
 *  while a run is in flight.
 *  \param[out] links  one per device, in platform order.
 *  \return 0; MLSBA_EDEVICE naming a device whose transfer failed. */
MLSBA_EXTERN int mlsba_executor_measure_links(mlsba_executor_t *ex,
                                              mlsba_link_t links[]);
/** \brief The largest number of units of a load every device can take,
 *  in file order: 0 for a device the load has no code for; what fits an
 *  accelerator (the load's max_units callback); a simulated device's
 *  max_load; all units for a core. */
MLSBA_EXTERN int mlsba_executor_max_units(mlsba_executor_t *ex,
                                          const mlsba_load_t *load,
                                          int64_t max_units[]);
/** \brief Run a load with units[i] units on device i (file order; the
 *  ranges are laid out group by group). Devices start together; time[i]
 *  runs from that common start to the completion of device i's share.
 *  \param[out] failed  may be NULL; receives the index of the device whose
 *                      error is returned, or -1.
 *  \return 0; MLSBA_EINVAL for units that do not sum to the load's or
 *          exceed what a device can take, or while another run of the
 *          executor is in flight; MLSBA_EDEVMEM or MLSBA_EDEVICE naming the
 *          device, the call and the error; MLSBA_EDEVICE when a group's
 *          thread cannot start (nothing ran; the next run tries again).
 *          Every device has stopped writing when the call returns, even
 *          after an error, and the executor is ready for the next run. */
MLSBA_EXTERN int mlsba_executor_run(mlsba_executor_t *ex,
                                    const mlsba_load_t *load,
                                    const int64_t units[], mlsba_drive_t drive,
                                    double time[], long *failed);

/** \brief Compute the product with load[i] columns on device i (file
 *  order; slices are laid out group by group). Devices start together;
 *  time[i] runs from that common start to the completion of device i's
 *  share, transfers included. Simulated devices take virtual time and
 *  leave their columns of C untouched.
 *  \return 0; MLSBA_EINVAL for loads that do not sum to n or exceed a
 *          device's max load; MLSBA_EDEVMEM when an accelerator runs out
 *          of memory; MLSBA_EDEVICE naming the device, the call and the
 *          error. */
MLSBA_EXTERN int mlsba_executor_run_gemm(mlsba_executor_t *ex,
                                         const struct mlsba_gemm *g,
                                         const int64_t load[],
                                         mlsba_drive_t drive, double time[]);
/**@}*/

/* ---------------------------------------------------------------------- */
/** \name Self-adaptive balancing (seed 002 §V.A)
 *
 *  The iterative routine: run, measure every device, add one point per
 *  device to its model, re-partition with the chosen algorithm, run again,
 *  until the times agree within eps at both levels (between groups and
 *  inside each group) or the distribution stops moving. */
/**@{*/

/** Why the routine stopped. */
typedef enum mlsba_stop_reason {
  MLSBA_STOP_BALANCED = 0, /**< device times within eps at both levels
                                and over all devices (imbalance <= eps) */
  MLSBA_STOP_FIXED_POINT,  /**< re-partitioning moved no device by more
                                than eps of its load: the models cannot
                                tell a better distribution (timing noise) */
  MLSBA_STOP_MAX_ITER,     /**< max_iter reached: not converged */
  MLSBA_STOP_CYCLE         /**< a distribution came back: not converged */
} mlsba_stop_reason_t;

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
/** \brief Name of a stop reason as the tools spell it ("balanced",
 *  "fixed-point", "max-iter", "cycle"); NULL for an unknown value. */
MLSBA_EXTERN const char *mlsba_stop_reason_name(mlsba_stop_reason_t stop);
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

/** What one mlsba_balancer_run() measured. */
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

/* The built-in loads, then the factorizations, which use their types. */
#include <mlsba/loads.h>
/* (apart, so that sorting includes keeps the order) */
#include <mlsba/factor.h>

#endif /* MLSBA_H */
