/* The factorizations' distributed matrices (mlsba_mpi_factor_matrix): a
 * layout of lib/partition (homogeneous, or drawn from the ranks' node
 * models) behind an owner-function description, so that the application
 * queries and fills its blocks, and redistributes to and from it, as it
 * does with any description. Rank 0 draws the layout and sends its
 * ownership to every rank, so that every rank holds the same one even if
 * the ranks' arithmetic differs. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_*: which ranks share a core */
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/error.h"
#include "../devices/kernels.h"
#include "factor.h"
#include "matrix.h"

static const char *const layout_names[] = {"homogeneous", "fpm", "constant",
                                           "process-scaling"};
enum { LAYOUTS = sizeof layout_names / sizeof *layout_names };

const char *mlsba_mpi_layout_name(mlsba_mpi_layout_t layout) {
  return (unsigned)layout < LAYOUTS ? layout_names[layout] : NULL;
}

int mlsba_mpi_layout_from_name(const char *name, mlsba_mpi_layout_t *layout) {
  for (unsigned i = 0; name && layout && i < LAYOUTS; i++)
    if (!strcmp(name, layout_names[i])) {
      *layout = (mlsba_mpi_layout_t)i;
      return 0;
    }
  return mlsba__fail(MLSBA_EINVAL,
                     "unknown layout \"%s\" (homogeneous, fpm, "
                     "constant, process-scaling)",
                     name ? name : "(null)");
}

int64_t mlsba_mpi_process_scaling_count(double ratio, int64_t cores) {
  return mlsba__process_scaling_count(ratio, cores);
}

static const char *spell_layout(int64_t v) {
  return v >= 0 && v < LAYOUTS ? layout_names[v] : NULL;
}

/* The owner function of the descriptions made here: user is the layout. */
static int layout_owner(void *user, int64_t bi, int64_t bj, int64_t *lr,
                        int64_t *lc) {
  const mlsba__layout_t *L = user;
  int64_t nb = mlsba__layout_dims(L)->nb;
  size_t c = mlsba__layout_bcol_column(L, bj);
  *lr = mlsba__layout_row_g2l(L, c, bi) * nb;
  *lc = mlsba__layout_col_g2l(L, bj) * nb;
  return (int)mlsba__layout_owner(L, bi, bj);
}

static void free_layout(void *user) { mlsba__layout_destroy(user); }

const mlsba__layout_t *
mlsba__mpi_factor_layout_of(const mlsba_mpi_matrix_t *d) {
  return d && d->kind == MLSBA__MATRIX_OWNER && d->owner == layout_owner
             ? d->user
             : NULL;
}

/* ---- the node models, gathered on rank 0 ------------------------------ */

/* Collective: room for q values of size bytes on rank 0 (NULL on the
 * others), and in *have, on every rank, whether rank 0 got it: MPI_Gather
 * needs the room on its root, so every rank calls it only then. */
static void *head_room(MPI_Comm comm, int rank, int q, size_t size, int *have) {
  void *room = rank == 0 ? malloc((size_t)q * size) : NULL;
  *have = rank != 0 || room != NULL;
  MPI_Bcast(have, 1, MPI_INT, 0, comm);
  return room;
}

/* Every rank's model onto rank 0 (models[q], the caller destroys them),
 * as points (x, speed), max_load and transfer. Collective. */
