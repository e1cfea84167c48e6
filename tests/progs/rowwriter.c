/*
 * rowwriter: an ordinary HDF5 writer driven line by line from stdin, for
 * tests that need a writer at a known point (rows.h has the file layout).
 *
 *   rowwriter FILE create|open [--swmr] [--latest | --libver earliest|latest]
 *             [--userblock N] [--unflushed] [--config STRING]
 *
 * create: H5Fcreate(H5F_ACC_TRUNC) with dataset /rows and group /groups;
 * open: H5Fopen(H5F_ACC_RDWR). --swmr adds H5F_ACC_SWMR_WRITE (and the
 * latest file format); --libver latest (or --latest) only the latest file
 * format; --libver earliest, the default, HDF5's default bounds (a version 0
 * superblock). --userblock N creates the file with an N-byte user block
 * (H5Pset_userblock; the superblock follows it). --unflushed: create
 * without the H5Fflush that otherwise follows creating /rows and /groups
 * (the first flush is then the first command's). --config selects
 * vfd_swmr_writer with that configuration through vfdswmr_set_fapl_writer;
 * otherwise the environment selects the driver. Prints "ready ROWS", then
 * answers each command with one line on stdout (flushed at once, so a test
 * may SIGKILL the writer after any answer and know what it was told):
 *
 *   append N   N more rows, then H5Fflush      "flushed TOTAL" | "failed TOTAL"
 *   dappend N  N more rows, then H5Dflush only "dflushed TOTAL" | "failed TOTAL"
 *   start_swmr H5Fstart_swmr_write (h5py's swmr_mode = True)  "swmr started" | "swmr failed"
 *   groups N   N more groups, then H5Fflush    "flushed groups TOTAL" | "failed groups TOTAL"
 *   burst N    dataset /burstK of N chunks, all written by one H5Dwrite into a
 *              chunk cache that holds them, so that H5Dclose writes every
 *              chunk to the file                 "burst ok" | "burst failed"
 *   attrs N    N more attributes a<K> on /groups, 1000 int32 each (K * 1000 + i),
 *              then H5Fflush                    "flushed attrs TOTAL" | "failed attrs TOTAL"
 *   tick       vfdswmr_end_tick                 "ticked" | "tick failed"
 *   status     vfdswmr_get_status               "status tick=T" | "status failed"
 *   close      H5Fclose, then exit              "closed" | "close failed"
 *
 * End of input closes too. A failed call prints HDF5's error stack on stderr
 * (rows_report). Exit status: 0 when every call succeeded, 3 when a command
 * failed, 1 when the file could not be created or opened, 2 on bad usage.
 */
#include <stdlib.h>

#include "rows.h"

typedef struct {
    hid_t file, rows, groups;
    uint64_t nrows, ngroups, nbursts, nattrs;
    int failed; /* a command failed */
} writer_t;

static int
flush(writer_t *w)
{
    if (H5Fflush(w->file, H5F_SCOPE_GLOBAL) < 0) {
        rows_report("H5Fflush");
        return -1;
    }
    return 0;
}

static int
dflush(writer_t *w)
{
    if (H5Dflush(w->rows) < 0) {
        rows_report("H5Dflush");
        return -1;
    }
    return 0;
}

static int
append(writer_t *w, uint64_t n, int (*publish)(writer_t *))
{
    hsize_t start = w->nrows, count = n, size = w->nrows + n;
    int64_t *buf = malloc(n * sizeof *buf);
    hid_t fspace = H5I_INVALID_HID, mspace = H5I_INVALID_HID;
    int rc = -1;

    if (buf == NULL)
        return -1;
    for (uint64_t i = 0; i < n; i++)
        buf[i] = row_value(w->nrows + i);
    w->nrows += n;
    if (H5Dset_extent(w->rows, &size) < 0 || (fspace = H5Dget_space(w->rows)) < 0 ||
        H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &start, NULL, &count, NULL) < 0 ||
        (mspace = H5Screate_simple(1, &count, NULL)) < 0 ||
        H5Dwrite(w->rows, H5T_NATIVE_INT64, mspace, fspace, H5P_DEFAULT, buf) < 0)
        rows_report("appending rows");
    else
        rc = publish(w);
    if (mspace >= 0)
        H5Sclose(mspace);
    if (fspace >= 0)
        H5Sclose(fspace);
    free(buf);
    return rc;
}

/* 4000 bytes of metadata each: with more than 8, HDF5 keeps them in the
 * group's dense attribute storage, about a page each. */
static int
add_attrs(writer_t *w, uint64_t n)
{
    hsize_t len = 1000;
    hid_t space = H5Screate_simple(1, &len, NULL);
    int32_t v[1000];
    int rc = 0;

    for (uint64_t k = 0; k < n && rc == 0; k++, w->nattrs++) {
        char name[32];
        hid_t a;
        snprintf(name, sizeof name, "a%llu", (unsigned long long)w->nattrs);
        for (int i = 0; i < 1000; i++)
            v[i] = (int32_t)(w->nattrs * 1000 + (uint64_t)i);
        a = H5Acreate2(w->groups, name, H5T_STD_I32LE, space, H5P_DEFAULT, H5P_DEFAULT);
        if (a < 0 || H5Awrite(a, H5T_NATIVE_INT32, v) < 0) {
            rows_report("writing an attribute");
            rc = -1;
        }
        if (a >= 0)
            H5Aclose(a);
    }
    H5Sclose(space);
    return rc < 0 ? -1 : flush(w);
}

