/*
 * libmlsba's executor: runs a load on the devices of a platform, a share
 * on each, and times every device from a common start. Part of <mlsba.h>,
 * which includes it.
 */
#ifndef MLSBA_EXECUTOR_H
#define MLSBA_EXECUTOR_H

#include <mlsba/load.h>
#include <mlsba/platform.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The built-in product (mlsba_gemm_t) is in <mlsba/loads.h>; the calls
 * below that take one name its struct. */
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
 *  A factorization on it (mlsba_getrf() and the others) leaves it the
 *  memory of its panel copies (at most 2 n nb elements: 25 MiB at n =
 *  8192 in double), which the next factorization takes instead of fresh
 *  pages; the executor keeps the largest until it is destroyed.
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

/** \brief Measures every device's host link, as Elhiny's thesis measured its
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
/** \brief Whether device i computes on the cores of the other devices
 *  (an OpenCL CPU device such as pocl beside the cores): such a device
 *  takes no units of a factorization unless its options ask for it.
 *  \return 1 or 0; MLSBA_EINVAL for no executor or an index out of
 *          range. */
MLSBA_EXTERN int mlsba_executor_device_shares_cores(const mlsba_executor_t *ex,
                                                    size_t i);
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

#ifdef __cplusplus
}
#endif

#endif /* MLSBA_EXECUTOR_H */
