/*
 * libmlsba across nodes: INPA (Clarke et al.) over the ranks of an MPI
 * communicator, then the heterogeneous two-dimensional blocked product
 * C = A x B with the arrangement it found; and an application's own
 * divisible load across the ranks (mlsba_mpi_divide()). Link
 * mlsba::mlsba_mpi (find_package(mlsba COMPONENTS mpi), or pkg-config
 * mlsba-mpi); the single-node library never links MPI.
 *
 * Every rank is a node: it loads its own platform file, balances its
 * devices on its own sub-matrix with libmlsba's routine, and holds only its
 * own rectangles A', B', C' of the three matrices. Rank 0 (the head)
 * draws the node distribution from the times the ranks report.
 *
 * The product is PDGEMM's: C = alpha op(A) op(B) + beta C, any M x N x K,
 * single or double precision, on generated matrices, on the application's
 * own blocks (a fill callback asked only for what the rank owns), or on
 * matrices in any distributed layout (ScaLAPACK's 2-D block-cyclic
 * descriptors, an owner function), redistributed to the library's layout
 * and back (mlsba_mpi_matrix_t, mlsba_mpi_redistribute()). A multiplier
 * (mlsba_mpi_multiplier_t) balances once and multiplies many times.
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

/** What INPA's node models count besides each rank's compute. */
typedef enum mlsba_mpi_comm_model {
  /** Compute alone: the times each rank measures on its rectangle. */
  MLSBA_MPI_COMM_NONE = 0,
  /** Plus the panels each rank receives over its network link in the
   *  product's N/b steps: per step one message of its rows of A's block
   *  column (bm x b) and one of its columns of B's block row (b x bn),
   *  2 latency + (m + n) b^2 element size / bandwidth seconds for an
   *  m x n rectangle of blocks, so its cost grows with the half-perimeter
   *  m + n, not the area. A rank's link is its platform file's "network"
   *  when every rank's file has one, else measured by
   *  mlsba_mpi_measure_links() from rank 0 (a rank whose file has one
   *  keeps it; rank 0 takes the fastest path measured, which its own link
   *  bounds). Every algorithm then judges a run by compute plus this
   *  (stop test, history times, the run chosen); INPA also balances and
   *  arranges with it. The model assumes a rank's receives do not overlap
   *  its compute (a step starts when its panels are in), while what it
   *  forwards down the trees does: see docs/mpi-api.md. */
  MLSBA_MPI_COMM_LINKS
} mlsba_mpi_comm_model_t;

/** "none" or "links"; NULL if unknown. */
MLSBA_EXTERN const char *
mlsba_mpi_comm_model_name(mlsba_mpi_comm_model_t model);
/** The model of a name ("none", "links"); MLSBA_EINVAL naming it if
 *  unknown. */
MLSBA_EXTERN int mlsba_mpi_comm_model_from_name(const char *name,
                                                mlsba_mpi_comm_model_t *model);

/** Options of mlsba_mpi_multiply(); initialise with
 *  mlsba_mpi_multiply_opts_init(). Every rank passes the same values
 *  except the platform (fill and fill_user: each rank its own callback,
 *  but a callback on every rank or on none): mlsba_mpi_multiply()
 *  compares them with rank 0's first and fails on every rank, naming the
 *  first rank that differs, the option and both values, rather than size
 *  its messages on values another rank does not share. */
typedef struct mlsba_mpi_multiply_opts {
  /** The platform of each rank: "auto" (the default) discovers the
   *  devices the rank is bound to, and its share of its host's OpenCL
   *  devices by its rank on the host (see mlsba_platform_discover());
   *  else a platform file, where "%r" is replaced by the rank, "%h" by
   *  the host name and "%l" by the rank on its host
   * (mlsba_mpi_platform_path()). */
  const char *platform;
  /** Columns of C; with m and k 0, the order N of a square product. */
  int64_t n;
  /** Block size b: C, op(A) and op(B) are cut into b x b blocks (the
   *  last ones smaller when a size is not a multiple of b), and the
   *  product advances b columns of op(A) at a time. */
  int64_t block;
  mlsba_mpi_algo_t algorithm;
  mlsba_mpi_node_algo_t node_algorithm;
  double eps;                  /**< node times within eps: balanced (0.05) */
  unsigned int max_iter;       /**< at most this many distributions (20) */
  mlsba_precision_t precision; /**< default double */
  uint64_t seed;               /**< of the generated matrices */
  /** Nonzero (default 64): C is checked after the product (Freivalds:
   *  C x against alpha op(A) (op(B) x) + beta C0 x for a vector x of the
   *  seed, every element of C taking part, in O(M N + M K + K N) flops
   *  spread over the ranks); 0 skips the check. */
  unsigned int verify_samples;
  /** Nonzero: every rank keeps a device that computes on the cores of its
   *  other devices (an OpenCL CPU device such as pocl beside "cpu"
   *  devices) even when they run faster without it (MLSBA_SHARING_KEEP);
   *  0 (default): such a device must pay its way (MLSBA_SHARING_CHECK). */
  int keep_shared;
  /** The application's A, B and C (NULL: made from seed): fill rows
   *  [row, row + rows) x columns [col, col + cols) of A (which = 0), B
   *  (which = 1) or, when beta is not 0, C (which = 2), global element
   *  indices of the matrix as the application stores it (A is k x m when
   *  transa is 'T'), into dst, column-major with leading dimension ld, as
   *  doubles or floats by precision. A rank is asked only for blocks it
   *  owns in the library's layout (mlsba_mpi_multiplier_matrix(): one
   *  rectangle of each matrix, which may be empty and then is not asked
   *  for), once per product. Return 0, or nonzero to stop the call on
   *  every rank (MLSBA_EINVAL naming the rank). Called on the calling
   *  thread. */
  int (*fill)(void *user, int which, int64_t row, int64_t col, int64_t rows,
              int64_t cols, void *dst, int64_t ld);
  void *fill_user;
  /** Nonzero: every rank's C' is also gathered, as the whole C (N x N,
   *  column-major), into result->c_all on rank 0. */
  int gather;
  /** What the node models count besides compute (default
   *  MLSBA_MPI_COMM_NONE). */
  mlsba_mpi_comm_model_t comm_model;
  /** Rows of C and op(A), and the inner size (columns of op(A), rows of
   *  op(B)): any values >= 1, multiples of the block or not. Both 0 (the
   *  default): n, a square product. */
  int64_t m, k;
  /** 'N' (default) or 'T': op(A) is A, or the transpose of A stored
   *  k x m; likewise op(B) with B stored n x k. */
  char transa, transb;
  /** C = alpha op(A) op(B) + beta C (defaults 1 and 0; with beta 0, C's
   *  old values are never read). */
  double alpha, beta;
  /** mlsba_mpi_multiplier_run(): runs whose rank times (each rank's
   *  median of the last three runs) are further apart ((max - min) /
   *  max) than this count what the imbalance costs them; once that adds
   *  up to what a balancing costs, the ranks are balanced again (default
   *  2 eps; 0: never). */
  double drift;
  /** A directory where every rank keeps its devices' models (NULL: none;
   *  mlsba_balance_opts_t::model_dir): a rank's node balancing then
   *  starts from the models its last job saved for that shape. Rank 0
   *  also keeps there the ranks' distribution INPA chose; the next job
   *  on the same ranks and shape takes it without INPA's runs or a timed
   *  run of its own (result.from_saved; a rank of one device runs
   *  nothing), and its products are the check: they count against it
   *  when their rank times are further apart than when the distribution
   *  was saved (or eps), by half again, or than drift; once they have
   *  lost what a balancing costs, the ranks are balanced with INPA
   *  (result.rebalanced) and the file replaced. */
  const char *model_dir;
} mlsba_mpi_multiply_opts_t;

