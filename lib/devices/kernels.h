/* The CPU kernels as the layers above the devices reach them: the dense
 * calls every core of the project runs (GEMM, GEMMT, TRSM, TRMM, in
 * cpu/cpu_blas.h) and the description of the kernels chosen (which BLIS
 * sub-configuration, why, how fast: cpu/cpu_kernels.h). The loads, the
 * factorizations and the MPI node kernel include this header, never the
 * backend's folder (tools/check-layers), so the cpu backend can change
 * its files without the layers above following. */
#ifndef MLSBA_DEVICES_KERNELS_H
#define MLSBA_DEVICES_KERNELS_H

#include "cpu/cpu_blas.h"
#include "cpu/cpu_kernels.h"

#endif
