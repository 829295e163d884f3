/* A block of right-hand sides solved with the factors, as LAPACK's ?getrs
 * and ?potrs do it: the rows interchanged by the pivots, then two
 * triangle solves, every one through the project's CPU kernels
 * (cpu_blas.h), so that the cores' chosen BLIS kernels run them; B's
 * rows split between the cores. And the crew (rhs.h) that runs a
 * split's parts on the cores' pinned threads, for the files above. */
#include "rhs.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../core/even.h"
#include "../devices/kernels.h"
#include "../platform/platform.h"
#include "../runtime/executor.h"

/* Rows of columns [c, c + w) interchanged as LAPACK's ?laswp does with
 * the pivots 1..n, forward (incx 1) or backward (incx -1). A loop over
 * each column, whose n entries stay in cache while its swaps run. */
static void swap_rows(const mlsba__rhs_t *s, int64_t c, int64_t w,
                      int backward) {
  int64_t n = s->n;
  for (int64_t j = c; j < c + w; j++) {
    if (s->prec == MLSBA_PRECISION_DOUBLE) {
      double *x = (double *)s->b + j * s->ldb;
      for (int64_t k = 0; k < n; k++) {
        int64_t i = backward ? n - 1 - k : k, r = s->ipiv[i] - 1;
        double t = x[i];
        x[i] = x[r];
        x[r] = t;
      }
    } else {
      float *x = (float *)s->b + j * s->ldb;
      for (int64_t k = 0; k < n; k++) {
        int64_t i = backward ? n - 1 - k : k, r = s->ipiv[i] - 1;
        float t = x[i];
        x[i] = x[r];
        x[r] = t;
      }
    }
  }
}

/* Fewer columns than this are solved one by one with TRSV, more by
 * TRSMs. BLIS's TRSM packs the triangle at every call and computes a
 * micro-tile as wide as its kernels' (8 or more columns) however few
 * there are. Measured here (an L and a U solve, double, the TRSM on two
 * threads; ms): one column 1.5 by TRSV against 5.1 by TRSM at n = 2048,
 * 6.2 against 13.5 at n = 4096; two columns 3.1 against 4.5 and 11.8
 * against 13.9; three 4.1 against 4.5 but 17.6 against 13.7. */
enum { TRSV_BELOW = 3 };

/* The rows of the triangle solved at a time by a TRSM where a core solves
 * its columns by blocks, the rest of the triangle applied by GEMMs as
 * deep as the block: deep enough for the kernels chosen for products
 * (cpu_kernels.c: 384 and more). Single precision, 64 right-hand sides
 * split between this machine's two cores (ms, one L and one U solve):
 * n = 2048, blocks of 128 8.4, 256 8.0, 512 4.6, 1024 5.5, one TRSM
 * each 6.5; n = 4096, 512 14.9, 1024 17.7. */
enum { SOLVE_BLOCK = 512 };

int mlsba__rhs_by_blocks(mlsba_precision_t p) {
  return mlsba__cpu_kernel_of(p, MLSBA__CPU_PRODUCT) ==
         MLSBA__CPU_KERNEL_OPENBLAS;
}

/* Element (i, j) of the factors. */
static const void *factor_at(const mlsba__rhs_t *s, int64_t i, int64_t j) {
  size_t es = s->prec == MLSBA_PRECISION_DOUBLE ? 8 : 4;
  return (const char *)s->a + ((size_t)j * (size_t)s->lda + (size_t)i) * es;
}

/* B = op(T)^-1 B, w columns of B at b, by blocks of rows: each block
 * solved by a TRSM with its diagonal block, then taken from the rows
 * still to solve by a GEMM with the triangle's block beside it (below
 * the diagonal block in op(T), in the order the solve runs). */
