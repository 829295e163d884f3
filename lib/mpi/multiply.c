/* mlsba_mpi_multiply: INPA across the ranks of a communicator, then the
 * two-dimensional blocked product with the arrangement it found.
 *
 * Rank 0 is INPA's head (lib/partition/inpa.h, a pure state machine): it
 * asks for runs, every rank balances its devices on the rectangle it is
 * given (its IDPA, libmlsba's routine) and reports the time the product
 * would take at that step time; the head builds node models from those
 * times and draws the next distribution, until the nodes finish together.
 * Every exchange is preceded by a collective status check, so an error on
 * any rank stops all of them with one message. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/error.h"
#include "../partition/inpa.h"
#include "internal.h"

/* The public algorithms are the head's, in the same order. */
_Static_assert((int)MLSBA_MPI_INPA == (int)MLSBA__INPA_FPM &&
                   (int)MLSBA_MPI_MULTIPLE_CPM ==
                       (int)MLSBA__INPA_MULTIPLE_CPM &&
                   (int)MLSBA_MPI_SINGLE_CPM == (int)MLSBA__INPA_SINGLE_CPM &&
                   (int)MLSBA_MPI_HOMOGENEOUS == (int)MLSBA__INPA_HOMOGENEOUS,
               "mlsba_mpi_algo_t follows mlsba__inpa_algo_t");

const char *mlsba_mpi_algo_name(mlsba_mpi_algo_t algo) {
  return mlsba__inpa_algo_name((mlsba__inpa_algo_t)algo);
}

