/* The OpenCL half of the update, internal view: a device's state for one
 * factorization (share_t), what every operation's OpenCL code shares
 * (cl_share.c), and the per-operation table (cl_lu.c, cl_chol.c,
 * cl_qr.c) through
 * which cl_share.c reaches it. The OpenCL code sees of the driver only
 * the step (its geometry, the layout of its shares) and the residency
 * (driver.h: mlsba__factor_residency_t), where it records what it sent,
 * counts what it moved, and from which it reads what it holds.
 *
 * Resident (the default): a device keeps its columns in its memory from
 * step to step; each step sends the columns that joined its share and
 * the panel's part they read, and nothing comes back: columns return to
 * the host only when they leave the share, when the device streams, and
 * at the end (resident.c decides when, mlsba__factor_cl_fetch reads).
 * The host copy of a resident column is left untouched meanwhile, so
 * that after a failure the host can replay the updates it missed.
 * Streamed (opts.stream, or a share beyond what the device holds): its
 * columns and the panel go to the device at every step and come back.
 * Every write and read is counted in the residency's traffic. */
#ifndef MLSBA_FACTOR_CL_H
#define MLSBA_FACTOR_CL_H

#include <clblast_c.h>

#include "../devices/cl.h"
#include "driver.h"
#include "mlsba/opencl.h"

typedef mlsba__factor_step_t step_t;

/* One run of columns of a streamed share: [c, c + w), with its buffers. */
typedef struct {
  cl_mem cols, panel;
  int64_t c, w;
  /* Cholesky: the w x w diagonal block, back from the device; QR: the
   * panel's unit triangle V1 made explicit, sent (run[0], both ways). */
  void *diag;
} run_t;

/* A device's state for one factorization: the streamed runs of the
 * share in flight, and the resident columns: LU's [w0, w0 + cap) of m
 * rows each, with the panel and its pivots; Cholesky's a ring of cap
 * columns of rows [row0, n) (ring: slot()), with the panel's part. */
typedef struct {
  run_t run[2];
  const mlsba__factor_problem_t *P;
  mlsba__factor_residency_t *res;
  size_t dev;
  cl_mem cols, panel, piv;
  int64_t w0, cap;
  int ring;      /* the columns lie in a ring (Cholesky) */
  int64_t row0;  /* the first row the columns hold (Cholesky; LU: 0) */
  int *piv_host; /* nb pivots, 0-based from the panel's first row */
  cl_kernel swap32;
  size_t group; /* the work-group size of every swap launch */
  size_t ld;    /* rows per resident column */
  cl_mem block; /* nb x cap: the rows the solve updates, packed */
} share_t;

/* What differs between the operations' OpenCL code. */
struct mlsba__factor_cl_ops {
  /* The load's OpenCL half: cl_share.c's hooks, and the operation's
   * kernels to build. */
  const mlsba_opencl_ops_t *load;
  /* The bytes of the panel's part and of one unit on the device, for a
   * share kept resident or streamed (the device's capacity). */
  void (*footprint)(const step_t *st, int stream, double *panel, double *unit);
  /* Device sh->dev's share of the step, its logical units [lo, hi),
   * enqueued: resident, or streamed where res->streams says so. */
  cl_int (*enqueue)(mlsba_opencl_env_t *env, const step_t *st, share_t *sh,
                    int64_t lo, int64_t hi);
  /* Whether device i keeps units [*lo, *hi) (not empty, not streamed by
   * the options) resident; if so they become its columns. */
  int (*resident)(const step_t *st, size_t i, int64_t *lo, int64_t *hi);
  /* The rows [*r0, *r1) of columns [a, b) that this step and the later
   * ones update (what a column joining the device sends). */
  void (*rows)(const share_t *sh, const step_t *st, int64_t a, int64_t b,
               int64_t *r0, int64_t *r1);
  /* Resident columns [c0, c1) of device i back into the matrix. */
  int (*fetch)(mlsba__factor_residency_t *res, const mlsba__factor_problem_t *P,
               size_t i, int64_t c0, int64_t c1);
  /* Optional (ops->returns_block_row): rows [r0, r1) of them. */
  int (*fetch_rows)(mlsba__factor_residency_t *res,
                    const mlsba__factor_problem_t *P, size_t i, int64_t r0,
                    int64_t r1);
  /* Optional: a streamed run done, before its buffers go (Cholesky: its
   * diagonal block's triangle from the scratch into the matrix). */
  void (*run_done)(const mlsba__factor_problem_t *P, const run_t *r);
};

