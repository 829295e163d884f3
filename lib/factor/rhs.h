/* The solves with the factors of mlsba_getrf and mlsba_potrf, internal
 * view: what a block of right-hand sides needs (rhs.c) and the checks
 * the public solves and their drivers share (solves.c). */
#ifndef MLSBA_FACTOR_RHS_H
#define MLSBA_FACTOR_RHS_H

#include <stdint.h>

#include "mlsba.h"

/* One solve with a factorization's factors: LU (ipiv set; trans: A^T X
 * = B) or Cholesky (ipiv NULL; lower: A = L L^T, else U^T U). Columns of
 * B are independent: any block of them is solved alone. */
typedef struct {
  mlsba_precision_t prec;
  int64_t n;
  const void *a;
  int64_t lda;
  const int64_t *ipiv; /* LU's n 1-based pivots; NULL: Cholesky */
  int trans;           /* LU */
  int lower;           /* Cholesky */
  void *b;
  int64_t ldb;
} mlsba__rhs_t;

/* Columns [c, c + w) of B solved in place from the calling thread, the
 * kernels' TRSMs on `threads` threads (its TRSVs on one); on one thread
 * by blocks where mlsba__rhs_by_blocks says so, unless OpenBLAS's kernels
 * also run the triangles (one TRSM, which OpenBLAS blocks itself). */
void mlsba__rhs_solve(const mlsba__rhs_t *s, int64_t c, int64_t w,
                      unsigned threads);

/* Whether a core solves its columns by blocks (rhs.c): where OpenBLAS's
 * kernels run the products of precision p. Otherwise one TRSM of the
 * whole triangle on the cores' threads ran faster here (double, BLIS's
 * skx: n = 4096, 64 right-hand sides, 26 ms against 39 ms by blocks
 * split between the cores). */
int mlsba__rhs_by_blocks(mlsba_precision_t p);

/* The arguments of a solve LAPACK checks (executor, precision, n, nrhs,
 * a, lda, b, ldb, info), each bad one named in the message with fn. */
int mlsba__rhs_check(const char *fn, const mlsba_executor_t *ex,
                     mlsba_precision_t prec, int64_t n, int64_t nrhs,
                     const void *a, int64_t lda, const void *b, int64_t ldb,
                     const int64_t *info);

/* The threads of a solve (solves.c): one a real core of the platform;
 * one on a platform of simulated devices, which compute nothing (the
 * calling thread solves). OpenCL devices take no part. */
unsigned mlsba__solve_threads(const mlsba_executor_t *ex);

/* ---- the cores' parts of a split (rhs.c) ---------------------------
 * A computation cut into parts, one a core, each part on its core's
 * pinned thread of the executor with one-thread kernels, one run of every
 * part at a time; the calling thread works between two runs. Nothing
 * inside a run waits for another part: BLIS's own threads, which share
 * one packed operand, meet at spinning barriers many times a call, and on
 * a loaded machine each meeting cost a scheduler's time slice. */
enum { MLSBA__CREW_MAX = 64 };

typedef void (*mlsba__part_fn)(void *user, unsigned part);

typedef struct {
  mlsba_executor_t *ex;
  mlsba_load_t *load; /* NULL: every part runs on the calling thread */
  int64_t *units;
  double *time;
  unsigned parts;
  mlsba__part_fn fn;
  void *user;
  unsigned char done[MLSBA__CREW_MAX];
} mlsba__crew_t;

/* The real cores of the platform; 0 on a platform of simulated devices. */
size_t mlsba__rhs_real_cores(const mlsba_executor_t *ex);

/* The parts a split of ex takes: one a real core, at most
 * MLSBA__CREW_MAX; 1 on a platform of simulated devices. */
unsigned mlsba__crew_parts(const mlsba_executor_t *ex);

/* A crew of `parts` parts (at most mlsba__crew_parts(ex)) running fn;
 * where the executor's load cannot be made, the calling thread runs every
 * part (nothing fails). */
void mlsba__crew_start(mlsba__crew_t *cr, mlsba_executor_t *ex, unsigned parts,
                       mlsba__part_fn fn, void *user);

/* One run of every part; a part the run did not reach (it could not
 * start, the executor runs a load already, or a core's thread failed)
 * runs on the calling thread after it. */
void mlsba__crew_run(mlsba__crew_t *cr);

void mlsba__crew_end(mlsba__crew_t *cr);

/* Bounds of `parts` ranges of [0, n) of equal weight: index x weighs
 * weight(user, x); part t takes [bound[t], bound[t + 1]). */
void mlsba__crew_bounds(int64_t *bound, unsigned parts, int64_t n,
                        double (*weight)(const void *user, int64_t x),
                        const void *user);

/* B = op(T)^-1 B, all nrhs columns of s's B, T the triangle uplo of s's
 * factors (n x n): by TRSV a column below three right-hand sides, else
 * split between the cores where the triangle has two blocks of rows or
 * more (rhs.c: by rows of B, its first block and its last runs by
 * columns), else on the calling thread. */
void mlsba__rhs_triangle(mlsba_executor_t *ex, const mlsba__rhs_t *s, char uplo,
                         char trans, char diag, int64_t nrhs);

/* The rows of a triangle the cores' runs take at a time where they split
 * B's rows (rhs.c: 256); rows <= 0 restores it. For benchmarks, which
 * compare blocks on one machine (a block fewer runs, each waking the
 * cores, against more of their time in the narrower GEMMs and the
 * larger diagonal solves); set before the solves, not during one. */
void mlsba__rhs_set_split_block(int64_t rows);

/* Every column of B solved as mlsba__rhs_solve() solves them: where
 * mlsba__rhs_triangle() would split a triangle, the interchanges and both
 * triangles as one chain of the cores' runs (rhs.c), nothing computed on
 * the calling thread between two runs; else on the calling thread. */
void mlsba__rhs_solve_split(mlsba_executor_t *ex, const mlsba__rhs_t *s,
                            int64_t nrhs);

#endif
