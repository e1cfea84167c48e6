/*
 * Paths: the one place that splits a path into its directory and its last
 * component, and the one place that says where the metadata file and the
 * updater files of an HDF5 file live, from the configuration
 * (include/vfdswmr.h), so the writer, the reader and the tools always agree.
 *
 * Invariants:
 *  - a path is split at its last '/': the directory is what precedes it
 *    ("/" when that '/' is the first byte, "." when there is none), the last
 *    component what follows it. Paths of files, which never end in '/', are
 *    what is split; nothing is resolved or looked up on disk.
 *
 * Error contract: functions return 0, or -1 when the result does not fit;
 * vfdswmr_path_dir_dup() returns NULL when out of memory. Nothing is
 * printed.
 */
#ifndef VFDSWMR_COMMON_PATHS_H
#define VFDSWMR_COMMON_PATHS_H

#include <stddef.h>

typedef struct vfdswmr_config_t vfdswmr_config_t; /* common/drvconfig.h */

/* The last component of path: what follows its last '/', else all of it. */
const char *vfdswmr_path_base(const char *path);

/* The directory holding path: its first *len bytes when path has a '/'
 * after the first byte (not NUL-terminated there), else "/" or "." (*len 1). */
const char *vfdswmr_path_dir(const char *path, size_t *len);

/* vfdswmr_path_dir() as a malloc'd string; NULL when out of memory. */
char *vfdswmr_path_dir_dup(const char *path);

/* md_file_path (else the HDF5 file's directory) / md_file_name (else the
 * HDF5 file's name + ".md"). Returns 0, or -1 when it does not fit in len. */
int vfdswmr_md_path(const vfdswmr_config_t *cfg, const char *h5_name, char *out, size_t len);

/* updater_file_path, else the metadata file's path + ".ud". */
int vfdswmr_ud_base(const vfdswmr_config_t *cfg, const char *h5_name, char *out, size_t len);

#endif
