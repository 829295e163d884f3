/* Cholesky's update on an OpenCL device (a unit is a pair of columns).
 * Resident (the default): a device whose share holds the middle pair
 * (the accelerator laid out rightmost, plan.c: mlsba__factor_lay_out) has
 * one run of columns, centred on the trailing matrix, that moves right by
 * about nb / 2 a step as the matrix shrinks: each step sends the columns
 * that joined it (each from its first row the later updates touch) and
 * the panel's part the run reads (lower: L21's rows from the run down;
 * upper: U12's columns up to the run's last), and CLBlast updates the
 * run's rectangle in place; columns come back when they leave the share
 * (its left end), when the device streams, and at the end, each column
 * only within its triangle. The buffer is a ring of as many columns as
 * the device holds (all the trailing matrix's where they fit): a run that
 * passes its end wraps around to slots its left end freed. Upper
 * Cholesky's panel solves a block row of every trailing column: that
 * block row of the resident columns comes back after each step
 * (resident.c: mlsba__factor_return_next_panel). A share of two runs (a
 * second accelerator, or one updating the next panel's pairs) streams.
 * Streamed: each of its two runs of columns goes with the panel's part
 * beside it (lower: L21's rows of the run and below; upper: U12's columns
 * up to the run's last); CLBlast's GEMM updates the run's rectangle,
 * whose part off the run's diagonal block comes back into the matrix and
 * whose diagonal block comes back into host scratch, from which only its
 * triangle is copied once the share is done: the other triangle of the
 * matrix is never written. */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "cl.h"

static void *at(const mlsba__factor_problem_t *P, int64_t i, int64_t j) {
  return mlsba__factor_at(P, i, j);
}

/* The triangle (lower, or upper for upper Cholesky) of a run's diagonal
 * block, from the scratch. After a failure it writes what may be garbage
 * into columns that the step's copy then restores (recover.c). */
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
static cl_int chol_upper_enqueue(mlsba_opencl_env_t *env, const step_t *st,
                                 share_t *sh, run_t *r) {
  const mlsba__factor_problem_t *P = st->P;
  int64_t s0 = st->j + st->jb;
  size_t rows = (size_t)(r->c + r->w - s0), w = (size_t)r->w,
         s = mlsba__factor_esize(P);
  size_t jb = (size_t)st->jb, above = rows - w;
  r->diag = malloc(w * w * s);
  if (r->diag == NULL)
    return CL_OUT_OF_HOST_MEMORY;
  cl_int e = mlsba__factor_cl_open_run(env, sh, r, rows * w, jb * rows);
  if (e == CL_SUCCESS)
    e = mlsba__factor_cl_transfer(sh, env->queue, 1, r->cols, s0, r->c, rows,
                                  w);
  if (e == CL_SUCCESS)
    e = mlsba__factor_cl_transfer(sh, env->queue, 1, r->panel, st->j, s0, jb,
                                  rows);
  if (e == CL_SUCCESS)
    e = gemm_tn(P, rows, w, jb, r->panel, above * jb, r->cols, rows,
                &env->queue);
  if (e == CL_SUCCESS && above > 0)
    e = mlsba__factor_cl_rect(sh, env->queue, 0, CL_FALSE, r->cols, 0, 0, rows,
                              at(P, s0, r->c), (size_t)P->lda, above, w);
  if (e == CL_SUCCESS)
    e = mlsba__factor_cl_rect(sh, env->queue, 0, CL_FALSE, r->cols, above, 0,
                              rows, r->diag, w, w, w);
  return e;
}

/* Lower Cholesky: columns [c, c + w), rows c to n: the rectangle below
 * the diagonal block straight back, the block into scratch. */
static cl_int chol_enqueue(mlsba_opencl_env_t *env, const step_t *st,
                           share_t *sh, run_t *r) {
  const mlsba__factor_problem_t *P = st->P;
  size_t rows = (size_t)(P->n - r->c), w = (size_t)r->w,
         s = mlsba__factor_esize(P);
  r->diag = malloc(w * w * s);
  if (r->diag == NULL)
    return CL_OUT_OF_HOST_MEMORY;
  cl_int e =
      mlsba__factor_cl_open_run(env, sh, r, rows * w, rows * (size_t)st->jb);
  if (e == CL_SUCCESS)
    e = mlsba__factor_cl_transfer(sh, env->queue, 1, r->cols, r->c, r->c, rows,
                                  w);
  if (e == CL_SUCCESS)
    e = mlsba__factor_cl_transfer(sh, env->queue, 1, r->panel, r->c, st->j,
                                  rows, (size_t)st->jb);
  if (e == CL_SUCCESS)
    e = gemm_nt(P, rows, w, (size_t)st->jb, r->panel, rows, r->cols, rows,
                &env->queue);
  if (e == CL_SUCCESS && rows > w)
    e = mlsba__factor_cl_rect(sh, env->queue, 0, CL_FALSE, r->cols, w, 0, rows,
                              at(P, r->c + r->w, r->c), (size_t)P->lda,
                              rows - w, w);
  if (e == CL_SUCCESS)
    e = mlsba__factor_cl_rect(sh, env->queue, 0, CL_FALSE, r->cols, 0, 0, rows,
                              r->diag, w, w, w);
  return e;
}

