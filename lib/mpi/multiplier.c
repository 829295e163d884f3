/* The multiplier (<mlsba/mpi.h>): balance once, multiply many times. It
 * keeps every rank's devices open and balanced for one shape, the layout
 * INPA chose (every rank's part of C, op(A) and op(B): plan.c) and its
 * descriptions, so that a run is only the product's own work: operands
 * into the layout (operands.c), the product (product.c), the check
 * (check.c), C back. After two runs in a row whose rank times drift apart
 * it balances again only when that pays (maybe_rebalance below). Every
 * call first agrees on its arguments, so an error on any rank stops all
 * of them. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/verbose.h"
#include "matrix.h"
#include "multiply.h"

struct mlsba_mpi_multiplier {
  mlsba__mpi_mult_t C; /* C.o points at o, C.comm is a duplicate */
  mlsba_mpi_multiply_opts_t o;
  char *platform, *model_dir; /* o's copies of the caller's strings */
  mlsba__mpi_part_t *part;    /* every rank's part of the layout */
  mlsba__mpi_layout_t lay;
  mlsba_mpi_matrix_t *lib[3]; /* A and B as stored, and C */
  /* The runs on the caller's descriptions: the layout laid over the
   * blocks in the order that keeps most of them where the caller has
   * them (dist_layout), for the order of m, n and k in perm (NULL: the
   * matrices' own); dlib[0] NULL where every order is the own one. */
  mlsba_mpi_matrix_t *dlib[3];
  int64_t *perm[3];
  mlsba_mpi_result_t bal;    /* the last balancing */
  mlsba__mpi_operands_t ops; /* the runs' operands, kept */
  /* The product's panels and column communicator, kept for the layout. */
  mlsba__mpi_product_keep_t *keep;
  /* Since the last balancing: the rank times of the last WINDOW runs (a
   * ring, WINDOW x q), the runs, and the seconds the imbalance beyond
   * its tolerance has cost (maybe_rebalance). */
  double *seen;
  unsigned runs;
  double lost;
  /* What INPA's last balancing in this multiplier cost, in the product's
   * time base (0: none ran here, as with a saved start). */
  double inpa_cost;
  /* What the first dist run after the last balancing paid to move A and
   * B into its layout (rank 0's clock): a balancing again pays it again,
   * so it counts in what a balancing costs. */
  double moves_in;
  /* Every rank's cells (m, n, row, col: q x 4) of the layout; snapped: 1
   * once the runs on the caller's descriptions use the caller's own
   * split instead of the balanced one (snap), until the next balancing;
   * dist_runs: the dist runs on this layout, and the moves the last one
   * made that a snapped split would not (rank 0's clock). */
  int64_t *cells;
  int snapped;
  unsigned dist_runs;
  double moves_seen;
};

/* The runs whose rank times are judged together: the median of three
 * is a time that one noisy product (two ranks sharing a core, a
 * neighbour's build) does not move. */
enum { WINDOW = 3 };

/* The head's scalars, for every rank. */
static void share_head_scalars(MPI_Comm comm, mlsba_mpi_result_t *r) {
  const mlsba__mpi_value_t scalars[] = {
      MLSBA__MPI_NUMBER("iterations", r->iterations),
      MLSBA__MPI_NUMBER("converged", r->converged),
      MLSBA__MPI_NUMBER("imbalance", r->imbalance),
      MLSBA__MPI_NUMBER("half_perimeter_sum", r->half_perimeter_sum),
      MLSBA__MPI_NUMBER("half_perimeter_lower_bound",
                        r->half_perimeter_lower_bound),
      MLSBA__MPI_ENUM_VALUE("stop", r->stop, NULL),
      MLSBA__MPI_NUMBER("run_iteration", r->run_iteration)};
  mlsba__mpi_share_values(comm, 0, scalars, sizeof scalars / sizeof *scalars);
}

/* Rank 0's clock for a call's parts, on every rank. */
static void share_times(MPI_Comm comm, mlsba_mpi_result_t *r) {
  const mlsba__mpi_value_t t[] = {
      MLSBA__MPI_NUMBER("wall_s", r->wall_s),
      MLSBA__MPI_NUMBER("balance_s", r->split.balance_s),
      MLSBA__MPI_NUMBER("move_s", r->split.move_s),
      MLSBA__MPI_NUMBER("fill_s", r->split.fill_s),
      MLSBA__MPI_NUMBER("product_s", r->split.product_s),
      MLSBA__MPI_NUMBER("check_s", r->split.check_s),
      MLSBA__MPI_NUMBER("gather_s", r->split.gather_s),
      MLSBA__MPI_NUMBER("move_back_s", r->split.move_back_s)};
  mlsba__mpi_share_values(comm, 0, t, sizeof t / sizeof *t);
}

/* Collective: every rank's cells into its part, every rank's parts known,
 * and the layout's descriptions. */
