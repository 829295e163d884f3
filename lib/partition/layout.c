/* The layout object: an explicit ownership checked once and indexed so
 * that every query is O(1). See layout.h. */
#include "layout.h"

#include <stdlib.h>
#include <string.h>

#include "../core/error.h"

struct mlsba__layout {
  mlsba__layout_dims_t d;
  size_t *rank_node;         /* ranks */
  size_t *rank_column;       /* ranks */
  size_t *node_ranks;        /* nodes: how many ranks each runs */
  size_t *column_first;      /* columns + 1: column c's ranks start here */
  size_t *column_ranks;      /* ranks, column by column, ascending */
  size_t *bcol_column;       /* bcols */
  int64_t *bcol_local;       /* bcols: index among its column's */
  int64_t *column_bfirst;    /* columns + 1 */
  int64_t *column_bcols;     /* bcols, column by column, ascending */
  size_t *row_owner;         /* columns x brows */
  int64_t *row_local;        /* columns x brows: index among its owner's */
  int64_t *rank_rfirst;      /* ranks + 1 */
  int64_t *rank_brows;       /* columns x brows, rank by rank, ascending */
  int64_t *rank_elem_rows;   /* ranks: local rows in elements */
  int64_t *column_elem_cols; /* columns: local columns in elements */
};

void mlsba__layout_destroy(mlsba__layout_t *L) {
  if (!L)
    return;
  free(L->rank_node);
  free(L->rank_column);
  free(L->node_ranks);
  free(L->column_first);
  free(L->column_ranks);
  free(L->bcol_column);
  free(L->bcol_local);
  free(L->column_bfirst);
  free(L->column_bcols);
  free(L->row_owner);
  free(L->row_local);
  free(L->rank_rfirst);
  free(L->rank_brows);
  free(L->rank_elem_rows);
  free(L->column_elem_cols);
  free(L);
}

/* ---- checks ---------------------------------------------------------- */

static const char *const kind_names[MLSBA__LAYOUT_KIND_COUNT] = {
    [MLSBA__LAYOUT_EXPLICIT] = "explicit",
    [MLSBA__LAYOUT_HOMOGENEOUS] = "homogeneous",
    [MLSBA__LAYOUT_PROCESS_SCALING] = "process-scaling",
    [MLSBA__LAYOUT_CONSTANT] = "constant",
    [MLSBA__LAYOUT_FPM_REVERSE] = "fpm-reverse",
    [MLSBA__LAYOUT_FPM_FORWARD] = "fpm-forward",
    [MLSBA__LAYOUT_FPM_FROZEN] = "fpm-frozen",
};

const char *mlsba__layout_kind_name(mlsba__layout_kind_t kind) {
  return (unsigned)kind < MLSBA__LAYOUT_KIND_COUNT ? kind_names[kind] : NULL;
}

void mlsba__layout_set_kind(mlsba__layout_t *L, mlsba__layout_kind_t k) {
  L->d.kind = k;
}

int mlsba__layout_check_size(int64_t m, int64_t n, int64_t nb) {
  if (m < 1 || n < 1 || nb < 1)
    return mlsba__fail(MLSBA_EINVAL,
                       "layout: M, N and the block must be >= 1, got M = "
                       "%lld, N = %lld, nb = %lld",
                       (long long)m, (long long)n, (long long)nb);
  int64_t br = (m - 1) / nb + 1, bc = (n - 1) / nb + 1;
  if (br > MLSBA__LAYOUT_MAX_BLOCKS || bc > MLSBA__LAYOUT_MAX_BLOCKS)
    return mlsba__fail(
        MLSBA_EINVAL, "layout: %lld x %lld blocks; at most %lld a side",
        (long long)br, (long long)bc, (long long)MLSBA__LAYOUT_MAX_BLOCKS);
  return 0;
}