static int
add_groups(writer_t *w, uint64_t n)
{
    hsize_t one = 1;
    hid_t aspace = H5Screate_simple(1, &one, NULL);

    for (uint64_t k = 0; k < n; k++, w->ngroups++) {
        char name[32];
        long long v = (long long)w->ngroups;
        hid_t g, a;
        snprintf(name, sizeof name, "g%llu", v);
        if ((g = H5Gcreate2(w->groups, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0) {
            rows_report("H5Gcreate2");
            H5Sclose(aspace);
            return -1;
        }
        a = H5Acreate2(g, "n", H5T_STD_I64LE, aspace, H5P_DEFAULT, H5P_DEFAULT);
        if (a < 0 || H5Awrite(a, H5T_NATIVE_LLONG, &v) < 0) {
            rows_report("writing attribute n");
            if (a >= 0)
                H5Aclose(a);
            H5Gclose(g);
            H5Sclose(aspace);
            return -1;
        }
        H5Aclose(a);
        H5Gclose(g);
    }
    H5Sclose(aspace);
    return flush(w);
}

/* Many chunk writes in one API call: H5Dclose flushes the chunk cache. */
static int
burst(writer_t *w, uint64_t nchunks)
{
    enum { CHUNK = 64 };
    hsize_t dims = nchunks * CHUNK, chunk = CHUNK;
    int64_t *buf = malloc(dims * sizeof *buf);
    hid_t space = H5Screate_simple(1, &dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE),
          dapl = H5Pcreate(H5P_DATASET_ACCESS), d = H5I_INVALID_HID;
    char name[32];
    int rc = -1;

    snprintf(name, sizeof name, "burst%llu", (unsigned long long)w->nbursts++);
    if (buf == NULL || space < 0 || dcpl < 0 || dapl < 0 || H5Pset_chunk(dcpl, 1, &chunk) < 0 ||
        H5Pset_chunk_cache(dapl, 100003, 2 * dims * sizeof *buf + (1 << 20), 1.0) < 0)
        rows_report("setting up the burst");
    else if ((d = H5Dcreate2(w->file, name, H5T_STD_I64LE, space, H5P_DEFAULT, dcpl, dapl)) < 0)
        rows_report("H5Dcreate2");
    else {
        for (hsize_t i = 0; i < dims; i++)
            buf[i] = row_value(i);
        if (H5Dwrite(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
            rows_report("H5Dwrite of the burst");
        else
            rc = 0;
        if (H5Dclose(d) < 0) {
            rows_report("H5Dclose of the burst");
            rc = -1;
        }
    }
    H5Pclose(dapl);
    H5Pclose(dcpl);
    H5Sclose(space);
    free(buf);
    return rc;
}

static int
setup(writer_t *w, const char *path, int create, unsigned swmr, int latest, hsize_t userblock, int unflushed,
      const char *config)
{
    hid_t fapl = rows_fapl(config, 1), fcpl, space, dcpl;
    hsize_t zero = 0, unlimited = H5S_UNLIMITED, chunk = ROWS_CHUNK;

    if (fapl < 0)
        return -1;
    if ((swmr || latest) && H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST) < 0) {
        rows_report("H5Pset_libver_bounds");
        H5Pclose(fapl);
        return -1;
    }
    if ((fcpl = H5Pcreate(H5P_FILE_CREATE)) < 0 || (userblock && H5Pset_userblock(fcpl, userblock) < 0)) {
        rows_report("H5Pset_userblock");
        if (fcpl >= 0)
            H5Pclose(fcpl);
        H5Pclose(fapl);
        return -1;
    }
    w->file = create ? H5Fcreate(path, H5F_ACC_TRUNC | swmr, fcpl, fapl) : H5Fopen(path, H5F_ACC_RDWR | swmr, fapl);
    if (w->file < 0) {
        rows_report(create ? "H5Fcreate" : "H5Fopen"); /* before H5Pclose clears the stack */
        H5Pclose(fcpl);
        H5Pclose(fapl);
        return -1;
    }
    H5Pclose(fcpl);
    H5Pclose(fapl);
    if (create) {
        space = H5Screate_simple(1, &zero, &unlimited);
        dcpl = H5Pcreate(H5P_DATASET_CREATE);
        if (space < 0 || dcpl < 0 || H5Pset_chunk(dcpl, 1, &chunk) < 0 ||
            (w->rows = H5Dcreate2(w->file, ROWS_DSET, H5T_STD_I64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT)) < 0 ||
            (w->groups = H5Gcreate2(w->file, ROWS_GROUPS, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
            (!unflushed && flush(w) < 0)) {
            rows_report("creating /rows and /groups");
            return -1;
        }
        H5Pclose(dcpl);
        H5Sclose(space);
        return 0;
    }
    hsize_t n = 0;
    H5G_info_t info;
    if ((w->rows = H5Dopen2(w->file, ROWS_DSET, H5P_DEFAULT)) < 0 || (space = H5Dget_space(w->rows)) < 0 ||
        H5Sget_simple_extent_dims(space, &n, NULL) != 1 ||
        (w->groups = H5Gopen2(w->file, ROWS_GROUPS, H5P_DEFAULT)) < 0 || H5Gget_info(w->groups, &info) < 0) {
        rows_report("opening /rows and /groups");
        return -1;
    }
    H5Sclose(space);
    w->nrows = n;
    w->ngroups = info.nlinks;
    return 0;
}

static int
close_all(writer_t *w)
{
    int rc = 0;

    if (H5Dclose(w->rows) < 0) {
        rows_report("H5Dclose");
        rc = -1;
    }
    if (H5Gclose(w->groups) < 0) {
        rows_report("H5Gclose");
        rc = -1;
    }
    if (H5Fclose(w->file) < 0) {
        rows_report("H5Fclose");
        rc = -1;
    }
    return rc;
}

int
main(int argc, char **argv)
{
    writer_t w = {.file = H5I_INVALID_HID};
    const char *config = NULL;
    unsigned swmr = 0;
    int latest = 0, unflushed = 0;
    hsize_t userblock = 0;
    char line[128], *end;
    unsigned long long n;

    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--swmr"))
            swmr = H5F_ACC_SWMR_WRITE;
        else if (!strcmp(argv[i], "--latest"))
            latest = 1;
        else if (!strcmp(argv[i], "--unflushed"))
            unflushed = 1;
        else if (!strcmp(argv[i], "--libver") && i + 1 < argc &&
                 (!strcmp(argv[i + 1], "latest") || !strcmp(argv[i + 1], "earliest")))
            latest = !strcmp(argv[++i], "latest");
        else if (!strcmp(argv[i], "--userblock") && i + 1 < argc && argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9' &&
                 (userblock = strtoull(argv[i + 1], &end, 10), *end == '\0'))
            i++;
        else if (!strcmp(argv[i], "--config") && i + 1 < argc)
            config = argv[++i];
        else
            argc = 0;
    }
    if (argc < 3 || (strcmp(argv[2], "create") && strcmp(argv[2], "open"))) {
        fprintf(stderr, "usage: rowwriter FILE create|open [--swmr] [--latest | --libver earliest|latest] "
                        "[--userblock N] [--unflushed] [--config STRING]\n");
        return 2;
    }
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (setup(&w, argv[1], !strcmp(argv[2], "create"), swmr, latest, userblock, unflushed, config) < 0)
        return 1;
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("ready %llu\n", (unsigned long long)w.nrows);
    while (rows_command(line, sizeof line)) {
        int rc;
        if (sscanf(line, "append %llu", &n) == 1) {
            rc = append(&w, n, flush);
            printf("%s %llu\n", rc < 0 ? "failed" : "flushed", (unsigned long long)w.nrows);
        }
        else if (sscanf(line, "dappend %llu", &n) == 1) {
            rc = append(&w, n, dflush);
            printf("%s %llu\n", rc < 0 ? "failed" : "dflushed", (unsigned long long)w.nrows);
        }
        else if (!strcmp(line, "start_swmr")) {
            if ((rc = H5Fstart_swmr_write(w.file)) < 0)
                rows_report("H5Fstart_swmr_write");
            printf("%s\n", rc < 0 ? "swmr failed" : "swmr started");
        }
        else if (sscanf(line, "groups %llu", &n) == 1) {
            rc = add_groups(&w, n);
            printf("%s groups %llu\n", rc < 0 ? "failed" : "flushed", (unsigned long long)w.ngroups);
        }
        else if (sscanf(line, "attrs %llu", &n) == 1) {
            rc = add_attrs(&w, n);
            printf("%s attrs %llu\n", rc < 0 ? "failed" : "flushed", (unsigned long long)w.nattrs);
        }
        else if (!strcmp(line, "status")) {
            vfdswmr_status_t st;
            if ((rc = vfdswmr_get_status(w.file, &st)) < 0) {
                rows_report("vfdswmr_get_status");
                printf("status failed\n");
            }
            else
                printf("status tick=%llu\n", (unsigned long long)st.tick);
        }
        else if (sscanf(line, "burst %llu", &n) == 1) {
            rc = burst(&w, n);
            printf("burst %s\n", rc < 0 ? "failed" : "ok");
        }
        else if (!strcmp(line, "tick")) {
            if ((rc = vfdswmr_end_tick(w.file)) < 0)
                rows_report("vfdswmr_end_tick");
            printf("%s\n", rc < 0 ? "tick failed" : "ticked");
        }
        else if (!strcmp(line, "close"))
            break;
        else {
            fprintf(stderr, "rowwriter: unknown command \"%s\"\n", line);
            close_all(&w);
            return 2;
        }
        if (rc < 0)
            w.failed = 1;
    }
    if (close_all(&w) < 0) {
        printf("close failed\n");
        return 3;
    }
    printf("closed\n");
    return w.failed ? 3 : 0;
}
