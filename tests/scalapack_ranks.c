/* Matrices in ScaLAPACK's layout across ranks (test_multiply starts this
 * program under mpirun):
 *   roundtrip   a matrix in a 2-D block-cyclic layout moved to the
 *               product's layout, to an application's owner function and
 *               to another block-cyclic layout (other grid, order, block
 *               sizes): every element where it belongs, every time; a
 *               larger one between grids of one row and of one column
 *               of ranks (column strips one message each, straight from
 *               and into the local arrays where their columns are
 *               whole);
 *   pdgemm      C = alpha op(A) op(B) + beta C on A, B and C given by
 *               ScaLAPACK descriptors on several grids and block sizes
 *               (one multiplier for all of them), C back in the caller's
 *               layout and equal to the serial reference, and, where
 *               ScaLAPACK is installed, to its own PDGEMM's C.
 *   reuse       one multiplier's runs on the same arrays again: A and B
 *               not moved again (result.reused), C bit-identical to the
 *               first run's; a changed B (and an A copied elsewhere)
 *               moved again where it changed, C equal to a fresh
 *               multiplier's; one element of A changed on one rank moves
 *               A on every rank; the caller's word that A and B are
 *               unchanged (run_dist_flags) moves and compares nothing,
 *               C bit-identical; a word on one rank only; a caller that
 *               lies gets C of the operand last moved; a rebalancing
 *               moves both again, the word or not, and an operand moved
 *               on the word keeps no copy (the next comparison moves
 *               it).
 *   saved       a multiplier with opts.model_dir saves the distribution
 *               INPA chose; the next one runs it (result.from_saved),
 *               C right; a damaged file (rectangles that overlap) is not
 *               run, INPA runs and writes it anew; a rebalancing runs
 *               INPA whatever was saved; every rank keeps its node's
 *               device models in a folder of its own in model_dir; a
 *               saved split a block off the caller's block edges, on
 *               ranks of one speed, is snapped onto the caller's split
 *               (result.snapped, C right), and on a rank four times
 *               slower it is not.
 * The matrices hold multiples of 1/8 for which every sum is exact, so
 * every comparison is ==. Rank 0 prints a line per layout; the exit
 * status is 0 when every rank found everything right. */
#include <dirent.h>
#include <mlsba.h>
#include <mlsba/mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/rank_matrix.h"

#ifdef MLSBA_HAVE_SCALAPACK
void Cblacs_get(int ctx, int what, int *val);
void Cblacs_gridinit(int *ctx, const char *order, int nprow, int npcol);
void Cblacs_gridexit(int ctx);
void pdgemm_(const char *ta, const char *tb, const int *m, const int *n,
             const int *k, const double *alpha, const double *a, const int *ia,
             const int *ja, const int *desca, const double *b, const int *ib,
             const int *jb, const int *descb, const double *beta, double *c,
             const int *ic, const int *jc, const int *descc);
#endif

static double elem(int which, int64_t i, int64_t j) {
  switch (which) {
  case 0:
    return (double)((i + 2 * j) % 7 - 3) / 4;
  case 1:
    return (double)((3 * i + j) % 5 - 2) / 2;
  default:
    return (double)((i + j) % 3 - 1) / 4;
  }
}

/* A process grid and block sizes for a ScaLAPACK descriptor. */
typedef struct {
  int p, q;
  mlsba_mpi_grid_order_t order;
  int mb, nb;
} grid_t;

static int rank_, size_;

/* NUMROC, for the descriptor's LLD. */
static int numroc(int n, int nb, int p, int np) {
  int blocks = n / nb, num = blocks / np * nb, extra = blocks % np;
  return num + (p < extra ? nb : p == extra ? n % nb : 0);
}

/* A descriptor of an m x n matrix on grid g (ctx as BLACS gave it). */
static void make_desc(int desc[9], const grid_t *g, int m, int n, int ctx) {
  int inside = rank_ < g->p * g->q;
  int row = g->order == MLSBA_MPI_ROW_MAJOR ? rank_ / g->q : rank_ % g->p;
  int rows = inside ? numroc(m, g->mb, row, g->p) : 0;
  int d[9] = {1, ctx, m, n, g->mb, g->nb, 0, 0, rows > 1 ? rows : 1};
  memcpy(desc, d, sizeof d);
}

/* The descriptions of op's A, B and C on grid g (A k x m where o says
 * transa 'T', B n x k where transb 'T'), into x. */