static int make_layout(mlsba_mpi_multiplier_t *M) {
  mlsba__mpi_mult_t *C = &M->C;
  int64_t me[4] = {C->mine.m, C->mine.n, C->mine.row, C->mine.col};
  int64_t *all = malloc((size_t)C->q * 4 * sizeof *all);
  int err = all ? 0 : mlsba__fail(MLSBA_ENOMEM, "out of memory");
  if ((err = mlsba__mpi_agree(C->comm, err)) != 0)
    return err;
  MPI_Allgather(me, 4, MPI_INT64_T, all, 4, MPI_INT64_T, C->comm);
  for (int i = 0; i < C->q; i++)
    mlsba__mpi_grid_part(&C->grid, all[4 * i], all[4 * i + 1], all[4 * i + 2],
                         all[4 * i + 3], &M->part[i]);
  free(M->cells);
  M->cells = all;
  M->lay = (mlsba__mpi_layout_t){C->q,      C->grid.m, C->grid.n,
                                 C->grid.k, C->grid.b, M->part};
  for (int w = 0; w < 3; w++) {
    mlsba_mpi_matrix_destroy(M->lib[w]);
    M->lib[w] = NULL;
  }
  err = mlsba__mpi_layout_matrices(C->comm, &M->lay, M->o.transa, M->o.transb,
                                   NULL, M->lib);
  return mlsba__mpi_agree(C->comm, err);
}

/* The layout over the caller's blocks forgotten (the layout changes). */
static void drop_dist_layout(mlsba_mpi_multiplier_t *M) {
  for (int w = 0; w < 3; w++) {
    mlsba_mpi_matrix_destroy(M->dlib[w]);
    M->dlib[w] = NULL;
    free(M->perm[w]);
    M->perm[w] = NULL;
  }
}

/* Collective: INPA's runs, then the layout of the distribution chosen;
 * what it found and cost into M->bal. */
static int balance(mlsba_mpi_multiplier_t *M, int fresh) {
  mlsba__mpi_mult_t *C = &M->C;
  C->fresh = fresh; /* times that drifted: nothing saved before holds */
  double t0 = MPI_Wtime();
  mlsba_mpi_result_free(&M->bal);
  mlsba__mpi_operands_forget(&M->ops); /* the layout is about to change */
  drop_dist_layout(M);
  mlsba__mpi_product_keep_free(M->keep);
  M->keep = NULL;
  M->bal.nodes = C->q;
  int err = mlsba__mpi_mult_balance(C, &M->bal);
  mlsba__inpa_destroy(C->head);
  C->head = NULL;
  /* INPA's runs in the product's time base: each run's slowest rank
   * (rank 0 holds the history). */
  double runs_s = 0;
  for (size_t it = 0;
       C->rank == 0 && M->bal.history_time != NULL && it < M->bal.history_len;
       it++) {
    double hi = 0;
    for (int i = 0; i < C->q; i++) {
      double t = M->bal.history_time[it * (size_t)C->q + (size_t)i];
      hi = t > hi ? t : hi;
    }
    runs_s += hi;
  }
  MPI_Bcast(&runs_s, 1, MPI_DOUBLE, 0, C->comm);
  if (!err) {
    share_head_scalars(C->comm, &M->bal);
    err = make_layout(M);
  }
  M->bal.wall_s = M->bal.split.balance_s = MPI_Wtime() - t0;
  share_times(C->comm, &M->bal);
  /* A balancing on real ranks costs its wall time, its timed runs
   * included; simulated ranks' runs are virtual seconds, as their
   * products' are. runs_s on real ranks is no cost: each run's times are
   * the whole product's, predicted from a few timed steps (bal34c), 6 to
   * 16 times the balancing's wall at 3000^3 on three ranks (bal34g), and
   * taken as the cost it kept a lopsided split for every run of a
   * 10-run call (the twelfth stop's window: rank 0 27% over the
   * others). */
  if (!err && !M->bal.from_saved)
    M->inpa_cost = M->bal.simulated ? runs_s : M->bal.split.balance_s;
  M->moves_in = 0;
  M->runs = 0;
  M->lost = 0;
  M->snapped = 0;
  M->dist_runs = 0;
  M->moves_seen = 0;
  return err;
}

void mlsba_mpi_multiplier_destroy(mlsba_mpi_multiplier_t *M) {
  if (M == NULL)
    return;
  mlsba__mpi_mult_t *C = &M->C;
  if (C->host != MPI_COMM_NULL)
    MPI_Comm_free(&C->host);
  if (C->comm != MPI_COMM_NULL)
    MPI_Comm_free(&C->comm);
  mlsba__inpa_destroy(C->head);
  free(C->links);
  free(C->link_source);
  free(C->names);
  free(C->names_at);
  mlsba__mpi_node_close(C->node);
  for (int w = 0; w < 3; w++)
    mlsba_mpi_matrix_destroy(M->lib[w]);
  drop_dist_layout(M);
  mlsba_mpi_result_free(&M->bal);
  mlsba__mpi_operands_free(&M->ops);
  mlsba__mpi_product_keep_free(M->keep);
  free(M->seen);
  free(M->cells);
  free(M->part);
  free(M->platform);
  free(M->model_dir);
  free(M);
}

/* The options into M->o, the strings copied (the caller's may go). */
static int keep_opts(mlsba_mpi_multiplier_t *M,
                     const mlsba_mpi_multiply_opts_t *o) {
  int err = mlsba__mpi_multiply_resolve(o, M->C.q, &M->o);
  if (err)
    return err;
  M->platform = strdup(o->platform);
  M->model_dir = o->model_dir ? strdup(o->model_dir) : NULL;
  M->part = calloc((size_t)M->C.q, sizeof *M->part);
  M->seen = calloc((size_t)M->C.q * WINDOW, sizeof *M->seen);
  if (!M->platform || (o->model_dir && !M->model_dir) || !M->part || !M->seen)
    return mlsba__fail(MLSBA_ENOMEM, "out of memory");
  M->o.platform = M->platform;
  M->o.model_dir = M->model_dir;
  return 0;
}

/* Collective, once the options are agreed on: every rank's devices open,
 * then the balancing. */
