/* The product across ranks as an application drives it (test_multiply
 * starts this program under mpirun with one case):
 *   shapes PLATFORM   every op(A) op(B) combination in both precisions,
 *                     M, N, K not multiples of the block, K = 1, alpha
 *                     and beta, against a serial reference, on the
 *                     application's own blocks (the fill callback must be
 *                     asked only for blocks the rank owns);
 *   fail PLATFORM R   rank R's fill fails: every rank returns the error;
 *   rerun PLATFORM    a multiplier run twice gives bit-identical C;
 *   drift PATTERN     simulated ranks, one whose device slows down
 *                     partway: the multiplier balances again once;
 *   saved PLATFORM    simulated ranks with opts.model_dir: the second
 *                     job takes the saved distribution without a run of
 *                     its own and keeps it after its first product; a
 *                     saved distribution that no longer holds (the file
 *                     rewritten lopsided) is replaced right after the
 *                     first product, by INPA's, which the next job
 *                     takes and keeps.
 * The matrices hold multiples of 1/8 small enough that every product and
 * sum is exact in single and double precision, so C must equal the
 * reference exactly, whatever the order of the sums. Rank 0 prints one
 * line per case ("ok ..." or what is wrong); the exit status is 0 when
 * every rank found everything right. */
#include <dirent.h>
#include <mlsba.h>
#include <mlsba/mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/rank_matrix.h"

static double a_at(int64_t i, int64_t j) {
  return (double)((i + 2 * j) % 7 - 3) / 4;
}
static double b_at(int64_t i, int64_t j) {
  return (double)((3 * i + j) % 5 - 2) / 2;
}
static double c_at(int64_t i, int64_t j) {
  return (double)((i + j) % 3 - 1) / 4;
}
static double elem(int which, int64_t i, int64_t j) {
  return which == 0 ? a_at(i, j) : which == 1 ? b_at(i, j) : c_at(i, j);
}

typedef struct {
  int rank, fail_on_rank;
  mlsba_precision_t prec;
  const mlsba_mpi_multiplier_t *mult; /* for the own-blocks check */
  int64_t b;
  long foreign; /* blocks asked for that this rank does not own */
  long asked;
} app_t;

static int fill(void *user, int which, int64_t row, int64_t col, int64_t rows,
                int64_t cols, void *dst, int64_t ld) {
  app_t *app = user;
  if (app->rank == app->fail_on_rank)
    return 5;
  app->asked++;
  const mlsba_mpi_matrix_t *d = mlsba_mpi_multiplier_matrix(app->mult, which);
  for (int64_t bj = col / app->b; bj * app->b < col + cols; bj++)
    for (int64_t bi = row / app->b; bi * app->b < row + rows; bi++)
      app->foreign +=
          mlsba_mpi_matrix_owner(d, bi, bj, NULL, NULL) != app->rank;
  for (int64_t j = 0; j < cols; j++)
    for (int64_t i = 0; i < rows; i++) {
      double v = elem(which, row + i, col + j);
      if (app->prec == MLSBA_PRECISION_DOUBLE)
        ((double *)dst)[j * ld + i] = v;
      else
        ((float *)dst)[j * ld + i] = (float)v;
    }
  return 0;
}

/* C(i, j) = alpha sum_p op(A)(i, p) op(B)(p, j) + beta C0(i, j). */
static double reference(const mlsba_mpi_multiply_opts_t *o, int64_t i,
                        int64_t j) {
  double s = 0;
  for (int64_t p = 0; p < o->k; p++)
    s += (o->transa == 'T' ? a_at(p, i) : a_at(i, p)) *
         (o->transb == 'T' ? b_at(j, p) : b_at(p, j));
  return o->alpha * s + (o->beta != 0 ? o->beta * c_at(i, j) : 0);
}

static double get(const void *x, int64_t k, mlsba_precision_t p) {
  return p == MLSBA_PRECISION_DOUBLE ? ((const double *)x)[k]
                                     : (double)((const float *)x)[k];
}

/* Elements of the rank's C' (and of the gathered C on rank 0) that differ
 * from the reference. */
