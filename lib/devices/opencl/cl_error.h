/* OpenCL error codes as messages, what a device supports, and the lock
 * around CLBlast, shared by the backend and the OpenCL halves of the
 * built-in loads. */
#ifndef MLSBA_DEVICES_OPENCL_CL_ERROR_H
#define MLSBA_DEVICES_OPENCL_CL_ERROR_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <CL/cl_ext.h> /* CL_PLATFORM_NOT_FOUND_KHR */

/* Out-of-memory conditions become MLSBA_EDEVMEM, the rest MLSBA_EDEVICE;
 * the message names the device, the call and the error. */
int mlsba__cl_fail(const char *dev, const char *call, cl_int e);

/* Whether the device computes in double precision (a double-precision
 * floating-point configuration; 0 when it has none or cannot say). */
int mlsba__cl_has_fp64(cl_device_id device);

/* One lock in the process around every call into CLBlast. A call may be
 * the first of its routine, precision, device and kernel (a GEMM of a new
 * size can pick another kernel), and a first call fills caches of
 * CLBlast's tuning database and compiled programs that two threads
 * corrupt when they fill them at once (ASan: a use after free inside
 * clblast::Database with two OpenCL devices). So every call holds it, not
 * only a first: the calls only enqueue, and the queues still run at once.
 * The library's own CLBlast users take it (the factorization's update,
 * GEMM's product, which the MPI node kernel uses too). */
void mlsba__clblast_lock(void);
void mlsba__clblast_unlock(void);

#endif