static int gather_models(MPI_Comm comm, int rank, int q,
                         const mlsba_model_t *mine, mlsba_model_t **models) {
  int np = (int)mlsba_model_num_points(mine);
  size_t len = 2 * (size_t)np + 3;
  double *buf = malloc(len * sizeof *buf);
  int have;
  /* Each rank's count and offset on rank 0 (head_room: the gathers only
   * where rank 0 has the room for them). */
  int *counts = head_room(comm, rank, q, 2 * sizeof *counts, &have);
  int err =
      buf == NULL || !have || (rank == 0 && models == NULL) ? MLSBA_ENOMEM : 0;
  if (!err) {
    for (int i = 0; i < np; i++)
      mlsba_model_get_point(mine, (size_t)i, &buf[2 * i], &buf[2 * i + 1]);
    buf[2 * np] = (double)mlsba_model_max_load(mine);
    mlsba_model_get_transfer(mine, &buf[2 * np + 1], &buf[2 * np + 2]);
  }
  /* A rank out of memory still takes part, with nothing to send. */
  int n = err ? 0 : (int)len;
  if (have)
    MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, comm);
  double *all = NULL;
  if (rank == 0 && counts) {
    size_t total = 0;
    for (int r = 0; r < q; r++) {
      counts[q + r] = (int)total;
      total += (size_t)counts[r];
    }
    all = malloc((total ? total : 1) * sizeof *all);
    if (all == NULL)
      err = MLSBA_ENOMEM;
  }
  /* The models only where rank 0 has the room for them all. */
  int got = have && (rank != 0 || all != NULL);
  if (have)
    MPI_Bcast(&got, 1, MPI_INT, 0, comm);
  if (got)
    MPI_Gatherv(buf, n, MPI_DOUBLE, all, counts, counts ? counts + q : NULL,
                MPI_DOUBLE, 0, comm);
  for (int r = 0; rank == 0 && all && !err && r < q; r++) {
    const double *x = all + counts[q + r];
    int points = (counts[r] - 3) / 2;
    if (counts[r] < 3) {
      err = mlsba__fail(MLSBA_ENOMEM, "rank %d could not send its model", r);
      break;
    }
    if ((err = mlsba_model_create(&models[r])) != 0)
      break;
    for (int i = 0; i < points && !err; i++)
      err = mlsba_model_set_point(models[r], x[2 * i], x[2 * i + 1]);
    if (!err)
      err = mlsba_model_set_max_load(models[r], (int64_t)x[2 * points]);
    if (!err && (x[2 * points + 1] > 0 || x[2 * points + 2] > 0))
      err = mlsba_model_set_transfer(models[r], x[2 * points + 1],
                                     x[2 * points + 2]);
  }
  if (err == MLSBA_ENOMEM)
    mlsba__fail(err, "out of memory for the node models");
  free(all);
  free(counts);
  free(buf);
  return err;
}

/* ---- process scaling: which ranks share a node --------------------------- */

/* The lowest rank of this rank's host: a key of the host every rank can
 * compare. Collective: the host's communicator is split on every rank. */
static int host_low_rank(MPI_Comm comm, int rank) {
  MPI_Comm host;
  int low = rank;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL,
                          &host) == MPI_SUCCESS) {
    MPI_Allreduce(&rank, &low, 1, MPI_INT, MPI_MIN, host);
    MPI_Comm_free(&host);
  }
  return low;
}

/* This rank's node as a key every rank can compare: opts.node when given,
 * else minus one minus the lowest rank of its host (so that the two kinds
 * never meet). Collective: the host's communicator is split on every
 * rank, whatever its node. */
static int64_t node_key(MPI_Comm comm, int rank, int node) {
  int low = host_low_rank(comm, rank); /* on every rank: collective */
  return node > 0 ? node : -1 - (int64_t)low;
}

/* Rank 0's process-scaling layout of keys[q] (every rank's node), its
 * ranks renumbered from grid positions to comm's ranks: a node's ranks,
 * ascending, take its grid positions in the order the grid lists them
 * (Algorithm 1 puts them side by side in one grid row). */
