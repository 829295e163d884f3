/* The update on an OpenCL device, on its in-order queue while its core
 * computes its own share.
 * LU, resident (the default): the device keeps its columns in its memory
 * from step to step. Each step sends the panel (L11 and L21, from the
 * panel's first row down), its pivots, and the columns that joined the
 * device's share (from the panel's first row down); the row interchanges
 * run on the device (cl/laswp.cl) over all its columns, CLBlast solves
 * with L11 and multiplies by L21, and nothing comes back: columns return
 * to the host only when they leave the share, when the device streams,
 * and at the end (run.c decides when, mlsba__factor_cl_fetch reads).
 * The host copy of a resident column is left untouched meanwhile, so
 * that after a failure the host can replay the updates it missed.
 * LU, streamed (opts.stream, or a share beyond what the device holds):
 * its columns and the panel go to the device at every step, the panel's
 * row interchanges applied on the driving core as they are sent, and the
 * columns come back.
 * Cholesky, resident (the default): a device whose share holds the middle
 * pair (the accelerator laid out rightmost, run.c: lay_out) has one run
 * of columns, centred on the trailing matrix, that moves right by about
 * nb / 2 a step as the matrix shrinks: each step sends the columns that
 * joined it (each from its first row the later updates touch) and the
 * panel's part the run reads (lower: L21's rows from the run down; upper:
 * U12's columns up to the run's last), and CLBlast updates the run's
 * rectangle in place; columns come back when they leave the share (its
 * left end), when the device streams, and at the end, each column only
 * within its triangle. The buffer is a ring of as many columns as the
 * device holds (all the trailing matrix's where they fit): a run that
 * passes its end wraps around to slots its left end freed. Upper
 * Cholesky's panel solves a block row of every trailing column: that
 * block row of the resident columns comes back after each step (run.c:
 * return_next_panel). A share of two runs (a second accelerator, or one
 * updating the next panel's pairs) streams.
 * Cholesky, streamed: each of its two runs of columns (a unit is a pair)
 * goes with the panel's part beside it (lower: L21's rows of the run and
 * below; upper: U12's columns up to the run's last); CLBlast's GEMM
 * updates the run's rectangle, whose part off the run's diagonal block
 * comes back into the matrix and whose diagonal block comes back into
 * host scratch, from which only its triangle is copied once the share is
 * done: the other triangle of the matrix is never written.
 * Every write and read is counted in the run's bytes and transfers. */
#include <clblast_c.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../devices/cl.h"
#include "laswp_cl_source.h" /* generated from cl/laswp.cl */
#include "mlsba/opencl.h"
#include "run.h"

/* One run of columns of a share: [c, c + w), with its buffers. */
typedef struct {
  cl_mem cols, panel;
  int64_t c, w;
  void *diag; /* Cholesky: the w x w diagonal block, back from the device */
} run_t;

/* A device's state for one factorization: the streamed runs of the
 * share in flight, and the resident columns: LU's [w0, w0 + cap) of m
 * rows each, with the panel and its pivots; Cholesky's a ring of cap
 * columns of rows [row0, n) (slot()), with the panel's part. */
typedef struct {
  run_t run[2];
  const mlsba__factor_problem_t *P;
  mlsba__factor_run_t *F;
  size_t dev;
  cl_mem cols, panel, piv;
  int64_t w0, cap;
  int64_t row0;  /* the first row the columns hold (Cholesky; LU: 0) */
  int *piv_host; /* nb pivots, 0-based from the panel's first row */
  cl_kernel swap32;
  size_t group; /* the work-group size of every swap launch */
  size_t ld;    /* rows per resident column: m */
  cl_mem block; /* nb x cap: the rows the solve updates, packed */
} share_t;

static int cl_setup(void *user, mlsba_opencl_env_t *env) {
  (void)user;
  env->state = calloc(1, sizeof(share_t));
  return env->state ? 0 : CL_OUT_OF_HOST_MEMORY;
}

static void release_resident(share_t *sh) {
  if (sh->cols)
    clReleaseMemObject(sh->cols);
  if (sh->panel)
    clReleaseMemObject(sh->panel);
  if (sh->piv)
    clReleaseMemObject(sh->piv);
  if (sh->block)
    clReleaseMemObject(sh->block);
  sh->cols = sh->panel = sh->piv = sh->block = NULL;
  sh->w0 = sh->cap = sh->row0 = 0;
}

