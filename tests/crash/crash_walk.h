/*
 * One walk of a whole HDF5 file: every group, dataset and attribute below the root, every
 * value read and checked against the workload's value functions (crash_model.h), and the
 * walk described in the model's line format so that it can be matched against a state.
 *
 * The walk reads through whatever driver the file was opened with; it neither refreshes nor
 * keeps objects open (the reader refreshes the root group once before it, and opens the file
 * with evict-on-close, so one walk reads one snapshot).
 */
#ifndef CRASH_WALK_H
#define CRASH_WALK_H

#include "crash_model.h"

typedef struct {
    char path[CM_PATHLEN];
    int id;
    hsize_t rows, cols;
    uint64_t *cum; /* [rows + 1]: checksum of rows 0..r-1 (cum[0] = cm_sum_init()) */
} cw_dset_t;

typedef struct {
    char (*lines)[CM_LINELEN]; /* sorted after cw_walk */
    size_t nlines, cap;
    cw_dset_t *dsets;
    size_t ndsets, dcap;
    long objects;  /* groups + datasets + attributes read */
    long elements; /* dataset and attribute elements checked */
} cw_obs_t;

typedef enum {
    CW_OK = 0,
    CW_HDF5 = -1,  /* an HDF5 call failed (message in err, with HDF5's stack) */
    CW_VALUE = -2, /* a value, type or name is wrong (message in err) */
} cw_result_t;

/* Walk the file below the open root group `root`. The observation is reset first. */
cw_result_t cw_walk(hid_t root, uint64_t seed, cw_obs_t *obs, char *err, size_t errlen);
void cw_free(cw_obs_t *obs);
const cw_dset_t *cw_find_dset(const cw_obs_t *obs, const char *path);

/* Describe the differences between two sorted line sets (missing = in want, not in got). */
size_t cw_diff(char (*got)[CM_LINELEN], size_t ngot, char (*want)[CM_LINELEN], size_t nwant, char *buf, size_t n,
               int max_lines);

#endif
