/*
 * libmlsba's divisible loads: an application's work in equal units, with
 * the code a device runs on a range of them. The built-in loads are in
 * <mlsba/loads.h>, OpenCL code in <mlsba/opencl.h>. Part of <mlsba.h>,
 * which includes it.
 */
#ifndef MLSBA_LOAD_H
#define MLSBA_LOAD_H

#include <mlsba/core.h>

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif

#endif /* MLSBA_LOAD_H */