static void describe_abc(const mlsba_mpi_multiply_opts_t *o, const grid_t *g,
                         mlsba_mpi_matrix_t *x[3]) {
  int m = (int)o->m, n = (int)o->n, k = (int)o->k;
  int ta = o->transa == 'T', tb = o->transb == 'T';
  int d[3][9];
  make_desc(d[0], g, ta ? k : m, ta ? m : k, 0);
  make_desc(d[1], g, tb ? n : k, tb ? k : n, 0);
  make_desc(d[2], g, m, n, 0);
  for (int w = 0; w < 3; w++)
    mlsba_mpi_matrix_scalapack(MPI_COMM_WORLD, d[w], g->p, g->q, g->order,
                               &x[w]);
}

/* Matrix `which` (a pointer to it as user) as rank_fill_own() asks. */
static double elem_of(const void *user, int64_t i, int64_t j) {
  return elem(*(const int *)user, i, j);
}

/* A local array for d, its own blocks holding matrix `which` (or zeros);
 * NULL for a rank that owns none. */
static double *local_array(const mlsba_mpi_matrix_t *d, int which, int zero) {
  int64_t ld, cols;
  mlsba_mpi_matrix_local(d, &ld, &cols);
  if (cols == 0)
    return NULL;
  return zero ? calloc((size_t)(ld * cols), sizeof(double))
              : rank_fill_own(d, elem_of, &which);
}

/* Elements of this rank's blocks of d (array x) that are not `want`'s. */
static long wrong_in(const mlsba_mpi_matrix_t *d, const double *x,
                     double (*want)(const void *, int64_t, int64_t),
                     const void *user) {
  int64_t ld, cols;
  mlsba_mpi_matrix_local(d, &ld, &cols);
  long wrong = 0;
  for (size_t k = 0; k < mlsba_mpi_matrix_num_blocks(d); k++) {
    mlsba_mpi_block_t b;
    mlsba_mpi_matrix_block(d, k, &b);
    for (int64_t j = 0; j < b.cols; j++)
      for (int64_t i = 0; i < b.rows; i++)
        wrong += x[(b.local_col + j) * ld + b.local_row + i] !=
                 want(user, b.row + i, b.col + j);
  }
  return wrong;
}

static double want_a(const void *user, int64_t i, int64_t j) {
  (void)user;
  return elem(0, i, j);
}

/* An application's own layout: block columns of 5 dealt to the ranks in
 * reverse order, each rank's blocks side by side (ld = m). */
typedef struct {
  int64_t m;
} columns_t;
static int by_columns(void *user, int64_t bi, int64_t bj, int64_t *lr,
                      int64_t *lc) {
  const columns_t *c = user;
  (void)c;
  *lr = bi * 4;
  *lc = bj / size_ * 5;
  return size_ - 1 - (int)(bj % size_);
}

static void grids(grid_t *g, int *n) {
  int k = 0;
  g[k++] = (grid_t){1, size_, MLSBA_MPI_ROW_MAJOR, 7, 5};
  g[k++] = (grid_t){size_, 1, MLSBA_MPI_COLUMN_MAJOR, 16, 16};
  if (size_ >= 2) /* the last rank outside the grid, owning nothing */
    g[k++] = (grid_t){1, size_ - 1, MLSBA_MPI_COLUMN_MAJOR, 64, 3};
  if (size_ == 4)
    g[k++] = (grid_t){2, 2, MLSBA_MPI_COLUMN_MAJOR, 5, 9};
  /* The multiplier's block (16): its layout laid over the caller's blocks
   * in the caller's order (multiplier.c's dist_layout), parts used where
   * they lie; short last blocks in every dimension. */
  if (size_ >= 2)
    g[k++] = (grid_t){1, size_, MLSBA_MPI_ROW_MAJOR, 16, 16};
  if (size_ == 4)
    g[k++] = (grid_t){2, 2, MLSBA_MPI_ROW_MAJOR, 16, 16};
  *n = k;
}

/* A matrix large enough that the redistribution moves its column strips
 * one message each (redistribute.c's segments), between grids of one row
 * of ranks (every local column whole: sent from and received into the
 * arrays themselves) and to and from a grid of one column (its local
 * columns cut: through the buffers): every element where it belongs. */