/** The former name of mlsba_mpi_multiply_opts_t, kept. */
typedef mlsba_mpi_multiply_opts_t mlsba_mpi_opts_t;

/** One device of a rank, as the product ran it. */
typedef struct mlsba_mpi_device {
  /** The name, cut to 63 bytes at a character boundary (UTF-8). */
  char name[64];
  int64_t load; /**< columns of the rank's sub-matrix */
  double time;  /**< its compute time over the whole product, seconds */
  /** The whole name, as its platform or driver gives it; owned by the
   *  result. */
  char *full_name;
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
  /** With MLSBA_MPI_COMM_LINKS: the rank's network link as the model
   *  took it (bandwidth 0: unknown, counted as free), where from
   *  (1 its platform file, 2 measured; 0 without the model), and the
   *  communication the model predicts for its rectangle over the whole
   *  product, seconds. */
  mlsba_link_t link;
  int link_source;
  double comm_modelled;
} mlsba_mpi_rank_t;

/** Where a call's wall time went, seconds on rank 0's clock (every part
 *  ends in a collective step, so the ranks' clocks agree on it). */
typedef struct mlsba_mpi_split {
  double balance_s; /**< balancing runs (INPA's, the nodes' routine) */
  /** Redistribution from the caller's layouts to the library's and back
   *  (mlsba_mpi_multiplier_run_dist()). */
  double move_s;
  /** A, B (and C) into the library's layout: generated, the fill
   *  callback, local transposes, alpha and beta applied, and C' cleared
   *  for beta 0 where it must be (a new buffer's first touch). */
  double fill_s;
  double product_s; /**< the product: its panels and steps */
  double check_s;   /**< the check of C (verify_samples) */
  /** C handed back: gathered on rank 0 (opts.gather), the report. */
  double gather_s;
  /** Of move_s, C back into the caller's layout (the rest: A, B and
   *  beta's C into the library's, and the check that A and B are
   *  unchanged). */
  double move_back_s;
} mlsba_mpi_split_t;

/** What the call found; the same on every rank except where noted.
 *  Release with mlsba_mpi_result_free(). */
typedef struct mlsba_mpi_result {
  int nodes;
  unsigned int iterations;
  int converged; /**< stop is balanced or a fixed point */
  /** (max - min) / max of the node times of the distribution the
   *  product ran (history entry run_iteration); INPA's stop test uses
   *  the same measure. */
  double imbalance;
  int64_t half_perimeter_sum;        /**< H = sum (m_i + n_i) */
  double half_perimeter_lower_bound; /**< sum 2 sqrt(w_i) */
  double makespan_s; /**< the product, slowest rank, compute and comm */
  double gflops;     /**< 2 M N K / makespan */
  double comm_share; /**< time in MPI calls / total, over all ranks */
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
  /** The distribution the product ran, 1-based in the history: the
   *  fastest one measured (smallest slowest-node time, first of equals),
   *  which may be an earlier run than the last (iterations). */
  unsigned int run_iteration;
  /** This rank's C': c_rows x c_cols elements (leading dimension c_rows,
   *  doubles or floats by precision) at element (c_row0, c_col0) of C;
   *  NULL on simulated ranks, which compute nothing. Its own, on every
   *  rank. After mlsba_mpi_multiplier_run_dist() c is NULL (C is in the
   *  caller's array) and the place counts blocks in the order the
   *  library laid its layout over the caller's (docs/mpi-api.md). */
  void *c;
  int64_t c_row0, c_col0, c_rows, c_cols;
  /** With opts.gather, on rank 0: the whole C, M x N column-major. */
  void *c_all;
  /** The whole call, seconds on rank 0's clock, beside the product's
   *  makespan_s: balancing runs, moves, fill, product, check and hand
   *  back (split). */
  double wall_s;
  mlsba_mpi_split_t split;
  /** 1 when the call balanced the ranks: mlsba_mpi_multiply(), and a
   *  multiplier run after which the rank times had drifted apart. */
  int rebalanced;
  /** mlsba_mpi_multiplier_run_dist(): which operands the run did not move
   *  again (bit 0 A, bit 1 B), because on every rank the caller's array
   *  held, element for element, what the last run had moved into the
   *  library's layout (the same description too). */
  unsigned int reused;
  /** 1 when the balancing took the distribution an earlier job saved in
   *  opts.model_dir for the same ranks, platforms and shape: no INPA
   *  runs. The first product checks it (see opts.model_dir). */
  int from_saved;
  /** mlsba_mpi_multiplier_run_dist(): 1 when the run used the caller's
   *  own split instead of the balanced one: every rank given exactly the
   *  blocks of C it holds in the caller's descriptor, because the rank
   *  speeds of the balancing predict that split within eps of balanced,
   *  or no slower than the balanced one plus the moves it saves
   *  (docs/mpi-api.md). */
  int snapped;
} mlsba_mpi_result_t;

/** \brief Defaults: INPA, MLSBA inside nodes, eps 0.05, 20 iterations,
 *  double precision, C = A B (alpha 1, beta 0, no transposes), C
 *  checked, drift 2 eps. NULL is ignored. */
MLSBA_EXTERN void mlsba_mpi_multiply_opts_init(mlsba_mpi_multiply_opts_t *opts);
/** \brief The former name of mlsba_mpi_multiply_opts_init(), kept. */
MLSBA_EXTERN void mlsba_mpi_opts_init(mlsba_mpi_multiply_opts_t *opts);

/** \brief Balance the nodes of comm with INPA (or a baseline), then compute
 *  C = alpha op(A) op(B) + beta C with the two-dimensional blocked
 *  algorithm, every rank on its own rectangle, and check C. A, B (and C)
 *  are generated from opts->seed, or the application's (opts->fill);
 *  every rank's C' is in result->c, and with opts->gather the whole C in
 *  result->c_all on rank 0. One multiplier's create, run and destroy
 *  (result->wall_s counts the balancing).
 *
 *  Collective over comm. An error on any rank (a NULL opts or result,
 *  options that differ from rank 0's, a platform file that is missing or
 *  malformed, fewer blocks of C than ranks, a device failure, a fill
 *  callback that fails) stops every rank with the same code; the
 *  message from mlsba_mpi_last_error() names the rank and the problem, on
 *  every rank.
 *  \return 0; MLSBA_EINVAL, MLSBA_EIO, MLSBA_EFORMAT, MLSBA_ENOMEM,
 *          MLSBA_EDEVICE as libmlsba reports them. */
MLSBA_EXTERN int mlsba_mpi_multiply(MPI_Comm comm,
                                    const mlsba_mpi_multiply_opts_t *opts,
                                    mlsba_mpi_result_t *result);
/** \brief A rank's platform path from a pattern: "%r" becomes its rank in
 *  comm, "%h" its host name (MPI_Get_processor_name), "%l" its rank among
 *  the ranks of comm on its host (an MPI_COMM_TYPE_SHARED split), "%%" a
 *  "%"; other characters are copied.
 *
 *  Collective over comm (the split), also when the pattern has none of
 *  them. \return 0, or MLSBA_EINVAL for a NULL argument or a path that
 *  does not fit size. */
MLSBA_EXTERN int mlsba_mpi_platform_path(MPI_Comm comm, const char *pattern,
                                         char *path, size_t size);