static int open_and_balance(mlsba_mpi_multiplier_t *M) {
  mlsba__mpi_mult_t *C = &M->C;
  char path[1024];
  int local_rank = 0, local_size = 1;
  /* Collective on every rank (the split of the ranks by host, the
   * expansion of %r, %h and %l), then the head's options agreed on. */
  int e = mlsba__mpi_local_rank(C->comm, &local_rank, &local_size);
  int ep = mlsba_mpi_platform_path(C->comm, M->o.platform, path, sizeof path);
  int err;
  if ((err = mlsba__mpi_agree(C->comm, e ? e : ep)) != 0 ||
      (err = mlsba__mpi_multiply_agree_opts(C->comm, &M->o)) != 0)
    return err;
  err = mlsba__mpi_node_open_at(path, local_rank, local_size, &M->o, &C->node);
  if ((err = mlsba__mpi_agree(C->comm, err)) != 0)
    return err;
  MPI_Comm_split_type(C->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                      &C->host);
  C->signature = mlsba__mpi_mult_signature(path);
  return balance(M, 0);
}

int mlsba__mpi_multiplier_create(MPI_Comm comm,
                                 const mlsba_mpi_multiply_opts_t *o, int bad,
                                 const char *fn, mlsba_mpi_multiplier_t **out) {
  if (out != NULL)
    *out = NULL;
  if (comm == MPI_COMM_NULL)
    return mlsba__fail(MLSBA_EINVAL, "%s: comm is MPI_COMM_NULL", fn);
  mlsba_mpi_multiplier_t *M = calloc(1, sizeof *M);
  int err = bad;
  if (!err && out == NULL)
    err = mlsba__fail(MLSBA_EINVAL, "%s: multiplier is NULL", fn);
  if (!err && o == NULL)
    err = mlsba__fail(MLSBA_EINVAL, "%s: opts is NULL", fn);
  if (!err && M == NULL)
    err = mlsba__fail(MLSBA_ENOMEM, "out of memory");
  if (M) {
    M->C.comm = M->C.host = MPI_COMM_NULL;
    MPI_Comm_rank(comm, &M->C.rank);
    MPI_Comm_size(comm, &M->C.q);
  }
  /* Every rank's arguments before anything else: a rank that returned
   * alone would leave the others waiting in their first message. */
  if (!err)
    err = keep_opts(M, o);
  if ((err = mlsba__mpi_agree(comm, err)) != 0) {
    mlsba_mpi_multiplier_destroy(M);
    return err;
  }
  MPI_Comm_dup(comm, &M->C.comm);
  M->C.o = &M->o;
  mlsba__mpi_grid_init(&M->C.grid, M->o.m, M->o.n, M->o.k, M->o.block);
  if ((err = open_and_balance(M)) != 0) {
    mlsba_mpi_multiplier_destroy(M);
    return err;
  }
  *out = M;
  return 0;
}

int mlsba_mpi_multiplier_create(MPI_Comm comm,
                                const mlsba_mpi_multiply_opts_t *opts,
                                mlsba_mpi_multiplier_t **mult) {
  return mlsba__mpi_multiplier_create(comm, opts, 0,
                                      "mlsba_mpi_multiplier_create", mult);
}