static void triangle_blocks(const mlsba__rhs_t *s, char uplo, char trans,
                            char diag, void *b, int64_t w, unsigned threads) {
  size_t es = s->prec == MLSBA_PRECISION_DOUBLE ? 8 : 4;
  int lower = uplo == 'L', t = trans == 'T', forward = lower != t;
  int64_t n = s->n, nblocks = (n + SOLVE_BLOCK - 1) / SOLVE_BLOCK;
  for (int64_t q = 0; q < nblocks; q++) {
    int64_t blk = forward ? q : nblocks - 1 - q, k = blk * SOLVE_BLOCK;
    int64_t kb = n - k < SOLVE_BLOCK ? n - k : SOLVE_BLOCK;
    char *bk = (char *)b + (size_t)k * es;
    mlsba__cpu_trsm(s->prec, 'L', uplo, trans, diag, kb, w, 1.0,
                    factor_at(s, k, k), s->lda, bk, s->ldb, threads);
    /* The rows still to solve: below the block going forward, above it
     * going backward; op(T)'s block there, rows [r0, r0 + rows) of its
     * columns [k, k + kb), is T's (k, r0) block transposed when op is. */
    int64_t r0 = forward ? k + kb : 0, rows = forward ? n - k - kb : k;
    if (rows == 0)
      continue;
    const void *off = t ? factor_at(s, k, r0) : factor_at(s, r0, k);
    mlsba__cpu_gemm(s->prec, trans, 'N', rows, w, kb, -1.0, off, s->lda, bk,
                    s->ldb, 1.0, (char *)b + (size_t)r0 * es, s->ldb, threads);
  }
}

/* Whether one thread's triangle solve is one TRSM where the products run
 * on OpenBLAS's kernels: where OpenBLAS also runs the triangle class, its
 * TRSM blocks the triangle itself, with its GEMM kernels. Single
 * precision, a core's 32 columns, L then U (BUSY, medians of 7, CPU
 * time): n = 4096 18.0 ms against 18.5 by our blocks, Cholesky's L and
 * L^T 18.9 against 19.4, n = 2048 4.59 against 4.68. Where BLIS's
 * kernels run the triangles (double here: zen3), its one TRSM is the
 * slower: 28.2 ms. */
static int one_trsm(mlsba_precision_t p) {
  return mlsba__cpu_kernel_of(p, MLSBA__CPU_TRIANGLE) ==
         MLSBA__CPU_KERNEL_OPENBLAS;
}

/* B = op(T)^-1 B for the triangle `uplo` of the factors. */
static void triangle(const mlsba__rhs_t *s, char uplo, char trans, char diag,
                     void *b, int64_t w, unsigned threads) {
  if (w >= TRSV_BELOW && threads == 1 && mlsba__rhs_by_blocks(s->prec) &&
      !one_trsm(s->prec)) {
    triangle_blocks(s, uplo, trans, diag, b, w, 1);
    return;
  }
  if (w >= TRSV_BELOW) {
    mlsba__cpu_trsm(s->prec, 'L', uplo, trans, diag, s->n, w, 1.0, s->a, s->lda,
                    b, s->ldb, threads);
    return;
  }
  size_t column = (size_t)s->ldb * (s->prec == MLSBA_PRECISION_DOUBLE ? 8 : 4);
  for (int64_t j = 0; j < w; j++)
    mlsba__cpu_trsv(s->prec, uplo, trans, diag, s->n, s->a, s->lda,
                    (char *)b + (size_t)j * column);
}

void mlsba__rhs_solve(const mlsba__rhs_t *s, int64_t c, int64_t w,
                      unsigned threads) {
  if (s->n == 0 || w == 0)
    return;
  size_t esize = s->prec == MLSBA_PRECISION_DOUBLE ? 8 : 4;
  void *b = (char *)s->b + (size_t)c * (size_t)s->ldb * esize;
  if (s->ipiv && !s->trans) { /* A = P L U: X = U^-1 L^-1 P^T B */
    swap_rows(s, c, w, 0);
    triangle(s, 'L', 'N', 'U', b, w, threads);
    triangle(s, 'U', 'N', 'N', b, w, threads);
  } else if (s->ipiv) { /* A^T = U^T L^T P^T: X = P L^-T U^-T B */
    triangle(s, 'U', 'T', 'N', b, w, threads);
    triangle(s, 'L', 'T', 'U', b, w, threads);
    swap_rows(s, c, w, 1);
  } else if (s->lower) { /* A = L L^T */
    triangle(s, 'L', 'N', 'N', b, w, threads);
    triangle(s, 'L', 'T', 'N', b, w, threads);
  } else { /* A = U^T U */
    triangle(s, 'U', 'T', 'N', b, w, threads);
    triangle(s, 'U', 'N', 'N', b, w, threads);
  }
}

