/* The head of a one-dimensional INPA: N units of an application's load
 * shared between q nodes, as a pure state machine that the MPI layer
 * drives (lib/mpi/divisible.c). The head asks for a run of counts; every
 * node balances its own devices on its units and reports its time; the
 * head adds the point (c_i, c_i / t_i) to node i's speed function (a run
 * within eps of a point's units joins it, the point's speed the mean of
 * its runs: measured.h) and draws the next counts by geometric
 * partitioning over those functions (mlsba__gpa_nodes), until the node
 * times agree within eps. No MPI, no clock, no I/O.
 *
 * Stops, as INPA's two-dimensional head (inpa.h) and the single-node
 * routine:
 *   - balanced: (max t - min t) / max t <= eps over the last run;
 *   - fixed point: the next counts move no node by more than eps / 4 of
 *     its units (and by more than one unit): the next run would repeat
 *     this one within its noise (converged);
 *   - cycle: the next counts are an earlier run's (not converged);
 *   - max_iter runs (not converged).
 * The baselines replace the functional models: multiple-CPM shares in
 * proportion to the last run's speeds, single-CPM does that once,
 * homogeneous runs N / q once; they stop balanced when their last run is
 * within eps, else at max_iter. The last run is the result: it is the
 * one that computed the load.
 *
 * After the nodes' speeds change (a node slowed down by another program,
 * or back to its speed), a resume balances again, as the balancer of
 * one node re-balances its devices after a drift: the first run of the
 * re-balance is checked against each node's speed function, and a node
 * whose time is further than the drift tolerance from it forgets its
 * older points (they would pull the partitioning back to the old split);
 * the stops above (cycles included) look at the runs since the resume
 * only.
 *
 * Every node gets at least one unit (N >= q). Not thread-safe. */
#ifndef MLSBA_PARTITION_DIVIDE_H
#define MLSBA_PARTITION_DIVIDE_H

#include <stddef.h>
#include <stdint.h>

#include "inpa.h"

typedef struct mlsba__divide mlsba__divide_t;

/* A head for q >= 1 nodes and n >= q units (n <= 2^53); opts NULL for
 * defaults (INPA's algorithms, eps and max_iter). The first request, n / q
 * each (the remainder to the first nodes), is ready. */
int mlsba__divide_create(size_t q, int64_t n, const mlsba__inpa_opts_t *opts,
                         mlsba__divide_t **head);
void mlsba__divide_destroy(mlsba__divide_t *head);

/* The counts to run (or, once done, those of the last run): q entries
 * summing to n. */
const int64_t *mlsba__divide_counts(const mlsba__divide_t *head);
/* Whether the head has stopped. */
int mlsba__divide_done(const mlsba__divide_t *head);
/* Feed the node times t[q] (seconds, finite, > 0) of the current counts.
 * 0; MLSBA_EINVAL for a bad time (naming the node) or after the stop;
 * MLSBA_ENOMEM; an error of the partitioner. */
int mlsba__divide_feed(mlsba__divide_t *head, const double t[]);
/* Why it stopped (meaningful once done). */
mlsba_stop_reason_t mlsba__divide_stop(const mlsba__divide_t *head);
/* Runs fed so far, and run k's counts, times and imbalance. */
size_t mlsba__divide_iterations(const mlsba__divide_t *head);
const int64_t *mlsba__divide_history_counts(const mlsba__divide_t *head,
                                            size_t k);
const double *mlsba__divide_history_times(const mlsba__divide_t *head,
                                          size_t k);
double mlsba__divide_history_imbalance(const mlsba__divide_t *head, size_t k);
/* Lets a stopped head balance again (a re-balance after the node times
 * drifted), with max_iter more runs allowed. t (q times, may be NULL): a
 * run of the current counts that the head has not been fed (the run in
 * which the drift showed); it is the re-balance's first run, checked
 * against the speed functions: a node whose time is further than tol
 * (relative, > 0) from its function's forgets its older points. The head
 * then stops (balanced: no other run needed) or asks for the next counts.
 * Without t the next counts come from the functions as they are (the
 * baselines': from the last run's speeds, or the even split), and the
 * run of them that is fed next is checked so. 0 (and nothing done when
 * the head has not stopped); MLSBA_EINVAL for a bad tol or time (the head
 * stays stopped); an error of the partitioner. */
int mlsba__divide_resume(mlsba__divide_t *head, const double t[], double tol);
/* Node i's speed function as built so far (units, units per second). */
const mlsba_model_t *mlsba__divide_model(const mlsba__divide_t *head, size_t i);

#endif
