/* The factorizations, internal view: the problem being factorized, the
 * per-operation table through which the driver reaches an operation's
 * kernels (ops.c holds one per factorization; lu.c and chol.c the
 * kernels; kernels.c what they share), and the per-step split (split.c),
 * which is pure so that the MPI layer can call it for a 2-D block-cyclic
 * factorization across ranks. The driver's own state is in driver.h. */
#ifndef MLSBA_FACTOR_FACTOR_H
#define MLSBA_FACTOR_FACTOR_H

#include <stddef.h>
#include <stdint.h>

#include "mlsba.h"

/* Which variant of its operation a problem is: the kernels of an
 * operation tell its variants apart (chol.c: lower or upper), the driver
 * never does (it asks the table, mlsba__factor_ops_t). */
typedef enum {
  MLSBA__FACTOR_LU = 0,
  MLSBA__FACTOR_CHOL_LOWER,
  MLSBA__FACTOR_CHOL_UPPER,
  MLSBA__FACTOR_QR
} mlsba__factor_op_t;

typedef struct mlsba__factor_ops mlsba__factor_ops_t;

/* A matrix being factorized in place. Panels are factorized one after
 * the other; a step's update touches disjoint units, so devices work on
 * them at once. */
typedef struct mlsba__factor_problem {
  const mlsba__factor_ops_t *ops;
  mlsba__factor_op_t op;
  mlsba_precision_t prec;
  int64_t m, n, lda, nb;
  void *a;
  int *ipiv;    /* LU: min(m, n) global 1-based pivots, LAPACK's int */
  int64_t info; /* first zero pivot / non-positive minor, 1-based */
  /* LU: room for two inverses of a panel's L11 (nb x nb, by the panel's
   * parity: the next panel is factorized while the last one's is in use),
   * which turn the update's solve into a product; NULL: solve by TRSM. */
  void *linv;
  /* Where the leading dimension makes the panel's operand slow to pack
   * (kernels.c), room for two copies of the part of a panel that its
   * update reads (by the panel's parity), each made once by the panel's
   * core for every device's units: kept_j[k] is the panel a copy holds
   * (-1: none). NULL: every update reads the matrix or copies itself. */
  void *kept;
  size_t kept_bytes; /* its size, as it goes back to the executor */
  int64_t kept_ld, kept_j[2];
  /* LU: room for two panels' interchanges composed into moves (by the
   * panel's parity): nmoves[k] rows, row dst takes row src, the dst at
   * moves + k 4 nb, the src 2 nb after them; moves_j[k] is the panel
   * (-1: none). NULL: the update swaps row by row. */
  int64_t *moves;
  int64_t nmoves[2], moves_j[2];
  /* QR: the caller's min(m, n) scalars of the reflectors (LAPACK's tau),
   * and the room mlsba__qr_room() sizes: two panels' T (nb x nb, by the
   * panel's parity, as LU's inverses) and the panel's ?geqrf workspace. */
  void *tau, *tfac;
} mlsba__factor_problem_t;

/* ---- one factorization, as the driver sees it ---------------------------
 * Everything that differs from one factorization to another: the driver
 * (driver.h) calls these and never asks which operation it runs. A new
 * factorization is a file of kernels and a table in ops.c (HACKING.md,
 * "Adding a factorization"). A step k >= 1 is the update after panel
 * [j, j + jb) of its `units` independent units; hooks marked optional may
 * be NULL. */

typedef struct mlsba__factor_cl_ops mlsba__factor_cl_ops_t;