/** \brief Every rank's network link as seen from root, measured by a
 *  ping-pong (Elhiny §5.2.4): messages of 1 KiB to 16 MiB, the fastest of
 *  seven round trips at each size halved, least squares of time over bytes
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

/* ---------------------------------------------------------------------- */
/** \name Distributed matrices: who holds which block
 *
 *  A description of how an M x N matrix is spread over the ranks of a
 *  communicator: a grid of mb x nb blocks (the last row and column of
 *  blocks smaller when the sizes are not multiples), the rank that owns
 *  each block, and where the block's first element lies in that rank's
 *  local array (column-major, leading dimension ld). The layouts of the
 *  library (the product's rectangles: mlsba_mpi_multiplier_matrix()),
 *  ScaLAPACK's 2-D block-cyclic descriptors and any owner function (a
 *  layout of the application's, or the factorizations' own) are all
 *  described so, and mlsba_mpi_redistribute() moves a matrix from any one
 *  to any other. A description holds no data and does not copy comm,
 *  which must outlive it; making and querying one is local to the rank
 *  (no communication). */
/**@{*/
typedef struct mlsba_mpi_matrix mlsba_mpi_matrix_t;

/** How a BLACS grid numbers its processes: the rank in comm of process
 *  (p, q) of a P x Q grid is p Q + q (row-major, Cblacs_gridinit's
 *  "Row-major" over the default system context) or q P + p (column-major,
 *  "Col-major"). */
typedef enum mlsba_mpi_grid_order {
  MLSBA_MPI_ROW_MAJOR = 0,
  MLSBA_MPI_COLUMN_MAJOR
} mlsba_mpi_grid_order_t;

/** One block, as its owner holds it. */
typedef struct mlsba_mpi_block {
  int64_t row, col;   /**< its first element, global indices */
  int64_t rows, cols; /**< its size (smaller at the last row or column) */
  /** Its first element's place in the owner's local array. */
  int64_t local_row, local_col;
} mlsba_mpi_block_t;

/** An owner map: the rank (of the description's comm) that owns block
 *  (bi, bj), 0-based block indices, and where that block's first element
 *  lies in the rank's local array (*local_row, *local_col). Called on the
 *  calling thread, for every block when the description is made. */
typedef int (*mlsba_mpi_owner_fn)(void *user, int64_t bi, int64_t bj,
                                  int64_t *local_row, int64_t *local_col);

/** \brief A description from an owner function: an m x n matrix in
 *  mb x nb blocks, block (bi, bj) held by owner(user, bi, bj, ...).
 *  \param ld  this rank's leading dimension (>= its local rows; 1 or more).
 *  \return 0; MLSBA_EINVAL (a size below 1, an owner outside comm, a
 *          block beyond ld, two blocks of a rank overlapping are not
 *          checked), MLSBA_ENOMEM. */
MLSBA_EXTERN int mlsba_mpi_matrix_create(MPI_Comm comm, int64_t m, int64_t n,
                                         int64_t mb, int64_t nb,
                                         mlsba_mpi_owner_fn owner, void *user,
                                         int64_t ld,
                                         mlsba_mpi_matrix_t **matrix);
/** \brief A description of a ScaLAPACK array descriptor: desc[9] as
 *  DESCINIT makes it (DTYPE 1, CTXT, M, N, MB, NB, RSRC, CSRC, LLD) on a
 *  BLACS grid of nprow x npcol processes numbered in order over the ranks
 *  of comm (the ranks past nprow npcol own nothing). The context is not
 *  read: the grid and its order are the caller's word.
 *  \return 0; MLSBA_EINVAL naming the bad entry; MLSBA_ENOMEM. */
MLSBA_EXTERN int mlsba_mpi_matrix_scalapack(MPI_Comm comm, const int desc[9],
                                            int nprow, int npcol,
                                            mlsba_mpi_grid_order_t order,
                                            mlsba_mpi_matrix_t **matrix);
/** \brief Release a description; NULL is ignored. */
MLSBA_EXTERN void mlsba_mpi_matrix_destroy(mlsba_mpi_matrix_t *matrix);
/** \brief The global size and the block size (any pointer may be NULL). */
MLSBA_EXTERN void mlsba_mpi_matrix_size(const mlsba_mpi_matrix_t *matrix,
                                        int64_t *m, int64_t *n, int64_t *mb,
                                        int64_t *nb);
/** \brief The rank that owns block (bi, bj), and where the block starts in
 *  its local array (either pointer may be NULL); -1 for a block outside
 *  the grid. */
MLSBA_EXTERN int mlsba_mpi_matrix_owner(const mlsba_mpi_matrix_t *matrix,
                                        int64_t bi, int64_t bj,
                                        int64_t *local_row, int64_t *local_col);
/** \brief How many blocks this rank owns (0 for a rank that owns none). */
MLSBA_EXTERN size_t
mlsba_mpi_matrix_num_blocks(const mlsba_mpi_matrix_t *matrix);
/** \brief This rank's i-th block (i < mlsba_mpi_matrix_num_blocks(), in
 *  column-major order of the blocks). \return 0, or MLSBA_EINVAL. */
MLSBA_EXTERN int mlsba_mpi_matrix_block(const mlsba_mpi_matrix_t *matrix,
                                        size_t i, mlsba_mpi_block_t *block);
/** \brief This rank's local array: ld x cols elements, column-major (cols
 *  0 for a rank that owns nothing). */
MLSBA_EXTERN void mlsba_mpi_matrix_local(const mlsba_mpi_matrix_t *matrix,
                                         int64_t *ld, int64_t *cols);
/** \brief Move a matrix from one layout to another: every rank's local
 *  array src (described by from) into its local array dst (described by
 *  to), doubles or floats by precision. Each element travels once, from
 *  its owner in from to its owner in to, in one all-to-all exchange;
 *  what stays on a rank is copied. Elements of dst outside the rank's
 *  blocks are not touched.
 *
 *  Collective over the descriptions' communicator (the same, or a
 *  congruent one); both describe the same m x n. A bad argument on any
 *  rank (a NULL description or array where the rank owns blocks, sizes
 *  that differ) fails every rank with the same message.
 *  \return 0; MLSBA_EINVAL; MLSBA_ENOMEM. */
MLSBA_EXTERN int mlsba_mpi_redistribute(const mlsba_mpi_matrix_t *from,
                                        const void *src,
                                        const mlsba_mpi_matrix_t *to, void *dst,
                                        mlsba_precision_t precision);
/**@}*/

/* ---------------------------------------------------------------------- */
/** \name Balance once, multiply many times
 *
 *  A multiplier balances the ranks for one shape (opts: m, n, k, the
 *  block, the transposes, alpha and beta) when it is made, and keeps the
 *  devices open and balanced: every run is then one product of that
 *  shape, with no balancing runs, until the ranks' times drift apart
 *  (opts.drift) or mlsba_mpi_multiplier_rebalance() is called. Its
 *  layout of A, B and C is fixed between balancings: an application that
 *  keeps its own blocks asks for them (mlsba_mpi_multiplier_matrix()). */
/**@{*/
typedef struct mlsba_mpi_multiplier mlsba_mpi_multiplier_t;

/** \brief Open every rank's devices and balance the ranks for opts' shape
 *  (INPA's runs on scratch operands: nothing is multiplied yet).
 *  Collective; the options are agreed on first, as mlsba_mpi_multiply()'s.
 *  \param[out] mult  destroy with mlsba_mpi_multiplier_destroy() on every
 *                    rank; NULL on any rank fails every rank.
 *  \return as mlsba_mpi_multiply(). */
MLSBA_EXTERN int
mlsba_mpi_multiplier_create(MPI_Comm comm,
                            const mlsba_mpi_multiply_opts_t *opts,
                            mlsba_mpi_multiplier_t **mult);
