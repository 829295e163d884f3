/* INPA across the ranks (the first phase of mlsba_mpi_multiply): rank 0
 * is INPA's head (lib/partition/inpa.h, a pure state machine): it asks
 * for runs, every rank balances its devices on the rectangle it is given
 * (its IDPA, libmlsba's routine) and reports the time the product would
 * take at that step time; the head builds node models from those times
 * and draws the next distribution, until the nodes finish together.
 * Every exchange is preceded by a collective status check, so an error on
 * any rank stops all of them with one message. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/bigmem.h"
#include "../core/error.h"
#include "multiply.h"

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

/* Bytes a rank holds at once for a rows x cols rectangle of C: the
 * step's panels A_(b), B_(b) (real bytes outside SMPI, whose shared
 * allocations hold none), and on a real node its A', B', C' in the
 * product (A' and B' about its share of k: k cols / n and k rows / m) or
 * the scratch C' of a balancing. */
double mlsba__mpi_mult_rect_bytes(const mlsba__mpi_mult_t *C, int64_t rows,
                                  int64_t cols, int product) {
  const mlsba__mpi_grid_t *g = &C->grid;
  double b = (double)g->b, bm = (double)rows, bn = (double)cols;
  double es = (double)mlsba__mpi_elem(C->o->precision);
  int sim = mlsba__mpi_node_simulated(C->node);
  double panels = sim && mlsba__mpi_is_smpi() ? 0 : (bm * b + b * bn) * es;
  double k = (double)g->k;
  double ab = bm * k * bn / (double)g->n + k * bm / (double)g->m * bn;
  double own = sim ? 0 : (product ? bm * bn + ab : bm * bn) * es;
  return panels + own;
}

/* Collective: what the ranks of a host are about to hold at once must fit
 * the host's memory; past it the kernel kills a rank (or the host swaps)
 * partway through a job that could have been refused with a reason.
 * Under SMPI every simulated rank shares one process and its panels. */
