/* The MPI layer's modules and what they share. Everything here is internal
 * (mlsba__mpi_*); the public API is <mlsba/mpi.h>. */
#ifndef MLSBA_MPI_INTERNAL_H
#define MLSBA_MPI_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "mlsba/mpi.h"

/* ---- agree.c: every rank learns of an error on any rank --------------- */

/* Collective: err is this rank's status (0 or a negative code, with
 * mlsba_last_error() its message). Returns 0 when every rank passed 0;
 * otherwise the code of the lowest failing rank, on every rank, whose
 * last-error message then reads "rank R: <that rank's message>". */
int mlsba__mpi_agree(MPI_Comm comm, int err);

/* A named value of this rank: an option every rank must pass alike, or a
 * result the head shares. Build one with the MLSBA__MPI_* macros below,
 * which take the kind from the variable's type. */
typedef enum mlsba__mpi_kind {
  MLSBA__MPI_SIGNED,   /* a signed integer of `size` bytes */
  MLSBA__MPI_UNSIGNED, /* an unsigned integer of `size` bytes */
  MLSBA__MPI_DOUBLE,
  MLSBA__MPI_ENUM, /* an enum, spelled by `spell` as the user writes it */
  /* A string (at points at its first character, or is NULL): compared by
   * a hash of the whole, spelled by its first bytes. Agreed on only. */
  MLSBA__MPI_TEXT
} mlsba__mpi_kind_t;

typedef struct mlsba__mpi_value {
  /* What the user knows it as, the subject of the message: "option
   * split", "the load's shape". */
  const char *name;
  mlsba__mpi_kind_t kind;
  /* The variable. mlsba__mpi_share_values() writes through it, so a
   * table for it points at writable variables. */
  const void *at;
  size_t size; /* sizeof the variable (numbers and enums) */
  /* MLSBA__MPI_ENUM: the name of a value (NULL for one it does not
   * know, then spelled as a number). */
  const char *(*spell)(int64_t value);
} mlsba__mpi_value_t;

/* A number: an integer of any size or signedness, or a double. */
#define MLSBA__MPI_NUMBER(label, var)                                          \
  {                                                                            \
    (label),                                                                   \
        _Generic((var), double                                                 \
                 : MLSBA__MPI_DOUBLE, signed char                              \
                 : MLSBA__MPI_SIGNED, short                                    \
                 : MLSBA__MPI_SIGNED, int                                      \
                 : MLSBA__MPI_SIGNED, long                                     \
                 : MLSBA__MPI_SIGNED, long long                                \
                 : MLSBA__MPI_SIGNED, _Bool                                    \
                 : MLSBA__MPI_UNSIGNED, unsigned char                          \
                 : MLSBA__MPI_UNSIGNED, unsigned short                         \
                 : MLSBA__MPI_UNSIGNED, unsigned int                           \
                 : MLSBA__MPI_UNSIGNED, unsigned long                          \
                 : MLSBA__MPI_UNSIGNED, unsigned long long                     \
                 : MLSBA__MPI_UNSIGNED),                                       \
        &(var), sizeof(var), NULL                                              \
  }
/* An enum, with the function that names its values. */
#define MLSBA__MPI_ENUM_VALUE(label, var, spell_fn)                            \
  { (label), MLSBA__MPI_ENUM, &(var), sizeof(var), (spell_fn) }
/* A string (char array or pointer; NULL allowed). */
#define MLSBA__MPI_TEXT_VALUE(label, str)                                      \
  { (label), MLSBA__MPI_TEXT, (str), 0, NULL }

/* Collective, after every rank's arguments are known to be valid: each
 * rank compares its values v[n] with rank 0's. When one differs, every
 * rank fails with MLSBA_EINVAL and the message of the lowest rank that
 * differs, for its first value that does, both spelled as the user
 * wrote them: "rank 2: option split is dlt here, fpm on rank 0: <why>".
 * Every rank passes the same table (names, kinds, sizes, order). */
int mlsba__mpi_agree_values(MPI_Comm comm, const mlsba__mpi_value_t v[],
                            size_t n, const char *why);
/* Collective: root's values v[n] into every rank's variables (the head's
 * results, for every rank). No MLSBA__MPI_TEXT. */
void mlsba__mpi_share_values(MPI_Comm comm, int root,
                             const mlsba__mpi_value_t v[], size_t n);

