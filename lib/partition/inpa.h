/* INPA's head node (Clarke et al., seed 000 §3, steps 1-8), as a pure
 * state machine that the MPI layer drives: the head asks for runs, the
 * layer runs them on the nodes (each node's IDPA) and feeds back the
 * times; the head keeps the node models, partitions with GPA, arranges
 * with CMA and decides when to stop. No MPI, no clock, no I/O here, so
 * the whole loop is tested on synthetic node speed functions.
 *
 * The loop, with the seed's step numbers:
 *   1-2. Every node runs one b x b block (m = n = 1); the head adds the
 *        point (1, 1 / t_i(1)) to node i's model.       (phase SMALL)
 *   3.   w_i = W / q (the remainder to the first nodes).
 *   4.   CMA arranges w_1..w_q into rectangles (m_i, n_i).
 *   5.   Every node runs its rectangle; t_i comes back.  (phase RUN)
 *   6.   Stop when (max_i t_i - min_i t_i) / max_i t_i <= eps_1, the
 *        imbalance of every libmlsba report (the seed divides by min_i
 *        t_i: a report would then show runs within eps that did not
 *        stop as balanced). The point
 *        (a_i, a_i / t_i) goes into node i's model (on every run, the
 *        last too), where a_i = m_i n_i is the area node i actually ran
 *        (w_i after CMA's rounding: the time was measured on a_i blocks,
 *        so that is the load of the point).
 *   7.   GPA (SLBA over the node models, in blocks) gives the next w.
 *   8.   Go to 4.
 * Stops besides step 6 (as the single-node routine, lib/balance/balance.c,
 * but on whole arrangements, since a run is a pure function of them here):
 *   - fixed point: the arrangement of step 7's w gives every node the
 *     same m_i x n_i as the run just fed (GPA moved w by less than CMA's
 *     rounding): the next run would repeat this one;
 *   - cycle: it gives every node the m_i x n_i of an earlier run;
 *   - max_iter runs of step 5.
 * Fixed point counts as converged (as far as whole blocks allow); cycle
 * and max_iter do not.
 * Step 4 under the models (INPA only): where GPA's areas cannot be laid
 * out (every rectangle is a block wide and high, a column's heights fill
 * the grid), CMA's rounding would decide the loads and GPA ask for the
 * same areas again; so the arrangement run is the best the models
 * predict among CMA's columns for GPA's areas, for those areas
 * re-arranged, and for the areas a constant model would ask for, each
 * with its widths and heights fitted to the models
 * (mlsba__cma_fit_models: the constrained optimum for those columns).
 * Exploration (INPA only): before stopping at a fixed point or a cycle
 * above eps, INPA runs once what a constant model measured on the last
 * run asks for (laid out by CMA), when that is a run not yet run; if the
 * models then choose again the run they had stopped at, it runs once more
 * (the result is always the last run) and the loop goes on from it.
 * Before INPA stops at a fixed point or a cycle, when an earlier run
 * measured strictly faster than the last, that run runs once more
 * (max_iter permitting) and the head stops after it with the same
 * reason, so that its result is the fastest run measured.
 * Communication (opts.comm_fixed, comm_per_block): each run is judged by
 * the times fed plus each node's modelled panels, which grow with its
 * rectangle's half-perimeter; see mlsba__inpa_opts_t.
 * The baselines of §4 use the same loop, with step 7 replaced:
 *   - multiple-CPM: w_i = W s_i / sum_j s_j with s_i = a_i / t_i the
 *     constant speed measured in the last run; no step 1 (its point feeds
 *     only the functional models);
 *   - single-CPM: one iteration of multiple-CPM: run w_i = W / q, set w
 *     by the speeds measured there, run that, stop;
 *   - homogeneous: run w_i = W / q once and stop.
 * Multiple-CPM stops as INPA does (fixed point and cycle included).
 * Homogeneous and single-CPM stop as BALANCED when their last run is
 * within eps_1 and MAX_ITER otherwise (one and two runs are their own
 * iteration counts, max_iter permitting).
 *
 * Every w sums to W = nb * nb with every w_i >= 1 (CMA needs a block per
 * node): where GPA would leave a node without a block, it gets one, taken
 * from the node the models expect to finish last; the proportional rule
 * lifts shares below one block to one and re-shares the rest
 * (mlsba__shares_at_least_one).
 *
 * Not thread-safe: one thread drives one head. */
