/* mlsba_partition_groups(): argument checks shared by every multi-level
 * algorithm, the algorithm table, and flat SLBA as a grouped algorithm. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "fpm.h"
#include "grouped.h"
#include "slba.h"

static const struct {
  const char *name;
  mlsba__grouped_fn fn;
} algorithms[MLSBA_ALGO_COUNT] = {
    [MLSBA_ALGO_MLSBA] = {"mlsba", mlsba__mlsba},
    [MLSBA_ALGO_MLFBA2] = {"mlfba2", mlsba__mlfba2},
    [MLSBA_ALGO_SLBA] = {"slba", mlsba__flat_slba},
    [MLSBA_ALGO_MULTIPLE_CPM] = {"multiple-cpm", mlsba__multiple_cpm},
    [MLSBA_ALGO_SINGLE_CPM] = {"single-cpm", mlsba__single_cpm},
    [MLSBA_ALGO_HOMOGENEOUS] = {"homogeneous", mlsba__homogeneous},
    [MLSBA_ALGO_DLT] = {"dlt", mlsba__dlt},
};

const char *mlsba_algorithm_name(mlsba_algorithm_t algo) {
  return (unsigned)algo < MLSBA_ALGO_COUNT ? algorithms[algo].name : NULL;
}

int mlsba_algorithm_from_name(const char *name, mlsba_algorithm_t *algo) {
  if (name == NULL || algo == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_algorithm_from_name: %s is NULL",
                       name == NULL ? "name" : "algo");
  for (int a = 0; a < MLSBA_ALGO_COUNT; a++) {
    if (strcmp(name, algorithms[a].name) == 0) {
      *algo = (mlsba_algorithm_t)a;
      return 0;
    }
  }
  return mlsba__fail(MLSBA_EINVAL,
                     "unknown algorithm '%s' (mlsba, mlfba2, slba, "
                     "multiple-cpm, single-cpm, homogeneous, dlt)",
                     name);
}

void mlsba_partition_opts_init(mlsba_partition_opts_t *opts) {
  if (opts == NULL)
    return;
  memset(opts, 0, sizeof *opts);
  opts->cpm_eps = 0.05;
  opts->cpm_max_iter = 20;
}

int64_t mlsba__device_cap(const mlsba__grouped_t *G, size_t j) {
  return mlsba__fpm_cap(G->models[j], G->n);
}

int mlsba__flat_slba(const mlsba__grouped_t *G, int64_t *alpha, int64_t *beta,
                     size_t *points) {
  int err = mlsba__slba(G->models, G->p, G->n, &G->opts, beta, NULL, NULL);
  if (err)
    return err;
  for (size_t g = 0; g < G->q; g++) {
    alpha[g] = 0;
    for (size_t j = G->first[g]; j < G->first[g] + G->size[g]; j++)
      alpha[g] += beta[j];
    points[g] = 0; /* no group models */
  }
  return 0;
}

int mlsba_partition_groups(mlsba_algorithm_t algo,
                           const mlsba_model_t *const models[],
                           const size_t group_size[], size_t q, int64_t n,
                           const mlsba_partition_opts_t *opts, int64_t alpha[],
                           int64_t beta[], size_t points[],
                           mlsba_partition_info_t *info) {
  const char *fn = "mlsba_partition_groups";
  if ((unsigned)algo >= MLSBA_ALGO_COUNT)
    return mlsba__fail(MLSBA_EINVAL, "%s: unknown algorithm %d", fn, (int)algo);
  if (group_size == NULL || alpha == NULL)
    return mlsba__fail(MLSBA_EINVAL, "%s: %s is NULL", fn,
                       group_size == NULL ? "group_size" : "alpha");
  if (q == 0)
    return mlsba__fail(MLSBA_EINVAL, "%s: no groups (q = 0)", fn);
  mlsba__grouped_t G = {.models = models, .size = group_size, .q = q, .n = n};
  for (size_t g = 0; g < q; g++) {
    if (group_size[g] == 0)
      return mlsba__fail(MLSBA_EINVAL, "%s: group %zu is empty", fn, g);
    if (group_size[g] > SIZE_MAX / 2 - G.p)
      return mlsba__fail(MLSBA_ERANGE, "%s: too many devices", fn);
    G.p += group_size[g];
  }
  int err = mlsba__check_partition_args(fn, models, G.p, n, beta);
  if (err)
    return err;
  mlsba_partition_opts_init(&G.opts);
  if (opts)
    G.opts = *opts;
  if (G.opts.granularity < 0)
    return mlsba__fail(MLSBA_EINVAL, "%s: granularity must be >= 0, got %lld",
                       fn, (long long)G.opts.granularity);
  if (G.opts.granularity > 1 && algo != MLSBA_ALGO_SLBA)
    return mlsba__fail(MLSBA_ENOTSUP,
                       "%s: granularity is supported by slba only, not %s", fn,
                       algorithms[algo].name);
  if (!(G.opts.cpm_eps >= 0) || !isfinite(G.opts.cpm_eps))
    return mlsba__fail(MLSBA_EINVAL, "%s: cpm_eps must be >= 0, got %g", fn,
                       G.opts.cpm_eps);
  int64_t cap = 0;
  for (size_t j = 0; j < G.p; j++) {
    int64_t c = mlsba__fpm_cap(models[j], n);
    cap = cap + c < n ? cap + c : n;
  }
  if (cap < n)
    return mlsba__fail(MLSBA_ECAPACITY,
                       "the devices can hold %lld units together (sum of "
                       "max_load), the load is %lld",
                       (long long)cap, (long long)n);

  size_t *first = malloc(q * sizeof *first);
  size_t *own_points = points ? NULL : malloc(q * sizeof *own_points);
  if (first == NULL || (points == NULL && own_points == NULL)) {
    free(first);
    free(own_points);
    return mlsba__fail(MLSBA_ENOMEM, "%s: out of memory", fn);
  }
  for (size_t g = 0, f = 0; g < q; f += group_size[g++])
    first[g] = f;
  G.first = first;
  err = algorithms[algo].fn(&G, alpha, beta, points ? points : own_points);
  if (!err)
    err = mlsba__check_loads(algorithms[algo].name, models, G.p, n, beta);
  for (size_t g = 0; !err && g < q; g++) {
    int64_t sum = 0;
    for (size_t j = first[g]; j < first[g] + group_size[g]; j++)
      sum += beta[j];
    if (sum != alpha[g])
      err = mlsba__fail(MLSBA_ENOCONV,
                        "%s gave group %zu %lld units and its devices %lld "
                        "(a bug in libmlsba: please report it)",
                        algorithms[algo].name, g, (long long)alpha[g],
                        (long long)sum);
  }
  if (!err && info) {
    memset(info, 0, sizeof *info);
    double t = 0;
    for (size_t j = 0; j < G.p; j++) {
      double tj = mlsba__fpm_time(models[j], (double)beta[j]);
      t = tj > t ? tj : t;
    }
    info->makespan = t;
  }
  free(first);
  free(own_points);
  return err;
}
