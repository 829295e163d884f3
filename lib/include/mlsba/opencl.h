/*
 * libmlsba OpenCL interop: what an OpenCL device does with a range of a
 * load's units. Include after (or instead of) <mlsba.h>; needs the OpenCL
 * headers (Debian: opencl-headers) and a libmlsba built with OpenCL.
 */
#ifndef MLSBA_OPENCL_H
#define MLSBA_OPENCL_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <mlsba.h>

#ifdef __cplusplus
extern "C" {
#endif

/** What the library gives a load's OpenCL callbacks on one device. */
typedef struct mlsba_opencl_env {
  cl_context context;     /**< the device's context (the library's) */
  cl_device_id device;    /**< the device */
  cl_command_queue queue; /**< an in-order queue of the device */
  /** Built from mlsba_opencl_ops_t::source for this device, or NULL when
   *  the load gives no source (its enqueue calls a library such as
   *  CLBlast instead). */
  cl_program program;
  cl_kernel kernel; /**< ops->kernel_name of program, or NULL */
  const char *name; /**< the platform's name of the device, for messages */
  cl_ulong global_mem, max_alloc; /**< within the platform's mem_limit_mb */
  void *state; /**< the load's own per-device state (setup sets it) */
} mlsba_opencl_env_t;

/** The OpenCL side of a load. Callbacks return 0, or an OpenCL error code
 *  (negative), which the library reports as MLSBA_EDEVMEM for
 *  out-of-memory codes and MLSBA_EDEVICE otherwise, naming the device.
 *  All are called on the thread that drives the device's group; no lock
 *  is held. */
typedef struct mlsba_opencl_ops {
  /** OpenCL C source built for every device the load runs on (the build
   *  log goes into the error message on failure); NULL for none. */
  const char *source;
  /** Kernel created from the program (required with source). */
  const char *kernel_name;
  /** Options for clBuildProgram; NULL for none. */
  const char *build_options;
  /** Once per device, before its first share: create buffers, set the
   *  arguments that never change, keep them in env->state. Optional. */
  int (*setup)(void *user, mlsba_opencl_env_t *env);
  /** The largest number of units the device can hold (memory). Optional:
   *  without it, every unit. */
  int (*max_units)(void *user, const mlsba_opencl_env_t *env, int64_t *max);
  /** Enqueue everything for units [first, first + count) on env->queue
   *  (writes, kernels, reads into the caller's memory) and return without
   *  waiting: the core of the group computes meanwhile. The library then
   *  marks the queue and times the share to that mark. Required. */
  int (*enqueue)(void *user, mlsba_opencl_env_t *env, int64_t first,
                 int64_t count);
  /** After the share completed (or failed): release what enqueue made for
   *  this share only. Optional. */
  void (*complete)(void *user, mlsba_opencl_env_t *env);
  /** When the device is closed or runs another load: release what setup
   *  made. Optional. */
  void (*teardown)(void *user, mlsba_opencl_env_t *env);
} mlsba_opencl_ops_t;

/** \brief The OpenCL code of a load (NULL: OpenCL devices take no units).
 *  ops and user must stay valid as long as the load.
 *  \return 0; MLSBA_EINVAL when enqueue is missing, or source is given
 *          without kernel_name; MLSBA_ENOTSUP in a build without OpenCL. */
MLSBA_EXTERN int mlsba_load_set_opencl(mlsba_load_t *load,
                                       const mlsba_opencl_ops_t *ops,
                                       void *user);

#ifdef __cplusplus
}
#endif

#endif /* MLSBA_OPENCL_H */
