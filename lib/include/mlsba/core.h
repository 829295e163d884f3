/*
 * libmlsba's base, which every other header includes: the export macro,
 * the version of the library linked, the error codes and the last error's
 * message, and the reasons an iterative routine stops (the balancing
 * routine, INPA and the divider across ranks name them alike).
 * #include <mlsba.h> includes it with the rest.
 */
#ifndef MLSBA_CORE_H
#define MLSBA_CORE_H

#include <stddef.h>
#include <stdint.h>

#include <mlsba/version.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(MLSBA_SHARED_BUILD)
#define MLSBA_EXTERN __declspec(dllexport)
#elif defined(__GNUC__) || defined(__clang__)
#define MLSBA_EXTERN __attribute__((visibility("default")))
#else
#define MLSBA_EXTERN
#endif

/* ---------------------------------------------------------------------- */
/** \name Version
 *  The macros MLSBA_VERSION_MAJOR, _MINOR, _PATCH and _HEX
 *  (<mlsba/version.h>) describe the header; mlsba_version() describes the
 *  library actually linked, so an application can detect a mismatch. */
/**@{*/
/** \brief Version of the linked library as MLSBA_VERSION_HEX encodes it. */
MLSBA_EXTERN unsigned int mlsba_version(void);
/** \brief Version of the linked library as "major.minor.patch". Static
 *  storage; never NULL. */
MLSBA_EXTERN const char *mlsba_version_string(void);
/**@}*/

/* ---------------------------------------------------------------------- */
/** \name Errors
 *  All error codes in one table: XX(name, value, description). The table
 *  gives the enum, mlsba_err_name() and mlsba_strerror(), so they cannot
 *  drift apart. */
/**@{*/
#define MLSBA_ERRNO_MAP(XX)                                                    \
  XX(EINVAL, -1, "invalid argument")                                           \
  XX(ENOMEM, -2, "out of memory")                                              \
  XX(ECAPACITY, -3, "the devices cannot hold the whole load together")         \
  XX(ERANGE, -4, "value out of range")                                         \
  XX(ENOTSUP, -5, "operation not supported by this build or device")           \
  XX(EIO, -6, "input/output error")                                            \
  XX(EFORMAT, -7, "malformed input file")                                      \
  XX(EDEVICE, -8, "device error")                                              \
  XX(EDEVMEM, -9, "out of device memory")                                      \
  XX(ENOCONV, -10, "did not converge")

/** Error codes: always negative; 0 is success. */
typedef enum {
#define MLSBA_ERRNO_ENUM_(name, value, text) MLSBA_##name = (value),
  MLSBA_ERRNO_MAP(MLSBA_ERRNO_ENUM_)
#undef MLSBA_ERRNO_ENUM_
      MLSBA_ERRNO_MIN_ = -11
} mlsba_errno_t;

/** \brief Short description of an error code ("invalid argument").
 *  \return static storage, never NULL; "unknown error" for unknown codes,
 *          "success" for 0. */
MLSBA_EXTERN const char *mlsba_strerror(int err);
/** \brief Symbolic name of an error code ("MLSBA_EINVAL"). Static storage,
 *  never NULL. */
MLSBA_EXTERN const char *mlsba_err_name(int err);
/** \brief Message describing the last failure of a libmlsba call in the
 *  calling thread ("model 3: speed must be positive, got -1").
 *
 *  The message stays until the next failing call in the same thread; a
 *  successful call does not clear it. Thread-local storage, never NULL
 *  (empty string when nothing failed yet). */
MLSBA_EXTERN const char *mlsba_last_error(void);
/**@}*/

/* ---------------------------------------------------------------------- */
/** \name Stop reasons
 *  Why an iterative routine stopped: the self-adaptive balancing
 *  (mlsba_balance_result_t), INPA and the divider across ranks
 *  (<mlsba/mpi.h>) stop for these reasons, which every report names as
 *  mlsba_stop_reason_name() spells them. */
/**@{*/

/** Why the routine stopped. */
typedef enum mlsba_stop_reason {
  MLSBA_STOP_BALANCED = 0, /**< device times within eps at both levels
                                and over all devices (imbalance <= eps) */
  MLSBA_STOP_FIXED_POINT,  /**< re-partitioning moved no device by more
                                than eps of its load: the models cannot
                                tell a better distribution (timing noise) */
  MLSBA_STOP_MAX_ITER,     /**< max_iter reached: not converged */
  MLSBA_STOP_CYCLE         /**< a distribution came back: not converged */
} mlsba_stop_reason_t;

/** \brief Name of a stop reason as the tools spell it ("balanced",
 *  "fixed-point", "max-iter", "cycle"); NULL for an unknown value. */
MLSBA_EXTERN const char *mlsba_stop_reason_name(mlsba_stop_reason_t stop);
/**@}*/

#ifdef __cplusplus
}
#endif

#endif /* MLSBA_CORE_H */