/* ---- names.c: the spellers of the layer's enums, for the values above -- */

/* The name a user writes for a value; NULL for a value it does not know. */
const char *mlsba__mpi_spell_algo(int64_t v);
const char *mlsba__mpi_spell_node_algo(int64_t v);
const char *mlsba__mpi_spell_comm_model(int64_t v);
const char *mlsba__mpi_spell_precision(int64_t v);
const char *mlsba__mpi_spell_split(int64_t v);
const char *mlsba__mpi_spell_links(int64_t v);
/* A callback given or not: "set" or "NULL". */
const char *mlsba__mpi_spell_set(int64_t v);

/* ---- matgen.c: matrices from their global indices --------------------- */

/* Element (i, j) of A (which = 0), B (1) or C (2), in [-1, 1), a function
 * of (seed, which, i, j) only, rounded to the precision: every rank makes
 * its own part and the reference of any element without communication. */
double mlsba__mpi_element(uint64_t seed, int which, int64_t i, int64_t j,
                          mlsba_precision_t prec);
/* Fills the rows [r0, r0 + rows) x columns [c0, c0 + cols) of A, B or C
 * (as stored) into dst (column-major, leading dimension rows). */
void mlsba__mpi_fill(void *dst, uint64_t seed, int which, int64_t r0,
                     int64_t c0, int64_t rows, int64_t cols,
                     mlsba_precision_t prec);

/* ---- place.c: where a rank runs ------------------------------------------ */

/* Collective: this rank's rank among the ranks of comm on its host (an
 * MPI shared-memory split) and how many there are. */
int mlsba__mpi_local_rank(MPI_Comm comm, int *local_rank, int *local_size);
/* The platform of a rank: "auto" discovers the devices it is bound to and
 * its share of the host's accelerators (local_rank of local_size); any
 * other path is a platform file. */
int mlsba__mpi_platform_open(const char *path, int local_rank, int local_size,
                             mlsba_platform_t **pl);

/* ---- node.c: one rank's devices --------------------------------------- */

typedef struct mlsba__mpi_node mlsba__mpi_node_t;

/* Loads the platform file (path already has %r replaced), checks that its
 * devices are all simulated or all real, opens it. b and prec shape the
 * kernel C' += A_(b) B_(b). */
int mlsba__mpi_node_open(const char *path, const mlsba_mpi_multiply_opts_t *o,
                         mlsba__mpi_node_t **node);
/* The same for rank local_rank of local_size on its host, which "auto"
 * needs (mlsba__mpi_node_open takes them from the launcher's
 * environment). */
int mlsba__mpi_node_open_at(const char *path, int local_rank, int local_size,
                            const mlsba_mpi_multiply_opts_t *o,
                            mlsba__mpi_node_t **node);
void mlsba__mpi_node_close(mlsba__mpi_node_t *node);
/* The blocks of C this node can hold in a grid of nb x nb blocks: the
 * sum of its simulated devices' max_load, less what whole columns round
 * off; -1 when a device has no limit or the node is real (its limit is
 * only known on a shape). */
int64_t mlsba__mpi_node_capacity(const mlsba__mpi_node_t *node, int64_t nb);
/* The network link of the rank's platform file ("network"; bandwidth 0
 * when it gives none). */
int mlsba__mpi_node_network(const mlsba__mpi_node_t *node, mlsba_link_t *link);
/* 1 when every device is simulated (virtual time, nothing computed). */
int mlsba__mpi_node_simulated(const mlsba__mpi_node_t *node);
size_t mlsba__mpi_node_num_devices(const mlsba__mpi_node_t *node);
/* The host cores this node's devices are, one a device, into cores (n
 * of them, n >= num_devices); 0, or -1 where a device is not a core (an
 * accelerator, a simulated device) or its core is unknown. */
int mlsba__mpi_node_cores(const mlsba__mpi_node_t *node, int *cores, size_t n);
const char *mlsba__mpi_node_device_name(const mlsba__mpi_node_t *node,
                                        size_t i);

/* The kernel's operands for a bm x bn sub-matrix: A_(b) is bm x b
 * (leading dimension bm), B_(b) b x bn (leading dimension b), C' bm x bn
 * (leading dimension bm); the caller owns them (NULL on a simulated
 * node) and keeps C' until the next shape, mlsba__mpi_node_flush or the
 * close, which write back into it what accelerators hold. Re-opens what
 * depends on the shape. */