static int roundtrip_large(void) {
  static const struct {
    grid_t from, to;
  } pair[] = {{{1, 0, MLSBA_MPI_ROW_MAJOR, 64, 64},
               {1, 0, MLSBA_MPI_ROW_MAJOR, 128, 128}},
              {{1, 0, MLSBA_MPI_ROW_MAJOR, 128, 128},
               {0, 1, MLSBA_MPI_COLUMN_MAJOR, 100, 96}},
              {{0, 1, MLSBA_MPI_COLUMN_MAJOR, 100, 96},
               {1, 0, MLSBA_MPI_ROW_MAJOR, 64, 64}}};
  int m = 1000, n = 300, bad = 0;
  for (size_t i = 0; i < sizeof pair / sizeof *pair; i++) {
    grid_t g[2] = {pair[i].from, pair[i].to};
    int d[2][9];
    mlsba_mpi_matrix_t *x[2] = {NULL, NULL};
    int err = 0;
    for (int s = 0; s < 2; s++) {
      g[s].p = g[s].p ? g[s].p : size_;
      g[s].q = g[s].q ? g[s].q : size_;
      make_desc(d[s], &g[s], m, n, 0);
      if (!err)
        err = mlsba_mpi_matrix_scalapack(MPI_COMM_WORLD, d[s], g[s].p, g[s].q,
                                         g[s].order, &x[s]);
    }
    double *ax = x[0] ? local_array(x[0], 0, 0) : NULL;
    double *ay = x[1] ? local_array(x[1], 0, 1) : NULL;
    if (!err)
      err = mlsba_mpi_redistribute(x[0], ax, x[1], ay, MLSBA_PRECISION_DOUBLE);
    long mine = err ? -1 : wrong_in(x[1], ay, want_a, NULL), all;
    MPI_Allreduce(&mine, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank_ == 0)
      printf("%s roundtrip %dx%d %dx%d %s %dx%d -> %dx%d %s %dx%d: %ld "
             "wrong%s%s\n",
             all == 0 && !err ? "ok" : "WRONG", m, n, g[0].p, g[0].q,
             g[0].order ? "col" : "row", g[0].mb, g[0].nb, g[1].p, g[1].q,
             g[1].order ? "col" : "row", g[1].mb, g[1].nb, all, err ? ": " : "",
             err ? mlsba_mpi_last_error() : "");
    bad |= all != 0 || err;
    free(ax);
    free(ay);
    mlsba_mpi_matrix_destroy(x[0]);
    mlsba_mpi_matrix_destroy(x[1]);
  }
  return bad;
}

static int roundtrip(void) {
  grid_t g[6];
  int ng, bad = 0;
  grids(g, &ng);
  int m = 97, n = 61;
  columns_t cols = {m};
  mlsba_mpi_matrix_t *own = NULL;
  mlsba_mpi_matrix_create(MPI_COMM_WORLD, m, n, 4, 5, by_columns, &cols, m,
                          &own);
  for (int i = 0; i < ng; i++) {
    const grid_t *to = &g[(i + 1) % ng];
    int d1[9], d2[9];
    make_desc(d1, &g[i], m, n, 0);
    make_desc(d2, to, m, n, 0);
    mlsba_mpi_matrix_t *x = NULL, *y = NULL;
    int err = mlsba_mpi_matrix_scalapack(MPI_COMM_WORLD, d1, g[i].p, g[i].q,
                                         g[i].order, &x);
    if (!err)
      err = mlsba_mpi_matrix_scalapack(MPI_COMM_WORLD, d2, to->p, to->q,
                                       to->order, &y);
    double *ax = x ? local_array(x, 0, 0) : NULL;
    double *ay = y ? local_array(y, 0, 1) : NULL;
    double *ao = own ? local_array(own, 0, 1) : NULL;
    /* x -> the owner function's layout -> y */
    if (!err)
      err = mlsba_mpi_redistribute(x, ax, own, ao, MLSBA_PRECISION_DOUBLE);
    long w1 = err ? -1 : wrong_in(own, ao, want_a, NULL);
    if (!err)
      err = mlsba_mpi_redistribute(own, ao, y, ay, MLSBA_PRECISION_DOUBLE);
    long w2 = err ? -1 : wrong_in(y, ay, want_a, NULL), mine = w1 + w2, all;
    MPI_Allreduce(&mine, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank_ == 0)
      printf("%s roundtrip %dx%d %s %dx%d -> own columns -> %dx%d %s "
             "%dx%d: %ld wrong%s%s\n",
             all == 0 && !err ? "ok" : "WRONG", g[i].p, g[i].q,
             g[i].order ? "col" : "row", g[i].mb, g[i].nb, to->p, to->q,
             to->order ? "col" : "row", to->mb, to->nb, all, err ? ": " : "",
             err ? mlsba_mpi_last_error() : "");
    bad |= all != 0 || err;
    free(ax);
    free(ay);
    free(ao);
    mlsba_mpi_matrix_destroy(x);
    mlsba_mpi_matrix_destroy(y);
  }
  mlsba_mpi_matrix_destroy(own);
  return bad | roundtrip_large();
}

typedef struct {
  const mlsba_mpi_multiply_opts_t *o;
} ref_t;

/* C(i, j) = alpha sum_p op(A)(i, p) op(B)(p, j) + beta C0(i, j). */
static double want_c(const void *user, int64_t i, int64_t j) {
  const mlsba_mpi_multiply_opts_t *o = ((const ref_t *)user)->o;
  double s = 0;
  for (int64_t p = 0; p < o->k; p++)
    s += (o->transa == 'T' ? elem(0, p, i) : elem(0, i, p)) *
         (o->transb == 'T' ? elem(1, j, p) : elem(1, p, j));
  return o->alpha * s + o->beta * elem(2, i, j);
}

