/* BLIS's kernels called from several pinned threads at once, as the
 * factorizations' cores call them (lib/devices/cpu/cpu_blas.c): a TRMM or
 * a TRSM with the skx context on one core while GEMMs with the same
 * context run on the others, reading the same matrix (the triangle of a
 * block of reflectors and the rows below it, as QR's apply of Q reads
 * them). Every result must equal, bit for bit, the same call made alone
 * (one thread's BLIS is deterministic), and the shared matrix must come
 * out as it went in. This checks the claim, left in lib/factor/ormqr.c,
 * that a TRMM of BLIS's beside a GEMM on another core gives wrong
 * products. Each test runs in a fork of its own (Check's fork mode), so
 * the forced kernels are chosen afresh in each. */
#define _GNU_SOURCE /* sched_setaffinity, CPU_SET */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "devices/cpu/cpu_blas.h"
#include "devices/cpu/cpu_kernels.h"
#include "mlsba.h"
#include "support/run_suite.h"

/* The shapes of one block of QR's apply: A is M x M with the block's
 * triangle at its top left (NB x NB) and the reflectors' rows below it;
 * the triangle calls work on NB x W, the GEMMs on the M - NB rows below. */
enum { M = 512, NB = 128, W = 256, THREADS = 3 };
/* Without the mix, thread 0 runs the triangles 300 times and the GEMM
 * threads at least once, then for as long as thread 0 runs. */
#define ROUNDS_OF(t) ((t) == 0 ? 300 : 1)

/* One call of the cores: a triangle (TRMM or TRSM) on an NB x W block, or
 * a GEMM reading A's rows below the triangle. */
typedef struct {
  int trmm; /* 1 TRMM, 0 TRSM; -1: a GEMM */
  char side, uplo, trans, diag;
  char ta, tb; /* the GEMM's transposes */
} call_t;

/* Those of lib/factor/qr.c, ormqr.c, lu.c and chol.c. */
static const call_t triangles[] = {
    {1, 'L', 'L', 'T', 'U', 0, 0}, /* V1^T W (qr.c, ormqr.c) */
    {1, 'L', 'U', 'T', 'N', 0, 0}, /* T^T W */
    {1, 'L', 'L', 'N', 'U', 0, 0}, /* V1 W (qr.c, lu.c's inverse) */
    {1, 'R', 'L', 'T', 'N', 0, 0}, /* chol.c's row block by the inverse */
    {1, 'R', 'L', 'N', 'U', 0, 0}, /* C V1 (ormqr.c, side R) */
    {1, 'R', 'U', 'T', 'N', 0, 0}, /* W T^T */
    {1, 'R', 'L', 'T', 'U', 0, 0}, /* W V1^T */
    {0, 'L', 'L', 'N', 'U', 0, 0}, /* LU's row block */
    {0, 'R', 'U', 'N', 'N', 0, 0}, /* a right solve, upper, non-unit */
};
enum { NTRI = sizeof triangles / sizeof triangles[0] };
static const call_t gemms[] = {
    {-1, 0, 0, 0, 0, 'T', 'N'}, /* W = V2^T C2: k = M - NB, a product */
    {-1, 0, 0, 0, 0, 'N', 'N'}, /* C2 -= V2 W: k = NB, an update */
};
enum { NGEMM = sizeof gemms / sizeof gemms[0] };

typedef struct {
  int dbl, id;
  const void *a;    /* M x M, shared by every thread, read only */
  void *in[NTRI];   /* each call's input, kept */
  void *want[NTRI]; /* each call's result alone */
  void *gin[NGEMM], *gwant[NGEMM];
} problem_t;

static size_t es_of(int dbl) { return dbl ? sizeof(double) : sizeof(float); }

static double value(int dbl, const void *v, size_t i) {
  return dbl ? ((const double *)v)[i] : ((const float *)v)[i];
}

static void set(int dbl, void *v, size_t i, double x) {
  if (dbl)
    ((double *)v)[i] = x;
  else
    ((float *)v)[i] = (float)x;
}

/* Values in [-0.5, 0.5) from a seed; A's off-diagonal scaled by 1/NB and
 * its diagonal 1, so that every solve stays well conditioned. */
static void fill(int dbl, void *v, size_t rows, size_t cols, unsigned seed,
                 int is_a) {
  for (size_t j = 0; j < cols; j++)
    for (size_t i = 0; i < rows; i++) {
      double x = (double)((i * 53 + j * 31 + seed * 17) % 97) / 97.0 - 0.5;
      if (is_a)
        x = i == j ? 1.0 : x / NB;
      set(dbl, v, j * rows + i, x);
    }
}