static int process_scaling(const int64_t *keys, size_t q, int64_t m, int64_t n,
                           int64_t nb, mlsba__layout_t **out) {
  size_t *node = malloc(q * sizeof *node), *to = malloc(q * sizeof *to);
  size_t *taken = calloc(q, sizeof *taken),
         *spec = malloc(2 * q * sizeof *spec);
  int64_t *procs = calloc(q, sizeof *procs);
  int64_t bcols = (n + nb - 1) / nb, brows = (m + nb - 1) / nb;
  mlsba__layout_t *grid = NULL;
  int err = node && to && taken && spec && procs ? 0 : MLSBA_ENOMEM;
  size_t nodes = 0;
  /* Nodes numbered by their lowest rank. */
  for (size_t r = 0; !err && r < q; r++) {
    size_t i = 0;
    while (i < r && keys[i] != keys[r])
      i++;
    node[r] = i < r ? node[i] : nodes++;
    procs[node[r]]++;
  }
  if (!err)
    err = mlsba__layout_process_scaling(m, n, nb, nodes, procs,
                                        MLSBA__GRID_ALGORITHM1, &grid);
  size_t *row_owner = NULL, *bcol = NULL;
  if (!err) {
    row_owner = malloc((size_t)brows * q * sizeof *row_owner);
    bcol = malloc((size_t)bcols * sizeof *bcol);
    err = row_owner && bcol ? 0 : MLSBA_ENOMEM;
  }
  if (!err) {
    /* Grid position g, node i's k-th, goes to node i's k-th rank. */
    for (size_t g = 0; g < q; g++) {
      size_t i = mlsba__layout_rank_node(grid, g), r = 0;
      for (size_t seen = 0; r < q; r++)
        if (node[r] == i && seen++ == taken[i])
          break;
      taken[i]++;
      to[g] = r;
    }
    size_t cols = mlsba__layout_dims(grid)->columns;
    for (size_t g = 0; g < q; g++) {
      spec[to[g]] = mlsba__layout_rank_column(grid, g); /* rank_column */
      spec[q + to[g]] = node[to[g]];                    /* rank_node */
    }
    for (int64_t j = 0; j < bcols; j++)
      bcol[j] = mlsba__layout_bcol_column(grid, j);
    for (size_t c = 0; c < cols; c++)
      for (int64_t i = 0; i < brows; i++)
        row_owner[c * (size_t)brows + (size_t)i] =
            to[mlsba__layout_row_owner(grid, c, i)];
    mlsba__layout_spec_t sp = {.m = m,
                               .n = n,
                               .nb = nb,
                               .ranks = q,
                               .nodes = nodes,
                               .columns = cols,
                               .rank_node = spec + q,
                               .rank_column = spec,
                               .bcol_column = bcol,
                               .row_owner = row_owner};
    err = mlsba__layout_create(&sp, out);
    if (!err)
      mlsba__layout_set_kind(*out, MLSBA__LAYOUT_PROCESS_SCALING);
  }
  if (err == MLSBA_ENOMEM)
    mlsba__fail(err, "out of memory for the process-scaling layout");
  mlsba__layout_destroy(grid);
  free(row_owner);
  free(bcol);
  free(node);
  free(to);
  free(taken);
  free(spec);
  free(procs);
  return err;
}

/* ---- which ranks share a core ------------------------------------------ */

/* Rank 0's apart[q] (layout.h): ranks of one host whose bindings overlap
 * take one nonzero group, every other rank 0. A rank bound to every
 * online core (not bound at all) shares with no one: where the ranks run
 * is then the scheduler's, and no arrangement keeps them apart. Under
 * SMPI the simulated ranks are one process: none share. Returns 0 with
 * *apart NULL (on every rank but 0, or when no ranks share), or
 * MLSBA_ENOMEM on rank 0. Collective. */
static int sharing_ranks(MPI_Comm comm, int rank, int q, size_t **apart,
                         size_t **kin) {
  *apart = NULL;
  if (kin)
    *kin = NULL;
  enum { WORDS = sizeof(cpu_set_t) / sizeof(uint64_t) };
  /* The host's key, then the binding's words; all zero: not bound. */
  uint64_t mine[1 + WORDS];
  memset(mine, 0, sizeof mine);
  mine[0] = (uint64_t)host_low_rank(comm, rank);
  cpu_set_t set;
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (!mlsba__mpi_is_smpi() && sched_getaffinity(0, sizeof set, &set) == 0 &&
      CPU_COUNT(&set) < online)
    memcpy(mine + 1, &set, sizeof set);
  uint64_t *all = rank == 0 ? malloc((size_t)q * sizeof mine) : NULL;
  MPI_Gather(mine, 1 + WORDS, MPI_UINT64_T, all, 1 + WORDS, MPI_UINT64_T, 0,
             comm);
  if (rank != 0)
    return 0;
  size_t *group = all ? calloc((size_t)q, sizeof *group) : NULL;
  size_t *same = kin && group ? calloc((size_t)q, sizeof *same) : NULL;
  if (group == NULL || (kin && same == NULL)) {
    free(all);
    free(group);
    return mlsba__fail(MLSBA_ENOMEM, "out of memory for the ranks' cores");
  }
  /* Groups by overlap, merged where a rank overlaps two (one pass
   * relabels: q is small). */
  size_t groups = 0;
  for (int i = 0; i < q; i++)
    for (int j = i + 1; j < q; j++) {
      const uint64_t *a = all + (size_t)i * (1 + WORDS),
                     *b = all + (size_t)j * (1 + WORDS);
      int overlap = 0;
      for (int w = 1; a[0] == b[0] && w <= WORDS && !overlap; w++)
        overlap = (a[w] & b[w]) != 0;
      if (!overlap)
        continue;
      if (group[i] == 0 && group[j] == 0)
        group[i] = group[j] = ++groups;
      else if (group[j] == 0)
        group[j] = group[i];
      else if (group[i] == 0)
        group[i] = group[j];
      else if (group[i] != group[j]) {
        size_t from = group[j], to = group[i];
        for (int r = 0; r < q; r++)
          group[r] = group[r] == from ? to : group[r];
      }
    }
  /* Kins: ranks of one host bound to as many cores (all of them when not
   * bound), none of them shared; numbered from 1 by their first rank. */
  for (int i = 0; same && i < q; i++) {
    const uint64_t *a = all + (size_t)i * (1 + WORDS);
    int cores = 0;
    for (int w = 1; w <= WORDS; w++)
      cores += __builtin_popcountll(a[w]);
    for (int j = 0; group[i] == 0 && same[i] == 0 && j <= i; j++) {
      const uint64_t *b = all + (size_t)j * (1 + WORDS);
      int other = 0;
      for (int w = 1; w <= WORDS; w++)
        other += __builtin_popcountll(b[w]);
      if (group[j] == 0 && a[0] == b[0] && cores == other)
        same[i] = j == i ? (size_t)i + 1 : same[j];
    }
  }
  free(all);
  if (kin)
    *kin = same;
  if (groups == 0) {
    free(group);
    return 0;
  }
  *apart = group;
  return 0;
}

