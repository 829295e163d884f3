/* The host's replay of the updates that a resident Cholesky column missed
 * when its device failed (run.c: replay_resident): column by column, a
 * product with one column each, so that no element of the other triangle
 * is written. Only a failure takes this path; speed does not matter. */
#include "../devices/kernels.h"
#include "run.h"

static void *at(const mlsba__factor_problem_t *P, int64_t i, int64_t j) {
  return (char *)P->a + (size_t)(i + j * P->lda) * mlsba__factor_esize(P);
}

void mlsba__factor_chol_replay(const mlsba__factor_problem_t *P, int64_t j,
                               int64_t jb, int64_t c0, int64_t c1,
                               int64_t top) {
  for (int64_t c = c0; c < c1; c++) {
    if (P->op == MLSBA__FACTOR_CHOL_LOWER) /* rows [c, n) -= L21 L21(c)^T */
      mlsba__cpu_gemm(P->prec, 'N', 'T', P->n - c, 1, jb, -1.0, at(P, c, j),
                      P->lda, at(P, c, j), P->lda, 1.0, at(P, c, c), P->lda, 1);
    else if (c >= top) /* rows [top, c] -= U12(top..c)^T U12(c) */
      mlsba__cpu_gemm(P->prec, 'T', 'N', c + 1 - top, 1, jb, -1.0,
                      at(P, j, top), P->lda, at(P, j, c), P->lda, 1.0,
                      at(P, top, c), P->lda, 1);
  }
}
