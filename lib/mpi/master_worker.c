/* Seed 001's application across ranks (issue 24): C = A x B with A
 * (N x M) sent whole to every worker, B (M x K) split by columns among
 * the workers' devices, C returned; rank 0 is the master, which holds A,
 * B and C, sends and receives, and computes nothing.
 *
 * The split comes from models: every worker times its own devices at a
 * few column counts (virtual time for simulated devices), the master
 * gathers the times, the links (a ping-pong, or each worker's platform
 * file) and partitions K by compute-only FPM, by seed 001's DLT or by FPM
 * plus communication; then the run (master_worker.h says which file does
 * what). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "master_worker.h"

void mlsba_mpi_master_worker_opts_init(mlsba_mpi_master_worker_opts_t *o) {
  if (o == NULL)
    return;
  memset(o, 0, sizeof *o);
  o->platform = "auto";
  o->n = o->m = o->k = 1024;
  o->precision = MLSBA_PRECISION_DOUBLE;
  o->split = MLSBA_MPI_MW_FPM_COMM;
  o->links = MLSBA_MPI_MW_LINKS_MEASURE;
  o->seed = 1;
  o->verify_samples = 64;
}

/* The former name, kept for programs written against it. */
void mlsba_mpi_mw_opts_init(mlsba_mpi_master_worker_opts_t *o) {
  mlsba_mpi_master_worker_opts_init(o);
}

void mlsba_mpi_mw_result_free(mlsba_mpi_mw_result_t *r) {
  if (r == NULL)
    return;
  for (int w = 0; r->worker && w < r->workers; w++) {
    for (size_t d = 0; r->worker[w].devices && d < r->worker[w].ndevices; d++)
      free(r->worker[w].devices[d].full_name);
    free(r->worker[w].devices);
  }
  free(r->worker);
  mlsba__mpi_free(r->c);
  memset(r, 0, sizeof *r);
}

static int check_opts(const mlsba_mpi_master_worker_opts_t *o, int q) {
  if (q < 2)
    return mlsba__fail(MLSBA_EINVAL,
                       "master-worker needs a master and at least one "
                       "worker: 2 ranks or more, got %d",
                       q);
  if (o->n < 1 || o->m < 1 || o->k < 1)
    return mlsba__fail(MLSBA_EINVAL,
                       "N, M and K must be >= 1, got %lld, "
                       "%lld, %lld",
                       (long long)o->n, (long long)o->m, (long long)o->k);
  if (o->k < q - 1)
    return mlsba__fail(MLSBA_EINVAL,
                       "K = %lld columns for %d workers: every worker needs "
                       "at least one",
                       (long long)o->k, q - 1);
  /* Every message is one MPI call with an int count of elements. */
  if (o->n > INT_MAX / o->m || o->n > INT_MAX / o->k || o->m > INT_MAX / o->k)
    return mlsba__fail(MLSBA_EINVAL,
                       "N x M, N x K or M x K above %d elements: too large "
                       "for this layer's single messages",
                       INT_MAX);
  if ((unsigned)o->split > MLSBA_MPI_MW_FPM_COMM ||
      (unsigned)o->links > MLSBA_MPI_MW_LINKS_PLATFORM)
    return mlsba__fail(MLSBA_EINVAL, "unknown split or links");
  if (o->precision != MLSBA_PRECISION_DOUBLE &&
      o->precision != MLSBA_PRECISION_SINGLE)
    return mlsba__fail(MLSBA_EINVAL, "unknown precision");
  if (o->platform == NULL || o->platform[0] == '\0')
    return mlsba__fail(MLSBA_EINVAL, "no platform given");
  return 0;
}

/* The options every rank must share, as rank 0 has them: every message
 * is sized by N, M, K and the precision, and the master alone splits,
 * fills and checks. */
static int agree_on_opts(MPI_Comm comm,
                         const mlsba_mpi_master_worker_opts_t *o) {
  int fill = o->fill != NULL;
  const mlsba__mpi_value_t same[] = {
      MLSBA__MPI_NUMBER("option n", o->n),
      MLSBA__MPI_NUMBER("option m", o->m),
      MLSBA__MPI_NUMBER("option k", o->k),
      MLSBA__MPI_ENUM_VALUE("option precision", o->precision,
                            mlsba__mpi_spell_precision),
      MLSBA__MPI_ENUM_VALUE("option split", o->split, mlsba__mpi_spell_split),
      MLSBA__MPI_ENUM_VALUE("option links", o->links, mlsba__mpi_spell_links),
      MLSBA__MPI_NUMBER("option seed", o->seed),
      MLSBA__MPI_NUMBER("option verify_samples", o->verify_samples),
      MLSBA__MPI_ENUM_VALUE("option fill", fill, mlsba__mpi_spell_set)};
  return mlsba__mpi_agree_values(comm, same, sizeof same / sizeof *same,
                                 "every rank must pass the same options");
}

int mlsba_mpi_master_worker(MPI_Comm comm,
                            const mlsba_mpi_master_worker_opts_t *opts,
                            mlsba_mpi_mw_result_t *result) {
  if (result)
    memset(result, 0, sizeof *result);
  if (comm == MPI_COMM_NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_mpi_master_worker: comm is "
                                     "MPI_COMM_NULL");
  mlsba__mw_t W = {.comm = comm, .o = opts};
  MPI_Comm_rank(comm, &W.rank);
  MPI_Comm_size(comm, &W.q);
  W.workers = W.q - 1;
  int err =
      opts == NULL || result == NULL
          ? mlsba__fail(MLSBA_EINVAL, "mlsba_mpi_master_worker: %s is NULL",
                        opts == NULL ? "opts" : "result")
          : check_opts(opts, W.q);
  if ((err = mlsba__mpi_agree(comm, err)) == 0)
    err = agree_on_opts(comm, opts);
  if (!err) {
    W.elem = mlsba__mpi_elem(opts->precision);
    result->workers = W.workers;
    result->split = opts->split;
    err = mlsba__mw_open_worker(&W);
    err = mlsba__mpi_agree(comm, err);
  }
  if (!err)
    err = mlsba__mw_gather_devices(&W);
  if (!err)
    err = mlsba__mw_find_links(&W);
  if (!err)
    err = mlsba__mw_partition(&W, result);
  if (!err) {
    result->simulated = W.simulated;
    err = mlsba__mw_run(&W, result);
  }
  mlsba_executor_destroy(W.ex);
  mlsba_platform_destroy(W.pl);
  free(W.kind);
  free(W.ndev);
  free(W.kind_all);
  free(W.cols);
  free(W.links);
  free(W.probe);
  free(W.names);
  if (err && result)
    mlsba_mpi_mw_result_free(result);
  return err;
}
