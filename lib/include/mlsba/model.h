/*
 * libmlsba's functional performance models: a device's speed as a
 * function of its load, built from measured points, saved and loaded.
 * Part of <mlsba.h>, which includes it.
 */
#ifndef MLSBA_MODEL_H
#define MLSBA_MODEL_H

#include <mlsba/core.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------- */
/** \name Functional performance model (FPM)
 *
 *  A device's speed as a function of its load, s(x) in units per second,
 *  built from measured points (x, s). Between points s(x) is linear; below
 *  the first point and beyond the last it is constant. The time to process
 *  a load x is t(x) = x / s(x). An optional max_load caps the load the
 *  device can hold (e.g. accelerator memory).
 *
 *  The partitioners assume the shape of the papers: every line through the
 *  origin crosses s(x) once, i.e. t(x) increases with x. Other shapes are
 *  accepted and give valid partitions, without the optimality guarantee.
 *
 *  Thread safety: a model may be read from several threads at once; writes
 *  need exclusive access. */
/**@{*/
typedef struct mlsba_model mlsba_model_t;

/** Value of max_load meaning "no limit". */
#define MLSBA_NO_MAX_LOAD INT64_C(-1)

/** The values a model accepts (mlsba_model_set_point() and
 *  mlsba_model_set_max_load() refuse the rest with MLSBA_EINVAL and a
 *  message naming the field and the value).
 *
 *  - a load (a point's x, a max_load, the N of a partitioning) is at most
 *    2^53 units, the largest count a double holds exactly; a point's load
 *    is at least 1e-6 units;
 *  - a speed is in [1e-30, 1e30] units per second;
 *  - so a time x / s(x) is in [1e-36, 9.1e45] seconds.
 *
 *  Within these bounds a time, a product of a time and a speed, and a sum
 *  of them over 10^9 devices stay far from overflow and from denormals,
 *  which is what keeps every partitioner finite, exact to the unit and
 *  O(p log N) on every model it accepts. Real devices sit many orders of
 *  magnitude inside them. */
#define MLSBA_LOAD_MAX 9007199254740992.0 /* 2^53 */
#define MLSBA_LOAD_MIN 1e-6
#define MLSBA_SPEED_MIN 1e-30
#define MLSBA_SPEED_MAX 1e30

/** \brief Create an empty model (no points, no max_load).
 *  \param[out] model  receives the new model; the caller destroys it.
 *  \return 0, MLSBA_EINVAL or MLSBA_ENOMEM. */
MLSBA_EXTERN int mlsba_model_create(mlsba_model_t **model);
/** \brief Deep copy of a model. \param[out] copy receives the new model. */
MLSBA_EXTERN int mlsba_model_clone(const mlsba_model_t *model,
                                   mlsba_model_t **copy);
/** \brief Destroy a model. NULL is accepted and ignored. */
MLSBA_EXTERN void mlsba_model_destroy(mlsba_model_t *model);

/** \brief Insert the point (x, speed), or replace the speed of the point
 *  already at exactly x.
 *  \param x      load in units, in [MLSBA_LOAD_MIN, MLSBA_LOAD_MAX].
 *  \param speed  units per second, in [MLSBA_SPEED_MIN, MLSBA_SPEED_MAX].
 *  \return 0, MLSBA_EINVAL (bad value; the model is unchanged) or
 *          MLSBA_ENOMEM. */
MLSBA_EXTERN int mlsba_model_set_point(mlsba_model_t *model, double x,
                                       double speed);
/** \brief Remove every point; max_load is kept. */
MLSBA_EXTERN int mlsba_model_clear(mlsba_model_t *model);
/** \brief Set the largest load the device can hold, in units (0 to
 *  MLSBA_LOAD_MAX), or MLSBA_NO_MAX_LOAD. */
MLSBA_EXTERN int mlsba_model_set_max_load(mlsba_model_t *model,
                                          int64_t max_load);
/** \brief The max_load, or MLSBA_NO_MAX_LOAD (also for a NULL model). */
MLSBA_EXTERN int64_t mlsba_model_max_load(const mlsba_model_t *model);
/** \brief Number of points (0 for a NULL model). */
MLSBA_EXTERN size_t mlsba_model_num_points(const mlsba_model_t *model);
/** \brief The i-th point in increasing x. Either output may be NULL. */
MLSBA_EXTERN int mlsba_model_get_point(const mlsba_model_t *model, size_t i,
                                       double *x, double *speed);
