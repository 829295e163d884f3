/* The library's LAPACK (../lapack.h says which and why). Nothing of it
 * is linked: each routine is looked up by name in the library that
 * serves, so that libmlsba never brings a LAPACK (and with Debian's, an
 * OpenBLAS) into the process as it starts. */
#include "../lapack.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../../core/error.h"
#include "cpu_kernels.h"
#include "cpu_openblas.h"

/* The calls' types, a precision's pointers as void *: every LAPACK
 * exports the same Fortran interface. */
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
typedef void (*orgqr_fn)(const int *, const int *, const int *, void *,
                         const int *, const void *, void *, const int *, int *);

/* The routines, by the name that follows the precision's letter; getrf
 * and potrf share getf2's and potf2's types. */
enum { GETF2, POTF2, GEQRF, LARFT, LASCL, ORGQR, GETRF, POTRF, ROUTINES };
static const char *const names[ROUTINES] = {"getf2_", "potf2_", "geqrf_",
                                            "larft_", "lascl_", "orgqr_",
                                            "getrf_", "potrf_"};

/* A LAPACK's routines, [r][0] single, [r][1] double. */
typedef struct {
  void *fn[ROUTINES][2];
} table_t;

/* The table in use; all NULL when no LAPACK loaded (lp.label says why). */
static struct {
  table_t t;
  int ok;
  char label[1024];
} lp;
static pthread_once_t lapack_once = PTHREAD_ONCE_INIT;

/* Fills t from find (dlsym on handle, or the private OpenBLAS's); 0, or
 * -1 with the first missing routine's name in missing. */
static int fill(table_t *t, void *handle, char *missing, size_t size) {
  for (int r = 0; r < ROUTINES; r++)
    for (int p = 0; p < 2; p++) {
      char name[16];
      snprintf(name, sizeof name, "%c%s", p ? 'd' : 's', names[r]);
      t->fn[r][p] = handle ? dlsym(handle, name) : mlsba__openblas_symbol(name);
      if (t->fn[r][p] == NULL) {
        snprintf(missing, size, "%s", name);
        return -1;
      }
    }
  return 0;
}

/* Loads the LAPACK at path (a file or a soname) into t, its handle kept
 * for the process's life; 0, or -1 with why written. RTLD_LOCAL: its
 * symbols answer no one else's calls. */
static int open_lapack(const char *path, table_t *t, char *why, size_t size) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    const char *e = dlerror();
    snprintf(why, size, "%s did not load (%s)", path, e ? e : "?");
    return -1;
  }
  char missing[16];
  if (fill(t, h, missing, sizeof missing) != 0) {
    snprintf(why, size, "%s lacks %s", path, missing);
    dlclose(h);
    return -1;
  }
  return 0;
}

int mlsba__lapack_probe(const char *path, char *why, size_t size) {
  table_t t;
  char buf[256];
  if (open_lapack(path, &t, buf, sizeof buf) != 0) {
    snprintf(why, size, "%s", buf);
    return MLSBA_ENOTSUP;
  }
  /* Its handle stays open: unloading a LAPACK whose BLAS (an OpenBLAS)
   * started threads as it loaded is not safe. */
  snprintf(why, size, "%s", "");
  return 0;
}

/* Where the private OpenBLAS does not load: reference LAPACK (Debian's
 * liblapack3, on the system's BLAS), else whatever liblapack.so.3 the
 * system names; off says why the private copy did not serve. */
static void use_fallback(const char *off) {
  char why[2][256] = {"", ""};
  const char *paths[2] = {NULL, "liblapack.so.3"};
#ifdef MLSBA_REFERENCE_LAPACK
  paths[0] = MLSBA_REFERENCE_LAPACK;
#else
  snprintf(why[0], sizeof why[0],
           "reference LAPACK was not found when libmlsba was built");
#endif
  for (int i = 0; i < 2; i++) {
    if (paths[i] && open_lapack(paths[i], &lp.t, why[i], sizeof why[i]) == 0) {
      lp.ok = 1;
      snprintf(lp.label, sizeof lp.label, "%s %s (the private OpenBLAS: %s)",
               i == 0 ? "reference LAPACK," : "the system's LAPACK,", paths[i],
               off);
      return;
    }
  }
  memset(&lp.t, 0, sizeof lp.t);
  snprintf(lp.label, sizeof lp.label,
           "no LAPACK (the private OpenBLAS: %s; %s; %s; Debian: liblapack3)",
           off, why[0], why[1]);
}

/* After the cores' kernel choice, which may load the private OpenBLAS
 * under its own once: mlsba__openblas_load is not thread-safe, and once
 * the choice is made nothing else loads it. */
