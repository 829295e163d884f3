/* GEMM's OpenCL code: CLBlast on the device's columns. A share is: write
 * A, write the slice of B, GEMM, read the slice of C back, in the device's
 * in-order queue. Buffers are sized to the slice of each share and
 * released after it (the per-device state holds them meanwhile). */
#include <clblast_c.h>
#include <stdlib.h>

#include "../../devices/cl.h"
#include "gemm.h"
#include "gemm_clblast.h"
#include "mlsba/opencl.h"

typedef struct {
  cl_mem a, b, c;
} share_t;

static int gemm_setup(void *user, mlsba_opencl_env_t *env) {
  (void)user;
  env->state = calloc(1, sizeof(share_t));
  return env->state ? 0 : CL_OUT_OF_HOST_MEMORY;
}

static void gemm_teardown(void *user, mlsba_opencl_env_t *env) {
  (void)user;
  free(env->state);
}

static void gemm_complete(void *user, mlsba_opencl_env_t *env) {
  (void)user;
  share_t *s = env->state;
  cl_mem *bufs[3] = {&s->a, &s->b, &s->c};
  for (int i = 0; i < 3; i++)
    if (*bufs[i])
      clReleaseMemObject(*bufs[i]);
  s->a = s->b = s->c = NULL;
}

/* A and the slices of B and C must fit in global memory, and each in the
 * largest single allocation; a device without doubles takes none of a
 * double product (A alone not fitting: the others take the whole load). */
int64_t mlsba__gemm_cl_columns(const mlsba_opencl_env_t *env,
                               mlsba_precision_t precision, int64_t m,
                               int64_t k, int64_t n) {
  double s =
      precision == MLSBA_PRECISION_DOUBLE ? sizeof(double) : sizeof(float);
  double mem = (double)env->global_mem, alloc = (double)env->max_alloc;
  double a = (double)m * (double)k * s;
  double per_column = ((double)m + (double)k) * s;
  if ((precision == MLSBA_PRECISION_DOUBLE &&
       !mlsba__cl_has_fp64(env->device)) ||
      a > alloc || a + per_column > mem)
    return 0;
  double by_mem = (mem - a) / per_column;
  double by_b = alloc / ((double)k * s), by_c = alloc / ((double)m * s);
  double x = by_mem < by_b ? by_mem : by_b;
  x = x < by_c ? x : by_c;
  return x >= (double)n ? n : (int64_t)x;
}

cl_int mlsba__gemm_cl_multiply(mlsba_precision_t precision, size_t m, size_t n,
                               size_t k, cl_mem a, cl_mem b, double beta,
                               cl_mem c, cl_command_queue *queue) {
  CLBlastStatusCode st;
  mlsba__clblast_lock(); /* cl_error.h: CLBlast's caches */
  if (precision == MLSBA_PRECISION_DOUBLE)
    st = CLBlastDgemm(CLBlastLayoutColMajor, CLBlastTransposeNo,
                      CLBlastTransposeNo, m, n, k, 1.0, a, 0, m, b, 0, k, beta,
                      c, 0, m, queue, NULL);
  else
    st = CLBlastSgemm(CLBlastLayoutColMajor, CLBlastTransposeNo,
                      CLBlastTransposeNo, m, n, k, 1.0f, a, 0, m, b, 0, k,
                      (float)beta, c, 0, m, queue, NULL);
  mlsba__clblast_unlock();
  return st == CLBlastSuccess ? CL_SUCCESS : (cl_int)st;
}

static int gemm_max_units(void *user, const mlsba_opencl_env_t *env,
                          int64_t *max) {
  const mlsba_gemm_t *g = user;
  *max = mlsba__gemm_cl_columns(env, g->precision, g->m, g->k, g->n);
  return 0;
}

static int gemm_enqueue(void *user, mlsba_opencl_env_t *env, int64_t off,
                        int64_t n) {
  const mlsba_gemm_t *g = user;
  share_t *sh = env->state;
  size_t s = mlsba__gemm_elem(g), m = (size_t)g->m, k = (size_t)g->k;
  size_t cols = (size_t)n;
  cl_int e;
  sh->a = clCreateBuffer(env->context, CL_MEM_READ_ONLY, m * k * s, NULL, &e);
  if (e == CL_SUCCESS)
    sh->b =
        clCreateBuffer(env->context, CL_MEM_READ_ONLY, k * cols * s, NULL, &e);
  if (e == CL_SUCCESS)
    sh->c =
        clCreateBuffer(env->context, CL_MEM_WRITE_ONLY, m * cols * s, NULL, &e);
  if (e == CL_SUCCESS)
    e = clEnqueueWriteBuffer(env->queue, sh->a, CL_FALSE, 0, m * k * s, g->a, 0,
                             NULL, NULL);
  if (e == CL_SUCCESS)
    e = clEnqueueWriteBuffer(env->queue, sh->b, CL_FALSE, 0, k * cols * s,
                             mlsba__gemm_b_slice(g, off), 0, NULL, NULL);
  if (e != CL_SUCCESS)
    return e;
  if ((e = mlsba__gemm_cl_multiply(g->precision, m, cols, k, sh->a, sh->b, 0,
                                   sh->c, &env->queue)) != CL_SUCCESS)
    return e;
  return clEnqueueReadBuffer(env->queue, sh->c, CL_FALSE, 0, m * cols * s,
                             mlsba__gemm_c_slice(g, off), 0, NULL, NULL);
}

static const mlsba_opencl_ops_t gemm_ops = {
    .setup = gemm_setup,
    .max_units = gemm_max_units,
    .enqueue = gemm_enqueue,
    .complete = gemm_complete,
    .teardown = gemm_teardown,
};

const struct mlsba_opencl_ops *mlsba__gemm_clblast_ops(void) {
  return &gemm_ops;
}
