/* What every layout promises; see layout_check.h. */
#include "layout_check.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>

void check_layout_ownership(const mlsba__layout_t *L) {
  const mlsba__layout_dims_t *d = mlsba__layout_dims(L);
  int64_t B = d->brows * d->bcols;
  unsigned char *seen = calloc((size_t)B, 1);
  ck_assert_ptr_nonnull(seen);
  int64_t total = 0, lower = 0;
  for (size_t r = 0; r < d->ranks; r++) {
    int64_t nr, nc, er = 0, ec = 0;
    const int64_t *row = mlsba__layout_rank_rows(L, r, &nr);
    const int64_t *col = mlsba__layout_rank_cols(L, r, &nc);
    size_t c = mlsba__layout_rank_column(L, r);
    for (int64_t a = 0; a < nr; a++) {
      ck_assert(a == 0 || row[a] > row[a - 1]);
      ck_assert_int_eq(mlsba__layout_row_g2l(L, c, row[a]), a);
      ck_assert_int_eq(mlsba__layout_row_l2g(L, r, a), row[a]);
      ck_assert_uint_eq(mlsba__layout_row_owner(L, c, row[a]), r);
      er += row[a] == d->brows - 1 ? d->m - row[a] * d->nb : d->nb;
    }
    for (int64_t b = 0; b < nc; b++) {
      ck_assert(b == 0 || col[b] > col[b - 1]);
      ck_assert_int_eq(mlsba__layout_col_g2l(L, col[b]), b);
      ck_assert_int_eq(mlsba__layout_col_l2g(L, r, b), col[b]);
      ck_assert_uint_eq(mlsba__layout_bcol_column(L, col[b]), c);
      ec += col[b] == d->bcols - 1 ? d->n - col[b] * d->nb : d->nb;
    }
    for (int64_t a = 0; a < nr; a++)
      for (int64_t b = 0; b < nc; b++) {
        int64_t k = row[a] * d->bcols + col[b];
        ck_assert_msg(!seen[k], "block (%lld, %lld) owned twice",
                      (long long)row[a], (long long)col[b]);
        seen[k] = 1;
        ck_assert_uint_eq(mlsba__layout_owner(L, row[a], col[b]), r);
        lower += row[a] >= col[b];
      }
    total += nr * nc;
    int64_t lr, lc;
    mlsba__layout_local_size(L, r, &lr, &lc);
    ck_assert_int_eq(lr, er);
    ck_assert_int_eq(lc, ec);
  }
  ck_assert_int_eq(total, B);
  int64_t nodes[4096], sum = 0, sum_lower = 0;
  ck_assert_uint_le(d->nodes, 4096);
  mlsba__layout_node_blocks(L, 0, nodes);
  for (size_t i = 0; i < d->nodes; i++)
    sum += nodes[i];
  mlsba__layout_node_blocks(L, 1, nodes);
  for (size_t i = 0; i < d->nodes; i++)
    sum_lower += nodes[i];
  ck_assert_int_eq(sum, B);
  ck_assert_int_eq(sum_lower, lower);
  free(seen);
}

void draw_layout_models(rng_t *g, size_t q, double W, mlsba_model_t **m) {
  for (size_t i = 0; i < q; i++)
    m[i] = random_paper_model(g, 8, W / (double)q * 3);
}

void free_layout_models(mlsba_model_t **m, size_t q) {
  for (size_t i = 0; i < q; i++)
    mlsba_model_destroy(m[i]);
}
