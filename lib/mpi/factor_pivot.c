/* LU's pivot search across a node column (mlsba__mpi_pivot_exchange):
 * every rank of the column offers a slot (factor.h: its best candidate
 * row of the column, and the diagonal block's owner the current row too)
 * and every rank ends with the same result, the best candidate and the
 * current row, as HPL's HPL_pdmxswp does; the candidate's row whole on
 * the root (the diagonal block's owner, whose row it becomes), the part
 * of it every rank reads (its first NEED elements) on the others.
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
  NEED = MLSBA__PIVOT_NEED,
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
 * row from a if a has it; whole: a holds its candidate's whole row, else
 * (a message of the flat round without the current row) its first NEED
 * elements only. */
static void pick(const char *a, char *b, int whole) {
  double ha[HEAD], hb[HEAD];
  memcpy(ha, a, sizeof ha);
  memcpy(hb, b, sizeof hb);
  size_t row = (size_t)ha[WIDTH] * (size_t)ha[ELEM], hs = sizeof ha;
  if (beats(ha, hb)) {
    hb[VALUE] = ha[VALUE];
    hb[GROW] = ha[GROW];
    hb[NEED] = ha[NEED];
    memcpy(b + hs, a + hs,
           whole || ha[HAS_CUR] != 0 ? row
                                     : (size_t)ha[NEED] * (size_t)ha[ELEM]);
  }
  if (ha[HAS_CUR] != 0) {
    hb[HAS_CUR] = 1;
    memcpy(b + hs + row, a + hs + row, row);
  }
  memcpy(b, hb, sizeof hb);
}

void mlsba__mpi_pivot_exchange(MPI_Comm col, int flat_max, size_t slot,
                               int root, const void *mine, void *all,
                               void *scratch) {
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
    /* To the root the whole slot; to the others, the candidate's first
     * NEED elements, which is all they read of it, unless the slot
     * carries the current row (whole: the rank that takes the
     * candidate's place needs that). The flat round's messages, q - 1 a
     * column from every rank at once, queue on the links: on the 90
     * simulated Grenoble nodes (node columns of 7 to 17 ranks) LU at
     * N = 8192 took 778 GFLOPS with whole rows, 793 with the rows cut,
     * 791 with the current row's holder's candidate cut too (behind the
     * current row), and 862 with headers alone (no numbers: a bound);
     * Cluster A (columns of 4 and 8) 1404, 1403, 1399 and 1497
     * (RESULTS.md, sim32n). */
    size_t row = (size_t)h[WIDTH] * (size_t)h[ELEM];
    int n = 0, whole = (int)(sizeof h + row * (h[HAS_CUR] != 0 ? 2 : 1)),
        part = h[HAS_CUR] != 0
                   ? whole
                   : (int)(sizeof h + (size_t)h[NEED] * (size_t)h[ELEM]);
    for (int r = 0; r < cq; r++) {
      if (r == me)
        continue;
      MPI_Irecv(in + (size_t)r * slot, (int)slot, MPI_BYTE, r, PIVOT_TAG, col,
                &reqs[n++]);
      MPI_Isend(mine, r == root ? whole : part, MPI_BYTE, r, PIVOT_TAG, col,
                &reqs[n++]);
    }
    MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
    for (int r = 0; r < cq; r++)
      if (r != me)
        pick(in + (size_t)r * slot, all, me == root);
    return;
  }
  /* The dissemination forwards whole slots (a rank's best so far may be
   * another's candidate, whose row it passes on). */
  for (int d = 1; d < cq; d *= 2) {
    MPI_Sendrecv(all, (int)slot, MPI_BYTE, (me + d) % cq, PIVOT_TAG, in,
                 (int)slot, MPI_BYTE, (me - d + cq) % cq, PIVOT_TAG, col,
                 MPI_STATUS_IGNORE);
    pick(in, all, 1);
  }
}
