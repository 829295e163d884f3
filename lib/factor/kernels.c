/* What the kernels of every factorization share: the element's size and
 * place, the inverse of a panel's triangle, and the copy of a panel's
 * operand made once for every device's update. The operations' own
 * kernels are in lu.c and chol.c. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../core/bigmem.h"
#include "../devices/kernels.h"
#include "../runtime/executor.h"
#include "factor.h"

size_t mlsba__factor_esize(const mlsba__factor_problem_t *P) {
  return P->prec == MLSBA_PRECISION_DOUBLE ? sizeof(double) : sizeof(float);
}

void *mlsba__factor_at(const mlsba__factor_problem_t *P, int64_t i, int64_t j) {
  return (char *)P->a + (size_t)(i + j * P->lda) * mlsba__factor_esize(P);
}

int64_t mlsba__factor_diag(const mlsba__factor_problem_t *P) {
  return P->m < P->n ? P->m : P->n;
}

void mlsba__factor_invert_triangle(const mlsba__factor_problem_t *P, int64_t j,
                                   int64_t jb, char uplo, char diag, void *x) {
  memset(x, 0, (size_t)(jb * jb) * mlsba__factor_esize(P));
  for (int64_t i = 0; i < jb; i++) {
    if (P->prec == MLSBA_PRECISION_DOUBLE)
      ((double *)x)[i + i * jb] = 1;
    else
      ((float *)x)[i + i * jb] = 1;
  }
  mlsba__cpu_trsm(P->prec, 'L', uplo, 'N', diag, jb, jb, 1.0,
                  mlsba__factor_at(P, j, j), P->lda, x, jb, 1);
}

/* A leading dimension of a multiple of 1 KiB (a matrix of order 4096)
 * maps a column's elements to the same cache sets: BLIS's GEMM, packing
 * such operands, ran at half its speed in single precision here (46
 * against 86 GFLOPS for 3840 x 1967 x 128 on one core), which OpenBLAS
 * does not. The update's operands from the panel then go through copies
 * with a leading dimension off those multiples (their rows, or columns,
 * times jb elements against the product's 2 w jb flops a row). */
int mlsba__factor_aliases(const mlsba__factor_problem_t *P) {
  return (size_t)P->lda * mlsba__factor_esize(P) % 1024 == 0;
}

int64_t mlsba__factor_padded(const mlsba__factor_problem_t *P, int64_t rows) {
  int64_t ld = (rows + 15) / 16 * 16;
  return (size_t)ld * mlsba__factor_esize(P) % 1024 == 0 ? ld + 16 : ld;
}

/* rows x cols of the matrix from (i, c) into b, of leading dimension ld. */
static void copy_into(const mlsba__factor_problem_t *P, int64_t i, int64_t c,
                      int64_t rows, int64_t cols, char *b, int64_t ld) {
  for (int64_t k = 0; k < cols; k++)
    memcpy(b + (size_t)(k * ld) * mlsba__factor_esize(P),
           mlsba__factor_at(P, i, c + k),
           (size_t)rows * mlsba__factor_esize(P));
}

void *mlsba__factor_copy_block(const mlsba__factor_problem_t *P, int64_t i,
                               int64_t c, int64_t rows, int64_t cols,
                               int64_t ld) {
  char *b = malloc((size_t)(ld * cols) * mlsba__factor_esize(P) + 1);
  if (b)
    copy_into(P, i, c, rows, cols, b, ld);
  return b;
}

/* ---- the panel's copy, made once for every device ------------------------
 * Each update of a step read its panel's operand through a copy of its
 * own, as many as there are devices and pieces of shares in the step
 * (each as long as packing the operand again); the panel's core now makes
 * one, after the panel, for all of them. */

static int64_t kept_width(const mlsba__factor_problem_t *P) {
  int64_t k = mlsba__factor_diag(P);
  return P->nb < k ? P->nb : k;
}

/* The two copies are 2 n nb elements (25 MiB for a double Cholesky of
 * order 8192), first written inside the first two steps' timed panels:
 * in 4 KiB pages that was 6200 page faults, 10-20 us each in the VM the
 * project is measured on (0.06-0.12 s of a 1.6 s factorization), on the
 * first call and again on the second (glibc's malloc maps the first,
 * then takes the second from its heap, fresh). Huge pages (bigmem.h)
 * make it 13 faults; but freed at the end of every call, the memory went
 * back to the system, and from a process's fifth or sixth call on, each
 * huge page's fault took 6-7 ms of system time there (17-47 ms of the
 * second panel, which first writes the second copy, double precision, n
 * = 4096 and 8192). So the executor keeps the buffer between calls, as
 * OpenBLAS keeps its own: from the second call of a size on, nothing is
 * faulted. */
void mlsba__factor_scratch_open(mlsba__factor_problem_t *P,
                                mlsba_executor_t *ex) {
  P->kept = NULL;
  P->kept_bytes = 0;
  P->kept_j[0] = P->kept_j[1] = -1;
  P->kept_ld = mlsba__factor_padded(P, P->m > P->n ? P->m : P->n);
  if (mlsba__factor_aliases(P) && kept_width(P) > 0) { /* rows or columns */
    size_t bytes =
        2 * (size_t)(P->kept_ld * kept_width(P)) * mlsba__factor_esize(P);
    P->kept = ex ? mlsba__executor_spare_take(ex, bytes, &P->kept_bytes) : NULL;
    if (P->kept == NULL) {
      P->kept = mlsba__big_alloc(bytes);
      P->kept_bytes = bytes;
    }
  }
  if (P->ops->open)
    P->ops->open(P);
}

void mlsba__factor_scratch_close(mlsba__factor_problem_t *P,
                                 mlsba_executor_t *ex) {
  if (P->ops->close)
    P->ops->close(P);
  if (ex)
    mlsba__executor_spare_keep(ex, P->kept, P->kept_bytes);
  else
    free(P->kept);
  P->kept = NULL;
}

char *mlsba__factor_kept_copy(const mlsba__factor_problem_t *P, int64_t j) {
  size_t each = (size_t)(P->kept_ld * kept_width(P)) * mlsba__factor_esize(P);
  return (char *)P->kept + (size_t)(j / P->nb % 2) * each;
}

int mlsba__factor_kept(const mlsba__factor_problem_t *P, int64_t j) {
  return P->kept && P->kept_j[j / P->nb % 2] == j;
}

/* The copy of its parity: the update of the step before still reads the
 * other one. */
void mlsba__factor_keep_panel(mlsba__factor_problem_t *P, int64_t j, int64_t jb,
                              int by_rows) {
  if (P->kept == NULL)
    return;
  char *b = mlsba__factor_kept_copy(P, j);
  if (!by_rows)
    copy_into(P, j, j + jb, jb, P->n - j - jb, b, jb);
  else
    copy_into(P, j + jb, j, P->m - j - jb, jb, b, P->kept_ld);
  P->kept_j[j / P->nb % 2] = j;
}