/* The rows and columns of call c's operand B (or C), and its leading
 * dimension. */
static void dims(const call_t *c, int64_t *rows, int64_t *cols) {
  if (c->trmm < 0) {
    *rows = c->ta == 'T' ? NB : M - NB;
    *cols = W;
  } else {
    *rows = c->side == 'L' ? NB : W;
    *cols = c->side == 'L' ? W : NB;
  }
}

/* Runs call c on b (in place), with A's triangle or A's rows below it;
 * a GEMM's other operand is `other`. */
static void run_call(const problem_t *P, const call_t *c, void *b,
                     const void *other) {
  mlsba_precision_t p =
      P->dbl ? MLSBA_PRECISION_DOUBLE : MLSBA_PRECISION_SINGLE;
  int64_t rows, cols;
  dims(c, &rows, &cols);
  const char *below = (const char *)P->a + (size_t)NB * es_of(P->dbl);
  if (c->trmm < 0 && c->ta == 'T') /* NB x W = V2^T (M - NB x W) */
    mlsba__cpu_gemm_with(P->id, p, 'T', 'N', NB, W, M - NB, 1.0, below, M,
                         other, M - NB, 0.0, b, NB);
  else if (c->trmm < 0) /* (M - NB) x W -= V2 (NB x W) */
    mlsba__cpu_gemm_with(P->id, p, 'N', 'N', M - NB, W, NB, -1.0, below, M,
                         other, NB, 1.0, b, M - NB);
  else
    mlsba__cpu_triangle_with(P->id, c->trmm, p, c->side, c->uplo, c->trans,
                             c->diag, rows, cols, 1.0, P->a, M, b, rows);
}

static size_t bytes_of(const problem_t *P, const call_t *c) {
  int64_t rows, cols;
  dims(c, &rows, &cols);
  return (size_t)rows * (size_t)cols * es_of(P->dbl);
}

/* A GEMM's other operand: W for the update, C2 for the product. */
static const void *other_of(const problem_t *P, int g) { return P->gin[1 - g]; }

/* ---- the threads --------------------------------------------------------- */

typedef struct {
  const problem_t *P;
  int cpu, triangles, gemms; /* which calls this thread runs */
  int rounds;                /* at least; GEMMs go on while others run */
  atomic_int *running;       /* threads running triangles */
  void *work[NTRI + NGEMM];
  int calls, wrong;
  char first[128]; /* the first wrong call */
} worker_t;

static int check_one(worker_t *w, const call_t *c, void *work, const void *in,
                     const void *want, const void *other, int k) {
  size_t n = bytes_of(w->P, c);
  memcpy(work, in, n);
  run_call(w->P, c, work, other);
  w->calls++;
  if (memcmp(work, want, n) == 0)
    return 0;
  if (w->wrong++ == 0) {
    double worst = 0;
    for (size_t i = 0; i < n / es_of(w->P->dbl); i++)
      worst = fmax(worst,
                   fabs(value(w->P->dbl, work, i) - value(w->P->dbl, want, i)));
    if (c->trmm < 0)
      snprintf(w->first, sizeof w->first, "gemm %d (%c%c), max diff %g", k,
               c->ta, c->tb, worst);
    else
      snprintf(w->first, sizeof w->first, "%s %d (%c%c%c%c), max diff %g",
               c->trmm ? "trmm" : "trsm", k, c->side, c->uplo, c->trans,
               c->diag, worst);
  }
  return 1;
}

static void *work_loop(void *arg) {
  worker_t *w = arg;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(w->cpu, &set);
  (void)sched_setaffinity(0, sizeof set, &set); /* best effort */
  const problem_t *P = w->P;
  for (int r = 0; r < w->rounds || (!w->triangles && atomic_load(w->running));
       r++) {
    for (int k = 0; w->triangles && k < NTRI; k++)
      check_one(w, &triangles[k], w->work[k], P->in[k], P->want[k], NULL, k);
    for (int g = 0; w->gemms && g < NGEMM; g++)
      check_one(w, &gemms[g], w->work[NTRI + g], P->gin[g], P->gwant[g],
                other_of(P, g), g);
  }
  if (w->triangles)
    atomic_fetch_sub(w->running, 1);
  return NULL;
}

/* ---- the test ------------------------------------------------------------ */

/* Call c's input, filled from seed, and room for its result alone. */
static void make_input(const problem_t *P, const call_t *c, unsigned seed,
                       void **in, void **want) {
  size_t n = bytes_of(P, c);
  *in = malloc(n);
  *want = malloc(n);
  ck_assert(*in && *want);
  int64_t rows, cols;
  dims(c, &rows, &cols);
  fill(P->dbl, *in, (size_t)rows, (size_t)cols, seed, 0);
}