static int check_dims(const mlsba__layout_spec_t *s) {
  int err = mlsba__layout_check_size(s->m, s->n, s->nb);
  if (err)
    return err;
  if (s->ranks == 0 || s->nodes == 0 || s->columns == 0)
    return mlsba__fail(MLSBA_EINVAL, "layout: no %s",
                       s->ranks == 0   ? "ranks"
                       : s->nodes == 0 ? "nodes"
                                       : "node columns");
  if (s->columns > s->ranks || s->nodes > s->ranks)
    return mlsba__fail(MLSBA_EINVAL,
                       "layout: %zu ranks cannot fill %zu node columns and "
                       "run %zu nodes",
                       s->ranks, s->columns, s->nodes);
  if (!s->rank_column || !s->bcol_column || !s->row_owner ||
      (!s->rank_node && s->nodes != s->ranks))
    return mlsba__fail(MLSBA_EINVAL, "layout: an ownership array is NULL");
  return 0;
}

/* Every rank in a column, every column and node with a rank. */
static int check_ranks(const mlsba__layout_spec_t *s, mlsba__layout_t *L) {
  for (size_t r = 0; r < s->ranks; r++) {
    size_t node = s->rank_node ? s->rank_node[r] : r;
    if (node >= s->nodes || s->rank_column[r] >= s->columns)
      return mlsba__fail(MLSBA_EINVAL,
                         "layout: rank %zu is on node %zu of %zu, in node "
                         "column %zu of %zu",
                         r, node, s->nodes, s->rank_column[r], s->columns);
    L->rank_node[r] = node;
    L->rank_column[r] = s->rank_column[r];
    L->node_ranks[node]++;
    L->column_first[s->rank_column[r] + 1]++;
  }
  for (size_t i = 0; i < s->nodes; i++)
    if (L->node_ranks[i] == 0)
      return mlsba__fail(MLSBA_EINVAL, "layout: node %zu runs no rank", i);
  for (size_t c = 0; c < s->columns; c++) {
    if (L->column_first[c + 1] == 0)
      return mlsba__fail(MLSBA_EINVAL, "layout: node column %zu has no rank",
                         c);
    L->column_first[c + 1] += L->column_first[c];
  }
  return 0;
}

/* ---- indexing -------------------------------------------------------- */

static void index_ranks(mlsba__layout_t *L, size_t *fill) {
  memcpy(fill, L->column_first, L->d.columns * sizeof *fill);
  for (size_t r = 0; r < L->d.ranks; r++)
    L->column_ranks[fill[L->rank_column[r]]++] = r;
}

static int index_columns(const mlsba__layout_spec_t *s, mlsba__layout_t *L) {
  const mlsba__layout_dims_t *d = &L->d;
  int64_t *count = calloc(d->columns + 1, sizeof *count);
  if (!count)
    return mlsba__fail(MLSBA_ENOMEM, "layout: out of memory");
  for (int64_t j = 0; j < d->bcols; j++) {
    size_t c = s->bcol_column[j];
    if (c >= d->columns) {
      free(count);
      return mlsba__fail(MLSBA_EINVAL,
                         "layout: block column %lld is in node column %zu "
                         "of %zu",
                         (long long)j, c, d->columns);
    }
    L->bcol_column[j] = c;
    L->bcol_local[j] = count[c]++;
  }
  L->column_bfirst[0] = 0;
  for (size_t c = 0; c < d->columns; c++) {
    L->column_bfirst[c + 1] = L->column_bfirst[c] + count[c];
    /* The partial last block column is the last of its node column. */
    int64_t cols = count[c] * d->nb;
    if (count[c] > 0 && s->bcol_column[d->bcols - 1] == c)
      cols -= d->bcols * d->nb - d->n;
    L->column_elem_cols[c] = cols;
  }
  for (int64_t j = 0; j < d->bcols; j++) {
    size_t c = L->bcol_column[j];
    L->column_bcols[L->column_bfirst[c] + L->bcol_local[j]] = j;
  }
  free(count);
  return 0;
}