int mlsba_mpi_algo_from_name(const char *name, mlsba_mpi_algo_t *algo) {
  if (algo == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_mpi_algo_from_name: algo is NULL");
  mlsba__inpa_algo_t a;
  int err = mlsba__inpa_algo_from_name(name, &a);
  if (!err)
    *algo = (mlsba_mpi_algo_t)a;
  return err;
}

static const char *const comm_model_names[] = {"none", "links"};

const char *mlsba_mpi_comm_model_name(mlsba_mpi_comm_model_t model) {
  return (unsigned)model <= MLSBA_MPI_COMM_LINKS ? comm_model_names[model]
                                                 : NULL;
}

int mlsba_mpi_comm_model_from_name(const char *name,
                                   mlsba_mpi_comm_model_t *model) {
  if (name == NULL || model == NULL)
    return mlsba__fail(MLSBA_EINVAL,
                       "mlsba_mpi_comm_model_from_name: %s is "
                       "NULL",
                       name == NULL ? "name" : "model");
  for (int m = MLSBA_MPI_COMM_NONE; m <= MLSBA_MPI_COMM_LINKS; m++)
    if (!strcmp(name, comm_model_names[m])) {
      *model = (mlsba_mpi_comm_model_t)m;
      return 0;
    }
  return mlsba__fail(MLSBA_EINVAL,
                     "unknown communication model '%s' (none, links)", name);
}

const char *mlsba_mpi_last_error(void) { return mlsba_last_error(); }

const char *mlsba_mpi_stop_name(mlsba_stop_reason_t stop) {
  return mlsba_stop_reason_name(stop);
}

void mlsba_mpi_opts_init(mlsba_mpi_opts_t *o) {
  memset(o, 0, sizeof *o);
  o->algorithm = MLSBA_MPI_INPA;
  o->node_algorithm = MLSBA_MPI_NODE_MLSBA;
  o->eps = 0.05;
  o->max_iter = 20;
  o->precision = MLSBA_PRECISION_DOUBLE;
  o->seed = 1;
  o->verify_samples = 64;
  o->platform = "auto";
}

void mlsba_mpi_result_free(mlsba_mpi_result_t *r) {
  if (r == NULL)
    return;
  for (int i = 0; r->ranks && i < r->nodes; i++) {
    for (size_t d = 0; r->ranks[i].devices && d < r->ranks[i].ndevices; d++)
      free(r->ranks[i].devices[d].full_name);
    free(r->ranks[i].devices);
  }
  free(r->ranks);
  free(r->history_w);
  free(r->history_time);
  free(r->history_imbalance);
  free(r->c);
  free(r->c_all);
  memset(r, 0, sizeof *r);
}

static int check_opts(const mlsba_mpi_opts_t *o, int q) {
  if (o->platform == NULL || o->platform[0] == '\0')
    return mlsba__fail(MLSBA_EINVAL, "no platform file given");
  if (o->block < 1)
    return mlsba__fail(MLSBA_EINVAL, "block must be >= 1, got %lld",
                       (long long)o->block);
  if (o->n < 1 || o->n % o->block != 0)
    return mlsba__fail(MLSBA_EINVAL,
                       "size %lld is not a positive multiple of the block %lld",
                       (long long)o->n, (long long)o->block);
  /* N bounds every count the layer hands MPI (a panel's rows, its
   * leading dimension) and keeps N^2 and N b within int64. */
  if (o->n > INT32_MAX)
    return mlsba__fail(MLSBA_EINVAL,
                       "size %lld is above %d, the largest this layer can "
                       "index",
                       (long long)o->n, INT32_MAX);
  int64_t nb = o->n / o->block;
  if (nb > INT32_MAX / nb || nb * nb < q)
    return mlsba__fail(MLSBA_EINVAL, "%lld x %lld blocks for %d ranks: %s",
                       (long long)nb, (long long)nb, q,
                       nb * nb < q ? "fewer blocks than nodes"
                                   : "too many blocks");
  if (!(o->eps >= 0) || o->max_iter < 1)
    return mlsba__fail(MLSBA_EINVAL, "eps must be >= 0 and max_iter >= 1");
  if ((unsigned)o->comm_model > MLSBA_MPI_COMM_LINKS)
    return mlsba__fail(MLSBA_EINVAL, "unknown communication model %d",
                       (int)o->comm_model);
  if ((unsigned)o->algorithm > MLSBA_MPI_HOMOGENEOUS ||
      (unsigned)o->node_algorithm > MLSBA_MPI_NODE_IDPA ||
      (o->precision != MLSBA_PRECISION_DOUBLE &&
       o->precision != MLSBA_PRECISION_SINGLE))
    return mlsba__fail(MLSBA_EINVAL, "unknown algorithm or precision");
  return 0;
}

/* The options every rank must share, as rank 0 has them: a rank with
 * another size or block sizes its messages differently (a buffer
 * overflow, a truncated message), another precision sends other types,
 * another algorithm runs another loop. The platform path is each rank's
 * own (an MPMD launch may name a file per rank). */
enum { SHARED_OPTS = 10 };

static void shared_opts(const mlsba_mpi_opts_t *o, int64_t v[SHARED_OPTS]) {
  int64_t eps_bits;
  memcpy(&eps_bits, &o->eps, sizeof eps_bits);
  int64_t all[SHARED_OPTS] = {o->n,
                              o->block,
                              (int64_t)o->algorithm,
                              (int64_t)o->node_algorithm,
                              eps_bits,
                              (int64_t)o->max_iter,
                              (int64_t)o->precision,
                              (int64_t)o->seed,
                              (int64_t)o->verify_samples,
                              (int64_t)o->comm_model};
  memcpy(v, all, sizeof all);
}

static const char *const shared_opt_names[SHARED_OPTS] = {
    "n (the size)", "block",     "algorithm", "node_algorithm", "eps",
    "max_iter",     "precision", "seed",      "verify_samples", "comm_model"};

static void shared_opt_text(const int64_t v[SHARED_OPTS], int i, char *out,
                            size_t cap) {
  double eps;
  memcpy(&eps, &v[4], sizeof eps);
  const char *name =
      i == 2   ? mlsba_mpi_algo_name((mlsba_mpi_algo_t)v[2])
      : i == 3 ? (v[3] == MLSBA_MPI_NODE_IDPA ? "idpa" : "mlsba")
      : i == 6 ? (v[6] == MLSBA_PRECISION_SINGLE ? "single" : "double")
      : i == 9 ? mlsba_mpi_comm_model_name((mlsba_mpi_comm_model_t)v[9])
               : NULL;
  if (i == 4)
    snprintf(out, cap, "%g", eps);
  else if (name != NULL)
    snprintf(out, cap, "%s", name);
  else
    snprintf(out, cap, "%lld", (long long)v[i]);
}

/* Collective: fails on every rank, naming the first rank whose options
 * differ from rank 0's and the option, before any of them is used. */
static int agree_on_opts(MPI_Comm comm, const mlsba_mpi_opts_t *o) {
  int64_t mine[SHARED_OPTS], head[SHARED_OPTS];
  shared_opts(o, mine);
  memcpy(head, mine, sizeof head);
  MPI_Bcast(head, SHARED_OPTS, MPI_INT64_T, 0, comm);
  int err = 0;
  for (int i = 0; i < SHARED_OPTS && !err; i++) {
    if (mine[i] == head[i])
      continue;
    char a[32], b[32];
    shared_opt_text(mine, i, a, sizeof a);
    shared_opt_text(head, i, b, sizeof b);
    err = mlsba__fail(MLSBA_EINVAL,
                      "option %s is %s here, %s on rank 0: every rank must "
                      "pass the same options",
                      shared_opt_names[i], a, b);
  }
  return mlsba__mpi_agree(comm, err);
}

/* The run the head asks for, as every rank sees it. */
typedef struct {
  int64_t m, n, row, col;
} rect_t;

typedef struct {
  MPI_Comm comm;
  MPI_Comm host; /* the ranks of this rank's host (shared memory) */
  int rank, q;
  const mlsba_mpi_opts_t *o;
  int64_t nb;
  mlsba__mpi_node_t *node;
  mlsba__inpa_t *head; /* rank 0 */
  rect_t mine;
  /* With MLSBA_MPI_COMM_LINKS, on every rank: each rank's link and where
   * it came from (1 platform file, 2 measured); NULL otherwise. */
  mlsba_link_t *links;
  int *link_source;
} ctx_t;

static double imbalance_of(const double *t, int q) {
  double lo = INFINITY, hi = 0;
  for (int i = 0; i < q; i++) {
    lo = t[i] < lo ? t[i] : lo;
    hi = t[i] > hi ? t[i] : hi;
  }
  return hi > 0 ? (hi - lo) / hi : 0;
}

/* Physical memory of this host in bytes; 0 when unknown. */
static double host_memory(void) {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? (double)pages * (double)size : 0;
}

/* Bytes a rank holds at once for an m x n rectangle of blocks: the step's
 * panels A_(b), B_(b) (real bytes outside SMPI, whose shared allocations
 * hold none), and on a real node its A', B', C' in the product or the
 * scratch C' of a balancing. */
static double rect_bytes(const ctx_t *C, int64_t m, int64_t n, int product) {
  double b = (double)C->o->block, bm = (double)m * b, bn = (double)n * b;
  double es = (double)mlsba__mpi_elem(C->o->precision);
  int sim = mlsba__mpi_node_simulated(C->node);
  double panels = sim && mlsba__mpi_is_smpi() ? 0 : (bm * b + b * bn) * es;
  double own = sim ? 0 : (product ? 3 : 1) * bm * bn * es;
  return panels + own;
}

/* Collective: what the ranks of a host are about to hold at once must fit
 * the host's memory; past it the kernel kills a rank (or the host swaps)
 * partway through a job that could have been refused with a reason.
 * Under SMPI every simulated rank shares one process and its panels. */
static int check_memory(ctx_t *C, double bytes, const char *what) {
  if (mlsba__mpi_is_smpi())
    return 0;
  double on_host = 0, have = host_memory(), gib = 1024.0 * 1024 * 1024;
  int local;
  MPI_Allreduce(&bytes, &on_host, 1, MPI_DOUBLE, MPI_SUM, C->host);
  MPI_Comm_size(C->host, &local);
  char others[96] = "";
  if (local > 1)
    snprintf(others, sizeof others,
             " (%.1f GiB with the other %d ranks of "
             "this host)",
             on_host / gib, local - 1);
  int err = 0;
  if (have > 0 && on_host > have)
    err = mlsba__fail(MLSBA_ENOMEM,
                      "%s needs %.1f GiB of memory%s, the host has %.1f GiB: "
                      "use a smaller size or more hosts",
                      what, bytes / gib, others, have / gib);
  return mlsba__mpi_agree(C->comm, err);
}

/* Before the first run: the product's memory at the even distribution
 * (a square of W / q blocks), which no distribution INPA finds can lower
 * on every rank at once. */
static int check_memory_up_front(ctx_t *C) {
  double side = ceil(sqrt((double)C->nb * (double)C->nb / C->q));
  int64_t s = side < (double)C->nb ? (int64_t)side : C->nb;
  return check_memory(C, rect_bytes(C, s, s, 1),
                      "the product at the even distribution");
}

/* This rank's IDPA on its rectangle: the node balanced, its time for the
 * whole product (N/b steps). Real devices run on scratch operands. */
static int run_rect(ctx_t *C, double *t) {
  int err = check_memory(C, rect_bytes(C, C->mine.m, C->mine.n, 0),
                         "balancing its rectangle");
  if (err)
    return err;
  int64_t b = C->o->block, bm = C->mine.m * b, bn = C->mine.n * b;
  size_t es = mlsba__mpi_elem(C->o->precision);
  int sim = mlsba__mpi_node_simulated(C->node);
  void *a = sim ? NULL : calloc((size_t)(bm * b), es);
  void *bb = sim ? NULL : calloc((size_t)(b * bn), es);
  void *c = sim ? NULL : calloc((size_t)(bm * bn), es);
  double step = 0;
  if (!sim && (!a || !bb || !c))
    err = mlsba__fail(MLSBA_ENOMEM, "out of memory for a %lld x %lld block",
                      (long long)bm, (long long)bn);
  if (!err)
    err = mlsba__mpi_node_shape(C->node, bm, bn, a, bb, c);
  if (!err)
    err = mlsba__mpi_node_balance(C->node, C->o->algorithm, &step);
  /* Ranks that share cores (oversubscribed, or other jobs on the node)
   * slow each other only while they compute at once, as every rank does
   * in the product; each rank's balancing runs when it happens to. So a
   * real node's time is measured again with every rank starting
   * together: the mean of a few steps with the distribution it found.
   * Every rank takes part, also one that failed (its steps are skipped),
   * so that the barrier cannot hang. */
  if (!sim) {
    enum { TIMED_STEPS = 3 };
    MPI_Barrier(C->comm);
    double sum = 0, t1;
    for (int k = 0; k < TIMED_STEPS && !err; k++) {
      err = mlsba__mpi_node_step(C->node, &t1);
      sum += t1;
    }
    if (!err)
      step = sum / TIMED_STEPS;
  }
  if (!err && !(step > 0))
    err = mlsba__fail(MLSBA_EDEVICE, "the node measured no time (%g s)", step);
  *t = step * (double)C->nb;
  /* Accelerators give back the scratch C' before it is freed. */
  int flushed = mlsba__mpi_node_flush(C->node);
  err = err ? err : flushed;
  free(a);
  free(bb);
  free(c);
  return err;
}

/* Rank i's communication over the product as the head models it
 * (MLSBA_MPI_COMM_LINKS): per step one message of its rows of A's block
 * column and one of its columns of B's block row, fixed + per (m + n)
 * seconds for an m x n rectangle of blocks. A link of unknown bandwidth
 * costs nothing. */
static void comm_cost(const ctx_t *C, int i, double *fixed, double *per) {
  mlsba_link_t l = C->links[i];
  double nb = (double)C->nb, b = (double)C->o->block;
  double es = (double)mlsba__mpi_elem(C->o->precision);
  *fixed = l.bandwidth > 0 ? nb * 2 * l.latency : 0;
  *per = l.bandwidth > 0 ? nb * b * b * es / l.bandwidth : 0;
}

/* Rank 0's own link when the links were measured from it: the fastest
 * path it measured, which its own link bounds (none with one rank). */
static mlsba_link_t root_link(const mlsba_link_t *measured, int q) {
  mlsba_link_t best = {0, 0};
  for (int i = 1; i < q; i++)
    if (measured[i].bandwidth > best.bandwidth)
      best = measured[i];
  return best;
}

/* Collective: every rank's network link into C->links, from its platform
 * file's "network", measured by a ping-pong from rank 0 where a file
 * gives none (mlsba_mpi_measure_links). */
static int gather_links(ctx_t *C) {
  mlsba_link_t mine = {0, 0};
  int err = mlsba__mpi_node_network(C->node, &mine);
  int have = mine.bandwidth > 0, all_have = 0;
  C->links = malloc((size_t)C->q * sizeof *C->links);
  C->link_source = malloc((size_t)C->q * sizeof *C->link_source);
  mlsba_link_t *measured = malloc((size_t)C->q * sizeof *measured);
  if (!err && (!C->links || !C->link_source || !measured))
    err = mlsba__fail(MLSBA_ENOMEM, "out of memory");
  if ((err = mlsba__mpi_agree(C->comm, err)) != 0)
    goto done;
  MPI_Allreduce(&have, &all_have, 1, MPI_INT, MPI_MIN, C->comm);
  if (!all_have) {
    err = mlsba_mpi_measure_links(C->comm, 0, measured);
    if ((err = mlsba__mpi_agree(C->comm, err)) != 0)
      goto done;
    measured[0] = root_link(measured, C->q);
  }
  double me[3] = {have ? mine.latency : measured[C->rank].latency,
                  have ? mine.bandwidth : measured[C->rank].bandwidth,
                  have ? 1 : 2};
  double *all = malloc((size_t)C->q * 3 * sizeof *all);
  err = all ? 0 : mlsba__fail(MLSBA_ENOMEM, "out of memory");
  if ((err = mlsba__mpi_agree(C->comm, err)) == 0) {
    MPI_Allgather(me, 3, MPI_DOUBLE, all, 3, MPI_DOUBLE, C->comm);
    for (int i = 0; i < C->q; i++) {
      C->links[i] = (mlsba_link_t){all[3 * i], all[3 * i + 1]};
      C->link_source[i] = (int)all[3 * i + 2];
    }
  }
  free(all);
done:
  free(measured);
  return err;
}

/* Rank 0: the head for the ranks, with their capacities and, under
 * MLSBA_MPI_COMM_LINKS, their communication. */
static int create_head(ctx_t *C, const int64_t *caps) {
  mlsba__inpa_opts_t io;
  mlsba__inpa_opts_init(&io);
  io.algo = (mlsba__inpa_algo_t)C->o->algorithm;
  io.eps = C->o->eps;
  io.max_iter = C->o->max_iter;
  io.caps = caps;
  double *fixed = NULL, *per = NULL;
  if (C->links) {
    fixed = malloc((size_t)C->q * sizeof *fixed);
    per = malloc((size_t)C->q * sizeof *per);
    if (!fixed || !per) {
      free(fixed);
      free(per);
      return mlsba__fail(MLSBA_ENOMEM, "out of memory");
    }
    for (int i = 0; i < C->q; i++)
      comm_cost(C, i, &fixed[i], &per[i]);
    io.comm_fixed = fixed;
    io.comm_per_block = per;
  }
  int err = mlsba__inpa_create((size_t)C->q, C->nb, &io, &C->head);
  free(fixed);
  free(per);
  return err;
}

/* Rank 0 scatters the rectangles rc (q of them) to every rank's
 * C->mine. */
static void scatter_rects(ctx_t *C, const mlsba__cma_rect_t *rc,
                          int64_t *sendbuf) {
  for (int i = 0; C->rank == 0 && i < C->q; i++) {
    sendbuf[4 * i] = rc[i].m;
    sendbuf[4 * i + 1] = rc[i].n;
    sendbuf[4 * i + 2] = rc[i].row;
    sendbuf[4 * i + 3] = rc[i].col;
  }
  MPI_Scatter(sendbuf, 4, MPI_INT64_T, &C->mine, 4, MPI_INT64_T, 0, C->comm);
}

/* The head's runs, for the result (rank 0); the scalars describe run
 * `chosen`, the one the product runs. */
static int keep_history(ctx_t *C, size_t chosen, mlsba_mpi_result_t *r) {
  size_t it = mlsba__inpa_iterations(C->head), q = (size_t)C->q;
  r->history_len = it;
  r->history_w = malloc((it ? it : 1) * q * sizeof *r->history_w);
  r->history_time = malloc((it ? it : 1) * q * sizeof *r->history_time);
  r->history_imbalance = malloc((it ? it : 1) * sizeof *r->history_imbalance);
  if (!r->history_w || !r->history_time || !r->history_imbalance)
    return mlsba__fail(MLSBA_ENOMEM, "out of memory");
  for (size_t k = 0; k < it; k++) {
    const mlsba__inpa_record_t *h = mlsba__inpa_history(C->head, k);
    for (size_t i = 0; i < q; i++) {
      r->history_w[k * q + i] = h->rect[i].m * h->rect[i].n;
      r->history_time[k * q + i] = h->t[i];
    }
    r->history_imbalance[k] = imbalance_of(h->t, C->q);
  }
  r->stop = mlsba__inpa_stop(C->head);
  r->iterations = (unsigned)it;
  r->run_iteration = (unsigned)chosen + 1;
  r->converged =
      r->stop == MLSBA_STOP_BALANCED || r->stop == MLSBA_STOP_FIXED_POINT;
  r->imbalance = it ? r->history_imbalance[chosen] : 0;
  const mlsba__inpa_record_t *h = mlsba__inpa_history(C->head, chosen);
  r->half_perimeter_sum = h->half_perimeter;
  r->half_perimeter_lower_bound = 0;
  for (size_t i = 0; i < q; i++)
    r->half_perimeter_lower_bound +=
        2 * sqrt((double)(h->rect[i].m * h->rect[i].n));
  return 0;
}

/* The INPA loop, then the distribution the product will run: the fastest
 * one measured (the smallest slowest-node time, first of equals), which
 * after a cycle, max_iter or a fixed point reached from the far side may
 * be an earlier run than the last. The nodes were last balanced for the
 * last run, so an earlier one is run again (and its time measured again)
 * before the product. On return (0) every rank's C->mine is the
 * rectangle of that distribution and its node is balanced for it. */
static int inpa(ctx_t *C, mlsba_mpi_result_t *r) {
  int err = 0;
  double *times = C->rank == 0 ? malloc((size_t)C->q * sizeof *times) : NULL;
  int64_t *sendbuf =
      C->rank == 0 ? malloc((size_t)C->q * 4 * sizeof *sendbuf) : NULL;
  if (C->rank == 0 && (!times || !sendbuf))
    err = mlsba__fail(MLSBA_ENOMEM, "out of memory");
  if ((err = mlsba__mpi_agree(C->comm, err)) != 0)
    goto done;
  for (;;) {
    int done = 0;
    if (C->rank == 0)
      done = mlsba__inpa_phase(C->head) == MLSBA__INPA_DONE;
    MPI_Bcast(&done, 1, MPI_INT, 0, C->comm);
    if (done)
      break;
    scatter_rects(C, C->rank == 0 ? mlsba__inpa_rects(C->head) : NULL, sendbuf);
    double t = 0;
    err = run_rect(C, &t);
    if ((err = mlsba__mpi_agree(C->comm, err)) != 0)
      goto done;
    MPI_Gather(&t, 1, MPI_DOUBLE, times, 1, MPI_DOUBLE, 0, C->comm);
    if (C->rank == 0)
      err = mlsba__inpa_feed(C->head, times);
    if ((err = mlsba__mpi_agree(C->comm, err)) != 0)
      goto done;
  }
  /* The head's DONE rectangles are its last run; the fastest may be
   * another. */
  long best = 0, last = 0;
  if (C->rank == 0) {
    last = (long)mlsba__inpa_iterations(C->head) - 1;
    best = (long)mlsba__inpa_best_run(C->head);
    err = keep_history(C, (size_t)best, r);
  }
  if ((err = mlsba__mpi_agree(C->comm, err)) != 0)
    goto done;
  long pick[2] = {best, last};
  MPI_Bcast(pick, 2, MPI_LONG, 0, C->comm);
  scatter_rects(
      C,
      C->rank == 0 ? mlsba__inpa_history(C->head, (size_t)pick[0])->rect : NULL,
      sendbuf);
  if (pick[0] != pick[1]) {
    double t = 0;
    err = run_rect(C, &t);
  }
  err = mlsba__mpi_agree(C->comm, err);
done:
  free(times);
  free(sendbuf);
  return err;
}

/* What every rank reports about itself after the product. */
typedef struct {
  double w, m, n, row, col, time, comm, total, ndev;
  double latency, bandwidth, link_source, modelled;
} rank_report_t;

typedef struct {
  int64_t load;
  double time;
} dev_report_t;

/* src cut to at most cap - 1 bytes, never inside a UTF-8 character (a
 * cut one would make the name invalid UTF-8, which JSON cannot carry). */
static void copy_cut_utf8(char *dst, size_t cap, const char *src) {
  size_t n = strlen(src);
  if (n >= cap) {
    n = cap - 1; /* src[n] is the first byte left out: a continuation
                    byte there means its character straddles the cut */
    while (n > 0 && ((unsigned char)src[n] & 0xC0) == 0x80)
      n--;
  }
  memcpy(dst, src, n);
  dst[n] = '\0';
}

/* This rank's device names one after another, each with its NUL. */
static char *names_of(const mlsba__mpi_node_t *node, int *len) {
  size_t p = mlsba__mpi_node_num_devices(node), total = 0;
  for (size_t i = 0; i < p; i++)
    total += strlen(mlsba__mpi_node_device_name(node, i)) + 1;
  char *all = total < INT_MAX ? malloc(total ? total : 1) : NULL;
  for (size_t i = 0, at = 0; all && i < p; i++) {
    const char *name = mlsba__mpi_node_device_name(node, i);
    memcpy(all + at, name, strlen(name) + 1);
    at += strlen(name) + 1;
  }
  *len = (int)total;
  return all;
}

/* Rank 0's devices of every rank get their whole names. */
static int fill_names(ctx_t *C, const char *all, const int *displs,
                      mlsba_mpi_result_t *r) {
  for (int i = 0; i < C->q; i++) {
    const char *name = all + displs[i];
    for (size_t k = 0; k < r->ranks[i].ndevices; k++) {
      mlsba_mpi_device_t *d = &r->ranks[i].devices[k];
      if ((d->full_name = strdup(name)) == NULL)
        return mlsba__fail(MLSBA_ENOMEM, "out of memory");
      copy_cut_utf8(d->name, sizeof d->name, name);
      name += strlen(name) + 1;
    }
  }
  return 0;
}

/* Every device's whole name, to the head only (after gather_reports). */
static int gather_names(ctx_t *C, mlsba_mpi_result_t *r) {
  int len = 0, err = 0;
  char *mine = names_of(C->node, &len), *all = NULL;
  int *counts = C->rank == 0 ? malloc((size_t)C->q * sizeof *counts) : NULL;
  int *displs = C->rank == 0 ? malloc((size_t)C->q * sizeof *displs) : NULL;
  if (mine == NULL || (C->rank == 0 && (!counts || !displs)))
    err = mlsba__fail(MLSBA_ENOMEM, "out of memory for the device names");
  if ((err = mlsba__mpi_agree(C->comm, err)) != 0)
    goto done;
  MPI_Gather(&len, 1, MPI_INT, counts, 1, MPI_INT, 0, C->comm);
  int64_t total = 0;
  for (int i = 0; C->rank == 0 && i < C->q; i++) {
    displs[i] = (int)total;
    total += counts[i];
  }
  if (C->rank == 0 && (total >= INT_MAX || !(all = malloc((size_t)total + 1))))
    err = mlsba__fail(MLSBA_ENOMEM,
                      "out of memory for %lld bytes of device "
                      "names",
                      (long long)total);
  if ((err = mlsba__mpi_agree(C->comm, err)) != 0)
    goto done;
  MPI_Gatherv(mine, len, MPI_CHAR, all, counts, displs, MPI_CHAR, 0, C->comm);
  if (C->rank == 0)
    err = fill_names(C, all, displs, r);
  err = mlsba__mpi_agree(C->comm, err);
done:
  free(mine);
  free(all);
  free(counts);
  free(displs);
  return err;
}

static int gather_reports(ctx_t *C, const mlsba__mpi_product_stats_t *st,
                          mlsba_mpi_result_t *r) {
  size_t p = mlsba__mpi_node_num_devices(C->node);
  rank_report_t me = {(double)(C->mine.m * C->mine.n),
                      (double)C->mine.m,
                      (double)C->mine.n,
                      (double)C->mine.row,
                      (double)C->mine.col,
                      st->compute,
                      st->comm,
                      st->total,
                      (double)p,
                      0,
                      0,
                      0,
                      0};
  if (C->links) {
    mlsba_link_t l = C->links[C->rank];
    double fixed, per;
    comm_cost(C, C->rank, &fixed, &per);
    me.latency = l.latency;
    me.bandwidth = l.bandwidth;
    me.link_source = C->link_source[C->rank];
    me.modelled = fixed + per * (double)(C->mine.m + C->mine.n);
  }
  rank_report_t *all = malloc((size_t)C->q * sizeof *all);
  dev_report_t *mine = calloc(p ? p : 1, sizeof *mine);
  int *counts = malloc((size_t)C->q * sizeof *counts);
  int *displs = malloc((size_t)C->q * sizeof *displs);
  r->ranks = calloc((size_t)C->q, sizeof *r->ranks);
  int err = 0;
  if (!all || !mine || !counts || !displs || !r->ranks)
    err = mlsba__fail(MLSBA_ENOMEM, "out of memory");
  if ((err = mlsba__mpi_agree(C->comm, err)) != 0)
    goto done;
  MPI_Allgather(&me, (int)(sizeof me / sizeof(double)), MPI_DOUBLE, all,
                (int)(sizeof me / sizeof(double)), MPI_DOUBLE, C->comm);
  for (size_t i = 0; i < p; i++)
    mlsba__mpi_node_device(C->node, i, &mine[i].load, &mine[i].time);
  double max_total = 0, sum_total = 0, sum_comm = 0;
  int bytes_total = 0;
  for (int i = 0; i < C->q; i++) {
    mlsba_mpi_rank_t *rk = &r->ranks[i];
    rk->w = (int64_t)all[i].w;
    rk->m = (int64_t)all[i].m;
    rk->n = (int64_t)all[i].n;
    rk->row = (int64_t)all[i].row;
    rk->col = (int64_t)all[i].col;
    rk->time = all[i].time;
    rk->comm = all[i].comm;
    rk->ndevices = (size_t)all[i].ndev;
    rk->link = (mlsba_link_t){all[i].latency, all[i].bandwidth};
    rk->link_source = (int)all[i].link_source;
    rk->comm_modelled = all[i].modelled;
    max_total = all[i].total > max_total ? all[i].total : max_total;
    sum_total += all[i].total;
    sum_comm += all[i].comm;
    counts[i] = (int)(rk->ndevices * sizeof(dev_report_t));
    displs[i] = bytes_total;
    bytes_total += counts[i];
  }
  r->makespan_s = max_total;
  r->comm_share = sum_total > 0 ? sum_comm / sum_total : 0;
  double nn = (double)C->o->n;
  r->gflops = max_total > 0 ? 2 * nn * nn * nn / max_total * 1e-9 : 0;
  /* The devices of every rank, to the head only: with a thousand ranks
   * nobody else needs them. */
  dev_report_t *devs = NULL;
  if (C->rank == 0 && (devs = malloc((size_t)bytes_total + 1)) == NULL)
    err = mlsba__fail(MLSBA_ENOMEM, "out of memory");
  if ((err = mlsba__mpi_agree(C->comm, err)) != 0)
    goto done;
  MPI_Gatherv(mine, (int)(p * sizeof *mine), MPI_BYTE, devs, counts, displs,
              MPI_BYTE, 0, C->comm);
  for (int i = 0; C->rank == 0 && i < C->q && !err; i++) {
    mlsba_mpi_rank_t *rk = &r->ranks[i];
    rk->devices = calloc(rk->ndevices ? rk->ndevices : 1, sizeof *rk->devices);
    if (rk->devices == NULL) {
      err = mlsba__fail(MLSBA_ENOMEM, "out of memory");
      break;
    }
    const dev_report_t *d =
        (const dev_report_t *)((const char *)devs + displs[i]);
    for (size_t k = 0; k < rk->ndevices; k++) {
      rk->devices[k].load = d[k].load;
      rk->devices[k].time = d[k].time;
    }
  }
  free(devs);
  err = mlsba__mpi_agree(C->comm, err);
done:
  free(all);
  free(mine);
  free(counts);
  free(displs);
  return err;
}

/* The product on this rank's own A', B', C' (made from global indices),
 * then the check of sampled elements of C'. */
static int product(ctx_t *C, mlsba_mpi_result_t *r) {
  int err =
      check_memory(C, rect_bytes(C, C->mine.m, C->mine.n, 1), "the product");
  if (err)
    return err;
  const mlsba_mpi_opts_t *o = C->o;
  int64_t b = o->block;
  int64_t *lay4 = malloc((size_t)C->q * 4 * sizeof *lay4);
  int64_t *m = malloc((size_t)C->q * 4 * sizeof *m);
  err = (!lay4 || !m) ? mlsba__fail(MLSBA_ENOMEM, "out of memory") : 0;
  int sim = mlsba__mpi_node_simulated(C->node);
  int64_t bm = C->mine.m * b, bn = C->mine.n * b;
  size_t es = mlsba__mpi_elem(o->precision);
  void *a = NULL, *bb = NULL, *c = NULL;
  if (!err && !sim) {
    a = malloc((size_t)(bm * bn) * es);
    bb = malloc((size_t)(bm * bn) * es);
    c = calloc((size_t)(bm * bn), es);
    if (!a || !bb || !c)
      err = mlsba__fail(MLSBA_ENOMEM,
                        "out of memory for A', B' and C' (%lld x %lld each)",
                        (long long)bm, (long long)bn);
  }
  if ((err = mlsba__mpi_agree(C->comm, err)) != 0)
    goto done;
  if (!sim)
    err = mlsba__mpi_fill_operands(o, C->mine.row * b, C->mine.col * b, bm, bn,
                                   a, bb);
  if ((err = mlsba__mpi_agree(C->comm, err)) != 0)
    goto done;
  int64_t me4[4] = {C->mine.m, C->mine.n, C->mine.row, C->mine.col};
  MPI_Allgather(me4, 4, MPI_INT64_T, lay4, 4, MPI_INT64_T, C->comm);
  int q = C->q;
  for (int i = 0; i < q; i++)
    for (int f = 0; f < 4; f++)
      m[f * q + i] = lay4[4 * i + f];
  mlsba__mpi_layout_t lay = {q, C->nb, b, m, m + q, m + 2 * q, m + 3 * q};
  mlsba__mpi_product_stats_t st;
  if ((err = mlsba__mpi_product(C->comm, &lay, C->node, o->precision, a, bb, c,
                                &st)) != 0)
    goto done;
  int ok = 1, all_ok = 1;
  double rel = 0;
  if (!sim && o->verify_samples > 0)
    err = mlsba__mpi_check_c(o, c, C->mine.row * b, C->mine.col * b, bm, bn,
                             o->seed * 7919u + (uint64_t)C->rank, &rel, &ok);
  if ((err = mlsba__mpi_agree(C->comm, err)) != 0)
    goto done;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, C->comm);
  MPI_Allreduce(&rel, &r->max_rel_error, 1, MPI_DOUBLE, MPI_MAX, C->comm);
  r->verified = sim || o->verify_samples == 0 ? -1 : all_ok;
  if ((err = gather_reports(C, &st, r)) == 0)
    err = gather_names(C, r);
  if (!err)
    err = mlsba__mpi_hand_back_c(C->comm, o, &c, C->mine.row * b,
                                 C->mine.col * b, bm, bn, r);
done:
  free(lay4);
  free(m);
  free(a);
  free(bb);
  free(c);
  return err;
}

