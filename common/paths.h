/*
 * Where the metadata file and the updater files of an HDF5 file live, from
 * the configuration (include/vfdswmr.h): one function, used by the writer,
 * the reader and the tools, so they always agree.
 *
 * Error contract: functions return 0, or -1 when the result does not fit.
 */
#ifndef VFDSWMR_COMMON_PATHS_H
#define VFDSWMR_COMMON_PATHS_H

#include <stddef.h>

#include "config.h"

/* md_file_path (else the HDF5 file's directory) / md_file_name (else the
 * HDF5 file's name + ".md"). Returns 0, or -1 when it does not fit in len. */
int vfdswmr_md_path(const vfdswmr_config_t *cfg, const char *h5_name, char *out, size_t len);

/* updater_file_path, else the metadata file's path + ".ud". */
int vfdswmr_ud_base(const vfdswmr_config_t *cfg, const char *h5_name, char *out, size_t len);

#endif