static long wrong_elements(const mlsba_mpi_multiply_opts_t *o,
                           const mlsba_mpi_result_t *r, int rank) {
  long wrong = 0;
  for (int64_t j = 0; r->c && j < r->c_cols; j++)
    for (int64_t i = 0; i < r->c_rows; i++)
      wrong += get(r->c, j * r->c_rows + i, o->precision) !=
               reference(o, r->c_row0 + i, r->c_col0 + j);
  for (int64_t j = 0; rank == 0 && r->c_all && j < o->n; j++)
    for (int64_t i = 0; i < o->m; i++)
      wrong += get(r->c_all, j * o->m + i, o->precision) != reference(o, i, j);
  if (rank == 0 && o->gather && r->c_all == NULL)
    wrong++;
  return wrong;
}

static void base_opts(mlsba_mpi_multiply_opts_t *o, const char *platform) {
  mlsba_mpi_multiply_opts_init(o);
  o->platform = platform;
  o->eps = 0.5; /* a test's balancing: a few runs, not a good one */
  o->max_iter = 3;
}

/* Every transpose combination in both precisions, on shapes that are not
 * multiples of the block (K = 1 among them, where most ranks own no
 * block of op(A) or op(B)), with alpha and beta. */
static int shapes(const char *platform, int rank) {
  static const struct {
    int64_t m, n, k, b;
  } shape[] = {{100, 70, 50, 16},
               {33, 130, 1, 16},
               {200, 45, 77, 32},
               {17, 300, 129, 8},
               {64, 64, 64, 16}};
  int bad = 0;
  /* Every shape with every transpose pair in both precisions; alpha and
   * beta where the case's bits have odd parity, so that each transpose
   * pair meets them in one precision or the other. */
  for (int c = 0; c < 40; c++) {
    mlsba_mpi_multiply_opts_t o;
    base_opts(&o, platform);
    int s = c / 8;
    o.m = shape[s].m;
    o.n = shape[s].n;
    o.k = shape[s].k;
    o.block = shape[s].b;
    o.transa = c & 1 ? 'T' : 'N';
    o.transb = c & 2 ? 'T' : 'N';
    o.precision = c & 4 ? MLSBA_PRECISION_SINGLE : MLSBA_PRECISION_DOUBLE;
    int scaled = (c ^ c >> 1 ^ c >> 2 ^ s) & 1;
    o.alpha = scaled ? 2 : 1;
    o.beta = scaled ? -0.5 : 0;
    o.gather = 1;
    app_t app = {rank, -1, o.precision, NULL, o.block, 0, 0};
    o.fill = fill;
    o.fill_user = &app;
    mlsba_mpi_multiplier_t *M = NULL;
    mlsba_mpi_result_t r;
    int err = mlsba_mpi_multiplier_create(MPI_COMM_WORLD, &o, &M);
    app.mult = M;
    if (!err)
      err = mlsba_mpi_multiplier_run(M, &r);
    long wrong = err ? -1 : wrong_elements(&o, &r, rank);
    /* Whether this rank owns no block of A or of B (it then only
     * receives panels): K = 1 leaves most ranks so. */
    long idle =
        !err &&
        (mlsba_mpi_matrix_num_blocks(mlsba_mpi_multiplier_matrix(M, 0)) == 0 ||
         mlsba_mpi_matrix_num_blocks(mlsba_mpi_multiplier_matrix(M, 1)) == 0);
    long all[4] = {wrong, app.foreign, app.asked, idle}, sum[4];
    MPI_Allreduce(all, sum, 4, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    int ok = !err && sum[0] == 0 && sum[1] == 0 && r.verified == 1;
    if (rank == 0)
      printf("%s %c%c %s %lldx%lldx%lld b %lld alpha %g beta %g: %ld wrong, "
             "%ld foreign blocks of %ld fills, %ld rank(s) without A or B, "
             "verified %d%s%s\n",
             ok ? "ok" : "WRONG", o.transa, o.transb,
             o.precision == MLSBA_PRECISION_DOUBLE ? "double" : "single",
             (long long)o.m, (long long)o.n, (long long)o.k, (long long)o.block,
             o.alpha, o.beta, sum[0], sum[1], sum[2], sum[3],
             err ? -2 : r.verified, err ? ": " : "",
             err ? mlsba_mpi_last_error() : "");
    bad |= !ok;
    if (!err)
      mlsba_mpi_result_free(&r);
    mlsba_mpi_multiplier_destroy(M);
  }
  return bad;
}

/* The fill of rank `on` fails: every rank returns the same error. */
static int fail(const char *platform, int on, int rank) {
  mlsba_mpi_multiply_opts_t o;
  base_opts(&o, platform);
  o.m = 90;
  o.n = 70;
  o.k = 50;
  o.block = 16;
  app_t app = {rank, on, o.precision, NULL, o.block, 0, 0};
  o.fill = fill;
  o.fill_user = &app;
  mlsba_mpi_multiplier_t *M = NULL;
  mlsba_mpi_result_t r;
  int err = mlsba_mpi_multiplier_create(MPI_COMM_WORLD, &o, &M);
  app.mult = M;
  if (!err)
    err = mlsba_mpi_multiplier_run(M, &r);
  int all = 0;
  MPI_Allreduce(&err, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0 && err)
    fprintf(stderr, "multiply_ranks: %s\n", mlsba_mpi_last_error());
  mlsba_mpi_multiplier_destroy(M);
  /* Every rank failed, with the same code. */
  return err != 0 && all == err ? 1 : 0;
}

/* A multiplier's runs on the same operands give the same C, bit for bit:
 * the layout and every device's share stay as balanced. */
static int rerun(const char *platform, int rank) {
  mlsba_mpi_multiply_opts_t o;
  base_opts(&o, platform);
  o.m = 150;
  o.n = 130;
  o.k = 110;
  o.block = 32;
  o.drift = 0;
  mlsba_mpi_multiplier_t *M = NULL;
  mlsba_mpi_result_t r1, r2;
  int err = mlsba_mpi_multiplier_create(MPI_COMM_WORLD, &o, &M);
  if (!err)
    err = mlsba_mpi_multiplier_run(M, &r1);
  if (!err && (err = mlsba_mpi_multiplier_run(M, &r2)) != 0)
    mlsba_mpi_result_free(&r1);
  int same = !err && r1.c_rows == r2.c_rows && r1.c_cols == r2.c_cols &&
             memcmp(r1.c, r2.c,
                    (size_t)(r1.c_rows * r1.c_cols) * sizeof(double)) == 0 &&
             r1.verified == 1;
  int all = 0;
  MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  if (rank == 0)
    printf("%s rerun: C %s; wall %.4f s, product %.4f s, balancing %.4f s\n",
           all ? "ok" : "WRONG", all ? "bit-identical" : "differs",
           err ? 0 : r2.wall_s, err ? 0 : r2.split.product_s,
           mlsba_mpi_multiplier_balancing(M)->wall_s);
  if (!err) {
    mlsba_mpi_result_free(&r1);
    mlsba_mpi_result_free(&r2);
  }
  mlsba_mpi_multiplier_destroy(M);
  return !all;
}

/* Rank 1's simulated device slows to half its speed at its 300th share
 * (about run 19: the product's 16 steps are a share each): the runs
 * before are balanced, the drift triggers exactly one balancing, once
 * the runs apart have lost what the first balancing cost (INPA's runs,
 * in virtual seconds), and the runs after it are balanced again. Each
 * run apart loses at least a quarter of its makespan (a rank at half
 * speed on half the work: a third), and the first is not judged alone
 * (the ranks' medians of three runs), so the runs apart number at least
 * one and at most 3 + cost / (a quarter of the makespan). A balancing
 * opens the device afresh, fast again (its shares counted anew), and
 * the runs stop 6 after it, before it can slow down a second time. */
static double imbalance_of(const mlsba_mpi_result_t *r) {
  double lo = r->ranks[0].time, hi = lo;
  for (int i = 1; i < r->nodes; i++) {
    lo = r->ranks[i].time < lo ? r->ranks[i].time : lo;
    hi = r->ranks[i].time > hi ? r->ranks[i].time : hi;
  }
  return hi > 0 ? (hi - lo) / hi : 0;
}

static int drift(const char *pattern, int rank) {
  mlsba_mpi_multiply_opts_t o;
  mlsba_mpi_multiply_opts_init(&o);
  o.platform = pattern;
  o.n = 2048;
  o.block = 128;
  o.eps = 0.05;
  mlsba_mpi_multiplier_t *M = NULL;
  int err = mlsba_mpi_multiplier_create(MPI_COMM_WORLD, &o, &M);
  int rebalanced = 0, first = -1, apart = 0;
  double last = 1, cost = 0, slow = 0;
  /* The first balancing's cost: every INPA run's slowest rank (rank 0
   * holds the history). */
  const mlsba_mpi_result_t *b = err ? NULL : mlsba_mpi_multiplier_balancing(M);
  for (size_t it = 0; b && b->history_time && it < b->history_len; it++) {
    double hi = 0;
    for (int i = 0; i < b->nodes; i++)
      if (b->history_time[it * (size_t)b->nodes + (size_t)i] > hi)
        hi = b->history_time[it * (size_t)b->nodes + (size_t)i];
    cost += hi;
  }
  for (int run = 0; !err && run < 80 && (first < 0 || run < first + 7); run++) {
    mlsba_mpi_result_t r;
    if ((err = mlsba_mpi_multiplier_run(M, &r)) != 0)
      break;
    if (r.rebalanced && first < 0)
      first = run;
    rebalanced += r.rebalanced;
    /* Runs apart are the ones before the balancing, none other. */
    if (imbalance_of(&r) > o.drift && !r.rebalanced) {
      apart++;
      for (int i = 0; i < r.nodes; i++)
        slow = r.ranks[i].time > slow ? r.ranks[i].time : slow;
    }
    last = imbalance_of(&r);
    mlsba_mpi_result_free(&r);
  }
  MPI_Bcast(&cost, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  int most = slow > 0 ? 3 + (int)(cost / (0.25 * slow)) : 3;
  int ok = !err && rebalanced == 1 && first > 2 && apart >= 1 &&
           apart <= most && last <= o.drift;
  if (rank == 0)
    printf("%s drift: %d balancing(s), the first after run %d, %d other "
           "run(s) apart (at most %d: the balancing cost %.3f s, a run "
           "apart %.3f s), the last run's imbalance %.3f%s%s\n",
           ok ? "ok" : "WRONG", rebalanced, first, apart, most, cost, slow,
           last, err ? ": " : "", err ? mlsba_mpi_last_error() : "");
  mlsba_mpi_multiplier_destroy(M);
  return !ok;
}

/* Rank 0: the folder at path, its files and its folders' files (depth
 * levels), removed; 0 when all went. */
static int remove_tree(const char *path, int depth) {
  DIR *d = depth > 0 ? opendir(path) : NULL;
  int bad = 0;
  for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
    char sub[700];
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name) >= (int)sizeof sub)
      continue;
    if (remove(sub) != 0)
      bad |= remove_tree(sub, depth - 1);
  }
  if (d)
    closedir(d);
  return bad | (remove(path) != 0);
}

