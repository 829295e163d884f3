/*
 * libmlsba's partitioners: pure functions of the devices' models that
 * split N units between processing groups and their devices (SLBA, MLSBA,
 * the baselines, Elhiny's network-aware DLT). Part of <mlsba.h>, which
 * includes it.
 */
#ifndef MLSBA_PARTITION_H
#define MLSBA_PARTITION_H

#include <mlsba/model.h>

#ifdef __cplusplus
extern "C" {
#endif

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

/** The product that Elhiny's DLT partitions (his §4.1): C = A B with A
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
  /** The accelerator first, as Elhiny §4.2.1.1 assumes (its tables). */
  MLSBA_DLT_ORDER_ACCELERATOR_FIRST,
  /** One core first, then the accelerator, then the other cores. */
  MLSBA_DLT_ORDER_CORE_FIRST
} mlsba_dlt_order_t;

/** One worker node of Elhiny's DLT: identical cores and at most one
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

/** \brief Elhiny's network-aware DLT (his eqs. 12-37): the parts of
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

#ifdef __cplusplus
}
#endif

#endif /* MLSBA_PARTITION_H */
