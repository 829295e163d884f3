/* LU's pivot search across a node column (mlsba__mpi_pivot_exchange):
 * every rank of the column offers a slot (factor.h: its best candidate
 * row of the column, whole, and the diagonal block's owner the current
 * row too) and every rank ends with the same result, the best candidate
 * and the current row, as HPL's HPL_pdmxswp does.
 *
 * A column's pivot waits for the one before it, so on many ranks a
 * panel's time is its columns' exchanges, and each of their rounds is a
 * network latency: what the exchange saves is rounds. On a column of
 * q <= flat_max ranks it takes one: every rank sends its slot to every
 * other at once and keeps the best of the q slots it then holds (q - 1
 * messages of one row, or two from the current row's owner, whose
 * injection costs less than the latencies of the rounds they replace: on
 * SMPI's Grenoble cluster a round is about 16 us, a row of 128 doubles
 * 0.4 us at a node's link). On a larger column a dissemination (Bruck's):
 * in round r each rank sends what it holds to the rank 2^r after it and
 * keeps the better of that and what the rank 2^r before it sends, so
 * ceil(log2 q) rounds reach all q ranks, where an all-reduce's recursive
 * doubling takes two more when q is not a power of two. Keeping the
 * better of two candidates is idempotent and the order of the candidates
 * total, so the slots a rank meets twice, and the order it meets them
 * in, change nothing: every rank's result is the same. */
#include <math.h>
#include <string.h>

#include "factor.h"

/* The tag of the search's messages (within the node column's
 * communicator, factor_lu.c's interchanges' tag aside). */
enum { PIVOT_TAG = 3218 };

enum {
  VALUE = MLSBA__PIVOT_VALUE,
  GROW = MLSBA__PIVOT_GROW,
  HAS_CUR = MLSBA__PIVOT_HAS_CUR,
  WIDTH = MLSBA__PIVOT_WIDTH,
  ELEM = MLSBA__PIVOT_ELEM,
  HEAD = MLSBA__PIVOT_HEAD
};

static size_t round16(size_t n) { return (n + 15) / 16 * 16; }

size_t mlsba__mpi_pivot_slot(int64_t nb, size_t es) {
  return round16(HEAD * sizeof(double) + 2 * (size_t)nb * es);
}

size_t mlsba__mpi_pivot_scratch(int cq, size_t slot) {
  return (size_t)cq * slot + 2 * (size_t)cq * sizeof(MPI_Request);
}

/* Whether candidate a goes before b: a row before none, the larger
 * |value| (a NaN above any number), on a tie the smaller global row. */
static int beats(const double *a, const double *b) {
  if (!(a[VALUE] >= 0) && !isnan(a[VALUE]))
    return 0;
  if (!(b[VALUE] >= 0) && !isnan(b[VALUE]))
    return 1;
  int an = isnan(a[VALUE]) != 0, bn = isnan(b[VALUE]) != 0;
  if (an != bn)
    return an;
  if (!an && a[VALUE] != b[VALUE])
    return a[VALUE] > b[VALUE];
  return a[GROW] < b[GROW];
}

/* Slot b keeps the better candidate of a and b, and takes the current
 * row from a if a has it. */
static void pick(const char *a, char *b) {
  double ha[HEAD], hb[HEAD];
  memcpy(ha, a, sizeof ha);
  memcpy(hb, b, sizeof hb);
  size_t row = (size_t)ha[WIDTH] * (size_t)ha[ELEM], hs = sizeof ha;
  if (beats(ha, hb)) {
    hb[VALUE] = ha[VALUE];
    hb[GROW] = ha[GROW];
    memcpy(b + hs, a + hs, row);
  }
  if (ha[HAS_CUR] != 0) {
    hb[HAS_CUR] = 1;
    memcpy(b + hs + row, a + hs + row, row);
  }
  memcpy(b, hb, sizeof hb);
}

void mlsba__mpi_pivot_exchange(MPI_Comm col, int flat_max, size_t slot,
                               const void *mine, void *all, void *scratch) {
  int cq, me;
  MPI_Comm_size(col, &cq);
  MPI_Comm_rank(col, &me);
  memcpy(all, mine, slot);
  char *in = scratch;
  /* Slot bytes are below 2^31: a row's are (the size checks). */
  if (cq <= flat_max) {
    MPI_Request *reqs = (MPI_Request *)(void *)(in + (size_t)cq * slot);
    double h[HEAD];
    memcpy(h, mine, sizeof h);
    int n = 0, bytes = (int)(sizeof h + (size_t)h[WIDTH] * (size_t)h[ELEM] *
                                            (h[HAS_CUR] != 0 ? 2 : 1));
    for (int r = 0; r < cq; r++) {
      if (r == me)
        continue;
      MPI_Irecv(in + (size_t)r * slot, (int)slot, MPI_BYTE, r, PIVOT_TAG, col,
                &reqs[n++]);
      MPI_Isend(mine, bytes, MPI_BYTE, r, PIVOT_TAG, col, &reqs[n++]);
    }
    MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
    for (int r = 0; r < cq; r++)
      if (r != me)
        pick(in + (size_t)r * slot, all);
    return;
  }
  for (int d = 1; d < cq; d *= 2) {
    MPI_Sendrecv(all, (int)slot, MPI_BYTE, (me + d) % cq, PIVOT_TAG, in,
                 (int)slot, MPI_BYTE, (me - d + cq) % cq, PIVOT_TAG, col,
                 MPI_STATUS_IGNORE);
    pick(in, all);
  }
}