/* ---- the crew ----------------------------------------------------------- */

/* The real cores of the platform; 0 on a platform of simulated devices,
 * which compute nothing (the calling thread solves). OpenCL devices take
 * no part. */
size_t mlsba__rhs_real_cores(const mlsba_executor_t *ex) {
  const mlsba_platform_t *pl = ex->pl;
  size_t cores = 0;
  for (size_t i = 0; i < pl->ndev; i++) {
    unsigned roles = mlsba__platform_device_roles(pl, i);
    if (roles & MLSBA__ROLE_VIRTUAL)
      return 0;
    cores += (roles & MLSBA__ROLE_CORE) != 0;
  }
  return cores;
}

unsigned mlsba__crew_parts(const mlsba_executor_t *ex) {
  size_t p = mlsba__rhs_real_cores(ex);
  return p < 1 ? 1 : p < MLSBA__CREW_MAX ? (unsigned)p : MLSBA__CREW_MAX;
}

static int crew_units(void *user, int64_t first, int64_t count) {
  mlsba__crew_t *cr = user;
  for (int64_t t = first; t < first + count; t++) {
    cr->fn(cr->user, (unsigned)t);
    cr->done[t] = 1;
  }
  return 0;
}

void mlsba__crew_start(mlsba__crew_t *cr, mlsba_executor_t *ex, unsigned parts,
                       mlsba__part_fn fn, void *user) {
  size_t p = ex->pl->ndev, k = 0;
  unsigned most = mlsba__crew_parts(ex);
  *cr = (mlsba__crew_t){
      .ex = ex, .parts = parts < most ? parts : most, .fn = fn, .user = user};
  if (cr->parts < 1)
    cr->parts = 1;
  if (cr->parts == 1)
    return;
  cr->units = calloc(p, sizeof *cr->units);
  cr->time = calloc(p, sizeof *cr->time);
  int err = cr->units && cr->time ? 0 : MLSBA_ENOMEM;
  /* Part t on the t-th core: the executor lays the units out group by
   * group, a core's one unit after the groups before it. */
  for (size_t i = 0; !err && i < p; i++)
    if ((mlsba__platform_device_roles(ex->pl, i) & MLSBA__ROLE_CORE) &&
        k < cr->parts) {
      cr->units[i] = 1;
      k++;
    }
  if (!err)
    err = mlsba_load_create("cores-parts", (int64_t)cr->parts, &cr->load);
  if (!err)
    err = mlsba_load_set_cpu(cr->load, crew_units, cr);
  if (err) {
    mlsba_load_destroy(cr->load);
    cr->load = NULL;
  }
}

void mlsba__crew_run(mlsba__crew_t *cr) {
  memset(cr->done, 0, sizeof cr->done);
  if (cr->load != NULL)
    (void)mlsba_executor_run(cr->ex, cr->load, cr->units, MLSBA_DRIVE_SHARED,
                             cr->time, NULL);
  for (unsigned t = 0; t < cr->parts; t++)
    if (!cr->done[t])
      cr->fn(cr->user, t);
}

void mlsba__crew_end(mlsba__crew_t *cr) {
  mlsba_load_destroy(cr->load);
  free(cr->units);
  free(cr->time);
  cr->load = NULL;
  cr->units = NULL;
  cr->time = NULL;
}

void mlsba__crew_bounds(int64_t *bound, unsigned parts, int64_t n,
                        double (*weight)(const void *user, int64_t x),
                        const void *user) {
  double total = 0, acc = 0;
  for (int64_t x = 0; x < n; x++)
    total += weight(user, x);
  int64_t x = 0;
  bound[0] = 0;
  for (unsigned t = 1; t < parts; t++) {
    double want = total * t / parts;
    while (x < n && acc < want)
      acc += weight(user, x++);
    bound[t] = x;
  }
  bound[parts] = n;
}

