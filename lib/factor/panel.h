/* A Cholesky panel in two parts, so that a lower panel's solve can be
 * split between the devices as the update is: the diagonal block on the
 * panel's core, then the rows below it, each independent of the others.
 * In kernels.c, beside the whole panel (mlsba__factor_panel), which is
 * the two parts in a row. */
#ifndef MLSBA_FACTOR_PANEL_H
#define MLSBA_FACTOR_PANEL_H

#include "factor.h"

/* The diagonal block of the panel [j, j + jb) with LAPACK's ?potf2
 * (lower or upper as the problem is). Sets
 * P->info and returns 1 when it is not positive definite, else 0. */
int mlsba__factor_chol_diag(mlsba__factor_problem_t *P, int64_t j, int64_t jb);

/* Rows [r0, r1) of the panel below its diagonal block (0 is row j + jb):
 * L21 = A21 L11^-T on those rows alone (upper: columns of U12), by the
 * product with the block's inverse. Single threaded. */
void mlsba__factor_chol_solve(const mlsba__factor_problem_t *P, int64_t j,
                              int64_t jb, int64_t r0, int64_t r1);

/* The rows of that solve: the panel's height below its diagonal block. */
int64_t mlsba__factor_chol_solve_rows(const mlsba__factor_problem_t *P,
                                      int64_t j, int64_t jb);

#endif
