/* A scratch folder for a test (fork mode: one test per process), and a
 * platform parsed or the test fails. */
#ifndef MLSBA_TESTS_SCRATCH_H
#define MLSBA_TESTS_SCRATCH_H

#include <stddef.h>
#include <stdio.h>

#include "mlsba.h"

/* The folder of the test running, made by scratch_make(). */
extern char scratch[64];

void scratch_make(void);
/* Removes the folder and the plain files in it (no shell). */
void scratch_remove(void);
/* A new folder, and the file name in it opened for writing; its path in
 * path. */
FILE *scratch_create(const char *name, char *path, size_t size);

mlsba_platform_t *parse_ok(const char *json);

#endif