/* When the device runs another load or closes: the factorization is
 * over (its run released the columns already; user is gone). */
static void cl_teardown(void *user, mlsba_opencl_env_t *env) {
  (void)user;
  share_t *sh = env->state;
  if (sh == NULL)
    return;
  release_resident(sh);
  if (sh->swap32)
    clReleaseKernel(sh->swap32);
  free(sh->piv_host);
  free(sh);
}

static void count(share_t *sh, int write, size_t bytes) {
  mlsba__factor_run_t *F = sh->F;
  if (write)
    F->to_dev[sh->dev] += (int64_t)bytes;
  else
    F->from_dev[sh->dev] += (int64_t)bytes;
  F->moves[sh->dev]++;
}

/* The triangle (lower, or upper for upper Cholesky) of a run's diagonal
 * block, from the scratch. After a failure it writes what may be garbage
 * into columns that the step's copy then restores (run.c). */
static void copy_triangle(const mlsba__factor_problem_t *P, const run_t *r) {
  size_t s = mlsba__factor_esize(P);
  int upper = P->op == MLSBA__FACTOR_CHOL_UPPER;
  for (int64_t k = 0; k < r->w; k++) {
    int64_t first = upper ? 0 : k, count = upper ? k + 1 : r->w - k;
    memcpy((char *)P->a + (size_t)(r->c + first + (r->c + k) * P->lda) * s,
           (const char *)r->diag + (size_t)(first + k * r->w) * s,
           (size_t)count * s);
  }
}

