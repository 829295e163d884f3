/* The adapter to the partitioners: the devices in use, group by group,
 * as a partitioning problem, and its answer back on the platform. */
#include <string.h>

#include "../core/clock.h"
#include "../partition/grouped.h"
#include "../platform/platform.h"
#include "balance.h"

/* Re-partitions the load over the devices in use from their models. */
int mlsba__bal_repartition(mlsba__bal_ctx_t *C, mlsba_balance_result_t *r,
                           int64_t *load, double *seconds) {
  const mlsba_platform_t *pl = C->ex->pl;
  int flat = C->o.grouping == MLSBA_GROUPING_FLAT;
  mlsba_partition_opts_t po;
  mlsba_partition_opts_init(&po);
  po.granularity = C->o.granularity;
  C->part.p = C->part.q = 0;
  for (size_t g = 0; g < pl->ngroups; g++) {
    size_t before = C->part.p;
    for (size_t k = pl->group_start[g]; k < pl->group_start[g + 1]; k++) {
      size_t j = pl->group_dev[k];
      if (!C->dev.use[j] || mlsba_model_num_points(r->models[j]) == 0)
        continue;
      C->part.dev[C->part.p] = j;
      C->part.models[C->part.p++] = r->models[j];
      if (flat)
        C->part.size[C->part.q++] = 1;
    }
    if (!flat && C->part.p > before)
      C->part.size[C->part.q++] = C->part.p - before;
  }
  double t0 = mlsba__now();
  int err = mlsba_partition_groups(C->o.algorithm, C->part.models, C->part.size,
                                   C->part.q, C->w->units, &po, C->part.alpha,
                                   C->part.beta, C->part.points, NULL);
  *seconds = mlsba__now() - t0;
  if (err)
    return err;
  memset(load, 0, C->p * sizeof *load);
  for (size_t k = 0; k < C->part.p; k++)
    load[C->part.dev[k]] = C->part.beta[k];
  /* Group-model points, back on the platform's groups. */
  memset(r->points, 0, C->q * sizeof *r->points);
  for (size_t k = 0, pg = 0, pk = 0; k < C->part.q; k++) {
    size_t j = C->part.dev[pk]; /* the first device of partition group k */
    for (size_t g = 0; g < pl->ngroups; g++)
      for (size_t i = pl->group_start[g]; i < pl->group_start[g + 1]; i++)
        if (pl->group_dev[i] == j)
          r->points[g] += C->part.points[pg];
    pk += C->part.size[k];
    pg++;
  }
  return 0;
}

/* The first distribution when the models cannot give one: N/P per device
 * in use, within what each can hold. */
void mlsba__bal_even_start(mlsba__bal_ctx_t *C, int64_t *load) {
  mlsba__proportional(NULL, C->dev.max, C->p, C->w->units, load);
}

/* Whether every device in use has a model to be partitioned by. */
int mlsba__bal_all_modelled(const mlsba__bal_ctx_t *C,
                            const mlsba_balance_result_t *r) {
  for (size_t j = 0; j < C->p; j++)
    if (C->dev.use[j] && mlsba_model_num_points(r->models[j]) == 0)
      return 0;
  return 1;
}