/** \brief One product with the options' operands: generated from the
 *  seed, or the application's own blocks through opts.fill (asked only
 *  for this rank's blocks of the multiplier's layout); C' in result->c
 *  (result->c_row0 ... give its place), the whole C on rank 0 with
 *  opts.gather. The result's balancing fields are those of the balancing
 *  in force; result->rebalanced says whether this run balanced again
 *  after it (the layout may then have changed). Collective. */
MLSBA_EXTERN int mlsba_mpi_multiplier_run(mlsba_mpi_multiplier_t *mult,
                                          mlsba_mpi_result_t *result);
/** \brief One product on matrices in the caller's layouts (a ScaLAPACK
 *  descriptor's, or any description): A (m x k, or k x m with transa
 *  'T') and B (k x n, or n x k) are redistributed to the multiplier's
 *  layout, C too when beta is not 0, and C comes back into c in the
 *  layout of c_desc. result->c is NULL (C is in c). Collective; every
 *  description on the multiplier's communicator.
 *  \return as mlsba_mpi_multiply(); MLSBA_EINVAL for a description of
 *          another size. */
MLSBA_EXTERN int mlsba_mpi_multiplier_run_dist(
    mlsba_mpi_multiplier_t *mult, const mlsba_mpi_matrix_t *a_desc,
    const void *a, const mlsba_mpi_matrix_t *b_desc, const void *b,
    const mlsba_mpi_matrix_t *c_desc, void *c, mlsba_mpi_result_t *result);
/** Flags of mlsba_mpi_multiplier_run_dist_flags(): the application's
 *  word that an operand is the one it passed to the last run. */
enum {
  /** On this rank, the caller's A holds, element for element and in the
   *  same description, what it held at the multiplier's last run_dist. */
  MLSBA_MPI_SAME_A = 1,
  /** The same for B. */
  MLSBA_MPI_SAME_B = 2
};
/** \brief mlsba_mpi_multiplier_run_dist() with the application's word on
 *  its operands (flags: MLSBA_MPI_SAME_A, MLSBA_MPI_SAME_B or 0). Without
 *  a flag, the run compares the caller's A and B with a copy of what the
 *  last run moved (result.reused): at N = 3000 on two ranks that reads
 *  72 MB a run. With the flag, it trusts the caller: no comparison, and
 *  the operand already in the layout serves again (result.reused says
 *  so) wherever the last run moved one under the same description (the
 *  first run, a run after a rebalancing or under another description
 *  moves it whatever the flag, and keeps no copy of it to compare with:
 *  a later run without the flag moves it again). A rank that passes the
 *  flag for an array
 *  that did change gets C computed from the operand as it was at the
 *  last move, on every rank: a wrong C, never a crash or a hang; the
 *  library cannot tell. A flag on some ranks only is honoured where it
 *  is passed, the others compare: the operand serves again when every
 *  rank finds it unchanged. Collective, as run_dist. */
MLSBA_EXTERN int mlsba_mpi_multiplier_run_dist_flags(
    mlsba_mpi_multiplier_t *mult, unsigned int flags,
    const mlsba_mpi_matrix_t *a_desc, const void *a,
    const mlsba_mpi_matrix_t *b_desc, const void *b,
    const mlsba_mpi_matrix_t *c_desc, void *c, mlsba_mpi_result_t *result);
/** \brief Balance the ranks again now (INPA from scratch on the devices
 *  as they are now). Collective. */
MLSBA_EXTERN int mlsba_mpi_multiplier_rebalance(mlsba_mpi_multiplier_t *mult);
/** \brief The multiplier's layout of A (which 0, as the application
 *  stores it: k x m when transa is 'T'), B (1) or C (2): which blocks this
 *  rank owns, block size opts.block; valid until the next balancing.
 *  NULL for another which. */
MLSBA_EXTERN const mlsba_mpi_matrix_t *
mlsba_mpi_multiplier_matrix(const mlsba_mpi_multiplier_t *mult, int which);
/** \brief The last balancing as a result (the history, stop, imbalance,
 *  wall_s and split.balance_s of the balancing; no product fields);
 *  owned by the multiplier, valid until its next call. */
MLSBA_EXTERN const mlsba_mpi_result_t *
mlsba_mpi_multiplier_balancing(const mlsba_mpi_multiplier_t *mult);
/** \brief Close the devices, free the multiplier's duplicate of comm:
 *  collective, as MPI_Comm_free is; NULL is ignored. */
MLSBA_EXTERN void mlsba_mpi_multiplier_destroy(mlsba_mpi_multiplier_t *mult);
/**@}*/

/* ---------------------------------------------------------------------- */
/** \name An application's own divisible load across ranks
 *
 *  Every rank passes the same load: N units, numbered globally, with the
 *  application's code for a range of them (mlsba_load_create() and
 *  mlsba_load_set_cpu() / mlsba_load_set_opencl() of libmlsba). The head
 *  (rank 0) gives every rank a contiguous range [offset, offset + count);
 *  every rank balances its own devices on its range with libmlsba's
 *  single-node routine and reports the time of its balanced run; the head
 *  adds the point (count, count / time) to the rank's speed function and
 *  draws the next counts by geometric partitioning over those functions
 *  (INPA in one dimension), until the rank times agree within eps. The
 *  callbacks receive global unit numbers: the application computes, and
 *  moves, its own data; the library says who computes what.
 *
 *  The layer opens each rank's devices itself (opts.platform: "auto" by
 *  default), so that their errors reach mlsba_mpi_last_error(). Every
 *  call here is collective over comm; an error on any rank stops every
 *  rank with the same code and a message naming that rank. */
/**@{*/

/** Options; initialise with mlsba_mpi_divide_opts_init(). Every rank
 *  passes the same algorithm, eps, max_iter and drift: the calls compare
 *  them with rank 0's first and fail on every rank, naming the first
 *  rank that differs, the option and both values. The platform and the
 *  node options are each rank's own. */
typedef struct mlsba_mpi_divide_opts {
  /** Each rank's platform, as mlsba_mpi_multiply_opts_t::platform ("auto"). */
  const char *platform;
  /** INPA (default): rank speed functions and geometric partitioning;
   *  or the baselines (constant speeds re-measured, measured once, or
   *  the same count everywhere). */
  mlsba_mpi_algo_t algorithm;
  double eps;            /**< rank times within eps: balanced (0.05) */
  unsigned int max_iter; /**< at most this many distributions (20) */
  /** mlsba_mpi_divider_run(): after two runs in a row whose rank times
   *  are further apart than this, the ranks are balanced again, from the
   *  speed functions learned so far (default 2 eps; 0: never). The run
   *  that showed the drift is the re-balance's first: a rank whose time
   *  there is further than this (relative) from its speed function has
   *  changed, and its older points are forgotten. */
  double drift;
  /** How each rank balances its own devices (mlsba_balance_opts_init()'s
   *  defaults): algorithm, eps, max_iter, drive, fault handling... */
  mlsba_balance_opts_t node;
} mlsba_mpi_divide_opts_t;

/** What the balancing found; the same on every rank except where noted.
 *  Release with mlsba_mpi_divide_result_free(). */