/* One job on dir: a multiplier made (from_saved into *saved), runs until
 * 16 or 3 after the first that balanced the ranks again (its index into
 * *first, -1 when none did; how many did into *rebal, the last run's
 * imbalance into *last), destroyed; 0 when every call worked. */
static int saved_job(const mlsba_mpi_multiply_opts_t *o, int *saved, int *first,
                     int *rebal, double *last) {
  mlsba_mpi_multiplier_t *M = NULL;
  int err = mlsba_mpi_multiplier_create(MPI_COMM_WORLD, o, &M);
  *saved = err ? -1 : mlsba_mpi_multiplier_balancing(M)->from_saved;
  *first = -1;
  *rebal = 0;
  for (int run = 0; !err && run < 16 && (*first < 0 || run < *first + 4);
       run++) {
    mlsba_mpi_result_t r;
    if ((err = mlsba_mpi_multiplier_run(M, &r)) != 0)
      break;
    if (r.rebalanced && *first < 0)
      *first = run;
    *rebal += r.rebalanced;
    *last = imbalance_of(&r);
    err = r.verified != 0 ? 0 : -1; /* -1 on simulated ranks */
    mlsba_mpi_result_free(&r);
  }
  mlsba_mpi_multiplier_destroy(M);
  return err;
}

/* Rank 0: dir's saved distribution rewritten as one a balancing never
 * keeps: rank 0 one column of the grid's cells, rank 1 the rest, saved
 * as perfectly balanced (imbalance 0). 0 when done. */