/* ---- the layout, drawn on rank 0 and sent to every rank ---------------- */

/* Rank 0's layout of opts. */
static int draw(MPI_Comm comm, int q, int64_t m, int64_t n, int64_t nb,
                const mlsba_mpi_factor_layout_opts_t *o, int rank,
                mlsba__layout_t **out) {
  *out = NULL;
  /* A matrix of fewer blocks than ranks leaves some ranks without blocks
   * in any layout; the walks need a block for every node, so such a
   * matrix takes the homogeneous layout (every rank knows this alike). */
  double blocks = (double)((m + nb - 1) / nb) * (double)((n + nb - 1) / nb);
  if (o->layout == MLSBA_MPI_LAYOUT_PROCESS_SCALING) {
    int64_t key = node_key(comm, rank, o->node);
    int have;
    int64_t *keys = head_room(comm, rank, q, sizeof *keys, &have);
    if (have)
      MPI_Gather(&key, 1, MPI_INT64_T, keys, 1, MPI_INT64_T, 0, comm);
    int err = 0;
    if (rank == 0)
      err = keys ? process_scaling(keys, (size_t)q, m, n, nb, out)
                 : mlsba__fail(MLSBA_ENOMEM, "out of memory for the nodes");
    free(keys);
    return err;
  }
  if (o->layout == MLSBA_MPI_LAYOUT_HOMOGENEOUS || (double)q > blocks) {
    if (rank != 0)
      return 0;
    size_t P, Q;
    mlsba__layout_grid((size_t)q, &P, &Q);
    return mlsba__layout_homogeneous(m, n, nb, P, Q, out);
  }
  mlsba_model_t **models = calloc((size_t)q, sizeof *models);
  /* Every rank gathers, whatever its memory: a collective call. */
  int err = gather_models(comm, rank, q, o->model, models);
  size_t *apart = NULL, *kin = NULL;
  /* The same hardware's ranks only when asked (every rank knows alike). */
  double kin_alike = o->kin_alike;
  MPI_Allreduce(MPI_IN_PLACE, &kin_alike, 1, MPI_DOUBLE, MPI_MAX, comm);
  int shared_err =
      sharing_ranks(comm, rank, q, &apart,
                    kin_alike > 0 && !mlsba__mpi_is_smpi() ? &kin : NULL);
  err = err ? err : shared_err;
  /* Every rank's cost a block column of width (opts.swap_s, checked on
   * every rank before), gathered when one is nonzero. */
  double most = o->swap_s, *swap = NULL;
  MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_DOUBLE, MPI_MAX, comm);
  int counted = most > 0;
  if (counted) {
    int have;
    swap = head_room(comm, rank, q, sizeof *swap, &have);
    if (have)
      MPI_Gather(&o->swap_s, 1, MPI_DOUBLE, swap, 1, MPI_DOUBLE, 0, comm);
    else if (rank == 0 && !err)
      err = mlsba__fail(MLSBA_ENOMEM, "out of memory for the ranks' costs");
  }
  double alike = o->alike;
  MPI_Allreduce(MPI_IN_PLACE, &alike, 1, MPI_DOUBLE, MPI_MAX, comm);
  if (!err && rank == 0) {
    mlsba__layout_opts_t lo = {.lower = o->lower,
                               .apart = apart,
                               .link_s = counted ? swap : NULL,
                               .alike = alike,
                               .kin = kin,
                               .kin_alike = kin_alike};
    const mlsba_model_t *const *mv = (const mlsba_model_t *const *)models;
    err = o->layout == MLSBA_MPI_LAYOUT_FPM
              ? mlsba__layout_fpm(mv, (size_t)q, m, n, nb, &lo, out)
              : mlsba__layout_constant(mv, (size_t)q, m, n, nb, &lo, out);
  }
  for (int r = 0; models && r < q; r++)
    mlsba_model_destroy(models[r]);
  free(models);
  free(apart);
  free(kin);
  free(swap);
  return err;
}