/* One product on grid g with the multiplier M; ScaLAPACK's PDGEMM on the
 * same data where it is installed. Returns the wrong elements. */
static long one_product(mlsba_mpi_multiplier_t *M,
                        const mlsba_mpi_multiply_opts_t *o, const grid_t *g,
                        int *pdgemm_ran) {
  int ctx = 0;
  *pdgemm_ran = 0;
#ifdef MLSBA_HAVE_SCALAPACK
  Cblacs_get(-1, 0, &ctx);
  Cblacs_gridinit(&ctx,
                  g->order == MLSBA_MPI_ROW_MAJOR ? "Row-major" : "Col-major",
                  g->p, g->q);
#endif
  int am = o->transa == 'T' ? (int)o->k : (int)o->m,
      an = (int)(o->m + o->k) - am;
  int bm = o->transb == 'T' ? (int)o->n : (int)o->k,
      bn = (int)(o->n + o->k) - bm;
  int da[9], db[9], dc[9];
  make_desc(da, g, am, an, ctx);
  make_desc(db, g, bm, bn, ctx);
  make_desc(dc, g, (int)o->m, (int)o->n, ctx);
  mlsba_mpi_matrix_t *xa = NULL, *xb = NULL, *xc = NULL;
  mlsba_mpi_matrix_scalapack(MPI_COMM_WORLD, da, g->p, g->q, g->order, &xa);
  mlsba_mpi_matrix_scalapack(MPI_COMM_WORLD, db, g->p, g->q, g->order, &xb);
  mlsba_mpi_matrix_scalapack(MPI_COMM_WORLD, dc, g->p, g->q, g->order, &xc);
  double *a = local_array(xa, 0, 0), *b = local_array(xb, 1, 0);
  double *c = local_array(xc, 2, 0), *c2 = local_array(xc, 2, 0);
  mlsba_mpi_result_t r;
  int err = mlsba_mpi_multiplier_run_dist(M, xa, a, xb, b, xc, c, &r);
  ref_t ref = {o};
  long wrong = err ? 1 : wrong_in(xc, c, want_c, &ref);
  if (!err)
    mlsba_mpi_result_free(&r);
  else if (rank_ == 0)
    fprintf(stderr, "scalapack_ranks: %s\n", mlsba_mpi_last_error());
#ifdef MLSBA_HAVE_SCALAPACK
  if (ctx >= 0 && rank_ < g->p * g->q) {
    int one = 1, m = (int)o->m, n = (int)o->n, k = (int)o->k;
    char ta[2] = {o->transa, 0}, tb[2] = {o->transb, 0};
    pdgemm_(ta, tb, &m, &n, &k, &o->alpha, a, &one, &one, da, b, &one, &one, db,
            &o->beta, c2, &one, &one, dc);
    int64_t ld, cols;
    mlsba_mpi_matrix_local(xc, &ld, &cols);
    for (int64_t i = 0; c && i < ld * cols; i++)
      wrong += c[i] != c2[i];
    Cblacs_gridexit(ctx);
  }
  *pdgemm_ran = 1;
#endif
  free(a);
  free(b);
  free(c);
  free(c2);
  mlsba_mpi_matrix_destroy(xa);
  mlsba_mpi_matrix_destroy(xb);
  mlsba_mpi_matrix_destroy(xc);
  return wrong;
}

