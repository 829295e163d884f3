/* QR's update on an OpenCL device: ?larfb's C = Q_k^T C = C - V (T^T
 * (V^T C)) on columns of rows [j, m), in three CLBlast calls (two GEMMs
 * and a TRMM with T), as GPU QR codes do it.
 * The panel goes to the device with its unit triangle V1 made explicit
 * (ones on the diagonal, zeros above, where the host keeps R), so that V
 * is one dense rows x jb matrix: the product with it is one GEMM each
 * way, the jb^2 w flops of the triangle's zeros (jb / rows of the
 * update's) against two TRMMs and a subtraction of the block on the
 * device. T follows the panel in the same buffer, the product W = V^T C
 * (jb x w) lies in the buffer the columns' block takes.
 * Resident (the default): the device keeps its columns, whole, as LU's
 * (cl_share.c: columns kept whole); each step sends the panel, its T and
 * the columns that joined the device's share. Streamed: its columns go
 * to the device and come back at every step. */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "cl.h"

/* The panel's unit triangle V1 (jb x jb, leading dimension jb) into v1:
 * what the host holds below the diagonal, ones on it, zeros above. */
static void explicit_v1(const mlsba__factor_problem_t *P, int64_t j, int64_t jb,
                        void *v1) {
  for (int64_t k = 0; k < jb; k++) {
    if (P->prec == MLSBA_PRECISION_DOUBLE) {
      const double *x = mlsba__factor_at(P, j, j + k);
      double *y = (double *)v1 + k * jb;
      for (int64_t i = 0; i < jb; i++)
        y[i] = i < k ? 0.0 : i == k ? 1.0 : x[i];
    } else {
      const float *x = mlsba__factor_at(P, j, j + k);
      float *y = (float *)v1 + k * jb;
      for (int64_t i = 0; i < jb; i++)
        y[i] = i < k ? 0.0f : i == k ? 1.0f : x[i];
    }
  }
}

/* The step's panel into buf (rows x jb, packed), V1 made explicit over
 * its top (from host scratch kept in sh->run[0].diag until the run
 * completes: the writes do not block), T after it (from column rows on,
 * jb x jb). */
static cl_int send_panel(mlsba_opencl_env_t *env, share_t *sh, const step_t *st,
                         cl_mem buf) {
  const mlsba__factor_problem_t *P = sh->P;
  size_t rows = (size_t)(P->m - st->j), jb = (size_t)st->jb;
  size_t s = mlsba__factor_esize(P);
  run_t *keep = &sh->run[0];
  free(keep->diag);
  keep->diag = malloc(jb * jb * s);
  if (keep->diag == NULL)
    return CL_OUT_OF_HOST_MEMORY;
  explicit_v1(P, st->j, st->jb, keep->diag);
  cl_int e = mlsba__factor_cl_rect(sh, env->queue, 1, CL_FALSE, buf, 0, 0, rows,
                                   mlsba__factor_at(P, st->j, st->j),
                                   (size_t)P->lda, rows, jb);
  if (e == CL_SUCCESS)
    e = mlsba__factor_cl_rect(sh, env->queue, 1, CL_FALSE, buf, 0, 0, rows,
                              keep->diag, jb, jb, jb);
  if (e == CL_SUCCESS) /* T: rows columns of jb rows further on */
    e = mlsba__factor_cl_rect(sh, env->queue, 1, CL_FALSE, buf, 0, rows, jb,
                              (void *)mlsba__qr_t(P, st->j), jb, jb, jb);
  return e;
}

/* On the device: C (rows x w, from element c of cols, leading dimension
 * ld) -= V T^T V^T C, V and T in panel as send_panel left them, W at
 * element wo of work (leading dimension jb). */
static cl_int apply_qt(const mlsba__factor_problem_t *P, cl_command_queue *q,
                       cl_mem panel, size_t rows, size_t jb, cl_mem cols,
                       size_t c, size_t ld, size_t w, cl_mem work, size_t wo) {
  CLBlastStatusCode b;
  size_t to = rows * jb; /* T's first element */
  if (P->prec == MLSBA_PRECISION_DOUBLE) {
    b = CLBlastDgemm(CLBlastLayoutColMajor, CLBlastTransposeYes,
                     CLBlastTransposeNo, jb, w, rows, 1.0, panel, 0, rows, cols,
                     c, ld, 0.0, work, wo, jb, q, NULL);
    if (b == CLBlastSuccess)
      b = CLBlastDtrmm(CLBlastLayoutColMajor, CLBlastSideLeft,
                       CLBlastTriangleUpper, CLBlastTransposeYes,
                       CLBlastDiagonalNonUnit, jb, w, 1.0, panel, to, jb, work,
                       wo, jb, q, NULL);
    if (b == CLBlastSuccess)
      b = CLBlastDgemm(CLBlastLayoutColMajor, CLBlastTransposeNo,
                       CLBlastTransposeNo, rows, w, jb, -1.0, panel, 0, rows,
                       work, wo, jb, 1.0, cols, c, ld, q, NULL);
  } else {
    b = CLBlastSgemm(CLBlastLayoutColMajor, CLBlastTransposeYes,
                     CLBlastTransposeNo, jb, w, rows, 1.0f, panel, 0, rows,
                     cols, c, ld, 0.0f, work, wo, jb, q, NULL);
    if (b == CLBlastSuccess)
      b = CLBlastStrmm(CLBlastLayoutColMajor, CLBlastSideLeft,
                       CLBlastTriangleUpper, CLBlastTransposeYes,
                       CLBlastDiagonalNonUnit, jb, w, 1.0f, panel, to, jb, work,
                       wo, jb, q, NULL);
    if (b == CLBlastSuccess)
      b = CLBlastSgemm(CLBlastLayoutColMajor, CLBlastTransposeNo,
                       CLBlastTransposeNo, rows, w, jb, -1.0f, panel, 0, rows,
                       work, wo, jb, 1.0f, cols, c, ld, q, NULL);
  }
  return b == CLBlastSuccess ? CL_SUCCESS : (cl_int)b;
}

