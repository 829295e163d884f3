/* The self-adaptive balancing of seed 002 §V.A, its options and results,
 * and the one-shot entry points. The routine itself is in pieces, listed
 * in balance.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "balance.h"

void mlsba_balance_opts_init(mlsba_balance_opts_t *o) {
  if (o == NULL)
    return;
  memset(o, 0, sizeof *o);
  o->algorithm = MLSBA_ALGO_MLSBA;
  o->eps = 0.05;
  o->max_iter = 20;
  o->drive = MLSBA_DRIVE_SHARED;
  o->outlier = 0.25;
  o->drift = MLSBA_DRIFT_AUTO;
  o->rebalance_max_iter = 5;
}

double mlsba_imbalance_percent(double imbalance, double eps) {
  double tenths = 1000 * imbalance, limit = 1000 * eps;
  double shown = round(tenths);
  /* Rounded as usual unless that lands on the wrong side of eps. */
  if (imbalance < eps && shown >= limit)
    shown = floor(tenths);
  else if (imbalance > eps && shown <= limit)
    shown = ceil(tenths);
  return shown / 10;
}

int mlsba_balance_result_describe(const mlsba_balance_result_t *r, char *out,
                                  size_t size) {
  if (r == NULL || out == NULL || size == 0 ||
      mlsba_stop_reason_name(r->stop) == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_balance_result_describe: %s",
                       r && out && size ? "unknown stop reason"
                                        : "NULL or empty argument");
  const char *runs = r->iterations == 1 ? "run" : "runs";
  double imbalance = mlsba_imbalance_percent(r->imbalance, r->eps);
  double eps = 100 * r->eps;
  /* Noise explains a stop above eps when a point needs more runs than
   * the routine had to be known within eps / 2. */
  char why[160] = "the models see no better distribution";
  if (r->variation > r->eps / 2)
    snprintf(why, sizeof why,
             "the devices' times vary by %.0f%% from run to run, so the "
             "split is the best the runs can tell",
             100 * r->variation);
  switch (r->stop) {
  case MLSBA_STOP_BALANCED:
    snprintf(out, size,
             "balanced in %u %s: the device times agree within eps (%g%%) "
             "between groups and inside each; imbalance %.1f%%",
             r->iterations, runs, eps, imbalance);
    break;
  case MLSBA_STOP_FIXED_POINT:
    snprintf(out, size,
             "not balanced: stopped after %u %s at a fixed point, imbalance "
             "%.1f%% (eps %g%%): %s",
             r->iterations, runs, imbalance, eps, why);
    break;
  case MLSBA_STOP_MAX_ITER:
    snprintf(out, size,
             "not balanced within max-iter (%u %s): imbalance %.1f%% (eps "
             "%g%%)%s%s",
             r->iterations, runs, imbalance, eps,
             r->variation > r->eps / 2 ? "; " : "",
             r->variation > r->eps / 2 ? why : "");
    break;
  default:
    snprintf(out, size,
             "not balanced: a distribution came back after %u %s (a cycle: "
             "the algorithm does not follow the models), imbalance %.1f%% "
             "(eps %g%%)",
             r->iterations, runs, imbalance, eps);
  }
  return 0;
}

void mlsba_balance_result_free(mlsba_balance_result_t *r) {
  if (r == NULL)
    return;
  for (size_t i = 0; r->models && i < r->p; i++)
    mlsba_model_destroy(r->models[i]);
  free(r->models);
  free(r->load);
  free(r->time);
  free(r->alpha);
  free(r->points);
  free(r->history_load);
  free(r->history_makespan);
  free(r->history_imbalance);
  free(r->history_time);
  free(r->dropped);
  memset(r, 0, sizeof *r);
}

int mlsba__bal_check_opts(const mlsba_balance_opts_t *o) {
  if (o->model_dir != NULL && o->model_dir[0] == '\0')
    return mlsba__fail(MLSBA_EINVAL,
                       "balance: model_dir is empty (NULL keeps no models; "
                       "\"\" would put them in /)");
  if (!(o->eps >= 0) || !isfinite(o->eps) || o->max_iter < 1 ||
      o->max_iter > 100000 || !(o->outlier > 0) ||
      (unsigned)o->algorithm >= MLSBA_ALGO_COUNT)
    return mlsba__fail(MLSBA_EINVAL,
                       "balance: eps must be >= 0, max_iter in 1..100000, "
                       "outlier > 0, algorithm known (got %g, %u, %g, %d)",
                       o->eps, o->max_iter, o->outlier, (int)o->algorithm);
  if (!isfinite(o->drift) || o->granularity < 0 ||
      (unsigned)o->grouping > MLSBA_GROUPING_FLAT ||
      (unsigned)o->on_fault > MLSBA_ON_FAULT_STOP ||
      (unsigned)o->drive > MLSBA_DRIVE_DEVOTED ||
      (unsigned)o->sharing > MLSBA_SHARING_KEEP ||
      (unsigned)o->kinds > MLSBA_KINDS_SEPARATE)
    return mlsba__fail(MLSBA_EINVAL,
                       "balance: drift must be finite, granularity >= 0, and "
                       "grouping, on_fault, drive, sharing and kinds known "
                       "values");
  return 0;
}

int mlsba_balance_load(mlsba_executor_t *ex, const mlsba_load_t *w,
                       const mlsba_balance_opts_t *opts,
                       mlsba_balance_result_t *r) {
  if (ex == NULL || w == NULL || r == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_balance_load: %s is NULL",
                       ex == NULL  ? "executor"
                       : w == NULL ? "load"
                                   : "result");
  mlsba__bal_ctx_t C;
  int err = mlsba__bal_ctx_init(&C, ex, w, opts, r);
  if (!err)
    err = mlsba__bal_first(&C, r);
  mlsba__bal_ctx_free(&C);
  if (err)
    mlsba_balance_result_free(r);
  return err;
}

int mlsba_balance_gemm(mlsba_executor_t *ex, const mlsba_gemm_t *g,
                       const mlsba_balance_opts_t *opts,
                       mlsba_balance_result_t *r) {
  if (r)
    memset(r, 0, sizeof *r);
  mlsba_load_t *w = NULL;
  int err = ex == NULL || r == NULL
                ? mlsba__fail(MLSBA_EINVAL, "mlsba_balance_gemm: %s is NULL",
                              ex == NULL ? "executor" : "result")
                : mlsba_load_gemm(g, &w);
  if (!err)
    err = mlsba_balance_load(ex, w, opts, r);
  mlsba_load_destroy(w);
  return err;
}