/* ---- the rows of B split between the cores ------------------------------ */

/* Rows of the triangle solved at a time where the cores split B's rows:
 * one run of the crew a block, in which every part takes the solved block
 * from its share of the rows still to solve (up to 2 kb n flops a column)
 * and the part holding the next block solves it (kb^2 flops a column).
 * 256 against 512 (double, n = 4096, 64 right-hand sides, a
 * mlsba_getrs and a mlsba_potrs, 7 interleaved rounds, BUSY): the
 * longest part's CPU time summed over the runs 42 against 43 ms, the
 * first block's solve, alone, 0.5 against 1.7 ms. */
enum { SPLIT_BLOCK = 256 };

/* The block a benchmark set (mlsba__rhs_set_split_block); 0: SPLIT_BLOCK. */
static _Atomic int64_t split_block_set;

void mlsba__rhs_set_split_block(int64_t rows) {
  atomic_store(&split_block_set, rows > 0 ? rows : 0);
}

static int64_t split_block(void) {
  int64_t b = atomic_load(&split_block_set);
  return b > 0 ? b : SPLIT_BLOCK;
}

/* One triangle of a chain: B = op(T)^-1 B, solved going forward (from the
 * first block of rows) or backward. */
typedef struct {
  char uplo, trans, diag;
  int t, forward;
} tri_t;

/* The solve as runs of the crew: one or two triangles, LU's interchanges
 * before them (forward) or after them (backward), and a block of rows of
 * the current triangle taken from the rows still to solve at each run.
 * A run splits B's rows between the parts, anew at every run: a split
 * fixed for the whole solve, even in total, was uneven at every run
 * (forward at n = 4096 the first part took 2676 rows at the first run and
 * 116 at the eleventh, the second 1164 at both), and each run waits for
 * its longest part. The part whose share starts with the next block (the
 * first going forward, the last going backward) solves it after its
 * product, in the same run. Where the rows left are too few for that
 * lead to take its even share and the block (the last runs of a
 * triangle), the run splits B's columns instead: every part takes the
 * block from all the rows left and solves the next block, for its own
 * columns. Whatever needs all of a column's rows, and nothing else
 * between two runs, goes into a run by columns too: the interchanges
 * with the first triangle's first block (an opening run), the second
 * triangle's first block with the first's last, the interchanges after
 * the last triangle with its last block. So the calling thread computes
 * nothing while the cores wait: the interchanges and the first block's
 * solve took 0.4-0.8 and 0.5 ms there (double, n = 4096, 64 columns), and
 * the last run of each triangle left every part but the lead idle. */
typedef struct {
  const mlsba__rhs_t *s;
  tri_t tri[2];
  int ntri, swap_before, swap_after;
  unsigned parts;
  int64_t w, nblocks, block; /* block: rows of the triangle a run */
  int cur;                   /* the triangle the run works on */
  int64_t applied; /* the block (in solve order) the run takes; -1: opening */
  int by_columns;  /* the run splits B's columns */
} split_t;

static int64_t split_first(const split_t *p, const tri_t *tr, int64_t q) {
  return (tr->forward ? q : p->nblocks - 1 - q) * p->block;
}

static int64_t split_rows(const split_t *p, int64_t k) {
  return p->s->n - k < p->block ? p->s->n - k : p->block;
}

/* Element (i, j) of B. */
static void *rhs_at(const mlsba__rhs_t *s, int64_t i, int64_t j) {
  size_t es = s->prec == MLSBA_PRECISION_DOUBLE ? 8 : 4;
  return (char *)s->b + ((size_t)j * (size_t)s->ldb + (size_t)i) * es;
}

/* The part whose share starts with the next block, which it solves: the
 * first going forward, the last going backward. */
static unsigned lead_part(const split_t *p, const tri_t *tr) {
  return tr->forward ? 0 : p->parts - 1;
}

/* The diagonal triangle of the block of rows from k solved in columns
 * [c0, c1) of B. */