static int index_rows(const mlsba__layout_spec_t *s, mlsba__layout_t *L) {
  const mlsba__layout_dims_t *d = &L->d;
  int64_t *count = calloc(d->ranks, sizeof *count);
  if (!count)
    return mlsba__fail(MLSBA_ENOMEM, "layout: out of memory");
  for (size_t c = 0; c < d->columns; c++) {
    for (int64_t i = 0; i < d->brows; i++) {
      size_t k = c * (size_t)d->brows + (size_t)i, r = s->row_owner[k];
      if (r >= d->ranks || L->rank_column[r] != c) {
        free(count);
        return mlsba__fail(MLSBA_EINVAL,
                           "layout: block row %lld of node column %zu is "
                           "owned by rank %zu, not a rank of that column",
                           (long long)i, c, r);
      }
      L->row_owner[k] = r;
      L->row_local[k] = count[r]++;
    }
  }
  L->rank_rfirst[0] = 0;
  for (size_t r = 0; r < d->ranks; r++) {
    L->rank_rfirst[r + 1] = L->rank_rfirst[r] + count[r];
    int64_t rows = count[r] * d->nb;
    size_t last = L->rank_column[r] * (size_t)d->brows + (size_t)d->brows - 1;
    if (L->row_owner[last] == r)
      rows -= d->brows * d->nb - d->m;
    L->rank_elem_rows[r] = rows;
  }
  for (size_t k = 0; k < d->columns * (size_t)d->brows; k++) {
    size_t r = L->row_owner[k];
    int64_t i = (int64_t)(k % (size_t)d->brows);
    L->rank_brows[L->rank_rfirst[r] + L->row_local[k]] = i;
  }
  free(count);
  return 0;
}

static int allocate(mlsba__layout_t *L) {
  const mlsba__layout_dims_t *d = &L->d;
  size_t rows = d->columns * (size_t)d->brows, bc = (size_t)d->bcols;
  L->rank_node = malloc(d->ranks * sizeof *L->rank_node);
  L->rank_column = malloc(d->ranks * sizeof *L->rank_column);
  L->node_ranks = calloc(d->nodes, sizeof *L->node_ranks);
  L->column_first = calloc(d->columns + 1, sizeof *L->column_first);
  L->column_ranks = malloc(d->ranks * sizeof *L->column_ranks);
  L->bcol_column = malloc(bc * sizeof *L->bcol_column);
  L->bcol_local = malloc(bc * sizeof *L->bcol_local);
  L->column_bfirst = malloc((d->columns + 1) * sizeof *L->column_bfirst);
  L->column_bcols = malloc(bc * sizeof *L->column_bcols);
  L->row_owner = malloc(rows * sizeof *L->row_owner);
  L->row_local = malloc(rows * sizeof *L->row_local);
  L->rank_rfirst = malloc((d->ranks + 1) * sizeof *L->rank_rfirst);
  L->rank_brows = malloc(rows * sizeof *L->rank_brows);
  L->rank_elem_rows = malloc(d->ranks * sizeof *L->rank_elem_rows);
  L->column_elem_cols = malloc(d->columns * sizeof *L->column_elem_cols);
  if (!L->rank_node || !L->rank_column || !L->node_ranks || !L->column_first ||
      !L->column_ranks || !L->bcol_column || !L->bcol_local ||
      !L->column_bfirst || !L->column_bcols || !L->row_owner || !L->row_local ||
      !L->rank_rfirst || !L->rank_brows || !L->rank_elem_rows ||
      !L->column_elem_cols)
    return mlsba__fail(MLSBA_ENOMEM, "layout: out of memory");
  return 0;
}

int mlsba__layout_create(const mlsba__layout_spec_t *s, mlsba__layout_t **out) {
  if (!s || !out)
    return mlsba__fail(MLSBA_EINVAL, "layout: an argument is NULL");
  *out = NULL;
  int err = check_dims(s);
  if (err)
    return err;
  mlsba__layout_t *L = calloc(1, sizeof *L);
  if (!L)
    return mlsba__fail(MLSBA_ENOMEM, "layout: out of memory");
  L->d = (mlsba__layout_dims_t){s->m,
                                s->n,
                                s->nb,
                                (s->m - 1) / s->nb + 1,
                                (s->n - 1) / s->nb + 1,
                                s->ranks,
                                s->nodes,
                                s->columns,
                                MLSBA__LAYOUT_EXPLICIT};
  size_t *fill = malloc(s->columns * sizeof *fill);
  err = fill ? allocate(L) : mlsba__fail(MLSBA_ENOMEM, "layout: out of memory");
  if (!err)
    err = check_ranks(s, L);
  if (!err) {
    index_ranks(L, fill);
    err = index_columns(s, L);
  }
  if (!err)
    err = index_rows(s, L);
  free(fill);
  if (err) {
    mlsba__layout_destroy(L);
    return err;
  }
  *out = L;
  return 0;
}

