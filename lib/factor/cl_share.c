/* The update on an OpenCL device, on its in-order queue while its core
 * computes its own share: what every operation's OpenCL code shares (the
 * device's state, transfers counted, the columns that join a resident
 * share) and the calls the driver makes, each handed to the operation's
 * table (cl.h: cl_lu.c, cl_chol.c). */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "cl.h"

static const mlsba__factor_cl_ops_t *ops_of(const mlsba__factor_problem_t *P) {
  return P->ops->cl;
}

int mlsba__factor_cl_setup(void *user, mlsba_opencl_env_t *env) {
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
void mlsba__factor_cl_teardown(void *user, mlsba_opencl_env_t *env) {
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

void mlsba__factor_cl_count(share_t *sh, int write, size_t bytes) {
  mlsba__factor_traffic_t *T = &sh->res->traffic;
  if (write)
    T->to_dev[sh->dev] += (int64_t)bytes;
  else
    T->from_dev[sh->dev] += (int64_t)bytes;
  T->moves[sh->dev]++;
}

void mlsba__factor_cl_complete(void *user, mlsba_opencl_env_t *env) {
  (void)user;
  share_t *s = env->state;
  for (int k = 0; k < 2; k++) {
    run_t *r = &s->run[k];
    if (r->diag && ops_of(s->P)->run_done)
      ops_of(s->P)->run_done(s->P, r);
    if (r->cols)
      clReleaseMemObject(r->cols);
    if (r->panel)
      clReleaseMemObject(r->panel);
    free(r->diag);
    *r = (run_t){0};
  }
}

/* The panel's part and the columns must fit; a device without doubles
 * takes none of a double factorization. */
int mlsba__factor_cl_max_units(void *user, const mlsba_opencl_env_t *env,
                               int64_t *max) {
  const step_t *st = user;
  const mlsba__factor_problem_t *P = st->P;
  double panel, column;
  ops_of(P)->footprint(st, st->res->stream, &panel, &column);
  double mem = (double)env->global_mem, alloc = (double)env->max_alloc;
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

cl_int mlsba__factor_cl_rect(share_t *sh, cl_command_queue q, int write,
                             cl_bool block, cl_mem buf, size_t r, size_t c,
                             size_t ld, void *host, size_t hld, size_t rows,
                             size_t cols) {
  size_t s = mlsba__factor_esize(sh->P);
  size_t buf_origin[3] = {r * s, c, 0}, host_origin[3] = {0, 0, 0};
  size_t region[3] = {rows * s, cols, 1};
  if (rows == 0 || cols == 0)
    return CL_SUCCESS;
  mlsba__factor_cl_count(sh, write, rows * cols * s);
  return write ? clEnqueueWriteBufferRect(q, buf, block, buf_origin,
                                          host_origin, region, ld * s, 0,
                                          hld * s, 0, host, 0, NULL, NULL)
               : clEnqueueReadBufferRect(q, buf, block, buf_origin, host_origin,
                                         region, ld * s, 0, hld * s, 0, host, 0,
                                         NULL, NULL);
}

cl_int mlsba__factor_cl_transfer(share_t *sh, cl_command_queue q, int write,
                                 cl_mem buf, int64_t i, int64_t j, size_t rows,
                                 size_t cols) {
  return mlsba__factor_cl_rect(sh, q, write, CL_FALSE, buf, 0, 0, rows,
                               mlsba__factor_at(sh->P, i, j),
                               (size_t)sh->P->lda, rows, cols);
}

/* LU's columns lie from w0 on; a Cholesky column in slot (c - row0) mod
 * cap, a ring, since its run moves right step by step and any run of cap
 * columns fits (a device that holds the whole trailing matrix never
 * wraps). A run of columns lies in pieces, each up to the ring's end. */
size_t mlsba__factor_cl_slot(const share_t *sh, int64_t c) {
  return (size_t)(!sh->ring ? c - sh->w0 : (c - sh->row0) % sh->cap);
}

int64_t mlsba__factor_cl_piece_end(const share_t *sh, int64_t x, int64_t y) {
  if (!sh->ring)
    return y;
  int64_t end = x + sh->cap - (int64_t)mlsba__factor_cl_slot(sh, x);
  return end < y ? end : y;
}

cl_int mlsba__factor_cl_send_joining(mlsba_opencl_env_t *env, share_t *sh,
                                     const step_t *st, int64_t lo, int64_t hi) {
  mlsba__factor_residency_t *res = sh->res;
  const mlsba__factor_problem_t *P = sh->P;
  size_t i = sh->dev;
  int64_t rlo = res->lo[i], rhi = res->hi[i];
  int64_t runs[2][2] = {{lo, rlo < rhi ? rlo : hi}, {rlo < rhi ? rhi : hi, hi}};
  res->lo[i] = lo;
  res->hi[i] = hi;
  cl_int e = CL_SUCCESS;
  for (int k = 0; k < 2 && e == CL_SUCCESS; k++) {
    int64_t a = runs[k][0], b = runs[k][1];
    for (int64_t c = a; c < b; c++)
      res->sent_row[c] = st->j;
    for (int64_t x = a, y; x < b && e == CL_SUCCESS; x = y) {
      y = mlsba__factor_cl_piece_end(sh, x, b);
      int64_t r0, r1;
      ops_of(P)->rows(sh, st, x, y, &r0, &r1);
      e = mlsba__factor_cl_rect(
          sh, env->queue, 1, CL_FALSE, sh->cols, (size_t)(r0 - sh->row0),
          mlsba__factor_cl_slot(sh, x), sh->ld, mlsba__factor_at(P, r0, x),
          (size_t)P->lda, (size_t)(r1 - r0), (size_t)(y - x));
    }
  }
  return e;
}

static int enqueue_share(void *user, mlsba_opencl_env_t *env, int64_t first,
                         int64_t count) {
  step_t *st = user;
  long i = mlsba__factor_share_device(st->lay, first);
  if (i < 0)
    return CL_INVALID_VALUE;
  share_t *sh = env->state;
  sh->P = st->P;
  sh->res = st->res;
  sh->dev = (size_t)i;
  st->res->env[i] = env;
  int64_t lo = st->lay->log_off[i];
  return ops_of(st->P)->enqueue(env, st, sh, lo, lo + count);
}

/* A share's CLBlast calls hold the process's lock around CLBlast
 * (cl_error.h); its whole enqueue does, as its calls are many. */
int mlsba__factor_cl_enqueue(void *user, mlsba_opencl_env_t *env, int64_t first,
                             int64_t count) {
  mlsba__clblast_lock();
  int e = enqueue_share(user, env, first, count);
  mlsba__clblast_unlock();
  return e;
}

int mlsba__factor_set_opencl(mlsba_load_t *load, mlsba__factor_step_t *st) {
  return mlsba_load_set_opencl(load, ops_of(st->P)->load, st);
}

share_t *mlsba__factor_cl_state(const mlsba__factor_residency_t *res,
                                size_t i) {
  const mlsba_opencl_env_t *env = res->env ? res->env[i] : NULL;
  return env ? env->state : NULL;
}

int mlsba__factor_cl_resident(const mlsba__factor_step_t *st, size_t i,
                              int64_t *lo, int64_t *hi) {
  if (st->res->stream || *hi <= *lo)
    return 0;
  return ops_of(st->P)->resident(st, i, lo, hi);
}

int mlsba__factor_cl_fetch(mlsba__factor_residency_t *res,
                           const mlsba__factor_problem_t *P, size_t i,
                           int64_t c0, int64_t c1) {
  return ops_of(P)->fetch(res, P, i, c0, c1);
}

int mlsba__factor_cl_fetch_rows(mlsba__factor_residency_t *res,
                                const mlsba__factor_problem_t *P, size_t i,
                                int64_t r0, int64_t r1) {
  return ops_of(P)->fetch_rows(res, P, i, r0, r1);
}

void mlsba__factor_cl_release(mlsba__factor_residency_t *res, size_t i) {
  share_t *sh = mlsba__factor_cl_state(res, i);
  if (sh)
    release_resident(sh);
}

cl_int mlsba__factor_cl_open_run(mlsba_opencl_env_t *env, const share_t *sh,
                                 run_t *r, size_t cols, size_t panel) {
  size_t s = mlsba__factor_esize(sh->P);
  cl_int e;
  r->cols = clCreateBuffer(env->context, CL_MEM_READ_WRITE, cols * s, NULL, &e);
  if (e == CL_SUCCESS)
    r->panel =
        clCreateBuffer(env->context, CL_MEM_READ_ONLY, panel * s, NULL, &e);
  return e;
}

cl_int mlsba__factor_cl_open(mlsba_opencl_env_t *env, share_t *sh, size_t panel,
                             size_t block_rows) {
  size_t s = mlsba__factor_esize(sh->P), cap = (size_t)sh->cap;
  cl_int e;
  sh->cols = clCreateBuffer(env->context, CL_MEM_READ_WRITE, cap * sh->ld * s,
                            NULL, &e);
  if (e == CL_SUCCESS)
    sh->panel =
        clCreateBuffer(env->context, CL_MEM_READ_ONLY, panel * s, NULL, &e);
  if (e == CL_SUCCESS && block_rows > 0)
    sh->block = clCreateBuffer(env->context, CL_MEM_READ_WRITE,
                               block_rows * cap * s, NULL, &e);
  return e;
}

/* ---- columns kept whole (LU's and QR's) ---------------------------------- */

/* As many columns as the device holds of this step's, ending at the
 * share's last column hi (later shares, which end there too, fall
 * inside), m rows each. */
cl_int mlsba__factor_cl_open_whole(mlsba_opencl_env_t *env, share_t *sh,
                                   const step_t *st, int64_t hi, size_t panel) {
  int64_t cap = sh->res->cap[sh->dev];
  sh->ld = (size_t)sh->P->m;
  sh->cap = cap < st->units ? cap : st->units;
  sh->w0 = hi - sh->cap;
  return mlsba__factor_cl_open(env, sh, panel, (size_t)sh->P->nb);
}

/* The columns of the step from the panel's first row down. */
void mlsba__factor_cl_whole_rows(const share_t *sh, const step_t *st, int64_t a,
                                 int64_t b, int64_t *r0, int64_t *r1) {
  (void)a;
  (void)b;
  *r0 = st->j;
  *r1 = sh->P->m;
}

/* The units' columns, where the device holds them all (or opens its
 * buffer at this share). */
int mlsba__factor_cl_whole_resident(const step_t *st, size_t i, int64_t *lo,
                                    int64_t *hi) {
  int64_t s0 = st->j + st->jb, a = s0 + *lo, b = s0 + *hi;
  const share_t *sh = mlsba__factor_cl_state(st->res, i);
  int fits = b - a <= st->res->cap[i] &&
             (sh == NULL || sh->cols == NULL /* opened at this share */
                  ? b - a <= st->units
                  : a >= sh->w0 && b <= sh->w0 + sh->cap);
  if (fits) {
    *lo = a;
    *hi = b;
  }
  return fits;
}

/* Runs of columns sent at the same step, each from its sent_row down. */
int mlsba__factor_cl_whole_fetch(mlsba__factor_residency_t *res,
                                 const mlsba__factor_problem_t *P, size_t i,
                                 int64_t c0, int64_t c1) {
  share_t *sh = mlsba__factor_cl_state(res, i);
  const mlsba_opencl_env_t *env = res->env[i];
  size_t s = mlsba__factor_esize(P), m = (size_t)P->m;
  while (c0 < c1) {
    int64_t c = c0, r = res->sent_row[c0];
    while (c < c1 && res->sent_row[c] == r)
      c++;
    size_t rows = m - (size_t)r, w = (size_t)(c - c0);
    char *tmp = malloc(rows * w * s);
    if (tmp == NULL)
      return mlsba__fail(MLSBA_ENOMEM, "factor: out of memory");
    cl_int e = mlsba__factor_cl_rect(sh, env->queue, 0, CL_TRUE, sh->cols,
                                     (size_t)r, (size_t)(c0 - sh->w0), sh->ld,
                                     tmp, rows, rows, w);
    for (size_t k = 0; e == CL_SUCCESS && k < w; k++)
      memcpy(mlsba__factor_at(P, r, c0 + (int64_t)k), tmp + k * rows * s,
             rows * s);
    free(tmp);
    if (e != CL_SUCCESS)
      return mlsba__cl_fail(env->name, "reading its columns back", e);
    c0 = c;
  }
  return 0;
}
