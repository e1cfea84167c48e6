/*
 * What the row programs (rowwriter.c, rowreader.c, tryopen.c) share: the
 * layout of their file, the value of every row, the file access property
 * list and how an HDF5 failure is reported.
 *
 * The file holds dataset /rows: one-dimensional, 64-bit integers, chunked
 * (ROWS_CHUNK rows a chunk), unlimited; row i holds row_value(i), never 0
 * (the fill value), so a row that was never written reads as 0 and any
 * other value is wrong data. Group /groups holds groups g0, g1, ... each with
 * attribute "n" = its number.
 */
#ifndef VFDSWMR_TESTS_ROWS_H
#define VFDSWMR_TESTS_ROWS_H

#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "vfdswmr.h"

#define ROWS_DSET   "/rows"
#define ROWS_CHUNK  256
#define ROWS_GROUPS "/groups"

static inline int64_t
row_value(uint64_t i)
{
    return (int64_t)(((i + 1) * 0x9E3779B97F4A7C15ull) >> 1) | 1;
}

static inline void rows_report(const char *what);

/*
 * A file access property list: the driver the environment selects
 * (HDF5_DRIVER, ...) when config is NULL, else the writer (or reader) driver
 * with that configuration string, set with vfdswmr_set_fapl_writer/_reader.
 * On failure reports (rows_report) and returns H5I_INVALID_HID.
 */
static inline hid_t
rows_fapl(const char *config, int writer)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);

    if (fapl < 0) {
        rows_report("H5Pcreate");
        return H5I_INVALID_HID;
    }
    if (config && (writer ? vfdswmr_set_fapl_writer(fapl, config) : vfdswmr_set_fapl_reader(fapl, config)) < 0) {
        rows_report(writer ? "vfdswmr_set_fapl_writer" : "vfdswmr_set_fapl_reader");
        H5Pclose(fapl);
        return H5I_INVALID_HID;
    }
    return fapl;
}

/*
 * After a failed HDF5 call: "<what> failed" and the whole error stack on
 * stderr (H5Eprint2), then "stack entries: N" (H5Eget_num), and the stack
 * cleared. The programs turn automatic printing off, so every stack is
 * printed exactly once, here -- right after the failed call, since every
 * other API call clears the stack.
 */
static inline void
rows_report(const char *what)
{
    ssize_t n = H5Eget_num(H5E_DEFAULT);

    fprintf(stderr, "%s failed\n", what);
    H5Eprint2(H5E_DEFAULT, stderr);
    fprintf(stderr, "stack entries: %zd\n", n);
    fflush(stderr);
    H5Eclear2(H5E_DEFAULT);
}

/* Read one command line from stdin into buf without its newline; 0 at end of input. */
static inline int
rows_command(char *buf, size_t len)
{
    if (fgets(buf, (int)len, stdin) == NULL)
        return 0;
    buf[strcspn(buf, "\r\n")] = '\0';
    return 1;
}

#endif