typedef struct mlsba_mpi_divide_result {
  int nodes;
  int64_t offset, count;     /**< this rank's units of the last run */
  int64_t *offsets, *counts; /**< every rank's (nodes entries) */
  double *time;              /**< every rank's time in the last run */
  unsigned int iterations;   /**< distributions run */
  int converged;             /**< stop is balanced or a fixed point */
  /** balanced (within eps), a fixed point (the speed functions moved no
   *  rank by more than eps / 4 of its units: converged, but the times may
   *  be further apart than eps), max_iter, or a cycle. */
  mlsba_stop_reason_t stop;
  double imbalance; /**< (max - min) / max of the last rank times */
  double makespan;  /**< the slowest rank's time in the last run */
  int simulated;    /**< the ranks' devices are simulated (virtual time) */
  /** Every distribution run: history_count[k * nodes + r] units of rank
   *  r in run k, history_time[...] its time, history_imbalance[k]. */
  size_t history_len;
  int64_t *history_count;
  double *history_time, *history_imbalance;
  /** This rank's devices in its last run (its own, on every rank). */
  size_t ndevices;
  mlsba_mpi_device_t *devices;
} mlsba_mpi_divide_result_t;

/** \brief Defaults: "auto", INPA, eps 0.05, 20 distributions, drift 2 eps,
 *  the single-node routine's defaults inside each rank. NULL is
 *  ignored. */
MLSBA_EXTERN void mlsba_mpi_divide_opts_init(mlsba_mpi_divide_opts_t *opts);

/** \brief Balance load across the ranks of comm and compute it: when the
 *  call returns 0, the last distribution's run has computed every unit
 *  once (each rank its [offset, offset + count)).
 *  \param load  the application's load, its units global; every rank's
 *               has the same name, number of units (at least one per
 *               rank) and shape (mlsba_load_set_shape()). The caller
 *               keeps it.
 *  \param opts  NULL: the defaults (compared with rank 0's all the
 *               same).
 *  A NULL load or result on any rank fails every rank.
 *  \return 0; MLSBA_EINVAL (different unit counts, fewer units than
 *          ranks, bad options, ranks mixing simulated and real devices),
 *          MLSBA_EIO / MLSBA_EFORMAT (a platform file), MLSBA_EDEVICE /
 *          MLSBA_EDEVMEM (a device), MLSBA_ENOMEM, as the failing rank
 *          reports it, on every rank. */
MLSBA_EXTERN int mlsba_mpi_divide(MPI_Comm comm, mlsba_load_t *load,
                                  const mlsba_mpi_divide_opts_t *opts,
                                  mlsba_mpi_divide_result_t *result);
/** \brief Release what a result holds (not the struct itself). */
MLSBA_EXTERN void
mlsba_mpi_divide_result_free(mlsba_mpi_divide_result_t *result);

/** Balance once, run many times, across ranks: every time step of an
 *  application runs the same load with the balanced shares; when the rank
 *  times drift apart (opts.drift), the ranks are balanced again from what
 *  was learned, which costs a run or two, not a cold start. */
typedef struct mlsba_mpi_divider mlsba_mpi_divider_t;

/** \brief Balance as mlsba_mpi_divide() does and keep the devices open
 *  (the load has been computed once when it returns).
 *  \param[out] divider  destroy with mlsba_mpi_divider_destroy(), on
 *                       every rank; NULL on any rank fails every rank. */
MLSBA_EXTERN int mlsba_mpi_divider_create(MPI_Comm comm, mlsba_load_t *load,
                                          const mlsba_mpi_divide_opts_t *opts,
                                          mlsba_mpi_divider_t **divider);
/** \brief Run the whole load once more, every rank its share with its
 *  balanced devices. info (may be NULL): the slowest rank's time, the
 *  imbalance of the rank times, and whether this run re-balanced (the
 *  load was then computed by the re-balancing's last run, whose time and
 *  imbalance info gives, and the shares may have changed: see
 *  mlsba_mpi_divider_result()); runs: the distributions the call ran (1,
 *  or 1 plus the re-balance's); wall_s: the whole call's seconds, every
 *  run included (this rank's wall clock; on simulated ranks the virtual
 *  seconds of the runs, the slowest rank's each time, its devices' own
 *  balancing included); drift: opts.drift. */
MLSBA_EXTERN int mlsba_mpi_divider_run(mlsba_mpi_divider_t *divider,
                                       mlsba_run_info_t *info);
/** \brief Balance the ranks again now, from the speed functions learned. */
MLSBA_EXTERN int mlsba_mpi_divider_rebalance(mlsba_mpi_divider_t *divider);
/** \brief The shares and history of the last balancing (owned by the
 *  divider, valid until its next call). */
MLSBA_EXTERN const mlsba_mpi_divide_result_t *
mlsba_mpi_divider_result(const mlsba_mpi_divider_t *divider);
/** \brief Close the devices and free its communicator (a duplicate of
 *  comm): collective, as MPI_Comm_free is; NULL is ignored. */
MLSBA_EXTERN void mlsba_mpi_divider_destroy(mlsba_mpi_divider_t *divider);
/**@}*/

/* ---------------------------------------------------------------------- */
/** \name Elhiny's application: a master and its workers
 *
 *  C = A x B with A (N x M) sent whole to every worker, B (M x K) split
 *  by columns among the workers' devices and C (N x K) returned: rank 0
 *  is the master, which holds A, B and C, sends and receives, and
 *  computes nothing; every other rank is a worker node with its own
 *  platform. The split of K comes from models: each worker times its
 *  devices at a few column counts (simulated ones in virtual time), the
 *  master adds every worker's network link and partitions by one of
 *  three methods. Delivery is Elhiny's: over each worker's own link A
 *  first, then one message per device, the accelerator's columns first
 *  and the cores' after, each device starting when its columns arrive;
 *  the worker sends its C back in one message when its devices are done;
 *  different workers' links carry their messages at the same time.
 *
 *  A simulated device's speed profile counts columns of this product
 *  (N M multiply-adds each) per second; a file that says "columns_of"
 *  must say N and M. A simulated device with a host "link" is the node's
 *  accelerator (Elhiny's GPU, its PCIe transfers in its times); cores
 *  and simulated devices without a link are its cores. OpenCL devices
 *  take no columns in this mode. Under SimGrid's SMPI the run's times are
 *  the simulated platform's. */
/**@{*/

/** How the master splits K's columns. */
typedef enum mlsba_mpi_mw_split {
  /** Compute-only FPM ("fpm"): SLBA over every worker device's speed
   *  function, links ignored (the present FPM partitioning). */
  MLSBA_MPI_MW_FPM = 0,
  /** Elhiny's network-aware DLT ("dlt", mlsba_partition_dlt_nodes()):
   *  each device a line fitted to its times (a node's cores their mean
   *  line), the accelerator served first, the workers' links. At most
   *  one accelerator a worker. */
  MLSBA_MPI_MW_DLT,
  /** FPM plus communication ("fpm-comm", mlsba_partition_nodes_comm()):
   *  each worker's compute, its devices balanced by SLBA, plus its link's
   *  affine cost of A, its columns of B and of C (the default). */
  MLSBA_MPI_MW_FPM_COMM
} mlsba_mpi_mw_split_t;

/** Where the workers' network links come from. */
typedef enum mlsba_mpi_mw_links {
  /** A ping-pong from the master (mlsba_mpi_measure_links()). */
  MLSBA_MPI_MW_LINKS_MEASURE = 0,
  /** Each worker's platform file, its "network" field (none: free). */
  MLSBA_MPI_MW_LINKS_PLATFORM
} mlsba_mpi_mw_links_t;

/** Options of mlsba_mpi_master_worker(); initialise with
 *  mlsba_mpi_master_worker_opts_init(). Every rank passes the same values
 *  except the platform (and fill_user; fill on every rank or on none); a
 *  rank whose values differ from rank 0's makes the call fail on every
 *  rank, naming it, the option and both values. */
