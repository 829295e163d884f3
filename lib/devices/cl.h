/* What the OpenCL halves of the layers above share with the opencl
 * backend: OpenCL errors as messages, whether a device computes in
 * double, the lock around CLBlast (opencl/cl_error.h). The loads and the
 * factorizations include this header, never the backend's folder
 * (tools/check-layers). Only sources built with OpenCL include it. */
#ifndef MLSBA_DEVICES_CL_H
#define MLSBA_DEVICES_CL_H

#include "opencl/cl_error.h"

#endif