#ifndef MLSBA_PARTITION_INPA_H
#define MLSBA_PARTITION_INPA_H

#include <stddef.h>
#include <stdint.h>

#include "cma.h"
#include "gpa.h" /* step 7 */
#include "mlsba.h"

/* The algorithms of mlsba-inpa --algo, in the tool's spelling. */
typedef enum mlsba__inpa_algo {
  MLSBA__INPA_FPM = 0,      /* "inpa": functional node models + GPA */
  MLSBA__INPA_MULTIPLE_CPM, /* "multiple-cpm" */
  MLSBA__INPA_SINGLE_CPM,   /* "single-cpm" */
  MLSBA__INPA_HOMOGENEOUS,  /* "homogeneous" */
  MLSBA__INPA_ALGO_COUNT
} mlsba__inpa_algo_t;

/* "inpa", "multiple-cpm", "single-cpm", "homogeneous"; NULL if unknown. */
const char *mlsba__inpa_algo_name(mlsba__inpa_algo_t algo);
/* The algorithm of a name; MLSBA_EINVAL naming it if unknown. */
int mlsba__inpa_algo_from_name(const char *name, mlsba__inpa_algo_t *algo);

typedef struct mlsba__inpa_opts {
  mlsba__inpa_algo_t algo; /* default MLSBA__INPA_FPM */
  double eps;              /* eps_1 of step 6, >= 0 (default 0.05) */
  unsigned max_iter;       /* runs of step 5 at most, >= 1 (default 20) */
  /* q entries or NULL: the blocks each node can hold (a negative entry,
   * or NULL, for no limit). The first distribution and every later one
   * keep within them (the even split gives a node what it holds and
   * shares the rest; GPA sees them as the models' max_load; CPM's
   * proportional shares move what is above a cap to the nodes with room,
   * fastest first). Copied by mlsba__inpa_create(). */
  const int64_t *caps;
  /* q entries each, or both NULL (the default): each node's
   * communication in one run of the product, comm_fixed[i] +
   * comm_per_block[i] (m_i + n_i) seconds for an m_i x n_i rectangle
   * (the panels of A and B node i receives, which grow with the
   * half-perimeter, not the area), finite and >= 0. With them the head
   * judges every run by the times fed (compute) plus this: the stop test,
   * the records, the best run, the constant models' speeds; its node
   * models stay compute alone (points from the times fed), GPA balances
   * compute plus communication with each area taken as a square
   * (mlsba__gpa_nodes_comm) and the arrangement is fitted to both
   * (mlsba__cma_fit_models_comm). Copied by mlsba__inpa_create(). */
  const double *comm_fixed, *comm_per_block;
  /* q entries or NULL (the default): each node's speed relative to the
   * others as known before any run (finite, > 0), e.g. ranks that share
   * one core counted as a share of it, which the small runs of step 1
   * (a block, shorter than the scheduler's slice) cannot show. With them
   * the first distribution (step 3) is in proportion to them, within the
   * caps, instead of the even one; homogeneous ignores them. Copied by
   * mlsba__inpa_create(). */
  const double *start_speed;
} mlsba__inpa_opts_t;

void mlsba__inpa_opts_init(mlsba__inpa_opts_t *opts);

typedef struct mlsba__inpa mlsba__inpa_t;