typedef struct mlsba_mpi_master_worker_opts {
  /** Each worker's platform, as mlsba_mpi_multiply_opts_t::platform ("auto", or
   * a file where "%r" becomes the rank: workers are ranks 1, 2, ...). */
  const char *platform;
  int64_t n, m, k; /**< A is n x m, B m x k; k >= the workers */
  mlsba_precision_t precision;
  mlsba_mpi_mw_split_t split;
  mlsba_mpi_mw_links_t links;
  uint64_t seed;               /**< of the generated A and B */
  unsigned int verify_samples; /**< elements of C the master checks (64) */
  /** The application's A and B, as mlsba_mpi_multiply_opts_t::fill, called on
   * the master only, for the whole A and B (NULL: made from seed). */
  int (*fill)(void *user, int which, int64_t row, int64_t col, int64_t rows,
              int64_t cols, void *dst, int64_t ld);
  void *fill_user;
} mlsba_mpi_master_worker_opts_t;

/** The former name of mlsba_mpi_master_worker_opts_t, kept. */
typedef mlsba_mpi_master_worker_opts_t mlsba_mpi_mw_opts_t;

/** One worker as the run went; times in seconds from the common start
 *  (after the links and the partitioning), on the master's clock for
 *  sent and returned, the worker's for arrived and finished. */
typedef struct mlsba_mpi_mw_worker {
  int rank;
  int64_t col0, columns; /**< its columns of B and C */
  mlsba_link_t link;     /**< its link as the partitioners saw it */
  double a_arrived;      /**< A arrived */
  double sent;           /**< its last columns of B left the master */
  double arrived;        /**< they arrived */
  /** Its devices done (a simulated device starts on its columns'
   *  arrival; real devices run together after the last). */
  double finished;
  double returned; /**< its C arrived at the master */
  size_t ndevices;
  /** Its devices: columns and compute time (host link included); rank 0
   *  only. */
  mlsba_mpi_device_t *devices;
} mlsba_mpi_mw_worker_t;

/** What the call found; the same on every rank except where noted.
 *  Release with mlsba_mpi_mw_result_free(). */
typedef struct mlsba_mpi_mw_result {
  int workers;
  mlsba_mpi_mw_split_t split;
  /** From the common start to the last C at the master: A, B, compute
   *  and C (simulated seconds under SMPI; outside it, simulated devices'
   *  compute is not waited for). */
  double makespan_s;
  /** The split's own prediction: the FPM's compute makespan, the DLT's
   *  T, FPM plus communication's slowest node. */
  double predicted_s;
  /** Elhiny's model's time of the split chosen (eq. 27 with the fitted
   *  lines and the links): one yardstick for the three; NaN where a
   *  worker does not fit that model. */
  double dlt_model_s;
  /** 1 verified, 0 a wrong element, -1 not checked (simulated devices
   *  compute nothing). */
  int verified;
  double max_rel_error;
  int simulated;                 /**< the workers' devices are simulated */
  mlsba_mpi_mw_worker_t *worker; /**< workers entries, ranks 1, 2, ... */
  /** On the master: C, N x K column-major (doubles or floats by
   *  precision); NULL elsewhere and when simulated. */
  void *c;
} mlsba_mpi_mw_result_t;

/** \brief Defaults: "auto", N = M = K = 1024, double, FPM plus
 *  communication, links measured, seed 1, 64 sampled elements. NULL is
 *  ignored. */
MLSBA_EXTERN void
mlsba_mpi_master_worker_opts_init(mlsba_mpi_master_worker_opts_t *opts);
/** \brief The former name of mlsba_mpi_master_worker_opts_init(), kept. */
MLSBA_EXTERN void mlsba_mpi_mw_opts_init(mlsba_mpi_master_worker_opts_t *opts);
/** \brief Compute C = A x B on the workers of comm, split by
 *  opts->split, and check sampled elements of C on the master.
 *  Collective over comm.
 *  \return 0; MLSBA_EINVAL (fewer than 2 ranks, K below the workers,
 *          options that differ between ranks, a worker the DLT cannot
 *          describe, mixed simulated and real workers), MLSBA_EIO /
 *          MLSBA_EFORMAT (a platform file), MLSBA_EDEVICE, MLSBA_ENOMEM,
 *          the same on every rank, mlsba_mpi_last_error() naming the
 *          rank. */
MLSBA_EXTERN int
mlsba_mpi_master_worker(MPI_Comm comm,
                        const mlsba_mpi_master_worker_opts_t *opts,
                        mlsba_mpi_mw_result_t *result);
/** \brief Release what a result holds (not the struct itself). */
MLSBA_EXTERN void mlsba_mpi_mw_result_free(mlsba_mpi_mw_result_t *result);
/** \brief "fpm", "dlt", "fpm-comm"; NULL for an unknown value. */
MLSBA_EXTERN const char *mlsba_mpi_mw_split_name(mlsba_mpi_mw_split_t split);
/** \brief The split of a name; MLSBA_EINVAL for an unknown one. */
MLSBA_EXTERN int mlsba_mpi_mw_split_from_name(const char *name,
                                              mlsba_mpi_mw_split_t *split);
/**@}*/

/* ---------------------------------------------------------------------- */
/** \name LU and Cholesky across ranks
 *
 *  LAPACK's ?getrf, ?potrf, ?getrs and ?potrs over the ranks of a
 *  communicator, on a matrix laid out by mlsba_mpi_factor_matrix(): blocks
 *  of nb x nb, 2-D block-cyclic over node columns (docs/layout.md),
 *  homogeneous (ScaLAPACK's) or drawn from each rank's node model so that
 *  the trailing matrix's shares follow the models at every step. The
 *  application fills its own blocks of that description in its local
 *  array (mlsba_mpi_matrix_block()), or moves a matrix there from any
 *  other description (a ScaLAPACK descriptor's) with
 *  mlsba_mpi_redistribute(), and reads the factors the same way: they
 *  replace the matrix in every rank's local array, as LAPACK's replace A.
 *  Every call is collective over the description's communicator; a bad
 *  argument on any rank fails every rank with the same message. */
/**@{*/

/** How mlsba_mpi_factor_matrix() draws the layout. */
typedef enum mlsba_mpi_layout {
  /** ScaLAPACK's 2-D block-cyclic on a P x Q grid of the ranks (P <= Q,
   *  as near square as the rank count allows), rank p Q + q at (p, q):
   *  the same description as a ScaLAPACK descriptor with MB = NB = nb,
   *  RSRC = CSRC = 0 on a row-major grid. */
  MLSBA_MPI_LAYOUT_HOMOGENEOUS = 0,
  /** From the ranks' node models: node columns as INPA's arrangement
   *  stands them, each block row and column given so that every trailing
   *  matrix's shares stay near the models' optimum at its size. A matrix
   *  of fewer blocks than ranks takes the homogeneous layout instead. */
  MLSBA_MPI_LAYOUT_FPM,
  /** The same walk with each model flattened to one speed (Kalinov and
   *  Lastovetsky's heterogeneous block-cyclic layout). */
  MLSBA_MPI_LAYOUT_CONSTANT,
  /** Shi et al.'s process scaling (their hybrid HPL): a node runs
   *  several ranks (opts.node says which ranks share one), ScaLAPACK's
   *  block-cyclic over all the ranks on the grid of its eq. 3, the ranks
   *  of the nodes that run more of them placed first, each node's side by
   *  side in one grid row (its Algorithm 1). The node models are not
   *  used: how many ranks a node runs is the launcher's choice
   *  (mlsba_mpi_process_scaling_count(), its eqs. 1-2). */
  MLSBA_MPI_LAYOUT_PROCESS_SCALING
} mlsba_mpi_layout_t;