/* cl_share.c: the load's hooks (mlsba_opencl_ops_t) of every operation. */
int mlsba__factor_cl_setup(void *user, mlsba_opencl_env_t *env);
int mlsba__factor_cl_max_units(void *user, const mlsba_opencl_env_t *env,
                               int64_t *max);
int mlsba__factor_cl_enqueue(void *user, mlsba_opencl_env_t *env, int64_t first,
                             int64_t count);
void mlsba__factor_cl_complete(void *user, mlsba_opencl_env_t *env);
void mlsba__factor_cl_teardown(void *user, mlsba_opencl_env_t *env);

/* cl_share.c: what the operations' OpenCL code shares. */
/* rows x cols between host memory (the element at host, hld rows per
 * column) and a buffer from its element (r, c), ld rows per column;
 * counted in the traffic. */
cl_int mlsba__factor_cl_rect(share_t *sh, cl_command_queue q, int write,
                             cl_bool block, cl_mem buf, size_t r, size_t c,
                             size_t ld, void *host, size_t hld, size_t rows,
                             size_t cols);
/* rows x cols of A from (i, j) to or from a buffer packed with rows
 * rows. */
cl_int mlsba__factor_cl_transfer(share_t *sh, cl_command_queue q, int write,
                                 cl_mem buf, int64_t i, int64_t j, size_t rows,
                                 size_t cols);
/* One write counted. */
void mlsba__factor_cl_count(share_t *sh, int write, size_t bytes);
/* Where column c lies in the resident buffer, and the end of the piece of
 * columns [x, y) that lies there in one run. */
size_t mlsba__factor_cl_slot(const share_t *sh, int64_t c);
int64_t mlsba__factor_cl_piece_end(const share_t *sh, int64_t x, int64_t y);
/* The columns [lo, hi) that are not resident yet go to the device (their
 * rows, ops->rows); they are resident from here on (and their host copies
 * the checkpoint of this step). */
cl_int mlsba__factor_cl_send_joining(mlsba_opencl_env_t *env, share_t *sh,
                                     const step_t *st, int64_t lo, int64_t hi);
/* A streamed run's buffers: cols elements (read and written on the
 * device) and panel elements (read only). */
cl_int mlsba__factor_cl_open_run(mlsba_opencl_env_t *env, const share_t *sh,
                                 run_t *r, size_t cols, size_t panel);
/* The resident buffers, at the device's first resident share, of the cap
 * columns of ld rows that the caller laid out in sh: the columns, the
 * panel's buffer (panel elements: the operation's extra, QR's T, in it)
 * and, where block_rows > 0, a block of block_rows x cap elements. */
cl_int mlsba__factor_cl_open(mlsba_opencl_env_t *env, share_t *sh, size_t panel,
                             size_t block_rows);
/* cl_share.c: columns kept whole (LU's and QR's: m rows each, from w0 on,
 * every step updating rows [j, m) of them), the hooks of the table that
 * depend only on that layout (resident, rows, fetch). */
int mlsba__factor_cl_whole_resident(const step_t *st, size_t i, int64_t *lo,
                                    int64_t *hi);
void mlsba__factor_cl_whole_rows(const share_t *sh, const step_t *st, int64_t a,
                                 int64_t b, int64_t *r0, int64_t *r1);
int mlsba__factor_cl_whole_fetch(mlsba__factor_residency_t *res,
                                 const mlsba__factor_problem_t *P, size_t i,
                                 int64_t c0, int64_t c1);
/* Columns kept whole: the resident buffers (mlsba__factor_cl_open, a
 * block of nb rows), as many columns as the device holds of this step's,
 * ending at the share's last column hi. */
cl_int mlsba__factor_cl_open_whole(mlsba_opencl_env_t *env, share_t *sh,
                                   const step_t *st, int64_t hi, size_t panel);
/* Device i's state (NULL before it ran). */
share_t *mlsba__factor_cl_state(const mlsba__factor_residency_t *res, size_t i);

#endif