int mlsba__mpi_node_shape(mlsba__mpi_node_t *node, int64_t bm, int64_t bn,
                          void *a, void *b, void *c);
/* Accelerators keep their columns of C' between steps: this copies them
 * back into C', after which C' is current and the caller may read or free
 * it. Balancing, a new shape and the close do it first themselves. */
int mlsba__mpi_node_flush(mlsba__mpi_node_t *node);
/* The node's IDPA: balances its devices on the current shape with the
 * node algorithm that algo implies, and gives the time of one step (one
 * C' += A_(b) B_(b)) with the distribution it settled on. Its runs treat
 * C' as scratch: what it holds afterwards is meaningless. */
int mlsba__mpi_node_balance(mlsba__mpi_node_t *node, mlsba_mpi_algo_t algo,
                            double *step_time);
/* A node of one device that keeps nothing of its own (a core, or a
 * simulated device): the whole current shape given to it, balanced
 * without a run, since there is nothing to split (1). 0 for any other
 * node, which needs mlsba__mpi_node_balance. */
int mlsba__mpi_node_take_whole(mlsba__mpi_node_t *node);
/* The next steps' panels A_(b) and B_(b) (bm x kb and kb x bn, kb <= b:
 * the last step of a k that is not a multiple of b is narrower), in place
 * of those the shape was given; balancing and a new shape set kb back to
 * b. */
void mlsba__mpi_node_panels(mlsba__mpi_node_t *node, const void *a,
                            const void *b, int64_t kb);
/* The whole product as one step on a node of cores only: A' (bm x k)
 * and B' (k x bn) in place of the panels, k wider than b. */
void mlsba__mpi_node_whole(mlsba__mpi_node_t *node, const void *a,
                           const void *b, int64_t k);
/* The node's devices with memory of their own (OpenCL): panels only. */
int mlsba__mpi_node_accelerators(const mlsba__mpi_node_t *node);
/* Whether the node's next step can write C' instead of adding to it (a
 * product with beta 0: C' need not be cleared first): 1 when its devices
 * are real cores, 0 with accelerators (their slices of C' start from the
 * host's) or simulated devices. */
int mlsba__mpi_node_can_overwrite(const mlsba__mpi_node_t *node);
/* With overwrite 1, the next step (of mlsba__mpi_node_step) writes C'
 * with beta 0, where mlsba__mpi_node_can_overwrite says the node can;
 * the step after it adds again, and a balancing forgets it. With 0, the
 * next step adds to C' as every step does. */
void mlsba__mpi_node_overwrite_next(mlsba__mpi_node_t *node, int overwrite);
/* One step with the balanced distribution; adds every device's time to
 * its total and gives the step's time (virtual on a simulated node).
 * Before the first step of a distribution, accelerators that keep their
 * columns of C' take them (outside the step's time). MLSBA_EINVAL when
 * the devices were not balanced for the current shape. */
int mlsba__mpi_node_step(mlsba__mpi_node_t *node, double *step_time);
/* Columns and accumulated step times of device i since the shape was
 * set. */
void mlsba__mpi_node_device(const mlsba__mpi_node_t *node, size_t i,
                            int64_t *load, double *time);

/* ---- product.c: the two-dimensional blocked product -------------------- */

/* A rank's share of the product, in elements (plan.c makes them). */
typedef struct mlsba__mpi_part {
  int64_t row0, rows; /* its rows of C and of op(A) */
  int64_t col0, cols; /* its columns of C and of op(B) */
  /* Its columns of op(A): its arrangement column's share of k (the same
   * for every rank of the column; empty when k has too few blocks). */
  int64_t ak0, aks;
  int64_t bk0, bks; /* its rows of op(B), within its column */
} mlsba__mpi_part_t;

/* The arrangement every rank knows: C = op(A) op(B) is m x n, the inner
 * size k advances b at a time (the last step the rest). */
typedef struct mlsba__mpi_layout {
  int q;
  int64_t m, n, k, b;
  const mlsba__mpi_part_t *part; /* q entries */
} mlsba__mpi_layout_t;

typedef struct mlsba__mpi_product_stats {
  double total;   /* seconds from the common start to this rank's end */
  double comm;    /* of which in MPI calls (waits included) */
  double compute; /* node steps (virtual on a simulated node) */
} mlsba__mpi_product_stats_t;