/** \brief Shi et al.'s eqs. 1-2: the ranks (MPI processes) to launch on a
 *  node ratio times as fast as the slowest (CPU-only) node, which has
 *  cores cores to share out evenly: MPI_G = ratio + delta, delta the
 *  integer that makes MPI_G divide cores, the divisor of cores nearest
 *  ratio, the smaller of two as near (ratio 5 on 12 cores gives 4). At
 *  least 1; cores <= 0 sets no divisor (ratio rounded). */
MLSBA_EXTERN int64_t mlsba_mpi_process_scaling_count(double ratio,
                                                     int64_t cores);

/** "homogeneous", "fpm", "constant", "process-scaling"; NULL if
 *  unknown. */
MLSBA_EXTERN const char *mlsba_mpi_layout_name(mlsba_mpi_layout_t layout);
/** \brief The layout of a name; MLSBA_EINVAL for an unknown one. */
MLSBA_EXTERN int mlsba_mpi_layout_from_name(const char *name,
                                            mlsba_mpi_layout_t *layout);

/** Options of mlsba_mpi_factor_matrix(); zero them, then set. */
typedef struct mlsba_mpi_factor_layout_opts {
  /** The block nb; 0 takes mlsba_mpi_factor_block() of the matrix and
   *  the communicator's size. */
  int64_t block;
  mlsba_mpi_layout_t layout;
  /** MLSBA_MPI_LAYOUT_FPM and _CONSTANT: this rank's node model, the
   *  time of one rank-nb update of x blocks of nb x nb (as INPA's node
   *  models count them: a point (x, x / t) per measured area x), its
   *  max_load capping the blocks the rank may own. Ignored by the
   *  homogeneous layout. */
  const mlsba_model_t *model;
  /** Nonzero for Cholesky: only the lower triangle's blocks count in the
   *  shares (m must equal n). */
  int lower;
  /** MLSBA_MPI_LAYOUT_PROCESS_SCALING: this rank's node, any number >= 1
   *  (the ranks given the same number are one node's processes; nodes
   *  are ordered by their lowest rank); 0 (the default): the ranks that
   *  share a host (MPI_COMM_TYPE_SHARED) are one node. Negative is an
   *  error. Ignored by the other layouts. */
  int node;
  /** MLSBA_MPI_LAYOUT_FPM and _CONSTANT, LU only (ignored with lower):
   *  the seconds this rank spends a step, besides its update, for each
   *  block column of its node column's width: its share of the step's
   *  row interchanges and of U's block row going down the node column
   *  (a cost per block of width, whatever the rank's height, that the
   *  node models, timing the update alone, do not count). Each node
   *  column's width is then narrowed by its ranks' mean cost (the
   *  layout's width fractions f become f / (1 + f C k / T), C the
   *  trailing block columns, T the models' step time). 0 (the default):
   *  not counted. Finite and >= 0. mlsba-inpa's --comm-model links
   *  derives it from the rank's link, timed by a ping-pong. */
  double swap_s;
  /** MLSBA_MPI_LAYOUT_FPM and _CONSTANT: the relative speed difference
   *  within which the node models cannot tell ranks apart (their
   *  measurement's noise). Each rank's speed at its optimal share of the
   *  matrix (area over time) is compared: from the fastest down, a rank
   *  joins the group of the faster ones while their fastest is at most
   *  1 + alike times its speed, and every rank of a group walks with the
   *  group's mean model (each keeping its max_load), so ranks alike get
   *  equal shares and ranks apart by more keep theirs. 0 (the default):
   *  the models as given. The largest any rank passes is taken. Finite
   *  and >= 0. mlsba-inpa passes twice its --eps on real ranks (two
   *  ranks, each timed within eps of balance by INPA's balancing, may
   *  differ by that much) and 0 on simulated ones, whose models are
   *  exact. */
  double alike;
  /** MLSBA_MPI_LAYOUT_FPM and _CONSTANT, real ranks (not under SMPI): the
   *  tolerance for ranks of the same hardware, as the bindings tell
   *  them: ranks of one host each bound to as many cores (all of them
   *  when not bound), none shared with another rank. Those ranks are
   *  grouped among themselves first, as alike groups the rest, within
   *  kin_alike (a larger tolerance: what such ranks' models differ by
   *  is the machine's noise at the moment they were timed), then the
   *  others within alike. A rank that also drives an accelerator its
   *  binding does not show differs by more. 0 (the default): not
   *  used. The largest any rank passes is taken. Finite and >= 0.
   *  mlsba-inpa passes 0.5 on real ranks, 0 on simulated ones. */
  double kin_alike;
} mlsba_mpi_factor_layout_opts_t;

/** \brief The block mlsba_mpi_factor_matrix() takes when opts.block is
 *  0: the largest of 256, 192 and 128 that still gives each of the ranks
 *  128 blocks of the m x n matrix on average (ceil(m / nb) ceil(n / nb)
 *  >= 128 ranks), else 128. A larger block runs the cores' update at a
 *  higher rate (one core's DGEMM of the update's shape here: 40.9, 42.8
 *  and 44.3 GFLOPS at 128, 192 and 256) and costs a longer panel and
 *  fewer blocks to share the matrix by; HPL's and ScaLAPACK's users on
 *  CPUs pick NB between 128 and 256 the same way. Pure: the same on
 *  every rank. m, n and ranks below 1 count as 1. */
MLSBA_EXTERN int64_t mlsba_mpi_factor_block(int64_t m, int64_t n, int ranks);

/** \brief The factorizations' layout of an m x n matrix over comm's ranks:
 *  a description (block size nb x nb) whose blocks each rank fills in its
 *  local array (mlsba_mpi_matrix_local(): ld x cols; ld is the rank's
 *  local rows rounded up to 16 elements, and 16 more where that is a
 *  multiple of 256, so that the update's columns do not all fall into
 *  the same cache sets), then hands to
 *  mlsba_mpi_getrf() or mlsba_mpi_potrf(). Collective (the models travel
 *  to rank 0, which draws the layout and sends it to every rank); opts
 *  agreed on first. Destroy with mlsba_mpi_matrix_destroy().
 *  \return 0; MLSBA_EINVAL naming the argument and the rank;
 *          MLSBA_ECAPACITY when the models' caps cannot hold the matrix;
 *          MLSBA_ENOMEM. */
MLSBA_EXTERN int
mlsba_mpi_factor_matrix(MPI_Comm comm, int64_t m, int64_t n,
                        const mlsba_mpi_factor_layout_opts_t *opts,
                        mlsba_mpi_matrix_t **matrix);

/** \brief LU with partial pivoting, A = P L U, as LAPACK's ?getrf, of
 *  the m x n matrix desc describes (made by mlsba_mpi_factor_matrix()),
 *  every rank's part in its local array a (doubles or floats by prec).
 *  \param ipiv  min(m, n) entries on every rank: the global, 1-based row
 *               interchanges (row i swapped with row ipiv[i - 1]).
 *  \param info  on every rank: 0, or i > 0 when U(i, i) is exactly zero
 *               (the factorization is completed, as LAPACK's).
 *  \return 0; MLSBA_EINVAL (on every rank, naming the rank at fault);
 *          MLSBA_ENOMEM. */
MLSBA_EXTERN int mlsba_mpi_getrf(const mlsba_mpi_matrix_t *desc,
                                 mlsba_precision_t prec, void *a, int64_t *ipiv,
                                 int64_t *info);
