/* LU's update on an OpenCL device.
 * Resident (the default): the device keeps its columns, whole, in its
 * memory from step to step. Each step sends the panel (L11 and L21, from
 * the panel's first row down), its pivots, and the columns that joined
 * the device's share (from the panel's first row down); the row
 * interchanges run on the device (cl/laswp.cl) over all its columns,
 * CLBlast solves with L11 and multiplies by L21, and nothing comes back
 * until the driver asks (resident.c).
 * Streamed: its columns and the panel go to the device at every step, the
 * panel's row interchanges applied on the driving core as they are sent,
 * and the columns come back. */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "cl.h"
#include "laswp_cl_source.h" /* generated from cl/laswp.cl */

static void *at(const mlsba__factor_problem_t *P, int64_t i, int64_t j) {
  return mlsba__factor_at(P, i, j);
}

/* On the device: top jb rows = L11^-1 top, the rest -= L21 top. */
static cl_int solve_and_update(const mlsba__factor_problem_t *P, size_t rows,
                               size_t jb, size_t w, run_t *sh,
                               cl_command_queue *q) {
  size_t h = rows - jb;
  CLBlastStatusCode st;
  if (P->prec == MLSBA_PRECISION_DOUBLE)
    st = CLBlastDtrsm(CLBlastLayoutColMajor, CLBlastSideLeft,
                      CLBlastTriangleLower, CLBlastTransposeNo,
                      CLBlastDiagonalUnit, jb, w, 1.0, sh->panel, 0, rows,
                      sh->cols, 0, rows, q, NULL);
  else
    st = CLBlastStrsm(CLBlastLayoutColMajor, CLBlastSideLeft,
                      CLBlastTriangleLower, CLBlastTransposeNo,
                      CLBlastDiagonalUnit, jb, w, 1.0f, sh->panel, 0, rows,
                      sh->cols, 0, rows, q, NULL);
  if (st == CLBlastSuccess && h > 0) {
    if (P->prec == MLSBA_PRECISION_DOUBLE)
      st = CLBlastDgemm(CLBlastLayoutColMajor, CLBlastTransposeNo,
                        CLBlastTransposeNo, h, w, jb, -1.0, sh->panel, jb, rows,
                        sh->cols, 0, rows, 1.0, sh->cols, jb, rows, q, NULL);
    else
      st =
          CLBlastSgemm(CLBlastLayoutColMajor, CLBlastTransposeNo,
                       CLBlastTransposeNo, h, w, jb, -1.0f, sh->panel, jb, rows,
                       sh->cols, 0, rows, 1.0f, sh->cols, jb, rows, q, NULL);
  }
  return st == CLBlastSuccess ? CL_SUCCESS : (cl_int)st;
}

/* LU: columns [c, c + w) of A. */
static cl_int lu_enqueue(mlsba_opencl_env_t *env, const step_t *st, share_t *sh,
                         run_t *r) {
  const mlsba__factor_problem_t *P = st->P;
  size_t rows = (size_t)(P->m - st->j), w = (size_t)r->w;
  mlsba__factor_swap_rows(P, st->j, st->jb, r->c, r->w);
  cl_int e =
      mlsba__factor_cl_open_run(env, sh, r, rows * w, rows * (size_t)st->jb);
  if (e == CL_SUCCESS)
    e = mlsba__factor_cl_transfer(sh, env->queue, 1, r->cols, st->j, r->c, rows,
                                  w);
  if (e == CL_SUCCESS)
    e = mlsba__factor_cl_transfer(sh, env->queue, 1, r->panel, st->j, st->j,
                                  rows, (size_t)st->jb);
  if (e == CL_SUCCESS)
    e = solve_and_update(P, rows, (size_t)st->jb, w, r, &env->queue);
  if (e == CL_SUCCESS)
    e = mlsba__factor_cl_transfer(sh, env->queue, 0, r->cols, st->j, r->c, rows,
                                  w);
  return e;
}

/* The resident buffers at the device's first resident share (cl_share.c:
 * columns kept whole, the panel's buffer nb columns), with the pivots'
 * buffer and the row-interchange kernel. */
