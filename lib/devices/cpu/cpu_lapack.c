/* The panels' LAPACK (../lapack.h says which and why). */
#include "../lapack.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>

#include "cpu_kernels.h"
#include "cpu_lapack_linked.h"
#include "cpu_openblas.h"

/* The calls' types, a precision's pointers as void *: the private
 * OpenBLAS exports the same Fortran interface as the linked one. */
typedef void (*getf2_fn)(const int *, const int *, void *, const int *, int *,
                         int *);
typedef void (*potf2_fn)(const char *, const int *, void *, const int *, int *,
                         size_t);
typedef void (*geqrf_fn)(const int *, const int *, void *, const int *, void *,
                         void *, const int *, int *);
typedef void (*larft_fn)(const char *, const char *, const int *, const int *,
                         const void *, const int *, const void *, void *,
                         const int *, size_t, size_t);
typedef void (*lascl_fn)(const char *, const int *, const int *, const void *,
                         const void *, const int *, const int *, void *,
                         const int *, int *, size_t);

/* The calls in use, [0] single, [1] double. */
static struct {
  getf2_fn getf2[2];
  potf2_fn potf2[2];
  geqrf_fn geqrf[2];
  larft_fn larft[2];
  lascl_fn lascl[2];
  char label[160];
} lp;
static pthread_once_t lapack_once = PTHREAD_ONCE_INIT;

static void use_linked(const char *why) {
  lp.getf2[0] = (getf2_fn)sgetf2_;
  lp.getf2[1] = (getf2_fn)dgetf2_;
  lp.potf2[0] = (potf2_fn)spotf2_;
  lp.potf2[1] = (potf2_fn)dpotf2_;
  lp.geqrf[0] = (geqrf_fn)sgeqrf_;
  lp.geqrf[1] = (geqrf_fn)dgeqrf_;
  lp.larft[0] = (larft_fn)slarft_;
  lp.larft[1] = (larft_fn)dlarft_;
  lp.lascl[0] = (lascl_fn)slascl_;
  lp.lascl[1] = (lascl_fn)dlascl_;
  snprintf(lp.label, sizeof lp.label, "the linked liblapack (%s)", why);
}

/* The private copy's calls; 0 when one is missing. */
static int use_private(void) {
  static const char *names[][2] = {{"sgetf2_", "dgetf2_"},
                                   {"spotf2_", "dpotf2_"},
                                   {"sgeqrf_", "dgeqrf_"},
                                   {"slarft_", "dlarft_"},
                                   {"slascl_", "dlascl_"}};
  void **slots[][2] = {{(void **)&lp.getf2[0], (void **)&lp.getf2[1]},
                       {(void **)&lp.potf2[0], (void **)&lp.potf2[1]},
                       {(void **)&lp.geqrf[0], (void **)&lp.geqrf[1]},
                       {(void **)&lp.larft[0], (void **)&lp.larft[1]},
                       {(void **)&lp.lascl[0], (void **)&lp.lascl[1]}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    for (int p = 0; p < 2; p++)
      if ((*slots[i][p] = mlsba__openblas_symbol(names[i][p])) == NULL)
        return 0;
  snprintf(lp.label, sizeof lp.label, "%s", mlsba__openblas_label());
  return 1;
}

/* After the cores' kernel choice, which may load the private OpenBLAS
 * under its own once: mlsba__openblas_load is not thread-safe, and once
 * the choice is made nothing else loads it. */
static void choose_lapack(void) {
  const char *why = NULL;
  (void)mlsba__cpu_kernel_openblas_why(); /* the choice, made */
  if (mlsba__openblas_load(mlsba__cpu_features(), &why) != 0) {
    use_linked(why);
  } else if (!use_private()) {
    use_linked("the private OpenBLAS lacks a LAPACK routine");
  }
}

static int ix(mlsba_precision_t p) {
  pthread_once(&lapack_once, choose_lapack);
  return p == MLSBA_PRECISION_DOUBLE;
}

const char *mlsba__lapack_label(void) {
  (void)ix(MLSBA_PRECISION_DOUBLE);
  return lp.label;
}

int mlsba__lapack_getf2(mlsba_precision_t p, int m, int n, void *a, int lda,
                        int *ipiv) {
  int info = 0;
  lp.getf2[ix(p)](&m, &n, a, &lda, ipiv, &info);
  return info;
}

int mlsba__lapack_potf2(mlsba_precision_t p, char uplo, int n, void *a,
                        int lda) {
  int info = 0;
  lp.potf2[ix(p)](&uplo, &n, a, &lda, &info, 1);
  return info;
}

int mlsba__lapack_geqrf(mlsba_precision_t p, int m, int n, void *a, int lda,
                        void *tau, void *work, int lwork) {
  int info = 0;
  lp.geqrf[ix(p)](&m, &n, a, &lda, tau, work, &lwork, &info);
  return info;
}

void mlsba__lapack_larft(mlsba_precision_t p, int n, int k, const void *v,
                         int ldv, const void *tau, void *t, int ldt) {
  lp.larft[ix(p)]("F", "C", &n, &k, v, &ldv, tau, t, &ldt, 1, 1);
}

int mlsba__lapack_lascl(mlsba_precision_t p, double cfrom, double cto, int m,
                        int n, void *a, int lda) {
  int zero = 0, info = 0;
  if (p == MLSBA_PRECISION_DOUBLE) {
    lp.lascl[ix(p)]("G", &zero, &zero, &cfrom, &cto, &m, &n, a, &lda, &info, 1);
  } else {
    float from = (float)cfrom, to = (float)cto;
    lp.lascl[ix(p)]("G", &zero, &zero, &from, &to, &m, &n, a, &lda, &info, 1);
  }
  return info;
}