struct mlsba__factor_ops {
  const char *name;        /* LAPACK's: model files, load names */
  const char *update_load; /* the load of the update's runs */
  /* The core that factorizes panels may update the next panel's columns
   * first and factorize it inside its share (lookahead); 0: the next
   * panel waits for the whole update (upper Cholesky's panel solves a
   * block row of every trailing column). */
  int lookahead;
  /* After each step the next panel's block row of every column an
   * accelerator keeps comes back (its panel reads them: upper
   * Cholesky); 0: the next panel's own columns come back. */
  int returns_block_row;
  /* Units of the update after panel [j, j + jb); flops of one unit (what
   * the split weighs); flops of the panel; the nominal count. */
  int64_t (*units)(const mlsba__factor_problem_t *P, int64_t j, int64_t jb);
  double (*unit_flops)(const mlsba__factor_problem_t *P, int64_t j, int64_t jb);
  double (*panel_flops)(const mlsba__factor_problem_t *P, int64_t j,
                        int64_t jb);
  double (*flops)(const mlsba__factor_problem_t *P);
  /* The trailing columns of unit u (0 the first right of the panel, N
   * of them): into cols, returns how many (1 or 2). */
  int (*unit_columns)(int64_t N, int64_t u, int64_t cols[2]);
  /* Optional: the flops of the panel [j, j + jb) that stay on one core
   * when several cores factorize it together (the rest is split between
   * them by rows: step.c); NULL: all of them. */
  double (*panel_serial_flops)(const mlsba__factor_problem_t *P, int64_t j,
                               int64_t jb);
  /* The panel [j, j + jb) on one core; sets P->info where it fails, and
   * returns 1 when the factorization must stop there, else 0. */
  int (*panel)(mlsba__factor_problem_t *P, int64_t j, int64_t jb);
  /* The update after panel [j, j + jb) on units [u0, u1), single
   * threaded (one pinned core). */
  void (*update)(const mlsba__factor_problem_t *P, int64_t j, int64_t jb,
                 int64_t u0, int64_t u1);
  /* The same update on the host for columns [c0, c1) (absolute) that an
   * accelerator kept and can no longer give back; top: the first row not
   * yet back (the rows above it came back, returns_block_row). */
  void (*replay)(const mlsba__factor_problem_t *P, int64_t j, int64_t jb,
                 int64_t c0, int64_t c1, int64_t top);
  /* Optional: a panel whose solve may be split by rows between the
   * devices, after the update, instead of lengthening the chain of
   * panels (lower Cholesky): the panel without it (panel_diag), the
   * solve of its rows [r0, r1) (single threaded), their count, the
   * solve's load. */
  int (*panel_diag)(mlsba__factor_problem_t *P, int64_t j, int64_t jb);
  void (*solve)(const mlsba__factor_problem_t *P, int64_t j, int64_t jb,
                int64_t r0, int64_t r1);
  int64_t (*solve_rows)(const mlsba__factor_problem_t *P, int64_t j,
                        int64_t jb);
  const char *solve_load;
  /* Optional: after the last step, on units [c0, c1) of min(m, n) (LU:
   * the later panels' interchanges on the columns left of each panel),
   * split between the cores in use; its load. finish_rows (optional)
   * weighs unit c: the rows its part touches (LU: those below its
   * panel), and the cores take equal sums of it; NULL: equal units. */
  void (*finish)(const mlsba__factor_problem_t *P, int64_t c0, int64_t c1);
  int64_t (*finish_rows)(const mlsba__factor_problem_t *P, int64_t c);
  const char *finish_load;
  /* Optional: room the kernels keep between steps, and its release. */
  void (*open)(mlsba__factor_problem_t *P);
  void (*close)(mlsba__factor_problem_t *P);
  /* The update on an OpenCL device (cl_*.c); NULL: such devices take no
   * units of this factorization. */
  const mlsba__factor_cl_ops_t *cl;
};

/* The OpenCL halves (cl_lu.c, cl_chol.c, cl_qr.c; cl_none.c in a build without
 * OpenCL, which has no OpenCL device to read them). */
extern const mlsba__factor_cl_ops_t mlsba__factor_cl_lu;
extern const mlsba__factor_cl_ops_t mlsba__factor_cl_chol;
extern const mlsba__factor_cl_ops_t mlsba__factor_cl_qr;

