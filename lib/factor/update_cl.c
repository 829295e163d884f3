/* The update on an OpenCL device, on its in-order queue while its core
 * computes its own share; columns are streamed at every step (not kept on
 * the device).
 * LU: its columns (from the panel's first row down) and the panel go to
 * the device, CLBlast solves with L11 and multiplies by L21 there, and the
 * columns come back. The panel's row interchanges are applied to the
 * columns on the driving core as they are sent: a kernel of our own would
 * be built again for every step's load.
 * Lower Cholesky: each of its two runs of columns (a unit is a pair) goes
 * with the panel's rows beside it; CLBlast's GEMM updates the run's
 * rectangle, whose part below the run's diagonal block comes back into
 * the matrix and whose diagonal block comes back into host scratch, from
 * which only its lower triangle is copied once the share is done: the
 * upper triangle of the matrix is never written. */
#include <clblast_c.h>
#include <stdlib.h>
#include <string.h>

#include "../devices/opencl/cl_error.h"
#include "mlsba/opencl.h"
#include "run.h"

/* One run of columns of a share: [c, c + w), with its buffers. */
typedef struct {
  cl_mem cols, panel;
  int64_t c, w;
  void *diag; /* Cholesky: the w x w diagonal block, back from the device */
} run_t;

typedef struct {
  run_t run[2];
  const mlsba__factor_problem_t *P;
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

/* The lower triangle of a run's diagonal block, from the scratch. After
 * a failure it writes what may be garbage into columns that the step's
 * copy then restores (run.c). */
static void copy_lower(const mlsba__factor_problem_t *P, const run_t *r) {
  size_t s = esize(P);
  for (int64_t k = 0; k < r->w; k++)
    memcpy((char *)P->a + (size_t)(r->c + k + (r->c + k) * P->lda) * s,
           (const char *)r->diag + (size_t)(k + k * r->w) * s,
           (size_t)(r->w - k) * s);
}

static void cl_complete(void *user, mlsba_opencl_env_t *env) {
  (void)user;
  share_t *s = env->state;
  for (int k = 0; k < 2; k++) {
    run_t *r = &s->run[k];
    if (r->diag)
      copy_lower(s->P, r);
    if (r->cols)
      clReleaseMemObject(r->cols);
    if (r->panel)
      clReleaseMemObject(r->panel);
    free(r->diag);
    *r = (run_t){0};
  }
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
  if (P->op == MLSBA__FACTOR_CHOL_LOWER) { /* a unit: N + 1 elements */
    rows = (double)(P->n - st->j - st->jb);
    panel = rows * (double)st->jb * s;
    column = 2 * (rows + 1) * s;
  }
  *max = 0;
  if (P->op == MLSBA__FACTOR_CHOL_UPPER || st->remap ||
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
static cl_int lu_enqueue(mlsba_opencl_env_t *env,
                         const mlsba__factor_step_t *st, run_t *r) {
  const mlsba__factor_problem_t *P = st->F->P;
  size_t rows = (size_t)(P->m - st->j), w = (size_t)r->w, s = esize(P);
  mlsba__factor_swap_rows(P, st->j, st->jb, r->c, r->w);
  cl_int e;
  r->cols =
      clCreateBuffer(env->context, CL_MEM_READ_WRITE, rows * w * s, NULL, &e);
  if (e == CL_SUCCESS)
    r->panel = clCreateBuffer(env->context, CL_MEM_READ_ONLY,
                              rows * (size_t)st->jb * s, NULL, &e);
  if (e == CL_SUCCESS)
    e = transfer(env->queue, 1, r->cols, P, st->j, r->c, rows, w);
  if (e == CL_SUCCESS)
    e = transfer(env->queue, 1, r->panel, P, st->j, st->j, rows,
                 (size_t)st->jb);
  if (e == CL_SUCCESS)
    e = solve_and_update(P, rows, (size_t)st->jb, w, r, &env->queue);
  if (e == CL_SUCCESS)
    e = transfer(env->queue, 0, r->cols, P, st->j, r->c, rows, w);
  return e;
}

static cl_int gemm_nt(const mlsba__factor_problem_t *P, size_t m, size_t n,
                      size_t k, cl_mem a, size_t lda, cl_mem c, size_t ldc,
                      cl_command_queue *q) {
  CLBlastStatusCode st =
      P->prec == MLSBA_PRECISION_DOUBLE
          ? CLBlastDgemm(CLBlastLayoutColMajor, CLBlastTransposeNo,
                         CLBlastTransposeYes, m, n, k, -1.0, a, 0, lda, a, 0,
                         lda, 1.0, c, 0, ldc, q, NULL)
          : CLBlastSgemm(CLBlastLayoutColMajor, CLBlastTransposeNo,
                         CLBlastTransposeYes, m, n, k, -1.0f, a, 0, lda, a, 0,
                         lda, 1.0f, c, 0, ldc, q, NULL);
  return st == CLBlastSuccess ? CL_SUCCESS : (cl_int)st;
}

/* Lower Cholesky: columns [c, c + w), rows c to n: the rectangle below
 * the diagonal block straight back, the block into scratch. */
static cl_int chol_enqueue(mlsba_opencl_env_t *env,
                           const mlsba__factor_step_t *st, run_t *r) {
  const mlsba__factor_problem_t *P = st->F->P;
  size_t rows = (size_t)(P->n - r->c), w = (size_t)r->w, s = esize(P);
  r->diag = malloc(w * w * s);
  if (r->diag == NULL)
    return CL_OUT_OF_HOST_MEMORY;
  cl_int e;
  r->cols =
      clCreateBuffer(env->context, CL_MEM_READ_WRITE, rows * w * s, NULL, &e);
  if (e == CL_SUCCESS)
    r->panel = clCreateBuffer(env->context, CL_MEM_READ_ONLY,
                              rows * (size_t)st->jb * s, NULL, &e);
  if (e == CL_SUCCESS)
    e = transfer(env->queue, 1, r->cols, P, r->c, r->c, rows, w);
  if (e == CL_SUCCESS)
    e = transfer(env->queue, 1, r->panel, P, r->c, st->j, rows, (size_t)st->jb);
  if (e == CL_SUCCESS)
    e = gemm_nt(P, rows, w, (size_t)st->jb, r->panel, rows, r->cols, rows,
                &env->queue);
  if (e == CL_SUCCESS && rows > w) {
    size_t buf_origin[3] = {w * s, 0, 0};
    size_t host_origin[3] = {(size_t)(r->c + r->w) * s, (size_t)r->c, 0};
    size_t region[3] = {(rows - w) * s, w, 1};
    e = clEnqueueReadBufferRect(env->queue, r->cols, CL_FALSE, buf_origin,
                                host_origin, region, rows * s, 0,
                                (size_t)P->lda * s, 0, P->a, 0, NULL, NULL);
  }
  if (e == CL_SUCCESS) {
    size_t origin[3] = {0, 0, 0}, region[3] = {w * s, w, 1};
    e = clEnqueueReadBufferRect(env->queue, r->cols, CL_FALSE, origin, origin,
                                region, rows * s, 0, w * s, 0, r->diag, 0, NULL,
                                NULL);
  }
  return e;
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
  sh->P = P;
  int64_t s0 = st->j + st->jb, lo = F->log_off[i], hi = lo + count;
  if (P->op == MLSBA__FACTOR_LU) {
    sh->run[0] = (run_t){.c = s0 + lo, .w = count};
    return lu_enqueue(env, st, &sh->run[0]);
  }
  /* Pairs [lo, hi): columns [lo, hi) and [max(N - hi, hi), N - lo). */
  int64_t N = P->n - s0, lo2 = N - hi > hi ? N - hi : hi;
  sh->run[0] = (run_t){.c = s0 + lo, .w = hi - lo};
  sh->run[1] = (run_t){.c = s0 + lo2, .w = N - lo - lo2};
  cl_int e = chol_enqueue(env, st, &sh->run[0]);
  if (e == CL_SUCCESS && sh->run[1].w > 0)
    e = chol_enqueue(env, st, &sh->run[1]);
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