int mlsba_mpi_multiplier_rebalance(mlsba_mpi_multiplier_t *M) {
  if (M == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_mpi_multiplier_rebalance: NULL");
  return balance(M, 1);
}

const mlsba_mpi_matrix_t *
mlsba_mpi_multiplier_matrix(const mlsba_mpi_multiplier_t *M, int which) {
  return M && which >= 0 && which < 3 ? M->lib[which] : NULL;
}

const mlsba_mpi_result_t *
mlsba_mpi_multiplier_balancing(const mlsba_mpi_multiplier_t *M) {
  return M ? &M->bal : NULL;
}

/* The balancing's fields of a run's result: the distribution it runs. */
static int copy_balancing(const mlsba_mpi_result_t *b, mlsba_mpi_result_t *r) {
  r->iterations = b->iterations;
  r->converged = b->converged;
  r->imbalance = b->imbalance;
  r->half_perimeter_sum = b->half_perimeter_sum;
  r->half_perimeter_lower_bound = b->half_perimeter_lower_bound;
  r->simulated = b->simulated;
  r->stop = b->stop;
  r->run_iteration = b->run_iteration;
  r->from_saved = b->from_saved;
  size_t n = b->history_len, q = (size_t)b->nodes;
  if (n == 0 || b->history_w == NULL)
    return 0; /* ranks other than 0 keep no history */
  r->history_w = malloc(n * q * sizeof *r->history_w);
  r->history_time = malloc(n * q * sizeof *r->history_time);
  r->history_imbalance = malloc(n * sizeof *r->history_imbalance);
  if (!r->history_w || !r->history_time || !r->history_imbalance)
    return mlsba__fail(MLSBA_ENOMEM, "out of memory");
  memcpy(r->history_w, b->history_w, n * q * sizeof *r->history_w);
  memcpy(r->history_time, b->history_time, n * q * sizeof *r->history_time);
  memcpy(r->history_imbalance, b->history_imbalance,
         n * sizeof *r->history_imbalance);
  r->history_len = n;
  return 0;
}

/* Whether the caller's descriptions fit the multiplier's shape, and give
 * arrays where this rank owns blocks. */
static int check_dist(const mlsba_mpi_multiplier_t *M,
                      const mlsba__mpi_source_t *s) {
  const mlsba_mpi_multiply_opts_t *o = &M->o;
  int64_t want[3][2] = {
      {o->transa == 'T' ? o->k : o->m, o->transa == 'T' ? o->m : o->k},
      {o->transb == 'T' ? o->n : o->k, o->transb == 'T' ? o->k : o->n},
      {o->m, o->n}};
  const void *arr[3] = {s->a, s->b, s->c};
  for (int w = 0; w < 3; w++) {
    int64_t m = 0, n = 0;
    if (s->desc[w] == NULL)
      return mlsba__fail(MLSBA_EINVAL, "the description of %c is NULL",
                         "ABC"[w]);
    mlsba_mpi_matrix_size(s->desc[w], &m, &n, NULL, NULL);
    if (m != want[w][0] || n != want[w][1])
      return mlsba__fail(MLSBA_EINVAL,
                         "%c is described as %lld x %lld; the multiplier's "
                         "shape wants %lld x %lld",
                         "ABC"[w], (long long)m, (long long)n,
                         (long long)want[w][0], (long long)want[w][1]);
    if (arr[w] == NULL && mlsba_mpi_matrix_num_blocks(s->desc[w]) > 0)
      return mlsba__fail(MLSBA_EINVAL,
                         "%c's local array is NULL where this rank owns "
                         "blocks of it",
                         "ABC"[w]);
  }
  return 0;
}

/* The median of n (1 to WINDOW) values. */
static double median_of(const double *v, unsigned n) {
  double s[WINDOW];
  memcpy(s, v, n * sizeof *s);
  for (unsigned i = 1; i < n; i++) /* insertion: n <= 3 */
    for (unsigned j = i; j > 0 && s[j - 1] > s[j]; j--) {
      double t = s[j];
      s[j] = s[j - 1];
      s[j - 1] = t;
    }
  return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

/* After a run, on every rank alike (the rank times are every rank's):
 * whether to balance the ranks again, and then doing it. A balancing
 * with INPA costs several products (1.6 to 4.5 s on three ranks at
 * N = 3000 to 4096, against 0.5 to 1 s a product), and ranks that share
 * a core show their times tens of percent apart from one product to the
 * next with nothing to fix. So the times judged are each rank's median
 * over the last WINDOW runs, and a run counts against the distribution
 * only when those are further apart ((max - min) / max) than the
 * tolerance: drift, or for a saved distribution taken without a run its
 * bar (multiply_saved.c: half again of the imbalance it was saved with,
 * at least eps and drift). What such a run lost is its median makespan
 * less the makespan of the same ranks balanced (every rank's speed its
 * blocks over its median time: the total blocks over the total speed).
 * The ranks are balanced again once the runs have lost, since the last
 * balancing, what a balancing costs (INPA's last one here, with the
 * moves of A and B into its layout that followed it, or four median
 * makespans when none ran here): the rent-or-buy rule, which
 * never spends more than twice what the best choice made in hindsight
 * would, however many products follow, where a threshold on one product
 * paid a balancing for noise. */
static int maybe_rebalance(mlsba_mpi_multiplier_t *M, mlsba_mpi_result_t *r) {
  int q = r->nodes;
  double *row = M->seen + (size_t)(M->runs % WINDOW) * (size_t)q;
  double now_lo = INFINITY, now_hi = 0; /* this run's alone, for the log */
  for (int i = 0; i < q; i++) {
    row[i] = r->ranks[i].time;
    now_lo = row[i] < now_lo ? row[i] : now_lo;
    now_hi = row[i] > now_hi ? row[i] : now_hi;
  }
  unsigned n = ++M->runs < WINDOW ? M->runs : WINDOW;
  double lo = INFINITY, hi = 0, blocks = 0, speed = 0;
  for (int i = 0; i < q; i++) {
    double v[WINDOW];
    for (unsigned j = 0; j < n; j++)
      v[j] = M->seen[(size_t)j * (size_t)q + (size_t)i];
    double t = median_of(v, n);
    lo = t < lo ? t : lo;
    hi = t > hi ? t : hi;
    blocks += (double)r->ranks[i].w;
    speed += t > 0 ? (double)r->ranks[i].w / t : 0;
  }
  double imbalance = hi > 0 ? (hi - lo) / hi : 0;
  double balanced = speed > 0 ? blocks / speed : hi;
  double tol = M->C.unchecked ? M->C.check_bar : M->o.drift;
  int judged = tol > 0 && imbalance > tol;
  if (judged && hi > balanced)
    M->lost += hi - balanced;
  double cost = M->inpa_cost > 0 ? M->inpa_cost + M->moves_in : 4 * hi;
  if (mlsba__verbose() && M->C.rank == 0)
    fprintf(stderr,
            "mlsba multiplier: run %u since balancing: rank times "
            "%.4f-%.4f s (imbalance %.3f), medians %.4f-%.4f s (imbalance "
            "%.3f, tolerance %.3f), balanced %.4f s, lost %.4f s of a "
            "balancing's %.4f s\n",
            M->runs, now_lo, now_hi,
            now_hi > 0 ? (now_hi - now_lo) / now_hi : 0, lo, hi, imbalance, tol,
            balanced, M->lost, cost);
  for (int i = 0; mlsba__verbose() && M->C.rank == 0 && i < q; i++)
    fprintf(stderr,
            "mlsba multiplier:   rank %d: %lld blocks (%lld x %lld), "
            "compute %.4f s, in MPI %.4f s\n",
            i, (long long)r->ranks[i].w, (long long)r->ranks[i].m,
            (long long)r->ranks[i].n, r->ranks[i].time, r->ranks[i].comm);
  if (!judged || M->lost < cost)
    return 0;
  int err = balance(M, 1);
  r->split.balance_s += M->bal.split.balance_s;
  r->rebalanced = 1;
  return err;
}

/* A group of the caller's grid (a process row or column) and where the
 * layout places the first of its ranks' parts. */
typedef struct {
  int64_t key;
  int group;
} group_t;

static int by_key(const void *x, const void *y) {
  const group_t *a = x, *b = y;
  if (a->key != b->key)
    return a->key < b->key ? -1 : 1;
  return (a->group > b->group) - (a->group < b->group);
}

/* Which part of the layout a dimension's key reads: rows of C, its
 * columns, op(A)'s share of k, op(B)'s. */
enum { AT_ROW, AT_COL, AT_AK, AT_BK };

static int64_t part_start(const mlsba__mpi_part_t *p, int at, int64_t *len) {
  const int64_t v[4][2] = {{p->row0, p->rows},
                           {p->col0, p->cols},
                           {p->ak0, p->aks},
                           {p->bk0, p->bks}};
  *len = v[at][1];
  return v[at][0];
}

/* The order of the blocks of one dimension of the caller's d (dim 0: its
 * rows, 1: its columns) that lays the layout's parts over the caller's
 * blocks: on a 2-D block-cyclic grid whose block there is the layout's,
 * the blocks of each process row (column) together, in their order, the
 * groups in the order in which the layout places their ranks' parts (at:
 * which part), and a short last block last. On a 1 x Q grid of equal
 * ranks the layout's columns then are the caller's own: C and op(A) stay
 * where they lie, and op(B) moves only within each rank; elsewhere fewer
 * blocks change rank than in the matrices' own order. *out is NULL
 * (the own order) where the caller's layout is of another kind or
 * block, or the order found is the own one. */
static int dim_order(const mlsba_mpi_multiplier_t *M,
                     const mlsba_mpi_matrix_t *d, int dim, int at,
                     int64_t **out) {
  *out = NULL;
  int np = dim ? d->npcol : d->nprow, src = dim ? d->csrc : d->rsrc;
  int64_t blocks = dim ? d->gn : d->gm, size = dim ? d->n : d->m;
  if (d->kind != MLSBA__MATRIX_SCALAPACK || np < 2 ||
      (dim ? d->nb : d->mb) != M->lay.b)
    return 0;
  group_t *g = malloc((size_t)np * sizeof *g);
  int64_t *perm = malloc((size_t)blocks * sizeof *perm);
  if (!g || !perm) {
    free(g);
    free(perm);
    return mlsba__fail(MLSBA_ENOMEM, "out of memory");
  }
  for (int s = 0; s < np; s++)
    g[s] = (group_t){INT64_MAX, s};
  for (int r = 0; r < M->lay.q && r < d->nprow * d->npcol; r++) {
    int row, col;
    mlsba__mpi_matrix_grid_of(d, r, &row, &col);
    int64_t len, start = part_start(&M->lay.part[r], at, &len);
    int s = dim ? col : row;
    if (len > 0 && start < g[s].key)
      g[s].key = start;
  }
  qsort(g, (size_t)np, sizeof *g, by_key);
  int short_last = size % M->lay.b != 0;
  int64_t v = 0, same = 1;
  for (int i = 0; i < np; i++)
    for (int64_t j = (g[i].group - src + np) % np; j < blocks; j += np)
      if (!(short_last && j == blocks - 1))
        perm[v++] = j;
  if (short_last)
    perm[v++] = blocks - 1;
  for (int64_t j = 0; j < blocks; j++)
    same &= perm[j] == j;
  free(g);
  if (same)
    free(perm);
  else
    *out = perm;
  return 0;
}

static int same_order(const int64_t *x, const int64_t *y, int64_t n) {
  if (x == NULL || y == NULL)
    return x == y;
  return memcmp(x, y, (size_t)n * sizeof *x) == 0;
}

/* The dist form: the orders of m, n and k that keep most of the caller's
 * blocks in place (dim_order: of m from C's rows, else op(A)'s; of n
 * from C's columns, else op(B)'s; of k from op(A)'s, else op(B)'s), and
 * the layout's descriptions in them, made again only when the orders
 * change (the operands kept then serve no more). Local: every rank
 * finds the same orders in the same descriptions. A gathered C keeps
 * the matrices' own order (rank 0 assembles it from the parts). */
static int dist_layout(mlsba_mpi_multiplier_t *M,
                       const mlsba__mpi_source_t *src) {
  const mlsba_mpi_multiply_opts_t *o = &M->o;
  int ta = o->transa == 'T', tb = o->transb == 'T';
  int64_t b = M->lay.b, *perm[3] = {NULL, NULL, NULL};
  int64_t blocks[3] = {(M->lay.m + b - 1) / b, (M->lay.n + b - 1) / b,
                       (M->lay.k + b - 1) / b};
  /* Per order: the caller's matrices and dimensions to try, in turn. */
  const struct {
    int w, dim, at;
  } try[3][2] = {{{2, 0, AT_ROW}, {0, ta, AT_ROW}},
                 {{2, 1, AT_COL}, {1, !tb, AT_COL}},
                 {{0, !ta, AT_AK}, {1, tb, AT_BK}}};
  int err = 0;
  for (int x = 0; x < 3 && !err && !o->gather; x++)
    for (int t = 0; t < 2 && !err && perm[x] == NULL; t++)
      err = dim_order(M, src->desc[try[x][t].w], try[x][t].dim, try[x][t].at,
                      &perm[x]);
  int same = !err;
  for (int x = 0; x < 3; x++)
    same &= same_order(perm[x], M->perm[x], blocks[x]);
  int none = !perm[0] && !perm[1] && !perm[2];
  if (err || (same && (M->dlib[0] || none))) {
    for (int x = 0; x < 3; x++)
      free(perm[x]);
    return err;
  }
  drop_dist_layout(M);
  mlsba__mpi_operands_forget(&M->ops); /* A' and B' in the old order */
  for (int x = 0; x < 3; x++)
    M->perm[x] = perm[x];
  if (none)
    return 0;
  const int64_t *const p[3] = {perm[0], perm[1], perm[2]};
  err = mlsba__mpi_layout_matrices(M->C.comm, &M->lay, o->transa, o->transb, p,
                                   M->dlib);
  if (err)
    drop_dist_layout(M);
  return err;
}

/* One dimension of the caller's C (dim 0: its rows, 1: its columns) cut
 * as its process rows (columns) hold it, in cells: the group placed
 * pos-th has cells edges[pos] to edges[pos + 1], and group s is placed
 * at[s]-th. The groups in the order of their first blocks, the one
 * holding a short last block last, so that dist_layout's order (a
 * group's blocks together, the groups in the order of their parts, a
 * short last block last) gives each group its own blocks. 0 when a group
 * holds no block or an edge falls on no cell edge. */
static int snap_dim(const mlsba__mpi_grid_t *gr, const mlsba_mpi_matrix_t *d,
                    int dim, int64_t *edges, int *at) {
  int np = dim ? d->npcol : d->nprow, src = dim ? d->csrc : d->rsrc;
  int64_t blocks = dim ? gr->cb : gr->rb, size = dim ? gr->n : gr->m;
  int64_t short_first = size % gr->b != 0 ? (blocks - 1) % np : -1, sum = 0;
  if (np > blocks)
    return 0;
  edges[0] = 0;
  for (int pos = 0; pos < np; pos++) {
    /* First blocks 0, 1, ... in turn, the short last's holder skipped
     * and placed last. */
    int64_t j0 = pos;
    if (short_first >= 0)
      j0 = pos == np - 1 ? short_first : pos + (pos >= short_first);
    int s = (int)((src + j0) % np);
    at[s] = pos;
    sum += (blocks - j0 + np - 1) / np;
    int64_t e = sum * gr->b < size ? sum * gr->b : size;
    if (!mlsba__mpi_grid_cell_at(gr, dim, e, &edges[pos + 1]))
      return 0;
  }
  return 1;
}

/* The caller's own split of C as the head's cells (q x 4: m, n, row,
 * col), each rank given exactly the blocks of C it holds: where the
 * caller's C is 2-D block-cyclic with the multiplier's block both ways
 * on a grid of all the ranks, and every edge falls on a cell edge. */
static int snap_cells(const mlsba_mpi_multiplier_t *M,
                      const mlsba_mpi_matrix_t *d, int64_t *out) {
  const mlsba__mpi_grid_t *gr = &M->C.grid;
  if (M->o.gather || d->kind != MLSBA__MATRIX_SCALAPACK || d->mb != gr->b ||
      d->nb != gr->b || d->nprow * d->npcol != M->C.q)
    return 0;
  int64_t *er = malloc((size_t)(d->nprow + d->npcol + 2) * sizeof *er),
          *ec = er ? er + d->nprow + 1 : NULL;
  int *at = malloc((size_t)(d->nprow + d->npcol) * sizeof *at);
  int ok = er && at && snap_dim(gr, d, 0, er, at) &&
           snap_dim(gr, d, 1, ec, at + d->nprow);
  for (int r = 0; ok && r < M->C.q; r++) {
    int row, col;
    mlsba__mpi_matrix_grid_of(d, r, &row, &col);
    int pr = at[row], pc = at[d->nprow + col];
    int64_t *x = out + 4 * r;
    x[0] = er[pr + 1] - er[pr];
    x[1] = ec[pc + 1] - ec[pc];
    x[2] = er[pr];
    x[3] = ec[pc];
  }
  free(er);
  free(at);
  return ok;
}

/* Rank 0: whether the caller's split (cells) is as good as the balanced
 * one. Its rank times are predicted from the balancing: the times of
 * another run of the balancing that gave every rank as many blocks as
 * the caller's split gives it (measured there), else each rank's speed in the
 * distribution run (elements of C a second) over its elements in the
 * caller's split. It is taken when those times are within eps of each
 * other, or when its makespan is within eps of the balanced run's plus
 * the moves it saves a run (moves_seen): eps is as close as the
 * balancing tells times apart. *imb: its predicted imbalance. */
static int snap_pays(const mlsba_mpi_multiplier_t *M, const int64_t *cells,
                     double *imb, double *snap_s, double *bal_s) {
  const mlsba_mpi_result_t *b = &M->bal;
  size_t q = (size_t)M->C.q, chosen = b->run_iteration - 1, same = SIZE_MAX;
  if (b->history_time == NULL || b->history_w == NULL ||
      b->run_iteration == 0 || chosen >= b->history_len)
    return 0;
  /* Every rank's part in the caller's split, and its blocks. */
  mlsba__mpi_part_t *cp = malloc(q * sizeof *cp);
  int64_t *w = malloc(q * sizeof *w);
  if (cp == NULL || w == NULL) {
    free(cp);
    free(w);
    return 0;
  }
  int64_t bl = M->C.grid.b;
  for (size_t i = 0; i < q; i++) {
    mlsba__mpi_grid_part(&M->C.grid, cells[4 * i], cells[4 * i + 1],
                         cells[4 * i + 2], cells[4 * i + 3], &cp[i]);
    w[i] = (cp[i].rows + bl - 1) / bl * ((cp[i].cols + bl - 1) / bl);
  }
  for (size_t k = 0; k < b->history_len && same == SIZE_MAX; k++) {
    if (k == chosen) /* its split is not the caller's (as many blocks
                        each, a short block elsewhere) */
      continue;
    size_t i = 0;
    while (i < q && b->history_w[k * q + i] == w[i] &&
           b->history_time[k * q + i] > 0)
      i++;
    same = i == q ? k : SIZE_MAX;
  }
  const double *t = b->history_time + chosen * q;
  double lo = INFINITY, hi = 0, bal = 0;
  int ok = 1;
  for (size_t i = 0; ok && i < q; i++) {
    const mlsba__mpi_part_t *now = &M->part[i];
    double e = (double)now->rows * (double)now->cols,
           e2 = (double)cp[i].rows * (double)cp[i].cols;
    ok = t[i] > 0 && e > 0;
    double t2 =
        same != SIZE_MAX ? b->history_time[same * q + i] : t[i] * e2 / e;
    lo = t2 < lo ? t2 : lo;
    hi = t2 > hi ? t2 : hi;
    bal = t[i] > bal ? t[i] : bal;
  }
  free(cp);
  free(w);
  *imb = hi > 0 ? (hi - lo) / hi : 0;
  *snap_s = hi;
  *bal_s = bal;
  double eps = M->o.eps;
  return ok && (*imb <= eps || hi <= (1 + eps) * bal + M->moves_seen);
}

/* Collective, on a dist run not yet snapped: where the caller's own
 * split of C is as good as the balanced one (snap_pays, decided on rank
 * 0 and sent to every rank), the layout becomes it: every rank's node
 * made ready for its new rectangle (a node of one device without a run)
 * and the layout's descriptions made again. The products then judge it
 * against half again of its predicted imbalance (or eps), or drift. */
static int snap(mlsba_mpi_multiplier_t *M, const mlsba__mpi_source_t *src) {
  mlsba__mpi_mult_t *C = &M->C;
  int q = C->q, take = 0;
  int64_t *cells = malloc((size_t)q * 4 * sizeof *cells);
  double imb = 0, snap_s = 0, bal_s = 0;
  int err = cells ? 0 : mlsba__fail(MLSBA_ENOMEM, "out of memory");
  if ((err = mlsba__mpi_agree(C->comm, err)) != 0)
    goto done;
  if (C->rank == 0 && snap_cells(M, src->desc[2], cells) &&
      memcmp(cells, M->cells, (size_t)q * 4 * sizeof *cells) != 0) {
    take = snap_pays(M, cells, &imb, &snap_s, &bal_s);
    if (mlsba__verbose())
      fprintf(stderr,
              "mlsba multiplier: the caller's split predicted %.4f s "
              "(imbalance %.3f) against the balanced %.4f s and %.4f s of "
              "moves a run: %s\n",
              snap_s, imb, bal_s, M->moves_seen, take ? "snapped" : "kept");
  }
  MPI_Bcast(&take, 1, MPI_INT, 0, C->comm);
  if (!take)
    goto done;
  MPI_Bcast(cells, q * 4, MPI_INT64_T, 0, C->comm);
  MPI_Bcast(&imb, 1, MPI_DOUBLE, 0, C->comm);
  C->mine = (mlsba__mpi_rect_t){cells[4 * C->rank], cells[4 * C->rank + 1],
                                cells[4 * C->rank + 2], cells[4 * C->rank + 3]};
  mlsba__mpi_operands_forget(&M->ops);
  drop_dist_layout(M);
  mlsba__mpi_product_keep_free(M->keep);
  M->keep = NULL;
  err = mlsba__mpi_agree(C->comm, mlsba__mpi_mult_place_rect(C));
  if (!err)
    err = make_layout(M);
  if (!err) {
    double bar = 1.5 * (imb > M->o.eps ? imb : M->o.eps);
    C->check_bar = bar > M->o.drift ? bar : M->o.drift;
    C->unchecked = 1;
    M->snapped = 1;
    M->runs = 0;
    M->lost = 0;
    M->dist_runs = 0;
  }
done:
  free(cells);
  return err;
}

static int run(mlsba_mpi_multiplier_t *M, const mlsba__mpi_source_t *src,
               mlsba_mpi_result_t *r, const char *fn) {
  if (M == NULL)
    return mlsba__fail(MLSBA_EINVAL, "%s: multiplier is NULL", fn);
  mlsba__mpi_mult_t *C = &M->C;
  if (r != NULL)
    memset(r, 0, sizeof *r);
  int err = r == NULL   ? mlsba__fail(MLSBA_EINVAL, "%s: result is NULL", fn)
            : src->dist ? check_dist(M, src)
                        : 0;
  if ((err = mlsba__mpi_agree(C->comm, err)) != 0)
    return err;
  /* A snap (the node made ready again, the layout's descriptions) counts
   * as balancing, in the whole call's time. */
  double t0 = MPI_Wtime(), t;
  int was_snapped = M->snapped;
  if (src->dist && !was_snapped && (err = snap(M, src)) != 0)
    return err;
  if (M->snapped && !was_snapped)
    r->split.balance_s = MPI_Wtime() - t0;
  if (src->dist)
    err = dist_layout(M, src);
  if ((err = mlsba__mpi_agree(C->comm, err)) != 0)
    return err;
  r->snapped = src->dist && M->snapped;
  mlsba_mpi_matrix_t *const *lib = src->dist && M->dlib[0] ? M->dlib : M->lib;
  r->nodes = C->q;
  const mlsba__mpi_part_t *p = &M->part[C->rank];
  mlsba__mpi_operands_t *ops = &M->ops;
  mlsba__mpi_check_t *check = NULL;
  mlsba__mpi_product_stats_t st;
  int verify = M->o.verify_samples > 0 && !M->bal.simulated, ok = 1;
  /* The host's memory for the product, before the first run of a layout
   * allocates it: the runs after it hold what it checked (two
   * collectives fewer a run, each a few ms on ranks that share a core
   * under load). */
  if (M->runs == 0)
    err = mlsba__mpi_mult_check_memory(
        C, mlsba__mpi_mult_rect_bytes(C, p->rows, p->cols, 1), "the product");
  if (!err)
    err = mlsba__mpi_operands_make(C, &M->lay, lib, src, ops, &r->split);
  r->reused = ops->reused;
  t = MPI_Wtime();
  if (!err && verify)
    err = mlsba__mpi_check_begin(C, &M->lay, ops, &check);
  r->split.check_s += MPI_Wtime() - t;
  if (err)
    goto done;
  t = MPI_Wtime();
  mlsba__mpi_node_overwrite_next(C->node, ops->overwrite);
  err = mlsba__mpi_product_keep(C->comm, &M->lay, C->node, M->o.precision,
                                ops->a, ops->b, ops->c, &st, &M->keep);
  r->split.product_s = MPI_Wtime() - t;
  t = MPI_Wtime();
  if (!err && verify)
    err = mlsba__mpi_check_end(C, &M->lay, ops, check, &ok, &r->max_rel_error);
  r->verified = verify ? ok : -1;
  r->split.check_s += MPI_Wtime() - t;
  t = MPI_Wtime();
  int late = 0; /* rank 0's error in the report, agreed on below */
  if (!err)
    err = mlsba__mpi_mult_report(C, &M->lay, &st, r, &late);
  r->split.gather_s += MPI_Wtime() - t;
  if (!err)
    err =
        mlsba__mpi_operands_hand_back(C, &M->lay, lib, src, ops, r, &r->split);
  if (!err)
    err = mlsba__mpi_agree(C->comm, late ? late : copy_balancing(&M->bal, r));
  if (!err && src->dist && M->runs == 0 && !M->snapped) {
    /* Rank 0's, on every rank: maybe_rebalance decides alike on all. */
    M->moves_in = r->split.move_s - r->split.move_back_s;
    MPI_Bcast(&M->moves_in, 1, MPI_DOUBLE, 0, C->comm);
  }
  if (!err)
    err = maybe_rebalance(M, r);
done:
  mlsba__mpi_check_free(check);
  r->wall_s = MPI_Wtime() - t0;
  share_times(C->comm, r);
  if (!err && mlsba__verbose() && C->rank == 0) {
    const mlsba_mpi_split_t *x = &r->split;
    fprintf(stderr,
            "mlsba multiplier: the call took %.4f s: balancing %.4f, moves "
            "%.4f (C back %.4f), fill %.4f, product %.4f, check, report and "
            "gather %.4f, the rest (agreements, layouts) %.4f\n",
            r->wall_s, x->balance_s, x->move_s, x->move_back_s, x->fill_s,
            x->product_s, x->check_s + x->gather_s,
            r->wall_s - x->balance_s - x->move_s - x->fill_s - x->product_s -
                x->check_s - x->gather_s);
  }
  if (!err && src->dist && !r->rebalanced) {
    /* What the next decision to snap weighs (rank 0's clock, on every
     * rank): C back, and A and B in after the layout's first run (that
     * one's are paid once). */
    M->moves_seen =
        r->split.move_back_s + (M->dist_runs > 0 ? r->split.move_s : 0);
    M->dist_runs++;
  }
  if (err)
    mlsba_mpi_result_free(r);
  return err;
}

int mlsba_mpi_multiplier_run(mlsba_mpi_multiplier_t *M,
                             mlsba_mpi_result_t *result) {
  mlsba__mpi_source_t src = {{NULL, NULL, NULL}, NULL, NULL, NULL, 0, 0};
  return run(M, &src, result, "mlsba_mpi_multiplier_run");
}

int mlsba_mpi_multiplier_run_dist(
    mlsba_mpi_multiplier_t *M, const mlsba_mpi_matrix_t *a_desc, const void *a,
    const mlsba_mpi_matrix_t *b_desc, const void *b,
    const mlsba_mpi_matrix_t *c_desc, void *c, mlsba_mpi_result_t *result) {
  mlsba__mpi_source_t src = {{a_desc, b_desc, c_desc}, a, b, c, 1, 0};
  return run(M, &src, result, "mlsba_mpi_multiplier_run_dist");
}

int mlsba_mpi_multiplier_run_dist_flags(
    mlsba_mpi_multiplier_t *M, unsigned flags, const mlsba_mpi_matrix_t *a_desc,
    const void *a, const mlsba_mpi_matrix_t *b_desc, const void *b,
    const mlsba_mpi_matrix_t *c_desc, void *c, mlsba_mpi_result_t *result) {
  mlsba__mpi_source_t src = {{a_desc, b_desc, c_desc}, a, b, c, 1, 0};
  src.same = flags & (MLSBA_MPI_SAME_A | MLSBA_MPI_SAME_B);
  return run(M, &src, result, "mlsba_mpi_multiplier_run_dist_flags");
}