/* ---- queries --------------------------------------------------------- */

const mlsba__layout_dims_t *mlsba__layout_dims(const mlsba__layout_t *L) {
  return &L->d;
}

size_t mlsba__layout_owner(const mlsba__layout_t *L, int64_t bi, int64_t bj) {
  return L->row_owner[L->bcol_column[bj] * (size_t)L->d.brows + (size_t)bi];
}

size_t mlsba__layout_owner_node(const mlsba__layout_t *L, int64_t bi,
                                int64_t bj) {
  return L->rank_node[mlsba__layout_owner(L, bi, bj)];
}

size_t mlsba__layout_rank_node(const mlsba__layout_t *L, size_t rank) {
  return L->rank_node[rank];
}

size_t mlsba__layout_rank_column(const mlsba__layout_t *L, size_t rank) {
  return L->rank_column[rank];
}

size_t mlsba__layout_node_ranks(const mlsba__layout_t *L, size_t node) {
  return L->node_ranks[node];
}

size_t mlsba__layout_bcol_column(const mlsba__layout_t *L, int64_t bj) {
  return L->bcol_column[bj];
}

size_t mlsba__layout_row_owner(const mlsba__layout_t *L, size_t c, int64_t bi) {
  return L->row_owner[c * (size_t)L->d.brows + (size_t)bi];
}

const size_t *mlsba__layout_column_ranks(const mlsba__layout_t *L, size_t c,
                                         size_t *count) {
  *count = L->column_first[c + 1] - L->column_first[c];
  return L->column_ranks + L->column_first[c];
}

int64_t mlsba__layout_col_g2l(const mlsba__layout_t *L, int64_t bj) {
  return L->bcol_local[bj];
}

int64_t mlsba__layout_row_g2l(const mlsba__layout_t *L, size_t c, int64_t bi) {
  return L->row_local[c * (size_t)L->d.brows + (size_t)bi];
}

int64_t mlsba__layout_col_l2g(const mlsba__layout_t *L, size_t rank,
                              int64_t lj) {
  return L->column_bcols[L->column_bfirst[L->rank_column[rank]] + lj];
}

int64_t mlsba__layout_row_l2g(const mlsba__layout_t *L, size_t rank,
                              int64_t li) {
  return L->rank_brows[L->rank_rfirst[rank] + li];
}

const int64_t *mlsba__layout_rank_rows(const mlsba__layout_t *L, size_t rank,
                                       int64_t *count) {
  *count = L->rank_rfirst[rank + 1] - L->rank_rfirst[rank];
  return L->rank_brows + L->rank_rfirst[rank];
}

const int64_t *mlsba__layout_rank_cols(const mlsba__layout_t *L, size_t rank,
                                       int64_t *count) {
  size_t c = L->rank_column[rank];
  *count = L->column_bfirst[c + 1] - L->column_bfirst[c];
  return L->column_bcols + L->column_bfirst[c];
}

void mlsba__layout_local_size(const mlsba__layout_t *L, size_t rank,
                              int64_t *rows, int64_t *cols) {
  *rows = L->rank_elem_rows[rank];
  *cols = L->column_elem_cols[L->rank_column[rank]];
}

void mlsba__layout_node_blocks(const mlsba__layout_t *L, int lower,
                               int64_t blocks[]) {
  memset(blocks, 0, L->d.nodes * sizeof *blocks);
  for (size_t r = 0; r < L->d.ranks; r++) {
    int64_t nr, nc;
    const int64_t *row = mlsba__layout_rank_rows(L, r, &nr);
    const int64_t *col = mlsba__layout_rank_cols(L, r, &nc);
    int64_t own = nr * nc;
    if (lower) {
      /* Both lists ascend: walk them together, counting for each row the
       * columns at or left of it. */
      own = 0;
      for (int64_t a = 0, k = 0; a < nr; a++) {
        while (k < nc && col[k] <= row[a])
          k++;
        own += k;
      }
    }
    blocks[L->rank_node[r]] += own;
  }
}