/* ops.c: the tables. */
extern const mlsba__factor_ops_t mlsba__factor_getrf_ops;
extern const mlsba__factor_ops_t mlsba__factor_potrf_lower_ops;
extern const mlsba__factor_ops_t mlsba__factor_potrf_upper_ops;
extern const mlsba__factor_ops_t mlsba__factor_geqrf_ops;

/* ---- what the kernels share (kernels.c) --------------------------------- */

/* Bytes of one element of the matrix. */
size_t mlsba__factor_esize(const mlsba__factor_problem_t *P);

/* The element (i, j) of the matrix. */
void *mlsba__factor_at(const mlsba__factor_problem_t *P, int64_t i, int64_t j);

/* The panels: min(m, n) columns in blocks of nb. */
int64_t mlsba__factor_diag(const mlsba__factor_problem_t *P);

/* x (jb x jb, leading dimension jb) = the inverse of the triangle at
 * (j, j): the identity solved with it. */
void mlsba__factor_invert_triangle(const mlsba__factor_problem_t *P, int64_t j,
                                   int64_t jb, char uplo, char diag, void *x);

/* The room every operation's kernels keep between steps (P->kept where
 * the leading dimension calls for it, NULL where memory does not allow;
 * the buffer executor ex keeps between calls where it is large enough),
 * then the operation's own (its table's open), and their release (P->kept
 * given back to ex to keep). */
void mlsba__factor_scratch_open(mlsba__factor_problem_t *P,
                                mlsba_executor_t *ex);
void mlsba__factor_scratch_close(mlsba__factor_problem_t *P,
                                 mlsba_executor_t *ex);

/* A leading dimension of a multiple of 1 KiB (kernels.c says why the
 * update's operands from the panel then go through copies). */
int mlsba__factor_aliases(const mlsba__factor_problem_t *P);
/* A leading dimension of at least rows, a multiple of 16 elements, not of
 * 1 KiB. */
int64_t mlsba__factor_padded(const mlsba__factor_problem_t *P, int64_t rows);
/* rows x cols of the matrix from (i, c) in a new buffer of leading
 * dimension ld (NULL: no memory). */
void *mlsba__factor_copy_block(const mlsba__factor_problem_t *P, int64_t i,
                               int64_t c, int64_t rows, int64_t cols,
                               int64_t ld);

/* After the panel [j, j + jb): the part its update reads, its rows below
 * the diagonal block (by_rows) or its columns right of it, into the copy
 * of its parity (P->kept, where there is one). */
void mlsba__factor_keep_panel(mlsba__factor_problem_t *P, int64_t j, int64_t jb,
                              int by_rows);
/* Whether the copy of panel j is kept, and where. */
int mlsba__factor_kept(const mlsba__factor_problem_t *P, int64_t j);
char *mlsba__factor_kept_copy(const mlsba__factor_problem_t *P, int64_t j);

/* ---- LU (lu.c): its table's hooks, and what the OpenCL code calls ------- */

int64_t mlsba__lu_units(const mlsba__factor_problem_t *P, int64_t j,
                        int64_t jb);
double mlsba__lu_unit_flops(const mlsba__factor_problem_t *P, int64_t j,
                            int64_t jb);
double mlsba__lu_panel_flops(const mlsba__factor_problem_t *P, int64_t j,
                             int64_t jb);
double mlsba__lu_panel_serial_flops(const mlsba__factor_problem_t *P, int64_t j,
                                    int64_t jb);
double mlsba__lu_flops(const mlsba__factor_problem_t *P);
int mlsba__lu_unit_columns(int64_t N, int64_t u, int64_t cols[2]);
int mlsba__lu_panel(mlsba__factor_problem_t *P, int64_t j, int64_t jb);
void mlsba__lu_update(const mlsba__factor_problem_t *P, int64_t j, int64_t jb,
                      int64_t u0, int64_t u1);
