/*
 * libmlsba's platforms: the devices of a machine in processing groups,
 * read from a platform file or discovered, their links, and FPM plus
 * communication over the nodes of Elhiny's application. Part of
 * <mlsba.h>, which includes it.
 */
#ifndef MLSBA_PLATFORM_H
#define MLSBA_PLATFORM_H

#include <mlsba/model.h>
#include <mlsba/partition.h>

#ifdef __cplusplus
extern "C" {
#endif

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
/** \brief The host memory of the rank that loads this platform, the
 *  "memory" field of the platform file, as a link: a copy of b bytes
 *  within it takes latency + b / bandwidth (bandwidth 0 when none).
 *  Factorizations across simulated ranks charge their row copies at it.
 *  \return 0, or MLSBA_EINVAL for a NULL argument. */
MLSBA_EXTERN int mlsba_platform_memory(const mlsba_platform_t *pl,
                                       mlsba_link_t *link);
/** \brief A link fitted to measured transfers (Elhiny §5.2.3-5.2.4):
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
   *  Nonzero: Elhiny's delivery, one message per device in the order of
   *  models[] (the accelerator first), each device starting when its own
   *  columns have arrived, so that the first devices compute while the
   *  later ones' columns are on the link. */
  int serial;
} mlsba_comm_node_t;

/** \brief FPM plus communication for Elhiny's application (the problem
 *  of mlsba_partition_dlt_nodes(): a master that does not compute sends A
 *  and each node's columns of B, and gets its columns of C back). Node
 *  j's time for x columns is its devices' compute, balanced by SLBA over
 *  their models, plus its link's affine cost: l s N M + 3 b + l s (M + N)
 *  x, with l = 1 / bandwidth and b = latency (A, B's columns and C's
 *  columns as one message each, none overlapping the computation). SLBA
 *  over these node models gives each node's share of K, SLBA inside the
 *  node its devices' columns. A serial node (Elhiny's delivery) is
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

#ifdef __cplusplus
}
#endif

#endif /* MLSBA_PLATFORM_H */
