/* The node kernel C' += A_(b) B_(b) (one step of the blocked product on a
 * rank's sub-matrix) as a load whose units are the columns of C': its
 * operands, what a run of it does, and its device code (kernel_cpu.c,
 * kernel_opencl.c). node.c owns one and sets what it points to. */
#ifndef MLSBA_MPI_KERNEL_H
#define MLSBA_MPI_KERNEL_H

#include <stdint.h>

#include "mlsba.h"

/* What a run of the load does with the columns each device is given.
 * Accelerators keep their slice of C' in their own memory between steps
 * (when it fits: resident), so C' on the host is current only for the
 * columns that no accelerator holds; PLACE and FLUSH move those slices
 * outside the steps, so that a step's time is what moves per step. */
typedef enum {
  /* C'[:, cols] += A_(b) B_(b)[:, cols]. */
  MLSBA__MPI_RUN_STEP = 0,
  /* The same on scratch: a resident accelerator updates a slice of its
   * own that never travels (the balancing runs a step's work, and its
   * models must see what a step moves); C' is left meaningless. */
  MLSBA__MPI_RUN_BALANCE,
  /* Accelerators that keep their columns resident copy them in; nothing
   * is computed. */
  MLSBA__MPI_RUN_PLACE,
  /* Accelerators copy the columns they hold back into C' and hold none;
   * nothing is computed. */
  MLSBA__MPI_RUN_FLUSH
} mlsba__mpi_run_t;

typedef struct mlsba__mpi_kernel {
  /* C' is bm x bn, A_(b) bm x kb, B_(b) kb x bn; kb <= b, the panel width
   * the buffers are made for (the last step of a k that b does not divide
   * is narrower). */
  int64_t bm, bn, b, kb;
  mlsba_precision_t prec;
  /* Column-major, leading dimensions bm, kb and bm; owned by the caller of
   * mlsba__mpi_node_shape. */
  const void *a, *bp;
  void *c;
  mlsba__mpi_run_t run;
  /* 1: the step writes C' = A_(b) B_(b) (beta 0): C' holds what a run
   * before left, and need not be cleared first (a product with beta 0
   * on cores, into a buffer that is already faulted in). */
  int overwrite;
  /* The node's platform, and per device (file order, node-owned) the
   * largest GEMM (m n k) it has run in this process. The first GEMM of a
   * kind builds and loads its kernels (CLBlast's program, pocl's
   * work-group functions; CLBlast's kernels for large products are not
   * those for small ones), which no step should pay for, and which later
   * shapes find built. */
  const mlsba_platform_t *platform;
  double *warmed;
} mlsba__mpi_kernel_t;

/* The CPU half: an mlsba_cpu_fn on an mlsba__mpi_kernel_t (BLIS on the
 * calling core, beta = 1). */
int mlsba__mpi_kernel_cpu(void *kernel, int64_t first, int64_t count);

#ifdef MLSBA_HAVE_OPENCL
struct mlsba_opencl_ops;
/* The OpenCL half (CLBlast), user an mlsba__mpi_kernel_t. */
const struct mlsba_opencl_ops *mlsba__mpi_kernel_opencl_ops(void);
#endif

#endif