/* Cholesky's resident buffer at the device's first resident share: a
 * ring of cap columns (as many as the device holds, the pairs of cl_cap,
 * at most the trailing matrix's), each from this step's first row down,
 * and the panel's buffer. */
static cl_int open_chol(mlsba_opencl_env_t *env, share_t *sh,
                        const step_t *st) {
  const mlsba__factor_problem_t *P = sh->P;
  int64_t cap = 2 * sh->res->cap[sh->dev];
  sh->ring = 1;
  sh->row0 = st->j + st->jb;
  sh->ld = (size_t)(P->n - sh->row0);
  sh->cap = cap < P->n - sh->row0 ? cap : P->n - sh->row0;
  return mlsba__factor_cl_open(env, sh, sh->ld * (size_t)P->nb, 0);
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
                            const step_t *st, int64_t a, int64_t b) {
  const mlsba__factor_problem_t *P = sh->P;
  int64_t s0 = st->j + st->jb, n = P->n;
  size_t jb = (size_t)st->jb;
  int lower = P->op == MLSBA__FACTOR_CHOL_LOWER;
  cl_int e = sh->cols ? CL_SUCCESS : open_chol(env, sh, st);
  if (e == CL_SUCCESS)
    e = mlsba__factor_cl_send_joining(env, sh, st, a, b);
  /* the panel's part: L21's rows a to n, or U12's columns s0 to b */
  size_t prows = (size_t)(lower ? n - a : b - s0);
  if (e == CL_SUCCESS)
    e = lower ? mlsba__factor_cl_rect(sh, env->queue, 1, CL_FALSE, sh->panel, 0,
                                      0, prows, at(P, a, st->j), (size_t)P->lda,
                                      prows, jb)
              : mlsba__factor_cl_rect(sh, env->queue, 1, CL_FALSE, sh->panel, 0,
                                      0, jb, at(P, st->j, s0), (size_t)P->lda,
                                      jb, prows);
  for (int64_t x = a, y; x < b && e == CL_SUCCESS; x = y) {
    y = mlsba__factor_cl_piece_end(sh, x, b);
    size_t w = (size_t)(y - x), col = mlsba__factor_cl_slot(sh, x) * sh->ld;
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

/* Cholesky: a share of the middle pairs [lo, units) is one run of
 * columns, kept when it is no wider than the device's ring (or than the
 * pairs it holds, before the ring exists). */
static int resident(const step_t *st, size_t i, int64_t *lo, int64_t *hi) {
  int64_t s0 = st->j + st->jb, N = st->P->n - s0;
  if (*hi != st->units || *hi - *lo > st->res->cap[i])
    return 0; /* two runs, or more than it holds */
  int64_t a = s0 + *lo, b = s0 + N - *lo;
  const share_t *sh = mlsba__factor_cl_state(st->res, i);
  int fits = sh == NULL || sh->cols == NULL || b - a <= sh->cap;
  if (fits) {
    *lo = a;
    *hi = b;
  }
  return fits;
}

/* Cholesky: rows [r0, r1) of resident columns [c0, c1) through host
 * scratch, then into the matrix each column's part within its triangle
 * (lower: its diagonal down, upper: down to its diagonal). */
static int chol_fetch(mlsba__factor_residency_t *res,
                      const mlsba__factor_problem_t *P, size_t i, int64_t c0,
                      int64_t c1, int64_t r0, int64_t r1) {
  share_t *sh = mlsba__factor_cl_state(res, i);
  const mlsba_opencl_env_t *env = res->env[i];
  size_t s = mlsba__factor_esize(P), rows = (size_t)(r1 - r0),
         w = (size_t)(c1 - c0);
  if (rows == 0 || w == 0)
    return 0;
  char *tmp = malloc(rows * w * s);
  if (tmp == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "factor: out of memory");
  cl_int e = CL_SUCCESS;
  for (int64_t x = c0, y; x < c1 && e == CL_SUCCESS; x = y) {
    y = mlsba__factor_cl_piece_end(sh, x, c1);
    e = mlsba__factor_cl_rect(
        sh, env->queue, 0, CL_TRUE, sh->cols, (size_t)(r0 - sh->row0),
        mlsba__factor_cl_slot(sh, x), sh->ld, tmp + (size_t)(x - c0) * rows * s,
        rows, rows, (size_t)(y - x));
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

/* Upper: rows [r0, r1) (the next panel's block row) of the resident
 * columns, each within its triangle. */
static int fetch_rows(mlsba__factor_residency_t *res,
                      const mlsba__factor_problem_t *P, size_t i, int64_t r0,
                      int64_t r1) {
  int64_t c0 = res->lo[i] > r0 ? res->lo[i] : r0;
  return chol_fetch(res, P, i, c0, res->hi[i], r0, r1);
}

/* Lower: from the run's diagonal down; upper: from the trailing matrix's
 * first row to the run's last row. */
static void rows(const share_t *sh, const step_t *st, int64_t a, int64_t b,
                 int64_t *r0, int64_t *r1) {
  int lower = sh->P->op == MLSBA__FACTOR_CHOL_LOWER;
  *r0 = lower ? a : st->j + st->jb;
  *r1 = lower ? sh->P->m : b;
}

/* Pairs [lo, hi): columns [lo, hi) and [max(N - hi, hi), N - lo); a
 * resident share is one run (hi is the middle pair's). */
static cl_int enqueue(mlsba_opencl_env_t *env, const step_t *st, share_t *sh,
                      int64_t lo, int64_t hi) {
  const mlsba__factor_problem_t *P = sh->P;
  int64_t s0 = st->j + st->jb, N = P->n - s0, lo2 = N - hi > hi ? N - hi : hi;
  if (!sh->res->streams[sh->dev])
    return chol_resident(env, sh, st, s0 + lo, s0 + N - lo);
  sh->run[0] = (run_t){.c = s0 + lo, .w = hi - lo};
  sh->run[1] = (run_t){.c = s0 + lo2, .w = N - lo - lo2};
  cl_int (*run)(mlsba_opencl_env_t *, const step_t *, share_t *, run_t *) =
      P->op == MLSBA__FACTOR_CHOL_UPPER ? chol_upper_enqueue : chol_enqueue;
  cl_int e = run(env, st, sh, &sh->run[0]);
  if (e == CL_SUCCESS && sh->run[1].w > 0)
    e = run(env, st, sh, &sh->run[1]);
  return e;
}

/* A unit: N + 1 elements streamed; resident, two columns from this step's
 * row down, and the panel's part of nb columns. */
static void footprint(const step_t *st, int stream, double *panel,
                      double *unit) {
  const mlsba__factor_problem_t *P = st->P;
  double s = (double)mlsba__factor_esize(P);
  double rows = (double)(P->n - st->j - st->jb);
  *panel = rows * (double)st->jb * s;
  *unit = 2 * (rows + 1) * s;
  if (!stream) {
    rows = (double)(P->n - st->j);
    *unit = 2 * rows * s;
    *panel = rows * (double)P->nb * s;
  }
}

/* Lower: each column from its diagonal down; upper: from top_row (above
 * it the rows came back already) down to its diagonal. */
static int fetch(mlsba__factor_residency_t *res,
                 const mlsba__factor_problem_t *P, size_t i, int64_t c0,
                 int64_t c1) {
  if (P->op == MLSBA__FACTOR_CHOL_LOWER)
    return chol_fetch(res, P, i, c0, c1, c0, P->n);
  return chol_fetch(res, P, i, c0, c1, res->top_row, c1);
}

static const mlsba_opencl_ops_t load_ops = {
    .setup = mlsba__factor_cl_setup,
    .max_units = mlsba__factor_cl_max_units,
    .enqueue = mlsba__factor_cl_enqueue,
    .complete = mlsba__factor_cl_complete,
    .teardown = mlsba__factor_cl_teardown,
};

const mlsba__factor_cl_ops_t mlsba__factor_cl_chol = {
    .load = &load_ops,
    .footprint = footprint,
    .enqueue = enqueue,
    .resident = resident,
    .rows = rows,
    .fetch = fetch,
    .fetch_rows = fetch_rows,
    .run_done = copy_triangle,
};