static cl_int open_resident(mlsba_opencl_env_t *env, share_t *sh,
                            const step_t *st, int64_t hi) {
  const mlsba__factor_problem_t *P = sh->P;
  size_t m = (size_t)P->m, nb = (size_t)P->nb;
  cl_int e = CL_SUCCESS;
  if (sh->piv_host == NULL)
    sh->piv_host = malloc(nb * sizeof *sh->piv_host);
  if (sh->piv_host == NULL)
    return CL_OUT_OF_HOST_MEMORY;
  if (P->prec == MLSBA_PRECISION_SINGLE && sh->swap32 == NULL)
    sh->swap32 = clCreateKernel(env->program, "laswp_cols_32", &e);
  size_t most = 1;
  if (e == CL_SUCCESS)
    e = clGetKernelWorkGroupInfo(
        P->prec == MLSBA_PRECISION_DOUBLE ? env->kernel : sh->swap32,
        env->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof most, &most, NULL);
  sh->group = most < 64 ? most : 64;
  if (e == CL_SUCCESS)
    e = mlsba__factor_cl_open_whole(env, sh, st, hi, m * nb);
  if (e == CL_SUCCESS)
    sh->piv = clCreateBuffer(env->context, CL_MEM_READ_ONLY, nb * sizeof(int),
                             NULL, &e);
  return e;
}

/* The panel's row interchanges on the device's columns [lo, hi). */
static cl_int swap_on_device(mlsba_opencl_env_t *env, share_t *sh,
                             const step_t *st, int64_t lo, int64_t hi) {
  const mlsba__factor_problem_t *P = sh->P;
  for (int64_t k = 0; k < st->jb; k++)
    sh->piv_host[k] = P->ipiv[st->j + k] - 1 - (int)st->j;
  size_t bytes = (size_t)st->jb * sizeof(int);
  mlsba__factor_cl_count(sh, 1, bytes);
  cl_int e = clEnqueueWriteBuffer(env->queue, sh->piv, CL_FALSE, 0, bytes,
                                  sh->piv_host, 0, NULL, NULL);
  cl_kernel k = P->prec == MLSBA_PRECISION_DOUBLE ? env->kernel : sh->swap32;
  cl_ulong off = (cl_ulong)(lo - sh->w0) * sh->ld + (cl_ulong)st->j;
  cl_ulong ld = sh->ld;
  cl_int jb = (cl_int)st->jb;
  cl_ulong cols = (cl_ulong)(hi - lo);
  if (e == CL_SUCCESS)
    e = clSetKernelArg(k, 0, sizeof sh->cols, &sh->cols);
  if (e == CL_SUCCESS)
    e = clSetKernelArg(k, 1, sizeof off, &off);
  if (e == CL_SUCCESS)
    e = clSetKernelArg(k, 2, sizeof ld, &ld);
  if (e == CL_SUCCESS)
    e = clSetKernelArg(k, 3, sizeof jb, &jb);
  if (e == CL_SUCCESS)
    e = clSetKernelArg(k, 4, sizeof sh->piv, &sh->piv);
  if (e == CL_SUCCESS)
    e = clSetKernelArg(k, 5, sizeof cols, &cols);
  size_t g = sh->group, global = ((size_t)cols + g - 1) / g * g;
  if (e == CL_SUCCESS)
    e = clEnqueueNDRangeKernel(env->queue, k, 1, NULL, &global, &g, 0, NULL,
                               NULL);
  return e;
}

/* The jb rows of the device's w columns that the solve updates, from the
 * element top of its columns to the packed block (in = 1) or back, on
 * the device: CLBlast's solve in place in the resident columns took time
 * growing with their leading dimension (3.5x the packed solve on pocl at
 * n = 2048). */
static cl_int block_copy(mlsba_opencl_env_t *env, share_t *sh, size_t top,
                         size_t jb, size_t w, int in) {
  size_t s = mlsba__factor_esize(sh->P);
  size_t cols_origin[3] = {top % sh->ld * s, top / sh->ld, 0};
  size_t block_origin[3] = {0, 0, 0}, region[3] = {jb * s, w, 1};
  return in ? clEnqueueCopyBufferRect(env->queue, sh->cols, sh->block,
                                      cols_origin, block_origin, region,
                                      sh->ld * s, 0, jb * s, 0, 0, NULL, NULL)
            : clEnqueueCopyBufferRect(env->queue, sh->block, sh->cols,
                                      block_origin, cols_origin, region, jb * s,
                                      0, sh->ld * s, 0, 0, NULL, NULL);
}