static void solve_block(const split_t *p, const tri_t *tr, int64_t k,
                        int64_t c0, int64_t c1) {
  const mlsba__rhs_t *s = p->s;
  if (c1 > c0)
    mlsba__cpu_trsm(s->prec, 'L', tr->uplo, tr->trans, tr->diag,
                    split_rows(p, k), c1 - c0, 1.0, factor_at(s, k, k), s->lda,
                    rhs_at(s, k, c0), s->ldb, 1);
}

/* Rows [r0, r1) of columns [c0, c1) of B take the solved block of rows
 * from k: B_r -= op(T)_rk X_k, on one thread. */
static void take_block(const split_t *p, const tri_t *tr, int64_t k, int64_t r0,
                       int64_t r1, int64_t c0, int64_t c1) {
  const mlsba__rhs_t *s = p->s;
  if (r1 <= r0 || c1 <= c0)
    return;
  const void *off = tr->t ? factor_at(s, k, r0) : factor_at(s, r0, k);
  mlsba__cpu_gemm(s->prec, tr->trans, 'N', r1 - r0, c1 - c0, split_rows(p, k),
                  -1.0, off, s->lda, rhs_at(s, k, c0), s->ldb, 1.0,
                  rhs_at(s, r0, c0), s->ldb, 1);
}

/* The lead's rows at a run of `rows` rows left: a share lighter by its
 * solve of the next block (nkb rows), as many flops as a product of
 * nkb / 2 rows; below nkb the run goes by columns. */
static int64_t lead_rows(const split_t *p, int64_t rows, int64_t nkb) {
  int64_t parts = (int64_t)p->parts, extra = nkb / 2;
  return (rows + extra) / parts - extra;
}

/* Part t's rows [*r0, *r1) of the rows still to solve at this run, lo to
 * hi: the lead's lead_rows(), the other parts the rest in equal shares. */
static void split_share(const split_t *p, const tri_t *tr, unsigned t,
                        int64_t lo, int64_t hi, int64_t nkb, int64_t *r0,
                        int64_t *r1) {
  int64_t parts = (int64_t)p->parts, lead = lead_rows(p, hi - lo, nkb);
  int64_t rest = hi - lo - lead;
  if (t == lead_part(p, tr)) {
    *r0 = tr->forward ? lo : hi - lead;
    *r1 = *r0 + lead;
    return;
  }
  int64_t i = tr->forward ? (int64_t)t - 1 : (int64_t)t;
  int64_t base = tr->forward ? lo + lead : lo;
  *r0 = base + rest * i / (parts - 1);
  *r1 = base + rest * (i + 1) / (parts - 1);
}

/* Part t's work at a run. Parts write disjoint rows, or disjoint columns,
 * and read only solved blocks: any order of them gives the same result. */
static void split_part(void *user, unsigned t) {
  const split_t *p = user;
  const mlsba__rhs_t *s = p->s;
  int64_t c0 = 0, c1 = p->w;
  if (p->applied < 0 || p->by_columns) {
    for (unsigned u = 0; u < t; u++)
      c0 += mlsba__even_share(p->w, p->parts, u);
    c1 = c0 + mlsba__even_share(p->w, p->parts, t);
  }
  if (p->applied < 0) { /* the opening run */
    if (p->swap_before && c1 > c0)
      swap_rows(s, c0, c1 - c0, 0);
    solve_block(p, &p->tri[0], split_first(p, &p->tri[0], 0), c0, c1);
    return;
  }
  const tri_t *tr = &p->tri[p->cur];
  int64_t k = split_first(p, tr, p->applied), kb = split_rows(p, k);
  int64_t nk = split_first(p, tr, p->applied + 1);
  int64_t lo = tr->forward ? k + kb : 0, hi = tr->forward ? s->n : k;
  if (p->by_columns) {
    take_block(p, tr, k, lo, hi, c0, c1);
    solve_block(p, tr, nk, c0, c1);
    if (p->applied + 2 == p->nblocks) { /* the triangle's last run */
      if (p->cur + 1 < p->ntri)
        solve_block(p, &p->tri[p->cur + 1],
                    split_first(p, &p->tri[p->cur + 1], 0), c0, c1);
      else if (p->swap_after && c1 > c0)
        swap_rows(s, c0, c1 - c0, 1);
    }
    return;
  }
  int64_t r0, r1;
  split_share(p, tr, t, lo, hi, split_rows(p, nk), &r0, &r1);
  take_block(p, tr, k, r0, r1, 0, p->w);
  if (t == lead_part(p, tr))
    solve_block(p, tr, nk, 0, p->w);
}

