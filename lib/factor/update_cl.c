/* The LU update on an OpenCL device: its columns (from the panel's first
 * row down) and the panel go to the device, CLBlast solves with L11 and
 * multiplies by L21 there, and the columns come back, all on the device's
 * in-order queue while its core computes its own share. The panel's row
 * interchanges are applied to the columns on the driving core as they
 * are sent: a kernel of our own would be built again for every step's
 * load. Columns are streamed at every step (not kept on the device). */
#include <clblast_c.h>
#include <stdlib.h>

#include "../devices/opencl/cl_error.h"
#include "mlsba/opencl.h"
#include "run.h"

typedef struct {
  cl_mem cols, panel;
} share_t;

static size_t esize(const mlsba__factor_problem_t *P) {
  return P->prec == MLSBA_PRECISION_DOUBLE ? sizeof(double) : sizeof(float);
}

static int cl_setup(void *user, mlsba_opencl_env_t *env) {
  (void)user;
  env->state = calloc(1, sizeof(share_t));
  return env->state ? 0 : CL_OUT_OF_HOST_MEMORY;
}

static void cl_teardown(void *user, mlsba_opencl_env_t *env) {
  (void)user;
  free(env->state);
}

static void cl_complete(void *user, mlsba_opencl_env_t *env) {
  (void)user;
  share_t *s = env->state;
  if (s->cols)
    clReleaseMemObject(s->cols);
  if (s->panel)
    clReleaseMemObject(s->panel);
  s->cols = s->panel = NULL;
}

/* The panel and the columns, from its first row down, must fit; a device
 * without doubles takes none of a double factorization. */
static int cl_max_units(void *user, const mlsba_opencl_env_t *env,
                        int64_t *max) {
  const mlsba__factor_step_t *st = user;
  const mlsba__factor_problem_t *P = st->F->P;
  double rows = (double)(P->m - st->j), s = (double)esize(P);
  double panel = rows * (double)st->jb * s, column = rows * s;
  double mem = (double)env->global_mem, alloc = (double)env->max_alloc;
  *max = 0;
  if (P->op != MLSBA__FACTOR_LU || st->remap ||
      (P->prec == MLSBA_PRECISION_DOUBLE && !mlsba__cl_has_fp64(env->device)) ||
      panel > alloc || panel + column > mem)
    return 0;
  double x = (mem - panel) / column, by_alloc = alloc / column;
  x = x < by_alloc ? x : by_alloc;
  *max = x >= (double)st->units ? st->units : (int64_t)x;
  return 0;
}

/* rows x cols of A from (i, j) to or from a buffer packed with ld rows. */
static cl_int transfer(cl_command_queue q, int write, cl_mem buf,
                       const mlsba__factor_problem_t *P, int64_t i, int64_t j,
                       size_t rows, size_t cols) {
  size_t s = esize(P);
  size_t buf_origin[3] = {0, 0, 0};
  size_t host_origin[3] = {(size_t)i * s, (size_t)j, 0};
  size_t region[3] = {rows * s, cols, 1};
  size_t host_pitch = (size_t)P->lda * s;
  return write ? clEnqueueWriteBufferRect(q, buf, CL_FALSE, buf_origin,
                                          host_origin, region, rows * s, 0,
                                          host_pitch, 0, P->a, 0, NULL, NULL)
               : clEnqueueReadBufferRect(q, buf, CL_FALSE, buf_origin,
                                         host_origin, region, rows * s, 0,
                                         host_pitch, 0, P->a, 0, NULL, NULL);
}

/* On the device: top jb rows = L11^-1 top, the rest -= L21 top. */
static cl_int solve_and_update(const mlsba__factor_problem_t *P, size_t rows,
                               size_t jb, size_t w, share_t *sh,
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

static int cl_enqueue(void *user, mlsba_opencl_env_t *env, int64_t first,
                      int64_t count) {
  mlsba__factor_step_t *st = user;
  const mlsba__factor_run_t *F = st->F;
  const mlsba__factor_problem_t *P = F->P;
  long i = mlsba__factor_share_device(F, first);
  if (i < 0)
    return CL_INVALID_VALUE;
  share_t *sh = env->state;
  int64_t c = st->j + st->jb + F->log_off[i];
  size_t rows = (size_t)(P->m - st->j), w = (size_t)count, s = esize(P);
  mlsba__factor_swap_rows(P, st->j, st->jb, c, count);
  cl_int e;
  sh->cols =
      clCreateBuffer(env->context, CL_MEM_READ_WRITE, rows * w * s, NULL, &e);
  if (e == CL_SUCCESS)
    sh->panel = clCreateBuffer(env->context, CL_MEM_READ_ONLY,
                               rows * (size_t)st->jb * s, NULL, &e);
  if (e == CL_SUCCESS)
    e = transfer(env->queue, 1, sh->cols, P, st->j, c, rows, w);
  if (e == CL_SUCCESS)
    e = transfer(env->queue, 1, sh->panel, P, st->j, st->j, rows,
                 (size_t)st->jb);
  if (e == CL_SUCCESS)
    e = solve_and_update(P, rows, (size_t)st->jb, w, sh, &env->queue);
  if (e == CL_SUCCESS)
    e = transfer(env->queue, 0, sh->cols, P, st->j, c, rows, w);
  return e;
}

static const mlsba_opencl_ops_t update_ops = {
    .setup = cl_setup,
    .max_units = cl_max_units,
    .enqueue = cl_enqueue,
    .complete = cl_complete,
    .teardown = cl_teardown,
};

int mlsba__factor_set_opencl(mlsba_load_t *load, mlsba__factor_step_t *st) {
  return mlsba_load_set_opencl(load, &update_ops, st);
}