/** \brief Add the cost of moving a device's load to its time: with a
 *  transfer, t(x) = x / s(x) + latency + per_unit x for x > 0 (t(0) = 0: a
 *  device given nothing is sent nothing), while s(x) stays the compute
 *  speed of the points. This is an FPM plus communication: every
 *  partitioner that takes models (SLBA, MLSBA, MLFBA, the baselines, INPA's
 *  node level) then balances compute and transfer together. The model
 *  assumes the transfer does not overlap the device's computation (its
 *  share arrives, then runs, then returns), which is how an accelerator's
 *  share runs through its host link; where a transfer overlaps, fold only
 *  the part that does not. Use it with models of compute alone: a measured
 *  model already counts what its runs moved. Not saved by
 *  mlsba_model_save(); kept by mlsba_model_clone() and mlsba_model_clear().
 *  \param latency   seconds per transfer, finite, in [0, 1e30].
 *  \param per_unit  seconds per unit of load, finite, in [0, 1e30].
 *  \return 0 or MLSBA_EINVAL. */
MLSBA_EXTERN int mlsba_model_set_transfer(mlsba_model_t *model, double latency,
                                          double per_unit);
/** \brief The transfer cost (0, 0 when none was set). Either output may be
 *  NULL. */
MLSBA_EXTERN int mlsba_model_get_transfer(const mlsba_model_t *model,
                                          double *latency, double *per_unit);

/** \brief Save a model to a file that a person can read: a version line,
 *  the key it belongs to (what changes a speed function: host, device,
 *  driver, kernel, precision, problem shape), max_load, the points, and a
 *  checksum. The write is atomic (temporary file, then rename): a crash
 *  during the save leaves the old file or the new one, never half of one.
 *  \param key  one line, no newline. */
MLSBA_EXTERN int mlsba_model_save(const mlsba_model_t *model, const char *path,
                                  const char *key);
/** \brief Load a model saved for key.
 *  \param key  NULL: whatever key the file names (to show a saved file;
 *              its second line, "key ...", says what it is for).
 *  \return 0; MLSBA_EIO when the file cannot be read; MLSBA_EFORMAT when
 *          it is truncated, corrupted (checksum), of another format version,
 *          or saved for another key; the message names the file and says
 *          which. */
MLSBA_EXTERN int mlsba_model_load(const char *path, const char *key,
                                  mlsba_model_t **model);
/** \brief mlsba_model_load() with what the balancer saved beside each
 *  point: runs[i], the runs behind point i's mean, and sd[i], the
 *  standard deviation of their speeds (1 and 0 where the file has none).
 *  \param room  entries of runs and sd (both may be NULL with room 0);
 *               points past it are loaded without them. */
MLSBA_EXTERN int mlsba_model_load_ex(const char *path, const char *key,
                                     mlsba_model_t **model, unsigned *runs,
                                     double *sd, size_t room);

/** \brief Speed s(x) for a load x >= 0. Needs at least one point. */
MLSBA_EXTERN int mlsba_model_speed(const mlsba_model_t *model, double x,
                                   double *speed);
/** \brief Time t(x) = x / s(x) for a load x >= 0 (t(0) = 0), plus the
 *  transfer when one is set (mlsba_model_set_transfer()). */
MLSBA_EXTERN int mlsba_model_time(const mlsba_model_t *model, double x,
                                  double *time);
/** \brief The largest load x finishing by time T: max { x : t(x) <= T },
 *  limited by max_load. Geometrically, the intersection of s(x) with the
 *  line through the origin of slope 1/T. Exact on the piecewise-linear
 *  model (no iteration). The result is at most MLSBA_LOAD_MAX.
 *  \param time  T, finite and >= 0. */
MLSBA_EXTERN int mlsba_model_load_by_time(const mlsba_model_t *model,
                                          double time, double *load);
/**@}*/

#ifdef __cplusplus
}
#endif

#endif /* MLSBA_MODEL_H */
