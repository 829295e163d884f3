/* A lower Cholesky panel in two parts (panel.h): LAPACK's ?potf2 on the
 * diagonal block, called, and the solve of the rows below it through the
 * project's CPU kernels. */
#include "panel.h"

#include "../devices/cpu/cpu_blas.h"

void dpotf2_(const char *uplo, const int *n, double *a, const int *lda,
             int *info, size_t uplo_len);
void spotf2_(const char *uplo, const int *n, float *a, const int *lda,
             int *info, size_t uplo_len);

static void *at(const mlsba__factor_problem_t *P, int64_t i, int64_t j) {
  size_t es =
      P->prec == MLSBA_PRECISION_DOUBLE ? sizeof(double) : sizeof(float);
  return (char *)P->a + (size_t)(i + j * P->lda) * es;
}

int mlsba__factor_chol_diag(mlsba__factor_problem_t *P, int64_t j, int64_t jb) {
  int n = (int)jb, lda = (int)P->lda, info = 0;
  if (P->prec == MLSBA_PRECISION_DOUBLE)
    dpotf2_("L", &n, at(P, j, j), &lda, &info, 1);
  else
    spotf2_("L", &n, at(P, j, j), &lda, &info, 1);
  if (info > 0) {
    P->info = j + info;
    return 1;
  }
  return 0;
}

void mlsba__factor_chol_solve(const mlsba__factor_problem_t *P, int64_t j,
                              int64_t jb, int64_t r0, int64_t r1) {
  if (r1 <= r0)
    return;
  mlsba__cpu_trsm(P->prec, 'R', 'L', 'T', 'N', r1 - r0, jb, 1.0, at(P, j, j),
                  P->lda, at(P, j + jb + r0, j), P->lda, 1);
}

int64_t mlsba__factor_chol_solve_rows(const mlsba__factor_problem_t *P,
                                      int64_t j, int64_t jb) {
  return P->n - j - jb;
}
