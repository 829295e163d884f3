/* A distributed matrix as the rank programs of the factorization tests
 * make and check it (factor_ranks, factor_node_ranks): every element a
 * function of its global indices, so that each rank fills its own blocks
 * and rank 0 builds the same matrix whole, for LAPACK; and a scratch
 * folder every rank names (multiply_ranks, scalapack_ranks). Linked into
 * the rank programs (MPI, no Check). */
#ifndef MLSBA_TESTS_RANK_MATRIX_H
#define MLSBA_TESTS_RANK_MATRIX_H

#include <mlsba/mpi.h>
#include <stdint.h>

/* The element (i, j) of a matrix (user: what the function needs). */
typedef double (*rank_element_fn)(const void *user, int64_t i, int64_t j);

/* A pseudo-random element in [-1, 1) from (i, j) alone (every rank makes
 * the same). */
double rank_noise(int64_t i, int64_t j);

/* This rank's local array of d (zeros where it owns nothing), its own
 * blocks filled from elem; NULL when out of memory. */
double *rank_fill_own(const mlsba_mpi_matrix_t *d, rank_element_fn elem,
                      const void *user);

/* d's matrix whole on rank 0 of MPI_COMM_WORLD (column-major, leading
 * dimension its rows), a in prec; NULL elsewhere or on failure. Every
 * rank calls it. */
void *rank_gather(const mlsba_mpi_matrix_t *d, const void *a,
                  mlsba_precision_t prec);

/* The m x n matrix of elem whole (column-major, leading dimension m). */
double *rank_whole(int64_t m, int64_t n, rank_element_fn elem,
                   const void *user);

/* 1 when every rank's info and error are rank 0's (every rank calls
 * it). */
int rank_agreed(int64_t info, int err);

/* A folder of rank 0's from the mkdtemp template in dir (size bytes, the
 * same on every rank), its name then in dir on every rank: 0 on every
 * rank when rank 0 made it, 1 on every rank when not. Every rank calls
 * it. */
int rank_temp_dir(char *dir, int size);

#endif