static void choose_lapack(void) {
  const char *why = NULL;
  char missing[16];
  (void)mlsba__cpu_kernel_openblas_why(); /* the choice, made */
  if (mlsba__openblas_load(mlsba__cpu_features(), &why) != 0) {
    use_fallback(why);
  } else if (fill(&lp.t, NULL, missing, sizeof missing) != 0) {
    char off[64];
    snprintf(off, sizeof off, "it lacks %s", missing);
    use_fallback(off);
  } else {
    lp.ok = 1;
    snprintf(lp.label, sizeof lp.label, "%s", mlsba__openblas_label());
  }
}

/* The precision's routine r, or NULL when no LAPACK loaded. */
static void *routine(int r, mlsba_precision_t p) {
  pthread_once(&lapack_once, choose_lapack);
  return lp.t.fn[r][p == MLSBA_PRECISION_DOUBLE];
}

const char *mlsba__lapack_label(void) {
  pthread_once(&lapack_once, choose_lapack);
  return lp.label;
}

int mlsba__lapack_check(const char *fn) {
  pthread_once(&lapack_once, choose_lapack);
  if (!lp.ok)
    return mlsba__fail(MLSBA_ENOTSUP, "%s: %s", fn, lp.label);
  return 0;
}

int mlsba__lapack_getf2(mlsba_precision_t p, int m, int n, void *a, int lda,
                        int *ipiv) {
  getf2_fn f = (getf2_fn)routine(GETF2, p);
  int info = 0;
  if (f == NULL)
    return MLSBA__LAPACK_NONE;
  f(&m, &n, a, &lda, ipiv, &info);
  return info;
}

int mlsba__lapack_getrf(mlsba_precision_t p, int m, int n, void *a, int lda,
                        int *ipiv) {
  getf2_fn f = (getf2_fn)routine(GETRF, p);
  int info = 0;
  if (f == NULL)
    return MLSBA__LAPACK_NONE;
  f(&m, &n, a, &lda, ipiv, &info);
  return info;
}

int mlsba__lapack_potf2(mlsba_precision_t p, char uplo, int n, void *a,
                        int lda) {
  potf2_fn f = (potf2_fn)routine(POTF2, p);
  int info = 0;
  if (f == NULL)
    return MLSBA__LAPACK_NONE;
  f(&uplo, &n, a, &lda, &info, 1);
  return info;
}

int mlsba__lapack_potrf(mlsba_precision_t p, char uplo, int n, void *a,
                        int lda) {
  potf2_fn f = (potf2_fn)routine(POTRF, p);
  int info = 0;
  if (f == NULL)
    return MLSBA__LAPACK_NONE;
  f(&uplo, &n, a, &lda, &info, 1);
  return info;
}

int mlsba__lapack_geqrf(mlsba_precision_t p, int m, int n, void *a, int lda,
                        void *tau, void *work, int lwork) {
  geqrf_fn f = (geqrf_fn)routine(GEQRF, p);
  int info = 0;
  if (f == NULL)
    return MLSBA__LAPACK_NONE;
  f(&m, &n, a, &lda, tau, work, &lwork, &info);
  return info;
}

int mlsba__lapack_orgqr(mlsba_precision_t p, int m, int n, int k, void *a,
                        int lda, const void *tau, void *work, int lwork) {
  orgqr_fn f = (orgqr_fn)routine(ORGQR, p);
  int info = 0;
  if (f == NULL)
    return MLSBA__LAPACK_NONE;
  f(&m, &n, &k, a, &lda, tau, work, &lwork, &info);
  return info;
}

void mlsba__lapack_larft(mlsba_precision_t p, int n, int k, const void *v,
                         int ldv, const void *tau, void *t, int ldt) {
  larft_fn f = (larft_fn)routine(LARFT, p);
  if (f != NULL)
    f("F", "C", &n, &k, v, &ldv, tau, t, &ldt, 1, 1);
}

int mlsba__lapack_lascl(mlsba_precision_t p, double cfrom, double cto, int m,
                        int n, void *a, int lda) {
  lascl_fn f = (lascl_fn)routine(LASCL, p);
  int zero = 0, info = 0;
  if (f == NULL)
    return MLSBA__LAPACK_NONE;
  if (p == MLSBA_PRECISION_DOUBLE) {
    f("G", &zero, &zero, &cfrom, &cto, &m, &n, a, &lda, &info, 1);
  } else {
    float from = (float)cfrom, to = (float)cto;
    f("G", &zero, &zero, &from, &to, &m, &n, a, &lda, &info, 1);
  }
  return info;
}