/* Rank 0's layout to every rank as its ownership (the spec), from which
 * each makes its own copy. Collective. */
static int share(MPI_Comm comm, int rank, int q, int64_t m, int64_t n,
                 int64_t nb, mlsba__layout_t **layout) {
  int64_t head[2] = {0, 0}; /* columns, kind */
  const mlsba__layout_dims_t *D = rank == 0 ? mlsba__layout_dims(*layout) : 0;
  if (D) {
    head[0] = (int64_t)D->columns;
    head[1] = (int64_t)D->kind;
  }
  MPI_Bcast(head, 2, MPI_INT64_T, 0, comm);
  int64_t brows = (m + nb - 1) / nb, bcols = (n + nb - 1) / nb;
  size_t cols = (size_t)head[0];
  size_t len = (size_t)q + (size_t)bcols + cols * (size_t)brows;
  uint64_t *buf = malloc(len * sizeof *buf);
  size_t *spec = malloc(len * sizeof *spec);
  int err = buf == NULL || spec == NULL ? MLSBA_ENOMEM : 0;
  if ((err = mlsba__mpi_agree(comm, err ? mlsba__fail(err, "out of memory for "
                                                           "the layout")
                                        : 0)) != 0) {
    free(buf);
    free(spec);
    return err;
  }
  if (rank == 0) {
    size_t at = 0;
    for (int r = 0; r < q; r++)
      buf[at++] = mlsba__layout_rank_column(*layout, (size_t)r);
    for (int64_t j = 0; j < bcols; j++)
      buf[at++] = mlsba__layout_bcol_column(*layout, j);
    for (size_t c = 0; c < cols; c++)
      for (int64_t i = 0; i < brows; i++)
        buf[at++] = mlsba__layout_row_owner(*layout, c, i);
    mlsba__layout_destroy(*layout);
    *layout = NULL;
  }
  /* Whole matrices' ownership can pass 2^31 entries only for grids the
   * layout refuses already (2^24 blocks a side, a few columns). */
  MPI_Bcast(buf, (int)len, MPI_UINT64_T, 0, comm);
  for (size_t i = 0; i < len; i++)
    spec[i] = (size_t)buf[i];
  mlsba__layout_spec_t s = {.m = m,
                            .n = n,
                            .nb = nb,
                            .ranks = (size_t)q,
                            .nodes = (size_t)q,
                            .columns = cols,
                            .rank_column = spec,
                            .bcol_column = spec + q,
                            .row_owner = spec + q + bcols};
  err = mlsba__layout_create(&s, layout);
  if (!err)
    mlsba__layout_set_kind(*layout, (mlsba__layout_kind_t)head[1]);
  free(spec);
  free(buf);
  return mlsba__mpi_agree(comm, err);
}