static void cl_complete(void *user, mlsba_opencl_env_t *env) {
  (void)user;
  share_t *s = env->state;
  for (int k = 0; k < 2; k++) {
    run_t *r = &s->run[k];
    if (r->diag)
      copy_triangle(s->P, r);
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
  double rows = (double)(P->m - st->j), s = (double)mlsba__factor_esize(P);
  double panel = rows * (double)st->jb * s, column = rows * s;
  double mem = (double)env->global_mem, alloc = (double)env->max_alloc;
  if (P->op != MLSBA__FACTOR_LU) { /* a unit: N + 1 elements */
    rows = (double)(P->n - st->j - st->jb);
    panel = rows * (double)st->jb * s;
    column = 2 * (rows + 1) * s;
  }
  if (P->op == MLSBA__FACTOR_LU && !st->F->o.stream) {
    /* resident: whole columns, and a panel buffer of nb columns */
    column = (double)(P->m + P->nb) * s; /* and its rows of the solve */
    panel = (double)P->m * (double)P->nb * s;
  } else if (!st->F->o.stream) { /* resident pairs, from this step's row */
    rows = (double)(P->n - st->j);
    column = 2 * rows * s;
    panel = rows * (double)P->nb * s;
  }
  *max = 0;
  if (st->remap ||
      (P->prec == MLSBA_PRECISION_DOUBLE && !mlsba__cl_has_fp64(env->device)) ||
      panel > alloc || panel + column > mem)
    return 0;
  double x = (mem - panel) / column, by_alloc = alloc / column;
  x = x < by_alloc ? x : by_alloc;
  *max = x >= (double)st->units ? st->units : (int64_t)x;
  return 0;
}

/* rows x cols between host memory (the element at host, hld rows per
 * column) and a buffer from its element (r, c), ld rows per column. */
static cl_int rect(share_t *sh, cl_command_queue q, int write, cl_bool block,
                   cl_mem buf, size_t r, size_t c, size_t ld, void *host,
                   size_t hld, size_t rows, size_t cols) {
  size_t s = mlsba__factor_esize(sh->P);
  size_t buf_origin[3] = {r * s, c, 0}, host_origin[3] = {0, 0, 0};
  size_t region[3] = {rows * s, cols, 1};
  if (rows == 0 || cols == 0)
    return CL_SUCCESS;
  count(sh, write, rows * cols * s);
  return write ? clEnqueueWriteBufferRect(q, buf, block, buf_origin,
                                          host_origin, region, ld * s, 0,
                                          hld * s, 0, host, 0, NULL, NULL)
               : clEnqueueReadBufferRect(q, buf, block, buf_origin, host_origin,
                                         region, ld * s, 0, hld * s, 0, host, 0,
                                         NULL, NULL);
}

static void *at(const mlsba__factor_problem_t *P, int64_t i, int64_t j) {
  return (char *)P->a + (size_t)(i + j * P->lda) * mlsba__factor_esize(P);
}

/* rows x cols of A from (i, j) to or from a buffer packed with rows rows. */
static cl_int transfer(share_t *sh, cl_command_queue q, int write, cl_mem buf,
                       int64_t i, int64_t j, size_t rows, size_t cols) {
  return rect(sh, q, write, CL_FALSE, buf, 0, 0, rows, at(sh->P, i, j),
              (size_t)sh->P->lda, rows, cols);
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
                         const mlsba__factor_step_t *st, share_t *sh,
                         run_t *r) {
  const mlsba__factor_problem_t *P = st->F->P;
  size_t rows = (size_t)(P->m - st->j), w = (size_t)r->w,
         s = mlsba__factor_esize(P);
  mlsba__factor_swap_rows(P, st->j, st->jb, r->c, r->w);
  cl_int e;
  r->cols =
      clCreateBuffer(env->context, CL_MEM_READ_WRITE, rows * w * s, NULL, &e);
  if (e == CL_SUCCESS)
    r->panel = clCreateBuffer(env->context, CL_MEM_READ_ONLY,
                              rows * (size_t)st->jb * s, NULL, &e);
  if (e == CL_SUCCESS)
    e = transfer(sh, env->queue, 1, r->cols, st->j, r->c, rows, w);
  if (e == CL_SUCCESS)
    e = transfer(sh, env->queue, 1, r->panel, st->j, st->j, rows,
                 (size_t)st->jb);
  if (e == CL_SUCCESS)
    e = solve_and_update(P, rows, (size_t)st->jb, w, r, &env->queue);
  if (e == CL_SUCCESS)
    e = transfer(sh, env->queue, 0, r->cols, st->j, r->c, rows, w);
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

/* Upper Cholesky: C -= A^T B, A the panel's rows (jb x rows) and B its
 * columns from the element b (jb x n). */
static cl_int gemm_tn(const mlsba__factor_problem_t *P, size_t m, size_t n,
                      size_t k, cl_mem a, size_t b, cl_mem c, size_t ldc,
                      cl_command_queue *q) {
  CLBlastStatusCode st =
      P->prec == MLSBA_PRECISION_DOUBLE
          ? CLBlastDgemm(CLBlastLayoutColMajor, CLBlastTransposeYes,
                         CLBlastTransposeNo, m, n, k, -1.0, a, 0, k, a, b, k,
                         1.0, c, 0, ldc, q, NULL)
          : CLBlastSgemm(CLBlastLayoutColMajor, CLBlastTransposeYes,
                         CLBlastTransposeNo, m, n, k, -1.0f, a, 0, k, a, b, k,
                         1.0f, c, 0, ldc, q, NULL);
  return st == CLBlastSuccess ? CL_SUCCESS : (cl_int)st;
}

/* Upper Cholesky: columns [c, c + w), rows s0 to c + w (the trailing
 * matrix's first row down to the run's diagonal block), with the panel's
 * rows above them (U12, jb x (c + w - s0)): the rectangle above the
 * diagonal block straight back, the block into scratch. */
static cl_int chol_upper_enqueue(mlsba_opencl_env_t *env,
                                 const mlsba__factor_step_t *st, share_t *sh,
                                 run_t *r) {
  const mlsba__factor_problem_t *P = st->F->P;
  int64_t s0 = st->j + st->jb;
  size_t rows = (size_t)(r->c + r->w - s0), w = (size_t)r->w,
         s = mlsba__factor_esize(P);
  size_t jb = (size_t)st->jb, above = rows - w;
  r->diag = malloc(w * w * s);
  if (r->diag == NULL)
    return CL_OUT_OF_HOST_MEMORY;
  cl_int e;
  r->cols =
      clCreateBuffer(env->context, CL_MEM_READ_WRITE, rows * w * s, NULL, &e);
  if (e == CL_SUCCESS)
    r->panel =
        clCreateBuffer(env->context, CL_MEM_READ_ONLY, jb * rows * s, NULL, &e);
  if (e == CL_SUCCESS)
    e = transfer(sh, env->queue, 1, r->cols, s0, r->c, rows, w);
  if (e == CL_SUCCESS)
    e = transfer(sh, env->queue, 1, r->panel, st->j, s0, jb, rows);
  if (e == CL_SUCCESS)
    e = gemm_tn(P, rows, w, jb, r->panel, above * jb, r->cols, rows,
                &env->queue);
  if (e == CL_SUCCESS && above > 0)
    e = rect(sh, env->queue, 0, CL_FALSE, r->cols, 0, 0, rows, at(P, s0, r->c),
             (size_t)P->lda, above, w);
  if (e == CL_SUCCESS)
    e = rect(sh, env->queue, 0, CL_FALSE, r->cols, above, 0, rows, r->diag, w,
             w, w);
  return e;
}

/* Lower Cholesky: columns [c, c + w), rows c to n: the rectangle below
 * the diagonal block straight back, the block into scratch. */
static cl_int chol_enqueue(mlsba_opencl_env_t *env,
                           const mlsba__factor_step_t *st, share_t *sh,
                           run_t *r) {
  const mlsba__factor_problem_t *P = st->F->P;
  size_t rows = (size_t)(P->n - r->c), w = (size_t)r->w,
         s = mlsba__factor_esize(P);
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
    e = transfer(sh, env->queue, 1, r->cols, r->c, r->c, rows, w);
  if (e == CL_SUCCESS)
    e = transfer(sh, env->queue, 1, r->panel, r->c, st->j, rows,
                 (size_t)st->jb);
  if (e == CL_SUCCESS)
    e = gemm_nt(P, rows, w, (size_t)st->jb, r->panel, rows, r->cols, rows,
                &env->queue);
  if (e == CL_SUCCESS && rows > w)
    e = rect(sh, env->queue, 0, CL_FALSE, r->cols, w, 0, rows,
             at(P, r->c + r->w, r->c), (size_t)P->lda, rows - w, w);
  if (e == CL_SUCCESS)
    e = rect(sh, env->queue, 0, CL_FALSE, r->cols, 0, 0, rows, r->diag, w, w,
             w);
  return e;
}

/* The resident buffer at the device's first resident share: as many
 * columns as it can hold of this step's, ending at the share's last
 * column (later shares, which end there too, fall inside), with the
 * panel's buffer and its pivots. */
static cl_int open_resident(mlsba_opencl_env_t *env, share_t *sh,
                            const mlsba__factor_step_t *st, int64_t hi) {
  const mlsba__factor_problem_t *P = sh->P;
  size_t s = mlsba__factor_esize(P), m = (size_t)P->m, nb = (size_t)P->nb;
  int64_t cap = sh->F->cl_cap[sh->dev];
  sh->ld = (size_t)P->m;
  sh->cap = cap < st->units ? cap : st->units;
  sh->w0 = hi - sh->cap;
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
    sh->cols = clCreateBuffer(env->context, CL_MEM_READ_WRITE,
                              (size_t)sh->cap * sh->ld * s, NULL, &e);
  if (e == CL_SUCCESS)
    sh->panel =
        clCreateBuffer(env->context, CL_MEM_READ_ONLY, m * nb * s, NULL, &e);
  if (e == CL_SUCCESS)
    sh->piv = clCreateBuffer(env->context, CL_MEM_READ_ONLY, nb * sizeof(int),
                             NULL, &e);
  if (e == CL_SUCCESS)
    sh->block = clCreateBuffer(env->context, CL_MEM_READ_WRITE,
                               nb * (size_t)sh->cap * s, NULL, &e);
  return e;
}

/* Where column c lies in the resident buffer: LU's from w0 on; a
 * Cholesky column in slot (c - row0) mod cap, a ring, since its run
 * moves right step by step and any run of cap columns fits (a device
 * that holds the whole trailing matrix never wraps). A run of columns
 * lies in pieces, each up to the ring's end. */
static size_t slot(const share_t *sh, int64_t c) {
  return (size_t)(sh->P->op == MLSBA__FACTOR_LU ? c - sh->w0
                                                : (c - sh->row0) % sh->cap);
}

static int64_t piece_end(const share_t *sh, int64_t x, int64_t y) {
  if (sh->P->op == MLSBA__FACTOR_LU)
    return y;
  int64_t end = x + sh->cap - (int64_t)slot(sh, x);
  return end < y ? end : y;
}

/* The rows [*r0, *r1) of the columns [a, b) that this step and the later
 * ones update: LU from the panel's first row down; lower Cholesky from
 * the run's diagonal down; upper from the trailing matrix's first row to
 * the run's last row. */
static void column_rows(const share_t *sh, const mlsba__factor_step_t *st,
                        int64_t a, int64_t b, int64_t *r0, int64_t *r1) {
  const mlsba__factor_problem_t *P = sh->P;
  *r0 = P->op == MLSBA__FACTOR_LU           ? st->j
        : P->op == MLSBA__FACTOR_CHOL_LOWER ? a
                                            : st->j + st->jb;
  *r1 = P->op == MLSBA__FACTOR_CHOL_UPPER ? b : P->m;
}

/* The columns [lo, hi) that are not resident yet go to the device (their
 * rows of column_rows); they are resident from here on (and their host
 * copies the checkpoint of this step). */
static cl_int send_joining(mlsba_opencl_env_t *env, share_t *sh,
                           const mlsba__factor_step_t *st, int64_t lo,
                           int64_t hi) {
  mlsba__factor_run_t *F = sh->F;
  const mlsba__factor_problem_t *P = sh->P;
  size_t i = sh->dev;
  int64_t rlo = F->res_lo[i], rhi = F->res_hi[i];
  int64_t runs[2][2] = {{lo, rlo < rhi ? rlo : hi}, {rlo < rhi ? rhi : hi, hi}};
  F->res_lo[i] = lo;
  F->res_hi[i] = hi;
  cl_int e = CL_SUCCESS;
  for (int k = 0; k < 2 && e == CL_SUCCESS; k++) {
    int64_t a = runs[k][0], b = runs[k][1];
    for (int64_t c = a; c < b; c++)
      F->sent_row[c] = st->j;
    for (int64_t x = a, y; x < b && e == CL_SUCCESS; x = y) {
      y = piece_end(sh, x, b);
      int64_t r0, r1;
      column_rows(sh, st, x, y, &r0, &r1);
      e = rect(sh, env->queue, 1, CL_FALSE, sh->cols, (size_t)(r0 - sh->row0),
               slot(sh, x), sh->ld, at(P, r0, x), (size_t)P->lda,
               (size_t)(r1 - r0), (size_t)(y - x));
    }
  }
  return e;
}

/* The panel's row interchanges on the device's columns [lo, hi). */
static cl_int swap_on_device(mlsba_opencl_env_t *env, share_t *sh,
                             const mlsba__factor_step_t *st, int64_t lo,
                             int64_t hi) {
  const mlsba__factor_problem_t *P = sh->P;
  for (int64_t k = 0; k < st->jb; k++)
    sh->piv_host[k] = P->ipiv[st->j + k] - 1 - (int)st->j;
  size_t bytes = (size_t)st->jb * sizeof(int);
  count(sh, 1, bytes);
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
                          const mlsba__factor_step_t *st, int64_t lo,
                          int64_t hi) {
  const mlsba__factor_problem_t *P = sh->P;
  size_t rows = (size_t)(P->m - st->j), jb = (size_t)st->jb;
  size_t h = rows - jb, w = (size_t)(hi - lo);
  cl_int e = sh->cols ? CL_SUCCESS : open_resident(env, sh, st, hi);
  if (e == CL_SUCCESS)
    e = send_joining(env, sh, st, lo, hi);
  if (e == CL_SUCCESS)
    e = rect(sh, env->queue, 1, CL_FALSE, sh->panel, 0, 0, rows,
             at(P, st->j, st->j), (size_t)P->lda, rows, jb);
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

/* Cholesky's resident buffer at the device's first resident share: a
 * ring of cap columns (as many as the device holds, the pairs of cl_cap,
 * at most the trailing matrix's), each from this step's first row down,
 * and the panel's buffer. */
static cl_int open_chol(mlsba_opencl_env_t *env, share_t *sh,
                        const mlsba__factor_step_t *st) {
  const mlsba__factor_problem_t *P = sh->P;
  int64_t cap = 2 * sh->F->cl_cap[sh->dev];
  size_t s = mlsba__factor_esize(P);
  sh->row0 = st->j + st->jb;
  sh->ld = (size_t)(P->n - sh->row0);
  sh->cap = cap < P->n - sh->row0 ? cap : P->n - sh->row0;
  cl_int e;
  sh->cols = clCreateBuffer(env->context, CL_MEM_READ_WRITE,
                            (size_t)sh->cap * sh->ld * s, NULL, &e);
  if (e == CL_SUCCESS)
    sh->panel = clCreateBuffer(env->context, CL_MEM_READ_ONLY,
                               sh->ld * (size_t)P->nb * s, NULL, &e);
  return e;
}

/* C -= op(A) op(B) in one product, every operand from an element offset
 * (a, b, c) of its buffer: the resident Cholesky update. */
static cl_int gemm_at(const mlsba__factor_problem_t *P, int ta, int tb,
                      size_t m, size_t n, size_t k, cl_mem A, size_t a,
                      size_t lda, cl_mem B, size_t b, size_t ldb, cl_mem C,
                      size_t c, size_t ldc, cl_command_queue *q) {
  CLBlastTranspose tra = ta ? CLBlastTransposeYes : CLBlastTransposeNo;
  CLBlastTranspose trb = tb ? CLBlastTransposeYes : CLBlastTransposeNo;
  CLBlastStatusCode st =
      P->prec == MLSBA_PRECISION_DOUBLE
          ? CLBlastDgemm(CLBlastLayoutColMajor, tra, trb, m, n, k, -1.0, A, a,
                         lda, B, b, ldb, 1.0, C, c, ldc, q, NULL)
          : CLBlastSgemm(CLBlastLayoutColMajor, tra, trb, m, n, k, -1.0f, A, a,
                         lda, B, b, ldb, 1.0f, C, c, ldc, q, NULL);
  return st == CLBlastSuccess ? CL_SUCCESS : (cl_int)st;
}

/* Cholesky, resident: columns [a, b) (the share's pairs, one run), the
 * joining ones and the panel's part they read sent, and their rectangle
 * updated in one product: lower rows a to n with L21's rows a to n,
 * upper rows s0 to b with U12's columns s0 to b. The product writes the
 * other triangle of the run's diagonal block too, on the device only:
 * nothing reads it back (mlsba__factor_cl_fetch copies each column's own
 * triangle). */
static cl_int chol_resident(mlsba_opencl_env_t *env, share_t *sh,
                            const mlsba__factor_step_t *st, int64_t a,
                            int64_t b) {
  const mlsba__factor_problem_t *P = sh->P;
  int64_t s0 = st->j + st->jb, n = P->n;
  size_t jb = (size_t)st->jb;
  int lower = P->op == MLSBA__FACTOR_CHOL_LOWER;
  cl_int e = sh->cols ? CL_SUCCESS : open_chol(env, sh, st);
  if (e == CL_SUCCESS)
    e = send_joining(env, sh, st, a, b);
  /* the panel's part: L21's rows a to n, or U12's columns s0 to b */
  size_t prows = (size_t)(lower ? n - a : b - s0);
  if (e == CL_SUCCESS)
    e = lower ? rect(sh, env->queue, 1, CL_FALSE, sh->panel, 0, 0, prows,
                     at(P, a, st->j), (size_t)P->lda, prows, jb)
              : rect(sh, env->queue, 1, CL_FALSE, sh->panel, 0, 0, jb,
                     at(P, st->j, s0), (size_t)P->lda, jb, prows);
  for (int64_t x = a, y; x < b && e == CL_SUCCESS; x = y) {
    y = piece_end(sh, x, b);
    size_t w = (size_t)(y - x), col = slot(sh, x) * sh->ld;
    if (lower) /* rows x to n -= L21(x..) L21(x..y)^T */
      e = gemm_at(P, 0, 1, (size_t)(n - x), w, jb, sh->panel, (size_t)(x - a),
                  prows, sh->panel, (size_t)(x - a), prows, sh->cols,
                  col + (size_t)(x - sh->row0), sh->ld, &env->queue);
    else /* rows s0 to y -= U12(s0..y)^T U12(x..y) */
      e = gemm_at(P, 1, 0, (size_t)(y - s0), w, jb, sh->panel, 0, jb, sh->panel,
                  (size_t)(x - s0) * jb, jb, sh->cols,
                  col + (size_t)(s0 - sh->row0), sh->ld, &env->queue);
  }
  return e;
}

static int enqueue_share(void *user, mlsba_opencl_env_t *env, int64_t first,
                         int64_t count) {
  mlsba__factor_step_t *st = user;
  mlsba__factor_run_t *F = st->F;
  const mlsba__factor_problem_t *P = F->P;
  long i = mlsba__factor_share_device(F, first);
  if (i < 0)
    return CL_INVALID_VALUE;
  share_t *sh = env->state;
  sh->P = P;
  sh->F = F;
  sh->dev = (size_t)i;
  F->cl_env[i] = env;
  int64_t s0 = st->j + st->jb, lo = F->log_off[i], hi = lo + count;
  if (P->op == MLSBA__FACTOR_LU && !F->streams[i])
    return lu_resident(env, sh, st, s0 + lo, s0 + hi);
  if (P->op == MLSBA__FACTOR_LU) {
    sh->run[0] = (run_t){.c = s0 + lo, .w = count};
    return lu_enqueue(env, st, sh, &sh->run[0]);
  }
  /* Pairs [lo, hi): columns [lo, hi) and [max(N - hi, hi), N - lo). */
  int64_t N = P->n - s0, lo2 = N - hi > hi ? N - hi : hi;
  if (!F->streams[i]) /* one run: hi is the middle pair's */
    return chol_resident(env, sh, st, s0 + lo, s0 + N - lo);
  sh->run[0] = (run_t){.c = s0 + lo, .w = hi - lo};
  sh->run[1] = (run_t){.c = s0 + lo2, .w = N - lo - lo2};
  cl_int (*run)(mlsba_opencl_env_t *, const mlsba__factor_step_t *, share_t *,
                run_t *) =
      P->op == MLSBA__FACTOR_CHOL_UPPER ? chol_upper_enqueue : chol_enqueue;
  cl_int e = run(env, st, sh, &sh->run[0]);
  if (e == CL_SUCCESS && sh->run[1].w > 0)
    e = run(env, st, sh, &sh->run[1]);
  return e;
}

/* A share's CLBlast calls hold the process's lock around CLBlast
 * (cl_error.h); its whole enqueue does, as its calls are many. */
static int cl_enqueue(void *user, mlsba_opencl_env_t *env, int64_t first,
                      int64_t count) {
  mlsba__clblast_lock();
  int e = enqueue_share(user, env, first, count);
  mlsba__clblast_unlock();
  return e;
}

/* LU builds the row-interchange kernels (cl/laswp.cl); Cholesky needs
 * none. */
static const mlsba_opencl_ops_t lu_ops = {
    .source = mlsba__laswp_cl_source,
    .kernel_name = "laswp_cols_64",
    .build_options = "-cl-std=CL1.2",
    .setup = cl_setup,
    .max_units = cl_max_units,
    .enqueue = cl_enqueue,
    .complete = cl_complete,
    .teardown = cl_teardown,
};

static const mlsba_opencl_ops_t chol_ops = {
    .setup = cl_setup,
    .max_units = cl_max_units,
    .enqueue = cl_enqueue,
    .complete = cl_complete,
    .teardown = cl_teardown,
};

int mlsba__factor_set_opencl(mlsba_load_t *load, mlsba__factor_step_t *st) {
  return mlsba_load_set_opencl(
      load, st->F->P->op == MLSBA__FACTOR_LU ? &lu_ops : &chol_ops, st);
}

static share_t *state_of(const mlsba__factor_run_t *F, size_t i) {
  const mlsba_opencl_env_t *env = F->cl_env ? F->cl_env[i] : NULL;
  return env ? env->state : NULL;
}

/* Cholesky: a share of the middle pairs [lo, units) is one run of
 * columns, kept when it is no wider than the device's ring (or than the
 * pairs it holds, before the ring exists). */
static int chol_resident_at(const mlsba__factor_step_t *st, size_t i,
                            int64_t *lo, int64_t *hi) {
  const mlsba__factor_run_t *F = st->F;
  int64_t s0 = st->j + st->jb, N = F->P->n - s0;
  if (*hi != st->units || *hi - *lo > F->cl_cap[i])
    return 0; /* two runs, or more than it holds */
  int64_t a = s0 + *lo, b = s0 + N - *lo;
  const share_t *sh = state_of(F, i);
  int fits = sh == NULL || sh->cols == NULL || b - a <= sh->cap;
  if (fits) {
    *lo = a;
    *hi = b;
  }
  return fits;
}

int mlsba__factor_cl_resident(const mlsba__factor_step_t *st, size_t i,
                              int64_t *lo, int64_t *hi) {
  const mlsba__factor_run_t *F = st->F;
  if (F->o.stream || *hi <= *lo)
    return 0;
  if (F->P->op != MLSBA__FACTOR_LU)
    return chol_resident_at(st, i, lo, hi);
  int64_t s0 = st->j + st->jb, a = s0 + *lo, b = s0 + *hi;
  const share_t *sh = state_of(F, i);
  int fits = b - a <= F->cl_cap[i] &&
             (sh == NULL || sh->cols == NULL /* opened at this share */
                  ? b - a <= st->units
                  : a >= sh->w0 && b <= sh->w0 + sh->cap);
  if (fits) {
    *lo = a;
    *hi = b;
  }
  return fits;
}

/* Cholesky: rows [r0, r1) of resident columns [c0, c1) through host
 * scratch, then into the matrix each column's part within its triangle
 * (lower: its diagonal down, upper: down to its diagonal). */
static int chol_fetch(mlsba__factor_run_t *F, size_t i, int64_t c0, int64_t c1,
                      int64_t r0, int64_t r1) {
  share_t *sh = state_of(F, i);
  const mlsba_opencl_env_t *env = F->cl_env[i];
  const mlsba__factor_problem_t *P = F->P;
  size_t s = mlsba__factor_esize(P), rows = (size_t)(r1 - r0),
         w = (size_t)(c1 - c0);
  if (rows == 0 || w == 0)
    return 0;
  char *tmp = malloc(rows * w * s);
  if (tmp == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "factor: out of memory");
  cl_int e = CL_SUCCESS;
  for (int64_t x = c0, y; x < c1 && e == CL_SUCCESS; x = y) {
    y = piece_end(sh, x, c1);
    e = rect(sh, env->queue, 0, CL_TRUE, sh->cols, (size_t)(r0 - sh->row0),
             slot(sh, x), sh->ld, tmp + (size_t)(x - c0) * rows * s, rows, rows,
             (size_t)(y - x));
  }
  int lower = P->op == MLSBA__FACTOR_CHOL_LOWER;
  for (int64_t c = c0; e == CL_SUCCESS && c < c1; c++) {
    int64_t a = lower && c > r0 ? c : r0, b = !lower && c + 1 < r1 ? c + 1 : r1;
    if (b > a)
      memcpy(at(P, a, c),
             tmp + ((size_t)(c - c0) * rows + (size_t)(a - r0)) * s,
             (size_t)(b - a) * s);
  }
  free(tmp);
  return e == CL_SUCCESS
             ? 0
             : mlsba__cl_fail(env->name, "reading its columns back", e);
}

int mlsba__factor_cl_fetch_rows(mlsba__factor_run_t *F, size_t i, int64_t r0,
                                int64_t r1) {
  int64_t c0 = F->res_lo[i] > r0 ? F->res_lo[i] : r0;
  return chol_fetch(F, i, c0, F->res_hi[i], r0, r1);
}

int mlsba__factor_cl_fetch(mlsba__factor_run_t *F, size_t i, int64_t c0,
                           int64_t c1) {
  if (F->P->op == MLSBA__FACTOR_CHOL_LOWER)
    return chol_fetch(F, i, c0, c1, c0, F->P->n);
  if (F->P->op == MLSBA__FACTOR_CHOL_UPPER) /* above top_row: back already */
    return chol_fetch(F, i, c0, c1, F->top_row, c1);
  share_t *sh = state_of(F, i);
  const mlsba_opencl_env_t *env = F->cl_env[i];
  const mlsba__factor_problem_t *P = F->P;
  size_t s = mlsba__factor_esize(P), m = (size_t)P->m;
  while (c0 < c1) { /* runs of columns sent at the same step */
    int64_t c = c0, r = F->sent_row[c0];
    while (c < c1 && F->sent_row[c] == r)
      c++;
    size_t rows = m - (size_t)r, w = (size_t)(c - c0);
    char *tmp = malloc(rows * w * s);
    if (tmp == NULL)
      return mlsba__fail(MLSBA_ENOMEM, "factor: out of memory");
    cl_int e = rect(sh, env->queue, 0, CL_TRUE, sh->cols, (size_t)r,
                    (size_t)(c0 - sh->w0), sh->ld, tmp, rows, rows, w);
    for (size_t k = 0; e == CL_SUCCESS && k < w; k++)
      memcpy(at(P, r, c0 + (int64_t)k), tmp + k * rows * s, rows * s);
    free(tmp);
    if (e != CL_SUCCESS)
      return mlsba__cl_fail(env->name, "reading its columns back", e);
    c0 = c;
  }
  return 0;
}

void mlsba__factor_cl_release(mlsba__factor_run_t *F, size_t i) {
  share_t *sh = state_of(F, i);
  if (sh)
    release_resident(sh);
}