/* ceil(k / b) steps: at step p the owners of block column p of op(A) send
 * the rows of it each other rank needs, the owners of block row p of
 * op(B) send theirs down their column, and every rank updates its C'. a,
 * b_, c are this rank's op(A)' (rows x aks), op(B)' (bks x cols) and C'
 * (rows x cols), column-major with those leading dimensions (NULL on a
 * simulated node, which moves the same bytes from scratch buffers and
 * computes nothing). C' += op(A)' op(B)' (alpha is the caller's, in A'). */
int mlsba__mpi_product(MPI_Comm comm, const mlsba__mpi_layout_t *lay,
                       mlsba__mpi_node_t *node, mlsba_precision_t prec,
                       const void *a, const void *b_, void *c,
                       mlsba__mpi_product_stats_t *stats);
/* The same, with what a product makes before its steps (plan, panels,
 * column communicator) kept in *keep for the next product on the same
 * layout: made when *keep is NULL (every rank's NULL alike), freed by
 * the caller with mlsba__mpi_product_keep_free() (collective: it frees a
 * communicator) before the layout changes. */
typedef struct mlsba__mpi_product_keep mlsba__mpi_product_keep_t;
int mlsba__mpi_product_keep(MPI_Comm comm, const mlsba__mpi_layout_t *lay,
                            mlsba__mpi_node_t *node, mlsba_precision_t prec,
                            const void *a, const void *b_, void *c,
                            mlsba__mpi_product_stats_t *stats,
                            mlsba__mpi_product_keep_t **keep);
void mlsba__mpi_product_keep_free(mlsba__mpi_product_keep_t *keep);

/* Bytes of one element. */
static inline size_t mlsba__mpi_elem(mlsba_precision_t p) {
  return p == MLSBA_PRECISION_DOUBLE ? sizeof(double) : sizeof(float);
}

/* Advances this rank's clock by a simulated device's virtual time: under
 * SimGrid's SMPI the rank's simulated time; elsewhere nothing (the caller
 * adds virtual times itself). */
void mlsba__mpi_spend(double seconds);
/* 1 in a build for SimGrid's SMPI. */
int mlsba__mpi_is_smpi(void);
/* Memory for a matrix or panel: SMPI_SHARED_MALLOC under SMPI (simulated
 * ranks' data need no distinct bytes), malloc elsewhere. */
void *mlsba__mpi_alloc(size_t bytes);
void mlsba__mpi_free(void *p);
/* mlsba__mpi_alloc() when shared is nonzero, else malloc (never NULL for
 * 0 bytes); freed by mlsba__mpi_free_if() with the same shared. */
void *mlsba__mpi_alloc_if(size_t bytes, int shared);
void mlsba__mpi_free_if(void *p, int shared);

/* A broadcast started now and waited for later (a factorization's panel,
 * broadcast while the ranks update). Outside SMPI an MPI_Ibcast. SMPI's
 * own MPI_Ibcast is flat, its root sending every copy over its one link
 * (90 ranks: 89 panels in a row), where Open MPI's runs a tree; so under
 * SMPI the broadcast runs when the ranks wait for it, as a blocking
 * MPI_Bcast (the tree smpirun's smpi/bcast selects), at the moment a
 * tree's inner ranks, busy updating until then, would forward it. */
typedef struct mlsba__mpi_bcast {
  void *buf;
  int count, root;
  MPI_Datatype type;
  MPI_Comm comm;
  MPI_Request req;
} mlsba__mpi_bcast_t;
void mlsba__mpi_bcast_start(void *buf, int count, MPI_Datatype type, int root,
                            MPI_Comm comm, mlsba__mpi_bcast_t *b);
/* Waits for (or, under SMPI, runs) n broadcasts, in the order started;
 * every rank of their communicator calls it at the same point. */
void mlsba__mpi_bcast_wait(int n, mlsba__mpi_bcast_t *b);
/* Whether the n broadcasts have ended (nonzero), progressing them: an
 * MPI_Testall outside SMPI; under SMPI, where the broadcast runs in
 * mlsba__mpi_bcast_wait(), always 1. */
int mlsba__mpi_bcast_test(int n, mlsba__mpi_bcast_t *b);

#endif