void mlsba__lu_replay(const mlsba__factor_problem_t *P, int64_t j, int64_t jb,
                      int64_t c0, int64_t c1, int64_t top);
void mlsba__lu_swap_left(const mlsba__factor_problem_t *P, int64_t c0,
                         int64_t c1);
int64_t mlsba__lu_swap_left_rows(const mlsba__factor_problem_t *P, int64_t c);
void mlsba__lu_open(mlsba__factor_problem_t *P);
void mlsba__lu_close(mlsba__factor_problem_t *P);

/* The row interchanges of the panel [j, j + jb) applied to columns
 * [c, c + w) (what an accelerator's columns need before they are sent). */
void mlsba__factor_swap_rows(const mlsba__factor_problem_t *P, int64_t j,
                             int64_t jb, int64_t c, int64_t w);

/* ---- Cholesky (chol.c): its tables' hooks ------------------------------- */

int64_t mlsba__chol_units(const mlsba__factor_problem_t *P, int64_t j,
                          int64_t jb);
double mlsba__chol_unit_flops(const mlsba__factor_problem_t *P, int64_t j,
                              int64_t jb);
double mlsba__chol_panel_flops(const mlsba__factor_problem_t *P, int64_t j,
                               int64_t jb);
double mlsba__chol_panel_serial_flops(const mlsba__factor_problem_t *P,
                                      int64_t j, int64_t jb);
double mlsba__chol_flops(const mlsba__factor_problem_t *P);
int mlsba__chol_unit_columns(int64_t N, int64_t u, int64_t cols[2]);
int mlsba__chol_panel(mlsba__factor_problem_t *P, int64_t j, int64_t jb);
int mlsba__chol_diag(mlsba__factor_problem_t *P, int64_t j, int64_t jb);
void mlsba__chol_solve(const mlsba__factor_problem_t *P, int64_t j, int64_t jb,
                       int64_t r0, int64_t r1);
int64_t mlsba__chol_solve_rows(const mlsba__factor_problem_t *P, int64_t j,
                               int64_t jb);
void mlsba__chol_update(const mlsba__factor_problem_t *P, int64_t j, int64_t jb,
                        int64_t u0, int64_t u1);
void mlsba__chol_replay(const mlsba__factor_problem_t *P, int64_t j, int64_t jb,
                        int64_t c0, int64_t c1, int64_t top);

/* ---- QR (qr.c): its table's hooks, and the room it needs --------------- */

/* Columns of the panel's ?geqrf workspace (LAPACK's own block is 32); the
 * stack an update falls back on without memory, which bounds QR's block
 * (mlsba_geqrf refuses a wider one). */
enum { MLSBA__QR_WORK_COLUMNS = 64, MLSBA__QR_STACK_BYTES = 65536 };

int64_t mlsba__qr_units(const mlsba__factor_problem_t *P, int64_t j,
                        int64_t jb);
double mlsba__qr_unit_flops(const mlsba__factor_problem_t *P, int64_t j,
                            int64_t jb);
double mlsba__qr_panel_flops(const mlsba__factor_problem_t *P, int64_t j,
                             int64_t jb);
double mlsba__qr_flops(const mlsba__factor_problem_t *P);
int mlsba__qr_panel(mlsba__factor_problem_t *P, int64_t j, int64_t jb);
void mlsba__qr_update(const mlsba__factor_problem_t *P, int64_t j, int64_t jb,
                      int64_t u0, int64_t u1);
void mlsba__qr_replay(const mlsba__factor_problem_t *P, int64_t j, int64_t jb,
                      int64_t c0, int64_t c1, int64_t top);
/* Bytes of P->tfac for the problem's panels. */
size_t mlsba__qr_room(const mlsba__factor_problem_t *P);
/* The T of panel j (jb x jb, leading dimension jb), kept until the panel
 * two after it is factorized: what the OpenCL half sends (cl_qr.c). */
const void *mlsba__qr_t(const mlsba__factor_problem_t *P, int64_t j);

