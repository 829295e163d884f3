/* OpenCL error codes as messages, and what a device supports, shared by
 * the backend and the OpenCL halves of the built-in loads. */
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

#endif