/* Every rank's node must run in the same time base as the head's. */
static int check_same_time_base(ctx_t *C, int *simulated) {
  int mine = mlsba__mpi_node_simulated(C->node), head = mine;
  MPI_Bcast(&head, 1, MPI_INT, 0, C->comm);
  *simulated = head;
  int err = 0;
  if (mine != head)
    err = mlsba__fail(MLSBA_EINVAL,
                      "its platform has %s devices, rank 0's %s ones: node "
                      "times would mix virtual and wall-clock seconds",
                      mine ? "simulated" : "real", head ? "simulated" : "real");
  return mlsba__mpi_agree(C->comm, err);
}

int mlsba_mpi_multiply(MPI_Comm comm, const mlsba_mpi_opts_t *o,
                       mlsba_mpi_result_t *r) {
  if (o == NULL || r == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_mpi_multiply: NULL argument");
  memset(r, 0, sizeof *r);
  if (comm == MPI_COMM_NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_mpi_multiply: comm is "
                                     "MPI_COMM_NULL");
  ctx_t C = {.comm = comm, .host = MPI_COMM_NULL, .o = o};
  MPI_Comm_rank(comm, &C.rank);
  MPI_Comm_size(comm, &C.q);
  r->nodes = C.q;
  int err = check_opts(o, C.q);
  char path[1024];
  int local_rank = 0, local_size = 1;
  /* Collective on every rank, whatever the options (the split of the
   * ranks by host, the expansion of %r, %h and %l), then the head's
   * options agreed on. */
  int e = mlsba__mpi_local_rank(comm, &local_rank, &local_size);
  int ep = mlsba_mpi_platform_path(comm, o->platform ? o->platform : "", path,
                                   sizeof path);
  if ((err = mlsba__mpi_agree(comm, err ? err
                                    : e ? e
                                        : ep)) != 0 ||
      (err = agree_on_opts(comm, o)) != 0)
    return err;
  C.nb = o->n / o->block;
  err = mlsba__mpi_node_open_at(path, local_rank, local_size, o, &C.node);
  if ((err = mlsba__mpi_agree(comm, err)) != 0)
    return err;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &C.host);
  if ((err = check_same_time_base(&C, &r->simulated)) != 0 ||
      (err = check_memory_up_front(&C)) != 0)
    goto done;
  /* Every node's capacity, so that no distribution (the first included)
   * gives a node more blocks than its devices hold. */
  int64_t cap = mlsba__mpi_node_capacity(C.node, C.nb);
  /* CMA rounds an area to its rectangle by up to a row or a column of
   * the grid (nb blocks): the head plans within what is left. */
  if (cap >= 0)
    cap = cap > C.nb ? cap - C.nb : 0;
  int64_t *caps = C.rank == 0 ? malloc((size_t)C.q * sizeof *caps) : NULL;
  if (C.rank == 0 && caps == NULL)
    err = mlsba__fail(MLSBA_ENOMEM, "out of memory");
  if ((err = mlsba__mpi_agree(comm, err)) != 0)
    goto done;
  MPI_Gather(&cap, 1, MPI_INT64_T, caps, 1, MPI_INT64_T, 0, comm);
  if (o->comm_model == MLSBA_MPI_COMM_LINKS && (err = gather_links(&C)) != 0) {
    free(caps);
    goto done;
  }
  if (C.rank == 0)
    err = create_head(&C, caps);
  free(caps);
  if ((err = mlsba__mpi_agree(comm, err)) != 0)
    goto done;
  if ((err = inpa(&C, r)) != 0 || (err = product(&C, r)) != 0)
    goto done;
  /* The head's scalars, for every rank. */
  double sc[7] = {(double)r->iterations,
                  (double)r->converged,
                  r->imbalance,
                  (double)r->half_perimeter_sum,
                  r->half_perimeter_lower_bound,
                  (double)r->stop,
                  (double)r->run_iteration};
  MPI_Bcast(sc, 7, MPI_DOUBLE, 0, comm);
  r->run_iteration = (unsigned)sc[6];
  r->iterations = (unsigned)sc[0];
  r->converged = (int)sc[1];
  r->imbalance = sc[2];
  r->half_perimeter_sum = (int64_t)sc[3];
  r->half_perimeter_lower_bound = sc[4];
  r->stop = (mlsba_stop_reason_t)sc[5];
done:
  if (C.host != MPI_COMM_NULL)
    MPI_Comm_free(&C.host);
  mlsba__inpa_destroy(C.head);
  free(C.links);
  free(C.link_source);
  mlsba__mpi_node_close(C.node);
  if (err)
    mlsba_mpi_result_free(r);
  return err;
}
