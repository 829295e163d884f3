/* Devices of one kind pool their runs into one model while their runs
 * agree (mlsba_kinds_t; the pooling itself is
 * lib/partition/measured.c's). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../platform/platform.h"
#include "balance.h"

typedef struct {
  const char *kind;
  size_t j;
} kind_entry_t;

static int cmp_kind(const void *a, const void *b) {
  const kind_entry_t *x = a, *y = b;
  int c = strcmp(x->kind, y->kind);
  return c ? c : (x->j > y->j) - (x->j < y->j);
}

/* Chains the devices of each kind, first to last (sorted: p may be large),
 * and gives every kind of two or more devices a pool. */
int mlsba__bal_set_kinds(mlsba__bal_ctx_t *C) {
  const mlsba_platform_t *pl = C->ex->pl;
  kind_entry_t *e = calloc(C->p ? C->p : 1, sizeof *e);
  if (e == NULL)
    return mlsba__fail(MLSBA_ENOMEM, "balance: out of memory");
  size_t n = 0;
  for (size_t j = 0; j < C->p; j++) {
    C->kinds.next[j] = SIZE_MAX;
    C->kinds.lead[j] = 1;
    if (pl->dev[j].kind)
      e[n++] = (kind_entry_t){pl->dev[j].kind, j};
  }
  qsort(e, n, sizeof *e, cmp_kind);
  for (size_t k = 1; k < n; k++) {
    if (strcmp(e[k].kind, e[k - 1].kind) == 0) {
      C->kinds.next[e[k - 1].j] = e[k].j;
      C->kinds.lead[e[k].j] = 0;
    }
  }
  free(e);
  for (size_t j = 0; j < C->p; j++)
    if (C->kinds.lead[j] && C->kinds.next[j] != SIZE_MAX)
      C->kinds.pool[j] = C->kinds.npools++;
  C->kinds.pools =
      calloc(C->kinds.npools ? C->kinds.npools : 1, sizeof *C->kinds.pools);
  return C->kinds.pools ? 0
                        : mlsba__fail(MLSBA_ENOMEM, "balance: out of memory");
}

/* What every device's model is built from (basis): its own runs, or the
 * pool of its kind while its runs agree with the others' (mlsba_kinds_t);
 * then the models, rebuilt. A device with no runs keeps its model. */
int mlsba__bal_rebuild_models(mlsba__bal_ctx_t *C, mlsba_balance_result_t *r) {
  const mlsba_platform_t *pl = C->ex->pl;
  for (size_t j = 0; j < C->p; j++)
    C->kinds.basis[j] = &C->dev.measured[j];
  for (size_t lead = 0; C->o.kinds == MLSBA_KINDS_POOL && lead < C->p; lead++) {
    if (!C->kinds.lead[lead] || C->kinds.next[lead] == SIZE_MAX)
      continue;
    size_t n = 0;
    for (size_t j = lead; j != SIZE_MAX; j = C->kinds.next[j]) {
      if (!C->dev.use[j] || C->dev.measured[j].n == 0)
        continue;
      C->kinds.member_dev[n] = j;
      C->kinds.alike[n] = !C->kinds.apart[j];
      C->kinds.members[n++] = &C->dev.measured[j];
    }
    if (n < 2)
      continue;
    mlsba__measured_t *pool = &C->kinds.pools[C->kinds.pool[lead]];
    int err = mlsba__measured_pool(C->kinds.members, n, C->o.eps, C->o.eps,
                                   pool, C->kinds.alike);
    if (err)
      return err;
    for (size_t k = 0; k < n; k++) {
      size_t j = C->kinds.member_dev[k];
      if (C->kinds.alike[k])
        C->kinds.basis[j] = pool;
      if (C->kinds.apart[j] != !C->kinds.alike[k])
        mlsba__bal_log(C, "%s: %s its kind (%s)", pl->dev[j].name,
                       C->kinds.alike[k]
                           ? "its runs agree again with"
                           : "modelled from its own runs, apart from",
                       pl->dev[j].kind);
      C->kinds.apart[j] = !C->kinds.alike[k];
    }
  }
  for (size_t j = 0; j < C->p; j++) {
    int err = C->kinds.basis[j]->n
                  ? mlsba__measured_to_model(C->kinds.basis[j], r->models[j])
                  : 0;
    if (err)
      return err;
  }
  return 0;
}

/* Every loaded device's point is known well (mlsba__measured_known_well)
 * within eps/2. One run that looks balanced under timing noise is often
 * luck: with 3% noise on the sim desktop, single runs stopped the routine
 * up to 6% from the optimum; on this shared VM they fit splits to a slow
 * moment. When every loaded device has one model (one kind, pooled), the
 * distribution does not depend on the speeds measured, only on the
 * model's shape and the caps: no run could move it, and none is waited
 * for. */
int mlsba__bal_all_known_well(const mlsba__bal_ctx_t *C, const int64_t *load) {
  const mlsba__measured_t *one = NULL;
  int shared = 1;
  for (size_t j = 0; j < C->p; j++) {
    if (load[j] > 0) {
      shared &= one == NULL || C->kinds.basis[j] == one;
      one = C->kinds.basis[j];
    }
  }
  if (shared)
    return 1;
  for (size_t j = 0; j < C->p; j++)
    if (load[j] > 0 && !mlsba__measured_known_well(C->kinds.basis[j], load[j],
                                                   C->o.eps, C->o.eps / 2))
      return 0;
  return 1;
}
