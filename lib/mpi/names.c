/* The layer's values as a user writes them: the public names of its
 * enums, and the same names for the messages that compare ranks'
 * options (agree.c's spellers). */
#include <string.h>

#include "../core/error.h"
#include "../partition/inpa.h"
#include "internal.h"

/* The public algorithms are the head's, in the same order. */
_Static_assert((int)MLSBA_MPI_INPA == (int)MLSBA__INPA_FPM &&
                   (int)MLSBA_MPI_MULTIPLE_CPM ==
                       (int)MLSBA__INPA_MULTIPLE_CPM &&
                   (int)MLSBA_MPI_SINGLE_CPM == (int)MLSBA__INPA_SINGLE_CPM &&
                   (int)MLSBA_MPI_HOMOGENEOUS == (int)MLSBA__INPA_HOMOGENEOUS,
               "mlsba_mpi_algo_t follows mlsba__inpa_algo_t");

const char *mlsba_mpi_algo_name(mlsba_mpi_algo_t algo) {
  return mlsba__inpa_algo_name((mlsba__inpa_algo_t)algo);
}

int mlsba_mpi_algo_from_name(const char *name, mlsba_mpi_algo_t *algo) {
  if (algo == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_mpi_algo_from_name: algo is NULL");
  mlsba__inpa_algo_t a;
  int err = mlsba__inpa_algo_from_name(name, &a);
  if (!err)
    *algo = (mlsba_mpi_algo_t)a;
  return err;
}

static const char *const comm_model_names[] = {"none", "links"};

const char *mlsba_mpi_comm_model_name(mlsba_mpi_comm_model_t model) {
  return (unsigned)model <= MLSBA_MPI_COMM_LINKS ? comm_model_names[model]
                                                 : NULL;
}

int mlsba_mpi_comm_model_from_name(const char *name,
                                   mlsba_mpi_comm_model_t *model) {
  if (name == NULL || model == NULL)
    return mlsba__fail(MLSBA_EINVAL,
                       "mlsba_mpi_comm_model_from_name: %s is "
                       "NULL",
                       name == NULL ? "name" : "model");
  for (int m = MLSBA_MPI_COMM_NONE; m <= MLSBA_MPI_COMM_LINKS; m++)
    if (!strcmp(name, comm_model_names[m])) {
      *model = (mlsba_mpi_comm_model_t)m;
      return 0;
    }
  return mlsba__fail(MLSBA_EINVAL,
                     "unknown communication model '%s' (none, links)", name);
}

const char *mlsba_mpi_last_error(void) { return mlsba_last_error(); }

const char *mlsba_mpi_stop_name(mlsba_stop_reason_t stop) {
  return mlsba_stop_reason_name(stop);
}

static const char *const split_names[] = {"fpm", "dlt", "fpm-comm"};

const char *mlsba_mpi_mw_split_name(mlsba_mpi_mw_split_t split) {
  return (unsigned)split <= MLSBA_MPI_MW_FPM_COMM ? split_names[split] : NULL;
}

int mlsba_mpi_mw_split_from_name(const char *name,
                                 mlsba_mpi_mw_split_t *split) {
  for (int i = 0; name && split && i <= MLSBA_MPI_MW_FPM_COMM; i++)
    if (strcmp(name, split_names[i]) == 0) {
      *split = (mlsba_mpi_mw_split_t)i;
      return 0;
    }
  return mlsba__fail(MLSBA_EINVAL, "unknown split '%s' (fpm, dlt or fpm-comm)",
                     name ? name : "(null)");
}

/* ---- spellers for agree.c ---------------------------------------------- */

/* names[v], NULL outside them. */
static const char *pick(const char *const *names, size_t count, int64_t v) {
  return v >= 0 && (uint64_t)v < count ? names[v] : NULL;
}

const char *mlsba__mpi_spell_algo(int64_t v) {
  return v >= 0 && v <= MLSBA_MPI_HOMOGENEOUS
             ? mlsba_mpi_algo_name((mlsba_mpi_algo_t)v)
             : NULL;
}

const char *mlsba__mpi_spell_node_algo(int64_t v) {
  static const char *const names[] = {
      [MLSBA_MPI_NODE_MLSBA] = "mlsba", [MLSBA_MPI_NODE_IDPA] = "idpa"};
  return pick(names, sizeof names / sizeof *names, v);
}

const char *mlsba__mpi_spell_comm_model(int64_t v) {
  return pick(comm_model_names, sizeof comm_model_names / sizeof(char *), v);
}

const char *mlsba__mpi_spell_precision(int64_t v) {
  static const char *const names[] = {
      [MLSBA_PRECISION_SINGLE] = "single", [MLSBA_PRECISION_DOUBLE] = "double"};
  return pick(names, sizeof names / sizeof *names, v);
}

const char *mlsba__mpi_spell_split(int64_t v) {
  return pick(split_names, sizeof split_names / sizeof *split_names, v);
}

const char *mlsba__mpi_spell_links(int64_t v) {
  static const char *const names[] = {[MLSBA_MPI_MW_LINKS_MEASURE] = "measure",
                                      [MLSBA_MPI_MW_LINKS_PLATFORM] =
                                          "platform"};
  return pick(names, sizeof names / sizeof *names, v);
}

const char *mlsba__mpi_spell_set(int64_t v) { return v ? "set" : "NULL"; }
