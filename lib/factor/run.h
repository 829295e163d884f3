/* One factorization on an executor's devices: the step loop (run.c) and
 * what it keeps between steps. */
#ifndef MLSBA_FACTOR_RUN_H
#define MLSBA_FACTOR_RUN_H

#include "factor.h"

typedef struct mlsba__factor_run {
  mlsba_executor_t *ex;
  const mlsba_platform_t *pl;
  mlsba__factor_problem_t *P;
  mlsba_factor_opts_t o;
  mlsba_factor_report_t *R;
  size_t p, q;
  size_t *group_size, *group_dev;
  int virt;              /* every device simulated: virtual time */
  long panel_dev;        /* the core that factorizes panels, or -1 */
  double unit_ref;       /* flops of a sim profile's unit: 2 n^2 */
  mlsba_model_t **rate;  /* p flop-rate models by units */
  unsigned char *active; /* p: takes update units */
  double *fraction;      /* the fixed slice, once tuned */
  int64_t *load, *exec_off, *log_off, *clip, *one;
  double *time, *extra;
  double clock;       /* virtual seconds so far */
  double panel_flops; /* of the last panel measured (real devices) */
  double panel_s;     /* its time */
  size_t step;        /* the next report entry */
} mlsba__factor_run_t;

int mlsba__factor_run_open(mlsba__factor_run_t *F, mlsba_executor_t *ex,
                           mlsba__factor_problem_t *P,
                           const mlsba_factor_opts_t *o,
                           mlsba_factor_report_t *R);
int mlsba__factor_run(mlsba__factor_run_t *F);
void mlsba__factor_run_close(mlsba__factor_run_t *F);

/* factor.c: the models of the update kernel kept in opts.model_dir. */
void mlsba__factor_run_load_models(mlsba__factor_run_t *F);
int mlsba__factor_run_save(mlsba__factor_run_t *F);

#endif