/* Streamed: columns [c, c + w) from the panel's first row down, W after
 * them in the same buffer; the panel and T in one buffer. */
static cl_int qr_streamed(mlsba_opencl_env_t *env, const step_t *st,
                          share_t *sh, run_t *r) {
  const mlsba__factor_problem_t *P = st->P;
  size_t rows = (size_t)(P->m - st->j), jb = (size_t)st->jb, w = (size_t)r->w;
  cl_int e =
      mlsba__factor_cl_open_run(env, sh, r, (rows + jb) * w, (rows + jb) * jb);
  if (e == CL_SUCCESS)
    e = mlsba__factor_cl_transfer(sh, env->queue, 1, r->cols, st->j, r->c, rows,
                                  w);
  if (e == CL_SUCCESS)
    e = send_panel(env, sh, st, r->panel);
  if (e == CL_SUCCESS)
    e = apply_qt(P, &env->queue, r->panel, rows, jb, r->cols, 0, rows, w,
                 r->cols, rows * w);
  if (e == CL_SUCCESS)
    e = mlsba__factor_cl_transfer(sh, env->queue, 0, r->cols, st->j, r->c, rows,
                                  w);
  return e;
}

/* Resident: columns [lo, hi), all on the device. */
static cl_int qr_resident(mlsba_opencl_env_t *env, share_t *sh,
                          const step_t *st, int64_t lo, int64_t hi) {
  size_t rows = (size_t)(sh->P->m - st->j), jb = (size_t)st->jb;
  /* The panel's buffer holds the widest panel and its T. */
  size_t m = (size_t)sh->P->m, nb = (size_t)sh->P->nb;
  cl_int e = sh->cols
                 ? CL_SUCCESS
                 : mlsba__factor_cl_open_whole(env, sh, st, hi, (m + nb) * nb);
  if (e == CL_SUCCESS)
    e = mlsba__factor_cl_send_joining(env, sh, st, lo, hi);
  if (e == CL_SUCCESS)
    e = send_panel(env, sh, st, sh->panel);
  size_t top = (size_t)(lo - sh->w0) * sh->ld + (size_t)st->j;
  if (e == CL_SUCCESS)
    e = apply_qt(sh->P, &env->queue, sh->panel, rows, jb, sh->cols, top, sh->ld,
                 (size_t)(hi - lo), sh->block, 0);
  return e;
}

static cl_int enqueue(mlsba_opencl_env_t *env, const step_t *st, share_t *sh,
                      int64_t lo, int64_t hi) {
  int64_t s0 = st->j + st->jb;
  if (!sh->res->streams[sh->dev])
    return qr_resident(env, sh, st, s0 + lo, s0 + hi);
  sh->run[0].c = s0 + lo;
  sh->run[0].w = hi - lo;
  return qr_streamed(env, st, sh, &sh->run[0]);
}

/* Streamed: the panel and T, the columns from the panel's first row down
 * and their column of W. Resident: whole columns and their column of W,
 * the widest panel and its T. */
static void footprint(const step_t *st, int stream, double *panel,
                      double *unit) {
  const mlsba__factor_problem_t *P = st->P;
  double s = (double)mlsba__factor_esize(P);
  double rows = (double)(P->m - st->j), jb = (double)st->jb;
  double nb = (double)P->nb;
  *panel = (rows + jb) * jb * s;
  *unit = (rows + jb) * s;
  if (!stream) {
    *unit = (double)(P->m + P->nb) * s;
    *panel = ((double)P->m + nb) * nb * s;
  }
}

/* QR builds no kernel of its own: CLBlast's are all it runs. */
static const mlsba_opencl_ops_t load_ops = {
    .setup = mlsba__factor_cl_setup,
    .max_units = mlsba__factor_cl_max_units,
    .enqueue = mlsba__factor_cl_enqueue,
    .complete = mlsba__factor_cl_complete,
    .teardown = mlsba__factor_cl_teardown,
};

const mlsba__factor_cl_ops_t mlsba__factor_cl_qr = {
    .load = &load_ops,
    .footprint = footprint,
    .enqueue = enqueue,
    .resident = mlsba__factor_cl_whole_resident,
    .rows = mlsba__factor_cl_whole_rows,
    .fetch = mlsba__factor_cl_whole_fetch,
};