/* What the head wants from the nodes now. */
typedef enum mlsba__inpa_phase {
  /* Step 1: every node runs one block (m = n = 1) and feeds its time. */
  MLSBA__INPA_SMALL = 0,
  /* Step 5: every node runs its rectangle of mlsba__inpa_rects(). */
  MLSBA__INPA_RUN,
  /* Stopped: the last run's arrangement and times are the result. */
  MLSBA__INPA_DONE
} mlsba__inpa_phase_t;

/* One run of step 5, kept in the history. Arrays of q, owned by the head,
 * valid until it is destroyed. */
typedef struct mlsba__inpa_record {
  const int64_t *w;              /* areas asked of CMA (sum W) */
  const mlsba__cma_rect_t *rect; /* the arrangement run */
  /* times fed back, plus the modelled communication when the head has
   * one (opts.comm_fixed): what the run is judged by */
  const double *t;
  double imbalance;       /* (max t - min t) / max t (step 6) */
  int64_t half_perimeter; /* H of the arrangement */
} mlsba__inpa_record_t;

/* A head for q >= 1 nodes over an nb x nb grid of blocks (W = nb * nb,
 * q <= W, W <= 2^53). opts NULL for defaults. The head starts in phase
 * SMALL (FPM) or RUN (baselines) with its first request ready.
 * Returns 0, MLSBA_EINVAL naming the argument, or MLSBA_ENOMEM. */
int mlsba__inpa_create(size_t q, int64_t nb, const mlsba__inpa_opts_t *opts,
                       mlsba__inpa_t **head);
void mlsba__inpa_destroy(mlsba__inpa_t *head);

mlsba__inpa_phase_t mlsba__inpa_phase(const mlsba__inpa_t *head);

/* The current request (phase RUN) or the result (phase DONE): q areas,
 * q rectangles indexed by node. In phase SMALL every rectangle is one
 * block at (0, 0) (each node runs its own; they do not tile C) and w is
 * all ones. Valid until the next mlsba__inpa_feed(). */
const int64_t *mlsba__inpa_w(const mlsba__inpa_t *head);
const mlsba__cma_rect_t *mlsba__inpa_rects(const mlsba__inpa_t *head);
/* CMA's report on the current arrangement (zeroes in phase SMALL). */
const mlsba__cma_info_t *mlsba__inpa_cma_info(const mlsba__inpa_t *head);

/* Feed the times t[q] (seconds, finite, > 0) that the nodes measured on
 * the current request; the head takes its next step. Returns 0;
 * MLSBA_EINVAL for a bad time (naming the node) or in phase DONE;
 * MLSBA_ENOMEM; an error of GPA or CMA. On error the head keeps its phase
 * and request; the models may already hold the fed points, which feeding
 * the same times again replaces (a point at the same area), so a retry
 * ends as one successful feed would. */
int mlsba__inpa_feed(mlsba__inpa_t *head, const double t[]);

/* After DONE: why it stopped (BALANCED or FIXED_POINT: converged). */
mlsba_stop_reason_t mlsba__inpa_stop(const mlsba__inpa_t *head);
/* Runs of step 5 so far (history length). */
size_t mlsba__inpa_iterations(const mlsba__inpa_t *head);
/* Run k, 0-based, k < mlsba__inpa_iterations(). */
const mlsba__inpa_record_t *mlsba__inpa_history(const mlsba__inpa_t *head,
                                                size_t k);
/* The run with the smallest makespan (max_i t_i), first of equals: after
 * a stop that did not converge (cycle, max_iter) it may beat the last
 * run, which mlsba__inpa_w() and mlsba__inpa_rects() keep as the result,
 * as the single-node routine does. SIZE_MAX before the first run. */
size_t mlsba__inpa_best_run(const mlsba__inpa_t *head);
/* Node i's functional model (points in blocks, speeds in blocks/s), as
 * built so far; baselines build it too, from the same runs. */
const mlsba_model_t *mlsba__inpa_model(const mlsba__inpa_t *head, size_t i);

#endif