/* This rank's verdict on the arguments. */
static int check_args(int64_t m, int64_t n, int64_t nb,
                      const mlsba_mpi_factor_layout_opts_t *o,
                      mlsba_mpi_matrix_t **out) {
  if (o == NULL || out == NULL)
    return mlsba__fail(MLSBA_EINVAL, "mlsba_mpi_factor_matrix: %s is NULL",
                       o ? "matrix" : "opts");
  if ((unsigned)o->layout >= LAYOUTS)
    return mlsba__fail(MLSBA_EINVAL,
                       "mlsba_mpi_factor_matrix: unknown "
                       "layout %d",
                       (int)o->layout);
  if (o->block < 0)
    return mlsba__fail(MLSBA_EINVAL,
                       "mlsba_mpi_factor_matrix: block %lld "
                       "is negative",
                       (long long)o->block);
  int err = mlsba__layout_check_size(m, n, nb);
  if (err)
    return err;
  /* A step's panel ((m - k0) x nb elements), U's block row and the
   * interchanged rows go in pieces of whole columns below 2^31 bytes
   * (mlsba__mpi_dfac_t::piece), a row's pivots and Cholesky's diagonal
   * block (nb x nb) whole: a column, a row and that block must fit. */
  if ((double)(m > n ? m : n) * 16 > 1073741824.0 ||
      (double)nb * (double)nb * 16 > 2147483647.0)
    return mlsba__fail(MLSBA_EINVAL,
                       "mlsba_mpi_factor_matrix: %lld x %lld "
                       "in blocks of %lld: a column or the "
                       "diagonal block would pass the 2^31 bytes "
                       "of one MPI message (at most 2^26 rows "
                       "and columns, a block of 11585)",
                       (long long)m, (long long)n, (long long)nb);
  if (o->lower && m != n)
    return mlsba__fail(MLSBA_EINVAL,
                       "mlsba_mpi_factor_matrix: lower (Cholesky) "
                       "needs a square matrix, got %lld x %lld",
                       (long long)m, (long long)n);
  if (o->layout == MLSBA_MPI_LAYOUT_PROCESS_SCALING && o->node < 0)
    return mlsba__fail(MLSBA_EINVAL,
                       "mlsba_mpi_factor_matrix: node %d is negative "
                       "(1 or more names a node, 0 takes the host)",
                       o->node);
  if (!(o->swap_s >= 0 && isfinite(o->swap_s)))
    return mlsba__fail(MLSBA_EINVAL,
                       "mlsba_mpi_factor_matrix: swap_s %g is not a "
                       "finite time >= 0 (seconds a block column of "
                       "width a step)",
                       o->swap_s);
  if (!(o->kin_alike >= 0 && isfinite(o->kin_alike)))
    return mlsba__fail(MLSBA_EINVAL,
                       "mlsba_mpi_factor_matrix: kin_alike %g is not a "
                       "finite relative speed difference >= 0",
                       o->kin_alike);
  if (!(o->alike >= 0 && isfinite(o->alike)))
    return mlsba__fail(MLSBA_EINVAL,
                       "mlsba_mpi_factor_matrix: alike %g is not a "
                       "finite relative speed difference >= 0",
                       o->alike);
  if (o->layout != MLSBA_MPI_LAYOUT_HOMOGENEOUS &&
      o->layout != MLSBA_MPI_LAYOUT_PROCESS_SCALING &&
      mlsba_model_num_points(o->model) == 0)
    return mlsba__fail(MLSBA_EINVAL,
                       "mlsba_mpi_factor_matrix: the %s layout "
                       "needs this rank's node model (opts.model "
                       "%s)",
                       layout_names[o->layout],
                       o->model ? "has no points" : "is NULL");
  return 0;
}

/* The blocks each rank is given at least, on average, by the largest
 * default block that does (mlsba_mpi_factor_block). Measured on 2 equal
 * ranks of one core each (lu32h, benchmarks/RESULTS.md): at N = 4096
 * (128 blocks of 256 a rank) LU ran 12% faster at 256 than at 128, at
 * 8192 1-5% faster, Cholesky at 4096 within 2%. Fewer blocks a rank
 * leave the layout coarser shares to give and the lookahead a longer
 * panel against a shorter update: there 128 stays, as before. */
enum { BLOCKS_A_RANK = 128 };

int64_t mlsba_mpi_factor_block(int64_t m, int64_t n, int ranks) {
  static const int64_t sizes[] = {256, 192};
  double q = ranks > 1 ? (double)ranks : 1.0;
  m = m > 1 ? m : 1;
  n = n > 1 ? n : 1;
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    double blocks = (double)((m + sizes[i] - 1) / sizes[i]) *
                    (double)((n + sizes[i] - 1) / sizes[i]);
    if (blocks >= BLOCKS_A_RANK * q)
      return sizes[i];
  }
  return 128;
}