static int skx_id(void) {
  for (int id = 0; mlsba__cpu_kernel_id_name(id); id++)
    if (strcmp(mlsba__cpu_kernel_id_name(id), "skx") == 0)
      return id;
  return -1;
}

/* _i: bit 0 the precision (1 double), bit 1 the mix: 0, thread 0 runs
 * only the triangles and the others only GEMMs; 1, every thread runs
 * both, one after the other, as a split of C's columns would. */
START_TEST(triangles_beside_gemms_equal_the_calls_alone) {
  int dbl = _i & 1, mixed = (_i >> 1) & 1;
  setenv("MLSBA_CACHE_DIR", "none", 1);
  setenv("MLSBA_CPU_KERNELS", "skx", 1);
  mlsba_cpu_kernels_t k;
  mlsba_cpu_kernels(&k);
  if (strcmp(k.double_kernels, "skx") != 0) {
    printf("triangles_beside_gemms: skipped (no skx kernels here: %s)\n",
           k.reason);
    return;
  }
  problem_t P = {.dbl = dbl, .id = skx_id()};
  size_t es = es_of(dbl);
  void *a = malloc((size_t)M * M * es), *a_copy = malloc((size_t)M * M * es);
  ck_assert(a && a_copy);
  fill(dbl, a, M, M, 1, 1);
  memcpy(a_copy, a, (size_t)M * M * es);
  P.a = a;
  for (int c = 0; c < NTRI; c++)
    make_input(&P, &triangles[c], 3 + (unsigned)c, &P.in[c], &P.want[c]);
  for (int g = 0; g < NGEMM; g++)
    make_input(&P, &gemms[g], 11 + (unsigned)g, &P.gin[g], &P.gwant[g]);
  /* Each call alone, on this thread, before any other runs. */
  for (int c = 0; c < NTRI; c++) {
    memcpy(P.want[c], P.in[c], bytes_of(&P, &triangles[c]));
    run_call(&P, &triangles[c], P.want[c], NULL);
  }
  for (int g = 0; g < NGEMM; g++) {
    memcpy(P.gwant[g], P.gin[g], bytes_of(&P, &gemms[g]));
    run_call(&P, &gemms[g], P.gwant[g], other_of(&P, g));
  }
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  atomic_int running = mixed ? 0 : 1;
  worker_t w[THREADS];
  pthread_t th[THREADS];
  for (int t = 0; t < THREADS; t++) {
    w[t] = (worker_t){.P = &P,
                      .cpu = (int)(t % (cpus > 0 ? cpus : 1)),
                      .triangles = mixed || t == 0,
                      .gemms = mixed || t > 0,
                      .rounds = mixed ? 60 : ROUNDS_OF(t),
                      .running = &running};
    for (int c = 0; c < NTRI + NGEMM; c++) {
      w[t].work[c] =
          malloc(bytes_of(&P, c < NTRI ? &triangles[c] : &gemms[c - NTRI]));
      ck_assert(w[t].work[c]);
    }
  }
  for (int t = 0; t < THREADS; t++)
    ck_assert_int_eq(pthread_create(&th[t], NULL, work_loop, &w[t]), 0);
  for (int t = 0; t < THREADS; t++)
    pthread_join(th[t], NULL);
  int calls = 0;
  for (int t = 0; t < THREADS; t++) {
    ck_assert_msg(w[t].wrong == 0,
                  "thread %d (cpu %d): %d of %d calls wrong; "
                  "first: %s",
                  t, w[t].cpu, w[t].wrong, w[t].calls, w[t].first);
    calls += w[t].calls;
    for (int c = 0; c < NTRI + NGEMM; c++)
      free(w[t].work[c]);
  }
  printf("triangles_beside_gemms (%s, %s): %d calls on %d threads, all "
         "right\n",
         dbl ? "double" : "single", mixed ? "mixed" : "one triangle thread",
         calls, THREADS);
  ck_assert_msg(memcmp(a, a_copy, (size_t)M * M * es) == 0,
                "the shared matrix changed");
  for (int c = 0; c < NTRI; c++) {
    free(P.in[c]);
    free(P.want[c]);
  }
  for (int g = 0; g < NGEMM; g++) {
    free(P.gin[g]);
    free(P.gwant[g]);
  }
  free(a);
  free(a_copy);
}
END_TEST

int main(void) {
  Suite *s = suite_create("cpu_reentrant");
  TCase *tc = tcase_create("cpu_reentrant");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, triangles_beside_gemms_equal_the_calls_alone, 0, 4);
  suite_add_tcase(s, tc);
  return run_suite(s);
}
