/* mlsba-inpa's runs: a multiplier balances the ranks once, then the
 * product runs --repeat times on the generated matrices (balanced again
 * only when the rank times drift apart). The figure a user compares with
 * another library's is the whole job's wall time, balancing included;
 * the product's own time is the median run's. */
#include "inpa_runs.h"

#include <stdlib.h>
#include <string.h>

static int by_value(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* The median of x[n] (the upper one of an even count); x unchanged. */
static double median_of(const double *x, int64_t n) {
  double *sorted = malloc((size_t)n * sizeof *sorted);
  if (sorted == NULL)
    return x[n - 1]; /* no room for a copy: the last run stands for all */
  memcpy(sorted, x, (size_t)n * sizeof *sorted);
  qsort(sorted, (size_t)n, sizeof *sorted, by_value);
  double m = sorted[n / 2];
  free(sorted);
  return m;
}

static void add_split(mlsba_mpi_split_t *to, const mlsba_mpi_split_t *s) {
  to->balance_s += s->balance_s;
  to->move_s += s->move_s;
  to->fill_s += s->fill_s;
  to->product_s += s->product_s;
  to->check_s += s->check_s;
  to->gather_s += s->gather_s;
}

int inpa_runs(MPI_Comm comm, const mlsba_mpi_multiply_opts_t *o, int64_t repeat,
              inpa_runs_t *R) {
  memset(R, 0, sizeof *R);
  R->repeat = repeat;
  R->verified = 1;
  R->makespan = calloc((size_t)repeat, sizeof *R->makespan);
  R->wall = calloc((size_t)repeat, sizeof *R->wall);
  R->rebalanced = calloc((size_t)repeat, sizeof *R->rebalanced);
  /* Every rank stops alike, also where only one ran out of memory. */
  int mine = !R->makespan || !R->wall || !R->rebalanced, any = 0;
  MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm);
  if (any)
    return 1;
  mlsba_mpi_multiplier_t *M = NULL;
  int err = mlsba_mpi_multiplier_create(comm, o, &M);
  if (err)
    return err;
  const mlsba_mpi_result_t *bal = mlsba_mpi_multiplier_balancing(M);
  R->wall_s = bal->wall_s;
  add_split(&R->split, &bal->split);
  for (int64_t i = 0; i < repeat && !err; i++) {
    mlsba_mpi_result_free(&R->last);
    if ((err = mlsba_mpi_multiplier_run(M, &R->last)) != 0)
      break;
    R->makespan[i] = R->last.makespan_s;
    R->wall[i] = R->last.wall_s;
    R->rebalanced[i] = R->last.rebalanced;
    R->wall_s += R->last.wall_s;
    add_split(&R->split, &R->last.split);
    if (R->last.verified < 0)
      R->verified = -1;
    else if (R->verified > 0)
      R->verified = R->last.verified;
    if (R->last.max_rel_error > R->max_rel_error)
      R->max_rel_error = R->last.max_rel_error;
  }
  mlsba_mpi_multiplier_destroy(M);
  if (err)
    return err;
  double median = median_of(R->makespan, repeat);
  double flops = 2.0 * (double)o->n * (double)(o->m ? o->m : o->n) *
                 (double)(o->k ? o->k : o->n);
  R->last.makespan_s = median;
  R->last.gflops = median > 0 ? flops / median * 1e-9 : 0;
  R->last.verified = R->verified;
  R->last.max_rel_error = R->max_rel_error;
  return 0;
}

void inpa_runs_free(inpa_runs_t *R) {
  free(R->makespan);
  free(R->wall);
  free(R->rebalanced);
  mlsba_mpi_result_free(&R->last);
  memset(R, 0, sizeof *R);
}

void inpa_runs_print(const inpa_runs_t *R) {
  const mlsba_mpi_split_t *s = &R->split;
  int again = 0;
  for (int64_t i = 0; i < R->repeat; i++)
    again += R->rebalanced[i];
  printf("whole job   %.4f s for %lld product%s%s\n", R->wall_s,
         (long long)R->repeat, R->repeat > 1 ? "s" : "",
         again ? ", balanced again on drift" : "");
  printf("            balancing %.4f s, fill %.4f, product %.4f,\n",
         s->balance_s, s->fill_s, s->product_s);
  printf("            check %.4f, gather %.4f, moves %.4f\n", s->check_s,
         s->gather_s, s->move_s);
}

void inpa_runs_json(const inpa_runs_t *R, const mlsba_mpi_multiply_opts_t *o,
                    json_t *j) {
  if (j == NULL)
    return;
  const mlsba_mpi_split_t *s = &R->split;
  json_object_set_new(j, "m", json_integer(o->m ? o->m : o->n));
  json_object_set_new(j, "k", json_integer(o->k ? o->k : o->n));
  json_object_set_new(j, "transa", json_string(o->transa == 'T' ? "T" : "N"));
  json_object_set_new(j, "transb", json_string(o->transb == 'T' ? "T" : "N"));
  json_object_set_new(j, "repeat", json_integer(R->repeat));
  json_object_set_new(j, "wall_s", json_real(R->wall_s));
  json_object_set_new(j, "wall",
                      json_pack("{s:f, s:f, s:f, s:f, s:f, s:f}", "balance_s",
                                s->balance_s, "move_s", s->move_s, "fill_s",
                                s->fill_s, "product_s", s->product_s, "check_s",
                                s->check_s, "gather_s", s->gather_s));
  json_t *runs = json_array();
  for (int64_t i = 0; i < R->repeat; i++)
    json_array_append_new(runs, json_pack("{s:I, s:f, s:f, s:b}", "run",
                                          (json_int_t)(i + 1), "makespan_s",
                                          R->makespan[i], "wall_s", R->wall[i],
                                          "rebalanced", R->rebalanced[i]));
  json_object_set_new(j, "runs", runs);
}
