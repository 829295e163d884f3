/*
 * libmlsba: multi-level divisible load balancing for heterogeneous machines.
 *
 * The public umbrella header: it includes every topic header of the
 * library, each documented on its own (and each compiles alone):
 *  - <mlsba/core.h>: the version linked, error codes, stop reasons;
 *  - <mlsba/model.h>: functional performance models (FPM);
 *  - <mlsba/partition.h>: the partitioners;
 *  - <mlsba/platform.h>: platforms, their devices, groups and links;
 *  - <mlsba/load.h>: divisible loads, an application's own;
 *  - <mlsba/executor.h>: running a load on a platform's devices;
 *  - <mlsba/balance.h>: the self-adaptive balancing and the balancer;
 *  - <mlsba/loads.h>: the built-in loads (GEMM, Mandelbrot);
 *  - <mlsba/factor.h>: the hybrid factorizations (LU, Cholesky).
 * Everything here is C11 and free of device headers; OpenCL interop lives
 * in <mlsba/opencl.h>, the MPI layer in <mlsba/mpi.h>.
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

#include <mlsba/balance.h>
#include <mlsba/core.h>
#include <mlsba/executor.h>
#include <mlsba/factor.h>
#include <mlsba/load.h>
#include <mlsba/loads.h>
#include <mlsba/model.h>
#include <mlsba/partition.h>
#include <mlsba/platform.h>

#endif /* MLSBA_H */
