/* GPA (Clarke et al., seed 000): a distribution of W blocks over node
 * speed functions, every node given at least one block (CMA needs one
 * per node), with or without each node's modelled communication. INPA's
 * step 7 (inpa.h) and the one-dimensional head (divide.h) use it. */
#ifndef MLSBA_PARTITION_GPA_H
#define MLSBA_PARTITION_GPA_H

#include <stddef.h>
#include <stdint.h>

#include "cma.h"
#include "mlsba.h"

/* GPA over node models (INPA's step 7): SLBA of W blocks over q node models
 * (each usable: at least one point), then every node raised to at least
 * one block, taken from the node whose model predicts the latest finish
 * among those with more than one. w[q] sums to W. makespan (may be NULL)
 * receives the predicted max_i t_i(w_i). Returns 0, MLSBA_EINVAL,
 * MLSBA_ECAPACITY (max_loads too small) or MLSBA_ENOMEM. */
int mlsba__gpa_nodes(const mlsba_model_t *const models[], size_t q, int64_t W,
                     int64_t w[], double *makespan);
/* GPA with each node's communication (comm NULL: mlsba__gpa_nodes): node
 * i's time for an area a is t_i(a) + fixed_i + per_block_i 2 sqrt(a),
 * its area taken as a square, the least half-perimeter it can have; w
 * is the integer distribution with the least largest such time
 * (bisection on the time, then every node raised to a block as above).
 * makespan receives that largest time. */
int mlsba__gpa_nodes_comm(const mlsba_model_t *const models[],
                          const mlsba__comm_model_t *comm, size_t q, int64_t W,
                          int64_t w[], double *makespan);

#endif