/** \brief Cholesky A = L L^T, as LAPACK's ?potrf with uplo 'L' (the only
 *  one taken): the lower triangle's blocks of the n x n matrix desc
 *  describes are read and replaced by L; blocks above the diagonal, and
 *  the upper triangle of the diagonal blocks, are not touched.
 *  \param info  on every rank: 0, or i > 0 when the leading minor of order
 *               i is not positive definite (the factorization stops). */
MLSBA_EXTERN int mlsba_mpi_potrf(const mlsba_mpi_matrix_t *desc,
                                 mlsba_precision_t prec, char uplo, void *a,
                                 int64_t *info);
/** Options of mlsba_mpi_getrf_ex() and mlsba_mpi_potrf_ex(); zero them,
 *  then set. */
typedef struct mlsba_mpi_factor_opts {
  /** The devices of this rank's node that share its trailing update at
   *  every step, split by their models at that step's size (lib/factor's
   *  per-step split): NULL or "auto" (the default) discovers the cores
   *  the rank is bound to; else a platform file, "%r", "%h" and "%l"
   *  replaced as mlsba_mpi_platform_path() does. Simulated devices
   *  compute in virtual time (their speed in nb x nb blocks updated by a
   *  rank-nb product per second, as mlsba-inpa's node files count them;
   *  under SMPI the rank's simulated clock advances by it); OpenCL
   *  devices take no columns yet. */
  const char *platform;
  /** How the node's devices share each step's update:
   *  MLSBA_FACTOR_SPLIT_FPM (0, the default) splits every step by the
   *  models at that step's size; MLSBA_FACTOR_SPLIT_FIXED_SLICE keeps
   *  constant shares, Song & Dongarra's slice: `fraction` when given, else the
   *  models' split of the first step they decide (the steps before it,
   *  while real devices' models are still empty, split evenly), kept as
   *  fractions for every later step. No other split is taken. */
  mlsba_factor_split_t split;
  /** With MLSBA_FACTOR_SPLIT_FIXED_SLICE: one fraction per device of the
   *  node's platform, in file order (>= 0, not all 0; OpenCL devices'
   *  ignored), the share of every step's columns each takes; NULL:
   *  tuned from the first step, as above. The count is the platform's,
   *  which the caller knows from its file. */
  const double *fraction;
  /** Nonzero: compute no numbers, only charge every phase's time to the
   *  simulated clock (the panel, the TRSMs, the row interchanges' copies
   *  and the update), as HPL on SMPI does to simulate large runs: the
   *  panels' buffers are shared between the simulated ranks and the
   *  factors are garbage (ipiv pseudo-random, info 0). Only under
   *  SimGrid's SMPI with simulated devices (MLSBA_EINVAL elsewhere); the
   *  local array a may then be SMPI_SHARED_MALLOC memory too. */
  int skip_compute;
} mlsba_mpi_factor_opts_t;

/** What this rank's node did in one factorization. */
typedef struct mlsba_mpi_factor_report {
  size_t num_devices; /**< of the node's platform, file order */
  /** Per device: the columns it updated, summed over the steps, and its
   *  seconds (virtual on a simulated node). Freed by
   *  mlsba_mpi_factor_report_free(). */
  int64_t *columns;
  double *seconds;
  int64_t steps;       /**< updates this rank ran */
  int64_t split_steps; /**< of which more than one device took part */
  int64_t fpm_steps;   /**< of which the models decided the split */
  /** The updates' time on this rank: the longest device of each step,
   *  summed (virtual on a simulated node). */
  double update_s;
  int simulated; /**< 1 when the node's devices are simulated */
  /** Per step of the factorization (timed_steps of them: the block
   *  columns, min(m, n) / nb rounded up): step_s[k] the seconds from the
   *  end of step k - 1 (the call's start for k = 0) to the end of step k
   *  on this rank (MPI_Wtime: simulated time under SMPI), and
   *  step_update_s[k] its update's (the longest device's, virtual on a
   *  simulated node). Freed by mlsba_mpi_factor_report_free(). */
  int64_t timed_steps;
  double *step_s;
  double *step_update_s;
  /** The split the update used: MLSBA_FACTOR_SPLIT_FPM or _FIXED_SLICE,
   *  and with the latter the fractions it kept (num_devices entries,
   *  NULL when no step was split by them). */
  mlsba_factor_split_t split;
  double *fraction;
  /** Where this rank's wall-clock time went (seconds; simulated time
   *  under SMPI, MPI_Wtime's): the whole call; factoring its part of the
   *  panels and gathering them onto their roots; waiting for the
   *  panels' broadcasts; LU's row interchanges and U's block row (its
   *  solve and its broadcast down the node column); the updates (as the
   *  calling thread saw them). What is left of total_s is copies and
   *  bookkeeping. With MLSBA_VERBOSE set every rank prints them to
   *  stderr at the end, and each step's with MLSBA_VERBOSE=2. */
  double total_s;
  double panel_s;
  double wait_s;
  double swap_s;
  double update_wall_s;
  /** On a simulated node, the virtual time of this rank's other compute:
   *  the panels and the row interchanges' copies, charged at the speed
   *  of the node's cores together (those of its slowest device's kind
   *  that drive no accelerator), and LU's solves of U's block row, split
   *  between the node's devices as the update is; 0 on a real node,
   *  whose wall clock has them. */
  double other_s;
} mlsba_mpi_factor_report_t;

/** \brief mlsba_mpi_getrf() with options (NULL: the defaults) and this
 *  rank's report (NULL: none; else freed with
 *  mlsba_mpi_factor_report_free(), even after an error). The platform
 *  is opened on every rank before the matrix is touched: a platform that
 *  cannot be opened on one rank fails every rank with its message. */
MLSBA_EXTERN int mlsba_mpi_getrf_ex(const mlsba_mpi_matrix_t *desc,
                                    mlsba_precision_t prec, void *a,
                                    int64_t *ipiv, int64_t *info,
                                    const mlsba_mpi_factor_opts_t *opts,
                                    mlsba_mpi_factor_report_t *report);
/** \brief mlsba_mpi_potrf() with options and a report, as
 *  mlsba_mpi_getrf_ex(). */
MLSBA_EXTERN int mlsba_mpi_potrf_ex(const mlsba_mpi_matrix_t *desc,
                                    mlsba_precision_t prec, char uplo, void *a,
                                    int64_t *info,
                                    const mlsba_mpi_factor_opts_t *opts,
                                    mlsba_mpi_factor_report_t *report);
/** \brief Release what a report holds (not the struct); NULL ignored. */
MLSBA_EXTERN void
mlsba_mpi_factor_report_free(mlsba_mpi_factor_report_t *report);
/** \brief Solve A X = B with mlsba_mpi_getrf()'s factors of a square A
 *  (LAPACK's ?getrs, no transpose): b is n x nrhs (leading dimension
 *  ldb >= n), the same on every rank, and holds X on every rank on
 *  return. A zero on U's diagonal gives infinities, as LAPACK's. */
MLSBA_EXTERN int mlsba_mpi_getrs(const mlsba_mpi_matrix_t *desc,
                                 mlsba_precision_t prec, const void *lu,
                                 const int64_t *ipiv, int64_t nrhs, void *b,
                                 int64_t ldb);
/** \brief Solve A X = B with mlsba_mpi_potrf()'s L (LAPACK's ?potrs,
 *  uplo 'L'); b as mlsba_mpi_getrs()'s. */
MLSBA_EXTERN int mlsba_mpi_potrs(const mlsba_mpi_matrix_t *desc,
                                 mlsba_precision_t prec, char uplo,
                                 const void *l, int64_t nrhs, void *b,
                                 int64_t ldb);
/**@}*/

#ifdef __cplusplus
}
#endif

#endif /* MLSBA_MPI_H */