/* The leading dimension of a rank's local array of lrows rows: lrows
 * rounded up to LD_ALIGN elements, and LD_ALIGN more where that is a
 * multiple of LD_CONFLICT elements. The update's GEMM writes C in tiles
 * of a few columns ld apart; at ld = 8192 doubles (64 KiB, 2 ranks at
 * N = 8192) every column of a tile, and of the B panel OpenBLAS packs
 * from U's block row, falls into the same set of each cache level (the
 * L1's 4 KiB, the L2's 64 KiB period). One core's DGEMM at the
 * update's shapes (N = 8192, nb = 256, rank 0's half of every step's
 * trailing columns, system OpenBLAS, both cores running it at once):
 * 41.5-42.2 GFLOPS at ld 8192, 43.5-45.9 at 8208 and 44.5-46.0 at 8224
 * (lu32j, benchmarks/RESULTS.md; cells35f saw 5-8% on one core). The
 * 16 elements cost 64 or 128 bytes a column. The application asks
 * mlsba_mpi_matrix_local() for ld, as it always had to. */
enum { LD_ALIGN = 16, LD_CONFLICT = 256 };

static int64_t padded_ld(int64_t lrows) {
  int64_t ld = (lrows + LD_ALIGN - 1) / LD_ALIGN * LD_ALIGN;
  if (ld % LD_CONFLICT == 0)
    ld += LD_ALIGN;
  return ld;
}

int mlsba_mpi_factor_matrix(MPI_Comm comm, int64_t m, int64_t n,
                            const mlsba_mpi_factor_layout_opts_t *opts,
                            mlsba_mpi_matrix_t **out) {
  int rank, q;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &q);
  if (out)
    *out = NULL;
  int64_t nb =
      opts && opts->block > 0 ? opts->block : mlsba_mpi_factor_block(m, n, q);
  int err = check_args(m, n, nb, opts, out);
  if ((err = mlsba__mpi_agree(comm, err)) != 0)
    return err;
  mlsba_mpi_layout_t kind = opts->layout;
  int lower = opts->lower;
  const mlsba__mpi_value_t agreed[] = {
      MLSBA__MPI_NUMBER("m", m), MLSBA__MPI_NUMBER("n", n),
      MLSBA__MPI_NUMBER("block", nb),
      MLSBA__MPI_ENUM_VALUE("layout", kind, spell_layout),
      MLSBA__MPI_NUMBER("lower", lower)};
  if ((err =
           mlsba__mpi_agree_values(comm, agreed, sizeof agreed / sizeof *agreed,
                                   "mlsba_mpi_factor_matrix")) != 0)
    return err;
  mlsba__layout_t *layout = NULL;
  err = draw(comm, q, m, n, nb, opts, rank, &layout);
  if ((err = mlsba__mpi_agree(comm, err)) != 0) {
    mlsba__layout_destroy(layout);
    return err;
  }
  if ((err = share(comm, rank, q, m, n, nb, &layout)) != 0) {
    mlsba__layout_destroy(layout); /* made on the ranks that could */
    return err;
  }
  /* The cores' kernels are chosen once a process, on the first call
   * that needs them (OpenBLAS loaded, the choice read from its cache:
   * 50 ms a rank here): made here, with the layout, on every rank at
   * once, a factorization's time is its own, as a ScaLAPACK program's
   * BLAS is loaded before it starts. */
  (void)mlsba__cpu_kernel_of(MLSBA_PRECISION_DOUBLE, MLSBA__CPU_PRODUCT);
  int64_t lrows = 0, lcols = 0;
  mlsba__layout_local_size(layout, (size_t)rank, &lrows, &lcols);
  err = mlsba_mpi_matrix_create(comm, m, n, nb, nb, layout_owner, layout,
                                padded_ld(lrows > 1 ? lrows : 1), out);
  if (!err)
    (*out)->free_user = free_layout;
  else
    mlsba__layout_destroy(layout);
  if ((err = mlsba__mpi_agree(comm, err)) != 0) {
    mlsba_mpi_matrix_destroy(*out);
    *out = NULL;
  }
  return err;
}
