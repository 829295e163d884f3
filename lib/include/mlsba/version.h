/*
 * libmlsba version macros: the version of the headers an application is
 * compiled against. <mlsba.h> includes this file; the build (CMake) reads
 * the version from here, its one source of truth.
 */
#ifndef MLSBA_VERSION_H
#define MLSBA_VERSION_H

/** \name Version
 *  Compile-time macros describe the header; mlsba_version() describes the
 *  library actually linked, so an application can detect a mismatch. */
/**@{*/
#define MLSBA_VERSION_MAJOR 0
#define MLSBA_VERSION_MINOR 1
#define MLSBA_VERSION_PATCH 0
/** Version as one number: 0xMMmmpp. */
#define MLSBA_VERSION_HEX                                                      \
  ((MLSBA_VERSION_MAJOR << 16) | (MLSBA_VERSION_MINOR << 8) |                  \
   (MLSBA_VERSION_PATCH))
/**@}*/

#endif
