/* Where the tools find and put files: sample platforms named without a
 * path, the per-user model cache, and output destinations checked before
 * anything runs. Every function that fails prints one line on stderr,
 * "prog: ...", naming the problem. */
#ifndef MLSBA_TOOLS_PATHS_H
#define MLSBA_TOOLS_PATHS_H

#include <stddef.h>
#include <stdio.h>

#include "mlsba.h"

/* --platform: "auto" as is; an existing path as is; else a sample
 * platform's name (desktop-seed002, with or without .json), looked up in
 * the installed share/mlsba/platforms beside the running tool, then in
 * the source tree's models/sim/ (a build that is not installed). 0, or
 * 2 (usage) after a line that says where it looked. */
int paths_platform(const char *prog, const char *arg, char *out, size_t size);
/* The same without a word: 0 with the path in out, or -1 when arg is
 * neither a file nor a sample platform's name (out is then unset), for a
 * caller that reports the problem itself (mlsba-inpa: on rank 0 only). */
int paths_find_platform(const char *arg, char *out, size_t size);

/* A tool's --help text, with PREFIX/share/doc/mlsba and
 * PREFIX/share/mlsba/platforms replaced by the folders of this install
 * (found beside the running tool); a build that is not installed prints
 * them as they are. */
void paths_print_help(FILE *f, const char *text);

/* --platform resolved (paths_platform) and discovered ("auto") or
 * loaded into *pl. 0, or the exit status after one line on stderr: 2 for
 * a name or a file that is wrong, 1 otherwise. */
int paths_load_platform(const char *prog, const char *arg,
                        mlsba_platform_t **pl);

/* The default model directory: $MLSBA_CACHE_DIR/<leaf> (as the library
 * keeps its caches; "none": no folder, out is ""), else
 * $XDG_CACHE_HOME/mlsba/<leaf>, else ~/.cache/mlsba/<leaf>, with leaf the
 * host name, or "sim-<name>" for a simulated platform (name: the
 * platform's). Not created here. 0, or 2 when there is no home to put it
 * in. */
int paths_models(const char *prog, const char *platform_name, int sim,
                 char *out, size_t size);

/* mkdir -p; 0, or 2 after a line naming `option` and the path. */
int paths_make_dirs(const char *prog, const char *option, const char *path);

/* mkdir: the folder itself only, whose parent must exist (a typo in a
 * path makes no tree of folders); 0, or 2 after a line naming `option`
 * and the path. */
int paths_make_dir(const char *prog, const char *option, const char *path);

/* A file that will be written at the end (--json FILE), checked by the
 * rules of the writer (tools/common/output.h): a new file's folder must
 * exist and take files; a file there must be one the user can write (a
 * regular file, a character device, a FIFO, or a symbolic link to one);
 * a directory, a block device or a socket is refused. "-" is standard
 * output. 0, or 2 after one line "prog: option: PATH: cannot write:
 * why". */
int paths_check_output_file(const char *prog, const char *option,
                            const char *path);

#endif