/* LU, resident: columns [lo, hi), the panel sent, all on the device. */
static cl_int lu_resident(mlsba_opencl_env_t *env, share_t *sh,
                          const step_t *st, int64_t lo, int64_t hi) {
  const mlsba__factor_problem_t *P = sh->P;
  size_t rows = (size_t)(P->m - st->j), jb = (size_t)st->jb;
  size_t h = rows - jb, w = (size_t)(hi - lo);
  cl_int e = sh->cols ? CL_SUCCESS : open_resident(env, sh, st, hi);
  if (e == CL_SUCCESS)
    e = mlsba__factor_cl_send_joining(env, sh, st, lo, hi);
  if (e == CL_SUCCESS)
    e = mlsba__factor_cl_rect(sh, env->queue, 1, CL_FALSE, sh->panel, 0, 0,
                              rows, at(P, st->j, st->j), (size_t)P->lda, rows,
                              jb);
  if (e == CL_SUCCESS)
    e = swap_on_device(env, sh, st, lo, hi);
  size_t top = (size_t)(lo - sh->w0) * sh->ld + (size_t)st->j;
  if (e == CL_SUCCESS)
    e = block_copy(env, sh, top, jb, w, 1);
  CLBlastStatusCode b = CLBlastSuccess;
  int dbl = P->prec == MLSBA_PRECISION_DOUBLE;
  if (e == CL_SUCCESS)
    b = dbl ? CLBlastDtrsm(CLBlastLayoutColMajor, CLBlastSideLeft,
                           CLBlastTriangleLower, CLBlastTransposeNo,
                           CLBlastDiagonalUnit, jb, w, 1.0, sh->panel, 0, rows,
                           sh->block, 0, jb, &env->queue, NULL)
            : CLBlastStrsm(CLBlastLayoutColMajor, CLBlastSideLeft,
                           CLBlastTriangleLower, CLBlastTransposeNo,
                           CLBlastDiagonalUnit, jb, w, 1.0f, sh->panel, 0, rows,
                           sh->block, 0, jb, &env->queue, NULL);
  if (e == CL_SUCCESS && b == CLBlastSuccess)
    e = block_copy(env, sh, top, jb, w, 0);
  if (e == CL_SUCCESS && b == CLBlastSuccess && h > 0)
    b = dbl ? CLBlastDgemm(CLBlastLayoutColMajor, CLBlastTransposeNo,
                           CLBlastTransposeNo, h, w, jb, -1.0, sh->panel, jb,
                           rows, sh->block, 0, jb, 1.0, sh->cols, top + jb,
                           sh->ld, &env->queue, NULL)
            : CLBlastSgemm(CLBlastLayoutColMajor, CLBlastTransposeNo,
                           CLBlastTransposeNo, h, w, jb, -1.0f, sh->panel, jb,
                           rows, sh->block, 0, jb, 1.0f, sh->cols, top + jb,
                           sh->ld, &env->queue, NULL);
  return e != CL_SUCCESS ? e : b == CLBlastSuccess ? CL_SUCCESS : (cl_int)b;
}

static cl_int enqueue(mlsba_opencl_env_t *env, const step_t *st, share_t *sh,
                      int64_t lo, int64_t hi) {
  int64_t s0 = st->j + st->jb;
  if (!sh->res->streams[sh->dev])
    return lu_resident(env, sh, st, s0 + lo, s0 + hi);
  sh->run[0] = (run_t){.c = s0 + lo, .w = hi - lo};
  return lu_enqueue(env, st, sh, &sh->run[0]);
}

/* Streamed: the panel and the columns from its first row down. Resident:
 * whole columns, and a panel buffer of nb columns (and the columns' rows
 * of the solve). */
static void footprint(const step_t *st, int stream, double *panel,
                      double *unit) {
  const mlsba__factor_problem_t *P = st->P;
  double rows = (double)(P->m - st->j), s = (double)mlsba__factor_esize(P);
  *panel = rows * (double)st->jb * s;
  *unit = rows * s;
  if (!stream) {
    *unit = (double)(P->m + P->nb) * s;
    *panel = (double)P->m * (double)P->nb * s;
  }
}

/* LU builds the row-interchange kernels (cl/laswp.cl). */
static const mlsba_opencl_ops_t load_ops = {
    .source = mlsba__laswp_cl_source,
    .kernel_name = "laswp_cols_64",
    .build_options = "-cl-std=CL1.2",
    .setup = mlsba__factor_cl_setup,
    .max_units = mlsba__factor_cl_max_units,
    .enqueue = mlsba__factor_cl_enqueue,
    .complete = mlsba__factor_cl_complete,
    .teardown = mlsba__factor_cl_teardown,
};

const mlsba__factor_cl_ops_t mlsba__factor_cl_lu = {
    .load = &load_ops,
    .footprint = footprint,
    .enqueue = enqueue,
    .resident = mlsba__factor_cl_whole_resident,
    .rows = mlsba__factor_cl_whole_rows,
    .fetch = mlsba__factor_cl_whole_fetch,
};