static int make_lopsided(const char *dir) {
  char path[600] = "";
  DIR *d = opendir(dir);
  for (struct dirent *e; d && (e = readdir(d)) != NULL;)
    if (strncmp(e->d_name, "inpa-", 5) == 0)
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
  if (d)
    closedir(d);
  int version = 0, q = 0;
  long long g = 0;
  double imb = 0;
  FILE *f = path[0] ? fopen(path, "r") : NULL;
  int ok = f &&
           fscanf(f, "mlsba-inpa-distribution %d %d %lld %lf", &version, &q, &g,
                  &imb) == 4 &&
           q == 2 && g > 2;
  if (f)
    fclose(f);
  f = ok ? fopen(path, "w") : NULL;
  ok = f && fprintf(f,
                    "mlsba-inpa-distribution %d 2 %lld 0\n%lld 1 0 0 1\n"
                    "%lld %lld 0 1 1\n",
                    version, g, g, g, g - 1) > 0;
  return !(f && fclose(f) == 0 && ok);
}

static int saved(const char *platform, int rank) {
  char dir[64] = "/tmp/mlsba-stale-XXXXXX";
  if (rank_temp_dir(dir, (int)sizeof dir))
    return 1;
  mlsba_mpi_multiply_opts_t o;
  mlsba_mpi_multiply_opts_init(&o);
  o.platform = platform;
  o.n = 512;
  o.block = 32; /* a grid of 16 x 16 cells */
  o.model_dir = dir;
  static const char *const what[] = {
      "the first job balances", "the second takes it and keeps it",
      "a lopsided one is replaced once its products have lost a balancing",
      "the next job takes INPA's again"};
  static const int want_saved[] = {0, 1, 1, 1}, want_rebal[] = {0, 0, 1, 0};
  int bad = 0;
  for (int job = 0; job < 4; job++) {
    int from = -1, first = -1, rebal = -1;
    double last = 1;
    if (job == 2) {
      int e = rank == 0 ? make_lopsided(dir) : 0;
      MPI_Bcast(&e, 1, MPI_INT, 0, MPI_COMM_WORLD);
      bad |= e;
    }
    int err = saved_job(&o, &from, &first, &rebal, &last);
    /* The lopsided start loses about half its makespan a run against a
     * balancing priced at four makespans (none ran in that job): the
     * first run alone never pays for it. */
    int ok = !err && from == want_saved[job] && rebal == want_rebal[job] &&
             (rebal == 0 || first >= 1) && last <= o.drift;
    if (rank == 0)
      printf("%s saved: %s: from_saved %d, balanced again %d time(s), the "
             "first after run %d, last imbalance %.3f%s%s\n",
             ok ? "ok" : "WRONG", what[job], from, rebal, first + 1, last,
             err ? ": " : "", err ? mlsba_mpi_last_error() : "");
    bad |= !ok;
  }
  if (rank == 0) /* the saved file, the ranks' model folders, dir */
    bad |= remove_tree(dir, 2) != 0;
  MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return bad;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int bad = 2;
  if (argc >= 3 && !strcmp(argv[1], "shapes"))
    bad = shapes(argv[2], rank);
  else if (argc >= 4 && !strcmp(argv[1], "fail"))
    bad = fail(argv[2], atoi(argv[3]), rank);
  else if (argc >= 3 && !strcmp(argv[1], "rerun"))
    bad = rerun(argv[2], rank);
  else if (argc >= 3 && !strcmp(argv[1], "drift"))
    bad = drift(argv[2], rank);
  else if (argc >= 3 && !strcmp(argv[1], "saved"))
    bad = saved(argv[2], rank);
  else if (rank == 0)
    fprintf(stderr,
            "usage: multiply_ranks shapes|fail|rerun|drift|saved ...\n");
  MPI_Finalize();
  return bad;
}
