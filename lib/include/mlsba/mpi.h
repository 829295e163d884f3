/*
 * libmlsba across nodes: INPA (Clarke et al.) over the ranks of an MPI
 * communicator, then the heterogeneous two-dimensional blocked product
 * C = A x B with the arrangement it found. Link mlsba::mlsba_mpi; the
 * single-node library never links MPI.
 *
 * Every rank is a node: it loads its own platform file, balances its
 * devices on its own sub-matrix with libmlsba's routine, and holds only its
 * own rectangles A', B', C' of the three N x N matrices. Rank 0 (the head)
 * draws the node distribution from the times the ranks report.
 */
#ifndef MLSBA_MPI_H
#define MLSBA_MPI_H

#include <mpi.h>

#include <mlsba.h>

#ifdef __cplusplus
extern "C" {
#endif

/** How the head distributes the blocks of C between nodes. Every
 *  algorithm goes through the same column-based arrangement. */
typedef enum mlsba_mpi_algo {
  /** INPA: node speed functions built from the measured times, the next
   *  distribution drawn by geometric partitioning (the default). */
  MLSBA_MPI_INPA = 0,
  /** Constant speeds re-measured after every distribution until the node
   *  times agree within eps (or max_iter). */
  MLSBA_MPI_MULTIPLE_CPM,
  /** Constant speeds measured once, at the even distribution. */
  MLSBA_MPI_SINGLE_CPM,
  /** The same number of blocks on every node, devices split evenly. */
  MLSBA_MPI_HOMOGENEOUS
} mlsba_mpi_algo_t;

/** How a node splits its columns between its devices. */
typedef enum mlsba_mpi_node_algo {
  /** libmlsba's routine: MLSBA over the node's processing groups. */
  MLSBA_MPI_NODE_MLSBA = 0,
  /** IDPA (Clarke et al.): geometric partitioning flat over the device
   *  models, groups ignored. */
  MLSBA_MPI_NODE_IDPA
} mlsba_mpi_node_algo_t;

/** Options; initialise with mlsba_mpi_opts_init(). Every rank passes the
 *  same values (the head's are the ones used for the distribution). */
typedef struct mlsba_mpi_opts {
  /** Platform file of each rank; "%r" is replaced by the rank number. */
  const char *platform;
  int64_t n;     /**< matrix order N, a multiple of block */
  int64_t block; /**< block size b */
  mlsba_mpi_algo_t algorithm;
  mlsba_mpi_node_algo_t node_algorithm;
  double eps;            /**< node times within eps: balanced (0.05) */
  unsigned int max_iter; /**< at most this many distributions (20) */
  mlsba_precision_t precision; /**< default double */
  uint64_t seed;               /**< of the generated matrices */
  /** Elements of C' each rank checks against a long-double reference
   *  (default 64); 0 skips the check. */
  unsigned int verify_samples;
  /** Nonzero: every rank keeps a device that computes on the cores of its
   *  other devices (an OpenCL CPU device such as pocl beside "cpu"
   *  devices) even when they run faster without it (MLSBA_SHARING_KEEP);
   *  0 (default): such a device must pay its way (MLSBA_SHARING_CHECK). */
  int keep_shared;
} mlsba_mpi_opts_t;

/** One device of a rank, as the product ran it. */
typedef struct mlsba_mpi_device {
  char name[64];
  int64_t load; /**< columns of the rank's sub-matrix */
  double time;  /**< its compute time over the whole product, seconds */
} mlsba_mpi_device_t;

/** One rank: its share and rectangle of C (in blocks) and its time. */
typedef struct mlsba_mpi_rank {
  int64_t w;        /**< blocks of C */
  int64_t m, n;     /**< height and width in blocks (m n = w) */
  int64_t row, col; /**< block offsets of the rectangle */
  double time;      /**< compute time over the whole product, seconds */
  double comm;      /**< time in MPI calls, waits included */
  size_t ndevices;
  mlsba_mpi_device_t *devices; /**< filled on rank 0 only */
} mlsba_mpi_rank_t;

/** What the call found; the same on every rank except where noted.
 *  Release with mlsba_mpi_result_free(). */
typedef struct mlsba_mpi_result {
  int nodes;
  unsigned int iterations;
  int converged; /**< stop is balanced or a fixed point */
  double imbalance;          /**< (max - min) / max of the last node times */
  int64_t half_perimeter_sum;        /**< H = sum (m_i + n_i) */
  double half_perimeter_lower_bound; /**< sum 2 sqrt(w_i) */
  double makespan_s;  /**< the product, slowest rank, compute and comm */
  double gflops;      /**< 2 N^3 / makespan */
  double comm_share;  /**< time in MPI calls / total, over all ranks */
  /** 1 verified, 0 a wrong element, -1 not checked (simulated devices
   *  compute nothing). */
  int verified;
  double max_rel_error;
  int simulated; /**< every node ran on simulated devices (virtual time) */
  mlsba_mpi_rank_t *ranks; /**< nodes entries */
  /** Every distribution tried (history_len of them): history_w[i * nodes
   *  + r] blocks of rank r, history_time[...] its node time,
   *  history_imbalance[i]. Rank 0 only (0 and NULL elsewhere). */
  size_t history_len;
  int64_t *history_w;
  double *history_time, *history_imbalance;
  /** Why INPA stopped: balanced (within eps), a fixed point (the models
   *  found no better distribution: converged, but the imbalance may be
   *  above eps), max_iter, or a cycle. */
  mlsba_stop_reason_t stop;
} mlsba_mpi_result_t;

/** \brief Defaults: INPA, MLSBA inside nodes, eps 0.05, 20 iterations,
 *  double precision, 64 sampled elements. */
MLSBA_EXTERN void mlsba_mpi_opts_init(mlsba_mpi_opts_t *opts);

/** \brief Balance the nodes of comm with INPA (or a baseline), then compute
 *  C = A x B with the two-dimensional blocked algorithm, every rank on its
 *  own rectangle, and check sampled elements of every C'.
 *
 *  Collective over comm. An error on any rank (a platform file that is
 *  missing or malformed, N not a multiple of the block, fewer blocks than
 *  ranks, a device failure) stops every rank with the same code; the
 *  message from mlsba_mpi_last_error() names the rank and the problem, on
 *  every rank.
 *  \return 0; MLSBA_EINVAL, MLSBA_EIO, MLSBA_EFORMAT, MLSBA_ENOMEM,
 *          MLSBA_EDEVICE as libmlsba reports them. */
MLSBA_EXTERN int mlsba_mpi_multiply(MPI_Comm comm, const mlsba_mpi_opts_t *opts,
                                    mlsba_mpi_result_t *result);
/** \brief Every rank's network link as seen from root, measured by a
 *  ping-pong (seed 001 §5.2.4): messages of 1 KiB to 4 MiB, the fastest of
 *  five round trips at each size halved, least squares of time over bytes
 *  (mlsba_link_fit()). Collective over comm; about a second per rank on
 *  Ethernet. Under SMPI it times the simulated platform's links.
 *  \param root  the rank the others are measured from (a master's).
 *  \param[out] links  on every rank, one per rank of comm: root's own has
 *                bandwidth 0, as has a rank whose times did not grow with
 *                the size (a link too fast to tell).
 *  \return 0; MLSBA_EINVAL for a bad argument on any rank; MLSBA_ENOMEM. */
MLSBA_EXTERN int mlsba_mpi_measure_links(MPI_Comm comm, int root,
                                         mlsba_link_t links[]);
/** \brief Message of the last failure of an mlsba_mpi call in the calling
 *  thread ("rank 2: p2.json: cannot open: No such file or directory").
 *  The layer carries its own copy of libmlsba, so this, not
 *  mlsba_last_error(), is where its messages are. Never NULL. */
MLSBA_EXTERN const char *mlsba_mpi_last_error(void);
/** \brief Release what a result holds (not the struct itself). */
MLSBA_EXTERN void mlsba_mpi_result_free(mlsba_mpi_result_t *result);
/** \brief "inpa", "multiple-cpm", "single-cpm", "homogeneous"; NULL for an
 *  unknown value. */
MLSBA_EXTERN const char *mlsba_mpi_algo_name(mlsba_mpi_algo_t algo);
/** \brief The algorithm of a name; MLSBA_EINVAL for an unknown one. */
MLSBA_EXTERN int mlsba_mpi_algo_from_name(const char *name,
                                          mlsba_mpi_algo_t *algo);
/** \brief A result's stop as mlsba_stop_reason_name() spells it
 *  ("balanced", "fixed-point", "max-iter", "cycle"), for programs that
 *  link only this layer; NULL for an unknown value. */
MLSBA_EXTERN const char *mlsba_mpi_stop_name(mlsba_stop_reason_t stop);

#ifdef __cplusplus
}
#endif

#endif /* MLSBA_MPI_H */