static tri_t tri_of(char uplo, char trans, char diag) {
  tri_t tr = {.uplo = uplo, .trans = trans, .diag = diag, .t = trans == 'T'};
  tr.forward = (uplo == 'L') != tr.t;
  return tr;
}

/* The chain p (its triangles and interchanges set) run on the crew. */
static void chain_run(mlsba_executor_t *ex, split_t *p, unsigned parts) {
  mlsba__crew_t cr;
  p->nblocks = (p->s->n + p->block - 1) / p->block;
  mlsba__crew_start(&cr, ex, parts, split_part, p);
  p->parts = cr.parts;
  p->applied = -1;
  mlsba__crew_run(&cr);
  for (p->cur = 0; p->cur < p->ntri; p->cur++)
    for (int64_t q = 0; q + 1 < p->nblocks; q++) {
      const tri_t *tr = &p->tri[p->cur];
      int64_t k = split_first(p, tr, q), kb = split_rows(p, k);
      int64_t nkb = split_rows(p, split_first(p, tr, q + 1));
      int64_t rows = tr->forward ? p->s->n - k - kb : k;
      p->applied = q;
      p->by_columns = q + 2 == p->nblocks || lead_rows(p, rows, nkb) < nkb;
      mlsba__crew_run(&cr);
    }
  mlsba__crew_end(&cr);
}

static int split_fits(const mlsba__rhs_t *s, int64_t nrhs, unsigned parts,
                      int64_t block) {
  return nrhs >= TRSV_BELOW && parts >= 2 && s->n >= 2 * block;
}

void mlsba__rhs_triangle(mlsba_executor_t *ex, const mlsba__rhs_t *s, char uplo,
                         char trans, char diag, int64_t nrhs) {
  if (s->n == 0 || nrhs == 0)
    return;
  unsigned parts = mlsba__crew_parts(ex);
  int64_t block = split_block();
  if (split_fits(s, nrhs, parts, block)) {
    split_t p = {.s = s, .ntri = 1, .w = nrhs, .block = block};
    p.tri[0] = tri_of(uplo, trans, diag);
    chain_run(ex, &p, parts);
    return;
  }
  triangle(s, uplo, trans, diag, s->b, nrhs, 1);
}

void mlsba__rhs_solve_split(mlsba_executor_t *ex, const mlsba__rhs_t *s,
                            int64_t nrhs) {
  if (s->n == 0 || nrhs == 0)
    return;
  unsigned parts = mlsba__crew_parts(ex);
  int64_t block = split_block();
  if (!split_fits(s, nrhs, parts, block)) {
    mlsba__rhs_solve(s, 0, nrhs, 1);
    return;
  }
  split_t p = {.s = s, .ntri = 2, .w = nrhs, .block = block};
  if (s->ipiv && !s->trans) { /* A = P L U: X = U^-1 L^-1 P^T B */
    p.swap_before = 1;
    p.tri[0] = tri_of('L', 'N', 'U');
    p.tri[1] = tri_of('U', 'N', 'N');
  } else if (s->ipiv) { /* A^T = U^T L^T P^T: X = P L^-T U^-T B */
    p.swap_after = 1;
    p.tri[0] = tri_of('U', 'T', 'N');
    p.tri[1] = tri_of('L', 'T', 'U');
  } else if (s->lower) { /* A = L L^T */
    p.tri[0] = tri_of('L', 'N', 'N');
    p.tri[1] = tri_of('L', 'T', 'N');
  } else { /* A = U^T U */
    p.tri[0] = tri_of('U', 'T', 'N');
    p.tri[1] = tri_of('U', 'N', 'N');
  }
  chain_run(ex, &p, parts);
}