/* ---- the per-step split (pure: no I/O, no clock) ---------------------- */

typedef struct mlsba__factor_split_in {
  mlsba_factor_split_t split;
  size_t p;                 /* devices, file order */
  size_t q;                 /* groups */
  const size_t *group_size; /* q sizes */
  const size_t *group_dev;  /* the devices, group by group */
  /* p models of each device's flop rate (flops per second) as a function
   * of its units, with its max_load; NULL where none is known yet. */
  const mlsba_model_t *const *rate;
  const unsigned char *active; /* p: 1 when it takes units */
  int64_t units;               /* this step's */
  double unit_flops;           /* w_k */
  long panel_dev;              /* -1: the panel is not on a device */
  double panel_s;              /* its time, added to panel_dev's */
  int64_t panel_min;           /* units panel_dev must take (lookahead) */
  /* The device that updates the next panel's panel_min units when it is
   * not panel_dev (-1 or panel_dev: panel_dev does): it runs them first,
   * in ahead_s, as a share of their own, and takes them; panel_dev starts
   * the panel at ahead_s at the earliest. */
  long ahead_dev;
  double ahead_s;
  /* Without lookahead (diag_units > 0): panel_dev's share begins with the
   * next panel's first columns, and before the panel it updates the part
   * of that panel's diagonal block its units leave out: diag_s for the
   * whole block of diag_units columns, r (r + 1) / (diag_units
   * (diag_units + 1)) of it when it holds diag_units - r of them. */
  int64_t diag_units;
  double diag_s;
  /* The cores that factorize the panel together (team[0] is panel_dev;
   * team_size 0 or 1: panel_dev alone). With the next panel's columns on
   * panel_dev (not ahead_dev), the team shares their panel_min units,
   * team_ahead_s each, then factorizes the panel, panel_s on each of
   * them. */
  size_t team_size;
  const long *team;
  double team_ahead_s;
  const double *fraction; /* FIXED_SLICE: p fractions */
} mlsba__factor_split_in_t;

/* loads[p] (file order) summing to in->units: the split in->split asks
 * for, with panel_dev holding at least panel_min units. FPM falls back to
 * an even split among the active devices while any of them has no model.
 * Devices over their max_load only when the active ones cannot hold the
 * step (they then stream). *fpm: 1 when the models decided it. */
int mlsba__factor_split(const mlsba__factor_split_in_t *in, int64_t loads[],
                        int *fpm);

/* The step's time as the models predict it for these loads: the longest
 * device time, the panel's and the next panel's columns' as the split
 * counts them (devices without a model left out). */
double mlsba__factor_split_time(const mlsba__factor_split_in_t *in,
                                const int64_t loads[]);

/* What a step teaches a real device's rate model (models.c): the point
 * (units, rate) measured, joined to a point within a tenth of its units
 * as the single-node driver joins them (a rate far below it counts a
 * quarter, another process having slowed that step). The MPI layer
 * learns each rank's devices this way. */
void mlsba__factor_learn_point(mlsba_model_t *m, double units, double rate);

/* ---- the arguments LAPACK would check (factor.c) ----------------------
 * Each returns 0, or MLSBA_EINVAL with a message that starts with fn and
 * names the argument, as every public call of lib/factor words it. */

/* ex not NULL, prec single or double. */
int mlsba__factor_check_call(const char *fn, const mlsba_executor_t *ex,
                             mlsba_precision_t prec);
/* A dimension called name within 0..INT_MAX (LAPACK's int). */
int mlsba__factor_check_count(const char *fn, const char *name, int64_t v);
/* A leading dimension called name of an array of rows rows: at least
 * max(1, rows), at most INT_MAX. */
int mlsba__factor_check_ld(const char *fn, const char *name, int64_t ld,
                           int64_t rows);
/* trans one of N, T, C in either case. */
int mlsba__factor_check_trans(const char *fn, char trans);

#endif
