#include "dense.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const two_cores =
    "{\"devices\": ["
    "{\"name\": \"c0\", \"type\": \"cpu\", \"core\": 0},"
    "{\"name\": \"c1\", \"type\": \"cpu\", \"core\": 1}]}";

const char *const sim_pair =
    "{\"devices\": ["
    "{\"name\": \"core0\", \"type\": \"sim\", \"speed\": [[1, 100]]},"
    "{\"name\": \"gpu0\", \"type\": \"sim\", \"speed\": [[1, 300]]}],"
    "\"groups\": [[\"core0\"], [\"gpu0\"]]}";

node_t open_node(const char *json) {
  node_t n = {0};
  ck_assert_msg(mlsba_platform_parse(json, "test", &n.pl) == 0, "%s",
                mlsba_last_error());
  ck_assert_msg(mlsba_executor_create(n.pl, &n.ex) == 0, "%s",
                mlsba_last_error());
  return n;
}

void close_node(node_t *n) {
  mlsba_executor_destroy(n->ex);
  mlsba_platform_destroy(n->pl);
}

double uniform(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return ((*s >> 8) & 0xFFFF) / 32768.0 - 1.0;
}

void *make_matrix(mlsba_precision_t prec, int64_t m, int64_t n, int64_t lda,
                  int spd, unsigned seed) {
  (void)m; /* rows up to lda are filled */
  size_t es = prec == MLSBA_PRECISION_DOUBLE ? sizeof(double) : sizeof(float);
  /* Zeros where there is no column (n = 0), so that a copy reads none
   * uninitialised. */
  void *a = calloc((size_t)(lda * (n > 0 ? n : 1)), es);
  for (int64_t j = 0; j < n; j++)
    for (int64_t i = 0; i < lda; i++) {
      double v = uniform(&seed);
      if (spd && i < j) /* the mirror of (j, i), already set */
        v = prec == MLSBA_PRECISION_DOUBLE ? ((double *)a)[j + i * lda]
                                           : ((float *)a)[j + i * lda];
      if (spd && i == j)
        v = (double)n;
      if (prec == MLSBA_PRECISION_DOUBLE)
        ((double *)a)[i + j * lda] = v;
      else
        ((float *)a)[i + j * lda] = (float)v;
    }
  return a;
}

void *copy_of(const void *a, size_t bytes) {
  void *c = malloc(bytes > 0 ? bytes : 1);
  if (bytes > 0)
    memcpy(c, a, bytes);
  return c;
}

size_t bytes_of(mlsba_precision_t prec, int64_t lda, int64_t n) {
  return (size_t)(lda * n) *
         (prec == MLSBA_PRECISION_DOUBLE ? sizeof(double) : sizeof(float));
}

mat_t mat(int64_t rows, int64_t cols, int64_t ld) {
  mat_t m = {rows, cols, ld, calloc((size_t)(ld * cols + 1), sizeof(double))};
  return m;
}

mat_t random_mat(int64_t rows, int64_t cols, int64_t ld, int spd,
                 unsigned seed) {
  mat_t m = mat(rows, cols, ld);
  for (int64_t j = 0; j < cols; j++)
    for (int64_t i = 0; i < ld; i++)
      m.v[i + j * ld] = spd && i < j    ? m.v[j + i * ld]
                        : spd && i == j ? (double)rows
                                        : uniform(&seed);
  return m;
}

mat_t pivoting_mat(int64_t n, int64_t ld, unsigned seed) {
  mat_t m = random_mat(n, n, ld, 0, seed);
  int64_t *perm = malloc((size_t)(n + 1) * sizeof *perm);
  for (int64_t i = 0; i < n; i++)
    perm[i] = i;
  for (int64_t i = n - 1; i > 0; i--) {
    seed = seed * 1103515245u + 12345u;
    int64_t k = (int64_t)((seed >> 8) % (unsigned)(i + 1)), t = perm[i];
    perm[i] = perm[k], perm[k] = t;
  }
  for (int64_t j = 0; j < n; j++)
    m.v[perm[j] + j * ld] += 2 * sqrt((double)n) + 2;
  free(perm);
  return m;
}

void free_mat(mat_t *m) { free(m->v); }

matrix_t make_matrix_ref(mlsba_precision_t prec, int64_t m, int64_t n,
                         int64_t lda, unsigned seed) {
  matrix_t A = {.prec = prec, .m = m, .n = n, .lda = lda};
  size_t count = (size_t)(lda * (n > 0 ? n : 1));
  A.a = make_matrix(prec, m, n, lda, 0, seed);
  A.ref = malloc(count * sizeof *A.ref);
  for (size_t i = 0; i < count; i++)
    A.ref[i] =
        prec == MLSBA_PRECISION_DOUBLE ? ((double *)A.a)[i] : ((float *)A.a)[i];
  return A;
}

void free_matrix(matrix_t *A) {
  free(A->ref);
  free(A->a);
}