int mlsba__mpi_mult_check_memory(mlsba__mpi_mult_t *C, double bytes,
                                 const char *what) {
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
 * (a square of m n / q elements), which no distribution INPA finds can
 * lower on every rank at once. */
static int check_memory_up_front(mlsba__mpi_mult_t *C) {
  const mlsba__mpi_grid_t *g = &C->grid;
  double side = ceil(sqrt((double)g->m * (double)g->n / C->q));
  int64_t rows = side < (double)g->m ? (int64_t)side : g->m;
  int64_t cols = side < (double)g->n ? (int64_t)side : g->n;
  return mlsba__mpi_mult_check_memory(
      C, mlsba__mpi_mult_rect_bytes(C, rows, cols, 1),
      "the product at the even distribution");
}

void mlsba__mpi_mult_scratch_free(mlsba__mpi_mult_t *C) {
  for (int i = 0; i < 3; i++) {
    free(C->scratch[i]);
    C->scratch[i] = NULL;
    C->scratch_bytes[i] = 0;
  }
}

/* The timed runs' scratch operand i of bytes: the one kept when it is
 * large enough, else a new one, written once here (its pages faulted in
 * outside the timed steps; zeros, so that the products stay zeros). */
static void *scratch(mlsba__mpi_mult_t *C, int i, size_t bytes) {
  if (C->scratch_bytes[i] >= bytes && C->scratch[i] != NULL)
    return C->scratch[i];
  free(C->scratch[i]);
  C->scratch_bytes[i] = 0;
  C->scratch[i] = mlsba__big_alloc(bytes ? bytes : 1);
  if (C->scratch[i] != NULL) {
    memset(C->scratch[i], 0, bytes);
    C->scratch_bytes[i] = bytes;
  }
  return C->scratch[i];
}

/* This rank's IDPA on its rectangle: the node balanced, and with timed
 * its time for the whole product (k / b steps), as the time of the
 * head's cells it was given (their edges round to blocks: the rate
 * measured on the rectangle run, at the area the head asked for). Real
 * devices run on scratch operands, whose memory the caller checked: the
 * timed runs on those kept in C (scratch above). A node of one core
 * (mlsba__mpi_node_take_whole) has nothing to balance: its timed steps
 * alone measure it, where its IDPA's own run cost a step of every run;
 * with a model folder the IDPA still runs, as it keeps the node's
 * models there (a saved distribution is taken only with them).
 * Collective when timed (every rank times its node together). */
static int balance_rect(mlsba__mpi_mult_t *C, int timed, double *t) {
  const mlsba__mpi_grid_t *g = &C->grid;
  mlsba__mpi_part_t part;
  mlsba__mpi_grid_part(g, C->mine.m, C->mine.n, C->mine.row, C->mine.col,
                       &part);
  int64_t b = g->b, bm = part.rows, bn = part.cols;
  int err = 0;
  size_t es = mlsba__mpi_elem(C->o->precision);
  int sim = mlsba__mpi_node_simulated(C->node), kept = timed && !sim;
  size_t bytes[3] = {(size_t)(bm * b) * es, (size_t)(b * bn) * es,
                     (size_t)(bm * bn) * es};
  void *op[3] = {NULL, NULL, NULL};
  for (int i = 0; i < 3 && !sim; i++)
    op[i] = kept ? scratch(C, i, bytes[i]) : mlsba__big_calloc(bytes[i], 1);
  void *a = op[0], *bb = op[1], *c = op[2];
  double step = 0;
  if (!sim && (!a || !bb || !c))
    err = mlsba__fail(MLSBA_ENOMEM, "out of memory for a %lld x %lld block",
                      (long long)bm, (long long)bn);
  if (!err)
    err = mlsba__mpi_node_shape(C->node, bm, bn, a, bb, c);
  if (!err && !(kept && C->o->model_dir == NULL &&
                mlsba__mpi_node_take_whole(C->node))) {
    err = mlsba__mpi_node_balance(C->node, C->o->algorithm, &step);
    C->warmed = 1; /* its runs came first */
  }
  /* Ranks that share cores (oversubscribed, or other jobs on the node)
   * slow each other only while they compute at once, as every rank does
   * in the product; each rank's balancing runs when it happens to. So a
   * real node's time is measured again with every rank starting
   * together: the mean of a few steps with the distribution it found.
   * Every rank takes part, also one that failed (its steps are skipped),
   * so that the barrier cannot hang. */
  if (!sim && timed) {
    enum { TIMED_STEPS = 3 };
    /* The process's first step pays its first call's costs (the cores'
     * kernels chosen and loaded, about 50 ms a rank here, the executor's
     * and the BLAS's first buffers): on a node of one core, which runs
     * no balancing of its own, that was the first timed step, a third
     * of a step's mean at N = 4096. Two equal ranks' first timed runs
     * here (2 ranks, N = 4096, busy) differed by 13-57%, rank 1 the
     * slower in 4 runs of 4; warmed, by 0-39%, either rank. One step
     * untimed, once. */
    if (!C->warmed && !err) {
      double untimed;
      err = mlsba__mpi_node_step(C->node, &untimed);
      C->warmed = 1;
    }
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
  double cells = (double)(C->mine.m * C->mine.n);
  *t = step * (double)g->k / (double)b * cells /
       mlsba__mpi_grid_cells_of(g, bm, bn);
  /* Accelerators give back the scratch C' before it is freed. */
  int flushed = mlsba__mpi_node_flush(C->node);
  err = err ? err : flushed;
  for (int i = 0; i < 3 && !kept; i++)
    free(op[i]);
  return err;
}

/* Collective: the scratch operands of a balancing of C->mine fit the
 * host's memory. */
static int check_rect_memory(mlsba__mpi_mult_t *C) {
  mlsba__mpi_part_t p;
  mlsba__mpi_grid_part(&C->grid, C->mine.m, C->mine.n, C->mine.row, C->mine.col,
                       &p);
  return mlsba__mpi_mult_check_memory(
      C, mlsba__mpi_mult_rect_bytes(C, p.rows, p.cols, 0),
      "balancing its rectangle");
}

int mlsba__mpi_mult_run_rect(mlsba__mpi_mult_t *C, double *t) {
  int err = check_rect_memory(C);
  return err ? err : balance_rect(C, 1, t);
}

int mlsba__mpi_mult_place_rect(mlsba__mpi_mult_t *C) {
  int err = check_rect_memory(C);
  if (err)
    return err;
  mlsba__mpi_part_t part;
  mlsba__mpi_grid_part(&C->grid, C->mine.m, C->mine.n, C->mine.row, C->mine.col,
                       &part);
  /* One core or one simulated device has nothing to split: no run, no
   * scratch operands (the product gives the node its own). */
  err = mlsba__mpi_node_shape(C->node, part.rows, part.cols, NULL, NULL, NULL);
  if (err || mlsba__mpi_node_take_whole(C->node))
    return err;
  double t = 0;
  return balance_rect(C, 0, &t);
}

/* Rank i's communication over the product as the head models it
 * (MLSBA_MPI_COMM_LINKS): per step one message of its rows of A's block
 * column and one of its columns of B's block row, fixed + per (m + n)
 * seconds for an m x n rectangle of blocks. A link of unknown bandwidth
 * costs nothing. */
void mlsba__mpi_mult_comm_cost(const mlsba__mpi_mult_t *C, int i, double *fixed,
                               double *per) {
  mlsba_link_t l = C->links[i];
  const mlsba__mpi_grid_t *g = &C->grid;
  double steps = ceil((double)g->k / (double)g->b);
  double es = (double)mlsba__mpi_elem(C->o->precision);
  /* A cell's side: m / g rows or n / g columns, a row or a column of
   * the panels over the k columns; the head counts m + n cells alike,
   * so at their mean. */
  double side = ((double)g->m + (double)g->n) / (2.0 * (double)g->g);
  *fixed = l.bandwidth > 0 ? steps * 2 * l.latency : 0;
  *per = l.bandwidth > 0 ? (double)g->k * side * es / l.bandwidth : 0;
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
static int gather_links(mlsba__mpi_mult_t *C) {
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

/* Collective: where ranks of one host run on the same cores (more ranks
 * than cores, as benchmarks/peers/ranks3 runs two on core 1), each
 * rank's speed before any run as its share of its cores (a core shared
 * by s ranks counts 1 / s to each) into start (rank 0, q entries), and 1
 * there. INPA's first run would otherwise be the even split: the small
 * runs of a block take less than the scheduler's slice, so ranks that
 * share a core each measure it whole, and the even run then costs its
 * steps at 2 / 3 of the work on one core of two (3 ranks on cores 0, 1,
 * 1) before the models see the sharing. 0 where no core is shared or a
 * rank's devices are not all cores (accelerators, simulated devices):
 * the even split, as before, as where every rank's share is the same. */
static int start_speeds(mlsba__mpi_mult_t *C, double *start) {
  enum { MAX_DEV = 1024 };
  size_t p = mlsba__mpi_node_num_devices(C->node);
  int *cores = malloc((p ? p : 1) * sizeof *cores);
  int known = cores != NULL && p > 0 && p <= MAX_DEV &&
              mlsba__mpi_node_cores(C->node, cores, p) == 0;
  int all = 0, top = -1, mine = -1, shared = 0, use = 0;
  MPI_Allreduce(&known, &all, 1, MPI_INT, MPI_MIN, C->comm);
  for (size_t i = 0; all && i < p; i++)
    mine = cores[i] > mine ? cores[i] : mine;
  if (all)
    MPI_Allreduce(&mine, &top, 1, MPI_INT, MPI_MAX, C->host);
  int *count = all ? calloc((size_t)top + 1, sizeof *count) : NULL,
      *sum = all ? calloc((size_t)top + 1, sizeof *sum) : NULL;
  int ok = !all || (count != NULL && sum != NULL), ok_all = 0;
  MPI_Allreduce(&ok, &ok_all, 1, MPI_INT, MPI_MIN, C->comm);
  double speed = 0;
  if (all && ok_all) {
    for (size_t i = 0; i < p; i++)
      count[cores[i]] = 1;
    MPI_Allreduce(count, sum, top + 1, MPI_INT, MPI_SUM, C->host);
    for (size_t i = 0; i < p; i++) {
      speed += 1.0 / (double)sum[cores[i]];
      shared |= sum[cores[i]] > 1;
    }
    /* Only where the shares differ: equal ones are the even split. */
    double lo = 0, hi = 0;
    MPI_Allreduce(&shared, &use, 1, MPI_INT, MPI_MAX, C->comm);
    MPI_Allreduce(&speed, &lo, 1, MPI_DOUBLE, MPI_MIN, C->comm);
    MPI_Allreduce(&speed, &hi, 1, MPI_DOUBLE, MPI_MAX, C->comm);
    use = use && hi > lo * (1 + 1e-9);
  }
  free(cores);
  free(count);
  free(sum);
  if (use)
    MPI_Gather(&speed, 1, MPI_DOUBLE, start, 1, MPI_DOUBLE, 0, C->comm);
  return use;
}

/* Rank 0: the head for the ranks, with their capacities and, under
 * MLSBA_MPI_COMM_LINKS, their communication. */
static int create_head(mlsba__mpi_mult_t *C, const int64_t *caps,
                       const double *start) {
  mlsba__inpa_opts_t io;
  mlsba__inpa_opts_init(&io);
  io.algo = (mlsba__inpa_algo_t)C->o->algorithm;
  io.eps = C->o->eps;
  io.max_iter = C->o->max_iter;
  io.caps = caps;
  io.start_speed = start;
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
      mlsba__mpi_mult_comm_cost(C, i, &fixed[i], &per[i]);
    io.comm_fixed = fixed;
    io.comm_per_block = per;
  }
  int err = mlsba__inpa_create((size_t)C->q, C->grid.g, &io, &C->head);
  free(fixed);
  free(per);
  return err;
}

/* Rank 0 scatters the rectangles rc (q of them) to every rank's
 * C->mine. */
static void scatter_rects(mlsba__mpi_mult_t *C, const mlsba__cma_rect_t *rc,
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
static int keep_history(mlsba__mpi_mult_t *C, size_t chosen,
                        mlsba_mpi_result_t *r) {
  size_t it = mlsba__inpa_iterations(C->head), q = (size_t)C->q;
  r->history_len = it;
  r->history_w = malloc((it ? it : 1) * q * sizeof *r->history_w);
  r->history_time = malloc((it ? it : 1) * q * sizeof *r->history_time);
  r->history_imbalance = malloc((it ? it : 1) * sizeof *r->history_imbalance);
  if (!r->history_w || !r->history_time || !r->history_imbalance)
    return mlsba__fail(MLSBA_ENOMEM, "out of memory");
  int64_t b = C->grid.b;
  for (size_t k = 0; k < it; k++) {
    const mlsba__inpa_record_t *h = mlsba__inpa_history(C->head, k);
    for (size_t i = 0; i < q; i++) {
      mlsba__mpi_part_t p; /* blocks of C, as the report counts them */
      mlsba__mpi_grid_part(&C->grid, h->rect[i].m, h->rect[i].n, h->rect[i].row,
                           h->rect[i].col, &p);
      r->history_w[k * q + i] = (p.rows + b - 1) / b * ((p.cols + b - 1) / b);
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
 * last run, so for an earlier one they are placed again (their devices
 * balanced, no timed steps) before the product. On return (0) every rank's
 * C->mine is the rectangle of that distribution and its node is balanced for
 * it. */
static int inpa(mlsba__mpi_mult_t *C, mlsba_mpi_result_t *r) {
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
    err = mlsba__mpi_mult_run_rect(C, &t);
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
  /* The nodes balanced for that run again, without its timed steps: the
   * time it took is known, and a node of one core has nothing to
   * balance (no run at all). */
  mlsba__mpi_mult_scratch_free(C);
  if (pick[0] != pick[1])
    err = mlsba__mpi_mult_place_rect(C);
  err = mlsba__mpi_agree(C->comm, err);
done:
  mlsba__mpi_mult_scratch_free(C);
  free(times);
  free(sendbuf);
  return err;
}

/* Every rank's node must run in the same time base as the head's. */
static int check_same_time_base(mlsba__mpi_mult_t *C, int *simulated) {
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

int mlsba__mpi_mult_balance(mlsba__mpi_mult_t *C, mlsba_mpi_result_t *r) {
  int err;
  r->from_saved = 0;
  C->unchecked = 0;
  if ((err = check_same_time_base(C, &r->simulated)) != 0 ||
      (err = check_memory_up_front(C)) != 0)
    return err;
  /* Every node's capacity, so that no distribution (the first included)
   * gives a node more blocks than its devices hold, in the head's cells
   * (a cell is rb cb / g^2 blocks, at least one). */
  const mlsba__mpi_grid_t *g = &C->grid;
  int64_t cap = mlsba__mpi_node_capacity(C->node, g->rb);
  if (cap >= 0)
    cap = (int64_t)((double)cap * (double)g->g * (double)g->g /
                    ((double)g->rb * (double)g->cb));
  /* CMA rounds an area to its rectangle by up to a row or a column of
   * the grid (g cells): the head plans within what is left. */
  if (cap >= 0)
    cap = cap > g->g ? cap - g->g : 0;
  int64_t *caps = C->rank == 0 ? malloc((size_t)C->q * sizeof *caps) : NULL;
  if (C->rank == 0 && caps == NULL)
    err = mlsba__fail(MLSBA_ENOMEM, "out of memory");
  if ((err = mlsba__mpi_agree(C->comm, err)) != 0)
    return err;
  MPI_Gather(&cap, 1, MPI_INT64_T, caps, 1, MPI_INT64_T, 0, C->comm);
  /* Measured once: a balancing again keeps the links it had. */
  if (C->o->comm_model == MLSBA_MPI_COMM_LINKS && C->links == NULL &&
      (err = gather_links(C)) != 0) {
    free(caps);
    return err;
  }
  /* A distribution saved by an earlier job, when it still holds. */
  int used = 0;
  if (C->o->model_dir != NULL && !C->fresh &&
      ((err = mlsba__mpi_mult_try_saved(C, r, &used)) != 0 || used)) {
    free(caps);
    r->from_saved = used;
    return err;
  }
  double *start = malloc((size_t)C->q * sizeof *start);
  int have_start = start != NULL, all_have = 0;
  MPI_Allreduce(&have_start, &all_have, 1, MPI_INT, MPI_MIN, C->comm);
  if (all_have && C->o->algorithm == MLSBA_MPI_INPA)
    have_start = start_speeds(C, start);
  else
    have_start = 0;
  if (C->rank == 0)
    err = create_head(C, caps, have_start ? start : NULL);
  free(start);
  free(caps);
  if ((err = mlsba__mpi_agree(C->comm, err)) != 0)
    return err;
  err = inpa(C, r);
  if (!err && C->o->model_dir != NULL)
    mlsba__mpi_mult_save(C, r->imbalance,
                         r->history_time && r->run_iteration > 0
                             ? r->history_time +
                                   (size_t)(r->run_iteration - 1) * (size_t)C->q
                             : NULL);
  return err;
}