static int pdgemm(const char *platform) {
  grid_t g[6];
  int ng, bad = 0;
  grids(g, &ng);
  for (int t = 0; t < 2; t++) {
    mlsba_mpi_multiply_opts_t o;
    mlsba_mpi_multiply_opts_init(&o);
    o.platform = platform;
    o.eps = 0.5;
    o.max_iter = 3;
    o.m = 97;
    o.n = 61;
    o.k = 43;
    o.block = 16;
    o.transa = t ? 'T' : 'N';
    o.transb = t ? 'N' : 'T';
    o.alpha = 2;
    o.beta = t ? -0.5 : 0;
    mlsba_mpi_multiplier_t *M = NULL;
    int err = mlsba_mpi_multiplier_create(MPI_COMM_WORLD, &o, &M);
    for (int i = 0; !err && i < ng; i++) {
      int ran = 0;
      long mine = one_product(M, &o, &g[i], &ran), all;
      MPI_Allreduce(&mine, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
      if (rank_ == 0)
        printf("%s pdgemm %c%c alpha %g beta %g on %dx%d %s, blocks %dx%d: "
               "%ld wrong%s\n",
               all == 0 ? "ok" : "WRONG", o.transa, o.transb, o.alpha, o.beta,
               g[i].p, g[i].q, g[i].order ? "col" : "row", g[i].mb, g[i].nb,
               all, ran ? " (ScaLAPACK's PDGEMM gives the same C)" : "");
      bad |= all != 0;
    }
    if (err && rank_ == 0)
      fprintf(stderr, "scalapack_ranks: %s\n", mlsba_mpi_last_error());
    bad |= err != 0;
    mlsba_mpi_multiplier_destroy(M);
  }
  return bad;
}

/* A run of M on the arrays with the caller's flags (MLSBA_MPI_SAME_A,
 * _B), C into c; its result's reused bits, or -1 (the error printed)
 * when it failed. */
static int run_flagged(mlsba_mpi_multiplier_t *M, unsigned flags,
                       mlsba_mpi_matrix_t *const x[3], const double *a,
                       const double *b, double *c) {
  mlsba_mpi_result_t r;
  int err =
      flags ? mlsba_mpi_multiplier_run_dist_flags(M, flags, x[0], a, x[1], b,
                                                  x[2], c, &r)
            : mlsba_mpi_multiplier_run_dist(M, x[0], a, x[1], b, x[2], c, &r);
  if (err != 0) {
    if (rank_ == 0)
      fprintf(stderr, "scalapack_ranks: %s\n", mlsba_mpi_last_error());
    return -1;
  }
  int reused = (int)r.reused;
  mlsba_mpi_result_free(&r);
  return reused;
}

static int run_on(mlsba_mpi_multiplier_t *M, mlsba_mpi_matrix_t *const x[3],
                  const double *a, const double *b, double *c) {
  return run_flagged(M, 0, x, a, b, c);
}

/* One check of the reuse test, on every rank: ok when every rank found
 * C as wanted and the run's reused bits are `want`. */
static int expect(const char *what, int reused, int want, long wrong) {
  long all = 0;
  MPI_Allreduce(&wrong, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  int ok = reused == want && all == 0;
  if (rank_ == 0)
    printf("%s reuse: %s: reused %d (want %d), %ld wrong\n",
           ok ? "ok" : "WRONG", what, reused, want, all);
  return !ok;
}

static long differ(const double *x, const double *y, size_t n) {
  long d = 0;
  for (size_t i = 0; x && y && i < n; i++)
    d += memcmp(&x[i], &y[i], sizeof *x) != 0;
  return d;
}

static int reuse(const char *platform) {
  grid_t g = {1, size_, MLSBA_MPI_ROW_MAJOR, 7, 5};
  mlsba_mpi_multiply_opts_t o;
  mlsba_mpi_multiply_opts_init(&o);
  o.platform = platform;
  o.eps = 0.5;
  o.max_iter = 3;
  o.drift = 0; /* no rebalancing but the one asked for */
  o.m = 97;
  o.n = 61;
  o.k = 43;
  o.block = 16;
  o.transa = 'T';
  o.alpha = 2; /* applied to A' once, never again to a reused A' */
  mlsba_mpi_matrix_t *x[3] = {NULL, NULL, NULL};
  describe_abc(&o, &g, x);
  int64_t ld, cols, lda, acols, ldb, bcols;
  mlsba_mpi_matrix_local(x[2], &ld, &cols);
  mlsba_mpi_matrix_local(x[0], &lda, &acols);
  mlsba_mpi_matrix_local(x[1], &ldb, &bcols);
  size_t nc = (size_t)(ld * cols), na = (size_t)(lda * acols),
         nbe = (size_t)(ldb * bcols);
  double *a = local_array(x[0], 0, 0), *b = local_array(x[1], 1, 0);
  double *a2 = local_array(x[0], 0, 0);
  double *c1 = local_array(x[2], 2, 1), *c = local_array(x[2], 2, 1);
  double *cf = local_array(x[2], 2, 1);
  ref_t ref = {&o};
  mlsba_mpi_multiplier_t *M = NULL, *F = NULL;
  int bad = mlsba_mpi_multiplier_create(MPI_COMM_WORLD, &o, &M) != 0;
  if (bad && rank_ == 0)
    fprintf(stderr, "scalapack_ranks: %s\n", mlsba_mpi_last_error());
  if (!bad) {
    int r = run_on(M, x, a, b, c1);
    bad |= expect("first run", r, 0, wrong_in(x[2], c1, want_c, &ref));
    r = run_on(M, x, a, b, c);
    bad |= expect("the same A and B again, C bit-identical to the first run's",
                  r, 3, differ(c, c1, nc));
    /* A's elements in another array, B doubled: only B moves. */
    for (size_t i = 0; b && i < nbe; i++)
      b[i] *= 2;
    r = run_on(M, x, a2, b, c);
    mlsba_mpi_multiply_opts_t o2 = o;
    o2.alpha = 2 * o.alpha;
    ref_t ref2 = {&o2};
    bad |= expect("A copied elsewhere, B doubled", r, 1,
                  wrong_in(x[2], c, want_c, &ref2));
    int fe = mlsba_mpi_multiplier_create(MPI_COMM_WORLD, &o, &F);
    int rf = fe ? -1 : run_on(F, x, a2, b, cf);
    bad |= expect("a fresh multiplier on the same arrays, C the same", rf, 0,
                  differ(c, cf, nc));
    /* One element of A changed on the last rank only, then back. */
    int last = size_ - 1;
    if (rank_ == last && a2 && na > 0)
      a2[0] += 1;
    r = run_on(M, x, a2, b, c);
    bad |= expect("one element of A changed on the last rank", r, 2, 0);
    if (rank_ == last && a2 && na > 0)
      a2[0] -= 1;
    r = run_on(M, x, a2, b, c);
    bad |= expect("that element back", r, 2, wrong_in(x[2], c, want_c, &ref2));
    /* The caller's word that A and B are unchanged: nothing compared,
     * nothing moved, C bit-identical to the compared run's. */
    unsigned same = MLSBA_MPI_SAME_A | MLSBA_MPI_SAME_B;
    memcpy(c1, c, nc * sizeof *c);
    r = run_flagged(M, same, x, a2, b, c);
    bad |= expect("A and B said unchanged, C bit-identical", r, 3,
                  differ(c, c1, nc) + wrong_in(x[2], c, want_c, &ref2));
    /* The word on rank 0 only: the other ranks compare, and find them
     * unchanged. */
    r = run_flagged(M, rank_ == 0 ? same : 0, x, a2, b, c);
    bad |= expect("the word on rank 0 only", r, 3, differ(c, c1, nc));
    /* A caller that lies (B doubled, said unchanged) gets the product
     * of the B the last run moved, as the docs say; B halved again and
     * compared, the copy kept still matches it. */
    for (size_t i = 0; b && i < nbe; i++)
      b[i] *= 2;
    r = run_flagged(M, MLSBA_MPI_SAME_B, x, a2, b, c);
    bad |= expect("B changed but said unchanged: C of the B last moved", r, 3,
                  differ(c, c1, nc));
    for (size_t i = 0; b && i < nbe; i++)
      b[i] /= 2;
    r = run_on(M, x, a2, b, c);
    bad |= expect("B back, compared", r, 3, wrong_in(x[2], c, want_c, &ref2));
    /* After a rebalancing nothing is in the layout: the word is not
     * enough, A and B move. */
    bad |= mlsba_mpi_multiplier_rebalance(M) != 0;
    r = run_flagged(M, same, x, a2, b, c);
    bad |= expect("after a rebalancing, said unchanged", r, 0,
                  wrong_in(x[2], c, want_c, &ref2));
    /* Moved on the caller's word, A and B were not copied: a run that
     * asks for the comparison moves them again, the next one not. */
    r = run_on(M, x, a2, b, c);
    bad |= expect("no copy to compare with: moved again", r, 0,
                  wrong_in(x[2], c, want_c, &ref2));
    r = run_on(M, x, a2, b, c);
    bad |= expect("then compared", r, 3, differ(c, c1, nc));
  }
  mlsba_mpi_multiplier_destroy(F);
  mlsba_mpi_multiplier_destroy(M);
  for (int w = 0; w < 3; w++)
    mlsba_mpi_matrix_destroy(x[w]);
  free(a);
  free(a2);
  free(b);
  free(c);
  free(c1);
  free(cf);
  return bad;
}

/* A multiplier made with o, its from_saved, one run_dist checked against
 * the reference; with rebalance, its from_saved after a rebalancing
 * instead. Prints the check's line; returns nonzero when it failed. */
static int saved_once(const mlsba_mpi_multiply_opts_t *o, const char *what,
                      int want, int rebalance) {
  grid_t g = {1, size_, MLSBA_MPI_ROW_MAJOR, 7, 5};
  mlsba_mpi_matrix_t *x[3] = {NULL, NULL, NULL};
  describe_abc(o, &g, x);
  double *a = local_array(x[0], 0, 0), *b = local_array(x[1], 1, 0);
  double *c = local_array(x[2], 2, 1);
  mlsba_mpi_multiplier_t *M = NULL;
  int got = -1, r = -1;
  long wrong = 1;
  if (mlsba_mpi_multiplier_create(MPI_COMM_WORLD, o, &M) == 0) {
    if (rebalance && mlsba_mpi_multiplier_rebalance(M) != 0)
      got = -1;
    else
      got = mlsba_mpi_multiplier_balancing(M)->from_saved;
    ref_t ref = {o};
    if ((r = run_on(M, x, a, b, c)) >= 0)
      wrong = wrong_in(x[2], c, want_c, &ref);
  } else if (rank_ == 0) {
    fprintf(stderr, "scalapack_ranks: %s\n", mlsba_mpi_last_error());
  }
  long all = 0;
  MPI_Allreduce(&wrong, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  int ok = got == want && r >= 0 && all == 0;
  if (rank_ == 0)
    printf("%s saved: %s: from_saved %d (want %d), %ld wrong\n",
           ok ? "ok" : "WRONG", what, got, want, all);
  mlsba_mpi_multiplier_destroy(M);
  for (int w = 0; w < 3; w++)
    mlsba_mpi_matrix_destroy(x[w]);
  free(a);
  free(b);
  free(c);
  return !ok;
}

/* Rank 0: the path of the one saved distribution in dir ("" unless
 * exactly one is there). */
static void saved_file(const char *dir, char *path, size_t n) {
  DIR *d = opendir(dir);
  int count = 0;
  path[0] = '\0';
  for (struct dirent *e; d && (e = readdir(d)) != NULL;)
    if (strncmp(e->d_name, "inpa-", 5) == 0 && count++ == 0)
      snprintf(path, n, "%s/%s", dir, e->d_name);
  if (d)
    closedir(d);
  if (count != 1)
    path[0] = '\0';
}

/* Rank 0: the saved file's rectangles replaced by ones that overlap
 * (every one the grid's first cell): 0 when done. */
static int damage_saved(const char *dir) {
  char path[600], head[200];
  saved_file(dir, path, sizeof path);
  FILE *f = path[0] ? fopen(path, "r+") : NULL;
  if (f == NULL || !fgets(head, sizeof head, f)) {
    if (f)
      fclose(f);
    return 1;
  }
  rewind(f);
  fputs(head, f);
  for (int i = 0; i < size_; i++)
    fputs("1 1 0 0\n", f);
  return fclose(f) != 0;
}

/* Rank 0: the files in folder dir removed; how many, or -1 when one
 * could not be. */
static int remove_files_in(const char *dir) {
  char path[800];
  int n = 0;
  DIR *d = opendir(dir);
  for (struct dirent *e; d && (e = readdir(d)) != NULL;)
    if (e->d_name[0] != '.' &&
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path)
      n = remove(path) == 0 && n >= 0 ? n + 1 : -1;
  if (d)
    closedir(d);
  return d ? n : -1;
}

/* Rank 0: the saved file replaced by a distribution of the 4 x 4 cells of
 * 97 x 61 in blocks of 16 that is a block column off the caller's split
 * on a 1 x q grid (2 or 3 ranks), with times of ranks of one speed, or
 * the last one four times slower (slow): 0 when done. */
static int write_off_edge(const char *dir, int slow) {
  static const int64_t at[2][3][2] = {{{0, 3}, {3, 1}}, /* col, cols */
                                      {{0, 2}, {2, 1}, {3, 1}}};
  char path[600];
  saved_file(dir, path, sizeof path);
  FILE *f = path[0] && (size_ == 2 || size_ == 3) ? fopen(path, "w") : NULL;
  if (f == NULL)
    return 1;
  fprintf(f, "mlsba-inpa-distribution 2 %d 4 0.01\n", size_);
  for (int i = 0; i < size_; i++) {
    const int64_t *x = at[size_ - 2][i];
    int64_t end = (x[0] + x[1]) * 16 < 61 ? (x[0] + x[1]) * 16 : 61;
    double speed = slow && i == size_ - 1 ? 250 : 1000;
    fprintf(f, "4 %lld 0 %lld %.9g\n", (long long)x[1], (long long)x[0],
            97.0 * (double)(end - x[0] * 16) / speed);
  }
  return fclose(f) != 0;
}

/* A multiplier on the saved split off the caller's edges: two run_dist on
 * a 1 x q grid of the multiplier's block, C right, result.snapped as
 * wanted (and kept on the second run). Nonzero when it failed. */
static int snap_once(const mlsba_mpi_multiply_opts_t *o, const char *dir,
                     int slow) {
  int done = rank_ == 0 ? write_off_edge(dir, slow) : 0;
  MPI_Bcast(&done, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (done != 0) {
    if (rank_ == 0)
      printf("WRONG saved: the split off the edges not written\n");
    return 1;
  }
  grid_t g = {1, size_, MLSBA_MPI_ROW_MAJOR, 16, 16};
  mlsba_mpi_matrix_t *x[3] = {NULL, NULL, NULL};
  describe_abc(o, &g, x);
  double *a = local_array(x[0], 0, 0), *b = local_array(x[1], 1, 0);
  mlsba_mpi_multiplier_t *M = NULL;
  int snapped[2] = {-1, -1}, from_saved = -1;
  long wrong = 0;
  if (mlsba_mpi_multiplier_create(MPI_COMM_WORLD, o, &M) == 0) {
    from_saved = mlsba_mpi_multiplier_balancing(M)->from_saved;
    for (int t = 0; t < 2; t++) {
      double *c = local_array(x[2], 2, 1);
      mlsba_mpi_result_t r;
      ref_t ref = {o};
      if (mlsba_mpi_multiplier_run_dist(M, x[0], a, x[1], b, x[2], c, &r)) {
        wrong++;
      } else {
        snapped[t] = r.snapped;
        wrong += wrong_in(x[2], c, want_c, &ref);
        mlsba_mpi_result_free(&r);
      }
      free(c);
    }
  } else if (rank_ == 0) {
    fprintf(stderr, "scalapack_ranks: %s\n", mlsba_mpi_last_error());
  }
  long all = 0;
  MPI_Allreduce(&wrong, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  int ok =
      from_saved == 1 && snapped[0] == !slow && snapped[1] == !slow && all == 0;
  if (rank_ == 0)
    printf("%s saved: a split a block off the caller's edges, %s: "
           "from_saved %d, snapped %d %d (want %d), %ld wrong\n",
           ok ? "ok" : "WRONG", slow ? "one rank slow" : "ranks alike",
           from_saved, snapped[0], snapped[1], !slow, all);
  mlsba_mpi_multiplier_destroy(M);
  for (int w = 0; w < 3; w++)
    mlsba_mpi_matrix_destroy(x[w]);
  free(a);
  free(b);
  return !ok;
}

static int saved(const char *platform) {
  char dir[256] = "/tmp/mlsba-saved-XXXXXX";
  if (rank_temp_dir(dir, (int)sizeof dir))
    return 1;
  mlsba_mpi_multiply_opts_t o;
  mlsba_mpi_multiply_opts_init(&o);
  o.platform = platform;
  o.eps = 1; /* any run is balanced: the saved one always holds */
  o.max_iter = 3;
  o.drift = 0;
  o.m = 97;
  o.n = 61;
  o.k = 43;
  o.block = 16;
  o.model_dir = dir;
  int bad = saved_once(&o, "first job", 0, 0);
  bad |= saved_once(&o, "second job", 1, 0);
  int damaged = rank_ == 0 ? damage_saved(dir) : 0;
  MPI_Bcast(&damaged, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank_ == 0)
    printf("%s saved: the file damaged\n", damaged ? "WRONG" : "ok");
  bad |= damaged;
  bad |= saved_once(&o, "a damaged file is not run", 0, 0);
  bad |= saved_once(&o, "written anew", 1, 0);
  bad |= saved_once(&o, "a rebalancing runs INPA", 0, 1);
  /* The balancing's own tolerance, a file to take without a check. */
  o.eps = 0.05;
  bad |= snap_once(&o, dir, 0);
  bad |= snap_once(&o, dir, 1);
  if (rank_ == 0) { /* its files, the ranks' folders of models, itself */
    char path[600];
    saved_file(dir, path, sizeof path);
    bad |= path[0] == '\0';
    int folders = 0, empty = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
      if (e->d_name[0] == '.' || snprintf(path, sizeof path, "%s/%s", dir,
                                          e->d_name) >= (int)sizeof path)
        continue;
      if (strncmp(e->d_name, "node-", 5) == 0) {
        int models = remove_files_in(path);
        folders++;
        empty += models <= 0;
      }
      bad |= remove(path) != 0;
    }
    if (d)
      closedir(d);
    bad |= remove(dir) != 0;
    int ok = folders == size_ && empty == 0;
    printf("%s saved: %d ranks' folders of models (want %d), %d empty\n",
           ok ? "ok" : "WRONG", folders, size_, empty);
    bad |= !ok;
  }
  MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return bad;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  int bad = 2;
  if (argc >= 2 && !strcmp(argv[1], "roundtrip"))
    bad = roundtrip();
  else if (argc >= 3 && !strcmp(argv[1], "pdgemm"))
    bad = pdgemm(argv[2]);
  else if (argc >= 3 && !strcmp(argv[1], "reuse"))
    bad = reuse(argv[2]);
  else if (argc >= 3 && !strcmp(argv[1], "saved"))
    bad = saved(argv[2]);
  else if (rank_ == 0)
    fprintf(stderr, "usage: scalapack_ranks roundtrip | pdgemm PLATFORM | "
                    "reuse PLATFORM | saved PLATFORM\n");
  MPI_Finalize();
  return bad;
}
