/*
 * rowreader: an ordinary HDF5 reader of a row file (rows.h) that checks
 * every value it reads.
 *
 *   rowreader FILE check MIN [GROUPS] [--config STRING]
 *       Open FILE read-only once: /rows must have at least MIN rows, rows
 *       below MIN must hold their values, every row past MIN its value or 0
 *       (never written; never any other value), and groups g0 ..
 *       g<GROUPS-1> must exist with attribute n. Prints
 *       "verified MIN rows, E more (W written, Z unwritten), GROUPS groups".
 *   rowreader FILE watch [--config STRING]
 *       A reader driven from stdin, one reply line per command:
 *         verify MIN  refresh (H5Drefresh) until /rows has at least MIN rows
 *                     (every 10 ms, for up to $ROWS_TIMEOUT seconds, default
 *                     120), then check every row            "rows N" | "failed"
 *                     (after a failed read: vfdswmr_refresh, then reopen /rows)
 *         follow MIN  vfdswmr_refresh every 10 ms while the writer runs (up to
 *                     $ROWS_TIMEOUT seconds), then as verify MIN
 *                                                           "rows N" | "failed"
 *         read        reopen /rows without refreshing and check every row of
 *                     the snapshot in use                   "rows N" | "failed"
 *         refresh     vfdswmr_refresh                       "refreshed" | "refresh failed"
 *         status      vfdswmr_get_status    "status tick=T writer_state=S
 *                     tick_len=L max_lag=M" (the numbers; or "status tick=T
 *                     writer_state=unavailable" when vfdswmr.h has no writer state)
 *         ccstats     the shared chunk cache's statistics   "ccstats lookups=L hits=H
 *                     invalidations=I entries=E" (vfdswmr_chunk_cache_get_stats)
 *         quit        close the file                        "closed" | "close failed"
 *
 * --config selects vfd_swmr_reader with that configuration through
 * vfdswmr_set_fapl_reader; otherwise the environment selects the driver.
 * The file is opened with evict-on-close, so a reopened object is read
 * through the driver again. Exit status 0 when everything checked out; 1
 * with a message (and HDF5's stack) on stderr; 3 when a watch command
 * failed; 2 on bad usage.
 */
#include <stdlib.h>

#include "clock.h"
#include "rows.h"

/* Rows of /rows in `dset` now, or -1. */
static long long
extent(hid_t dset)
{
    hsize_t n = 0;
    hid_t space = H5Dget_space(dset);

    if (space < 0 || H5Sget_simple_extent_dims(space, &n, NULL) != 1) {
        rows_report("reading the extent of /rows");
        if (space >= 0)
            H5Sclose(space);
        return -1;
    }
    H5Sclose(space);
    return (long long)n;
}

/*
 * Read all rows of `dset`: rows below `exact` must hold their value, the
 * others their value or 0. Counts those past `exact` into *written and
 * *unwritten. Returns the number of rows, or -1 with the first wrong row on
 * stderr.
 */
static long long
check_rows(hid_t dset, long long exact, long long *written, long long *unwritten)
{
    long long n = extent(dset);
    int64_t *buf;

    *written = *unwritten = 0;
    if (n < 0)
        return -1;
    if (n < exact) {
        fprintf(stderr, "rowreader: /rows has %lld rows, expected at least %lld\n", n, exact);
        return -1;
    }
    if (n == 0)
        return 0;
    if (NULL == (buf = malloc((size_t)n * sizeof *buf)))
        return -1;
    if (H5Dread(dset, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        rows_report("H5Dread of /rows");
        free(buf);
        return -1;
    }
    for (long long i = 0; i < n; i++) {
        if (buf[i] == row_value((uint64_t)i)) {
            if (i >= exact)
                (*written)++;
            continue;
        }
        if (i >= exact && buf[i] == 0) {
            (*unwritten)++;
            continue;
        }
        fprintf(stderr, "rowreader: row %lld of %lld holds %lld, expected %lld%s\n", i, n, (long long)buf[i],
                (long long)row_value((uint64_t)i), i >= exact ? " or 0" : "");
        free(buf);
        return -1;
    }
    free(buf);
    return n;
}

static int
check_groups(hid_t file, long long ngroups)
{
    for (long long k = 0; k < ngroups; k++) {
        char name[64];
        long long v = -1;
        snprintf(name, sizeof name, ROWS_GROUPS "/g%lld", k);
        hid_t a = H5Aopen_by_name(file, name, "n", H5P_DEFAULT, H5P_DEFAULT);
        if (a < 0 || H5Aread(a, H5T_NATIVE_LLONG, &v) < 0 || v != k) {
            if (a < 0)
                rows_report("H5Aopen_by_name");
            fprintf(stderr, "rowreader: group %s: attribute n is %lld, expected %lld\n", name, v, k);
            if (a >= 0)
                H5Aclose(a);
            return -1;
        }
        H5Aclose(a);
    }
    return 0;
}

static hid_t
open_file(const char *path, const char *config)
{
    hid_t fapl = rows_fapl(config, 0), file = H5I_INVALID_HID;

    if (fapl < 0)
        return H5I_INVALID_HID;
    if (H5Pset_evict_on_close(fapl, 1) < 0)
        rows_report("H5Pset_evict_on_close");
    else if ((file = H5Fopen(path, H5F_ACC_RDONLY, fapl)) < 0)
        rows_report("H5Fopen");
    H5Pclose(fapl);
    return file;
}

static int
check(const char *path, long long min, long long ngroups, const char *config)
{
    hid_t file = open_file(path, config), dset;
    long long n, written, unwritten;

    if (file < 0)
        return 1;
    if ((dset = H5Dopen2(file, ROWS_DSET, H5P_DEFAULT)) < 0) {
        rows_report("H5Dopen2 of /rows");
        return 1;
    }
    n = check_rows(dset, min, &written, &unwritten);
    if (n < 0 || check_groups(file, ngroups) < 0)
        return 1;
    if (H5Dclose(dset) < 0 || H5Fclose(file) < 0) {
        rows_report("closing the file");
        return 1;
    }
    printf("verified %lld rows, %lld more (%lld written, %lld unwritten), %lld groups\n", min, n - min, written,
           unwritten, ngroups);
    return 0;
}

/* Polling every 10 ms for up to $ROWS_TIMEOUT seconds (default 120). */
typedef struct {
    double start; /* vfdswmr_now() */
    double limit;
} poll_t;

static poll_t
poll_start(void)
{
    return (poll_t){.start = vfdswmr_now(), .limit = getenv("ROWS_TIMEOUT") ? atof(getenv("ROWS_TIMEOUT")) : 120};
}

/* Wait 10 ms: 0, or -1 when the time is up (nothing waited). */
static int
poll_wait(const poll_t *p)
{
    if (vfdswmr_now() - p->start > p->limit)
        return -1;
    vfdswmr_sleep(0.01);
    return 0;
}

/* watch: refresh until /rows has `min` rows, then check all of them. */
static long long
wait_and_verify(hid_t dset, long long min)
{
    poll_t p = poll_start();
    long long n, written, unwritten;

    for (;;) {
        if (H5Drefresh(dset) < 0) {
            rows_report("H5Drefresh");
            return -1;
        }
        if ((n = extent(dset)) < 0)
            return -1;
        if (n >= min)
            break;
        if (poll_wait(&p) < 0) {
            fprintf(stderr, "rowreader: /rows still has %lld rows after %.0f s, waiting for %lld\n", n, p.limit, min);
            return -1;
        }
    }
    n = check_rows(dset, n, &written, &unwritten);
    return n;
}

static void
status(hid_t file)
{
    vfdswmr_status_t s;

    if (vfdswmr_get_status(file, &s) < 0) {
        rows_report("vfdswmr_get_status");
        printf("status failed\n");
        return;
    }
#ifdef VFDSWMR_WRITER_FAILED
    printf("status tick=%llu writer_state=%d tick_len=%u max_lag=%u\n", s.tick, s.writer_state, s.tick_len, s.max_lag);
#else
    printf("status tick=%llu writer_state=unavailable\n", s.tick);
#endif
}

/* Keep adopting the newest snapshot while the writer runs. */
static int
follow(hid_t file)
{
    poll_t p = poll_start();
    vfdswmr_status_t s;

    for (;;) {
        if (vfdswmr_refresh(file) < 0 || vfdswmr_get_status(file, &s) < 0) {
            rows_report("following the writer");
            return -1;
        }
#ifdef VFDSWMR_WRITER_RUNNING
        if (s.writer_state != VFDSWMR_WRITER_RUNNING)
            return 0;
#else
        return 0; /* no writer state in this vfdswmr.h: one refresh */
#endif
        if (poll_wait(&p) < 0) {
            fprintf(stderr, "rowreader: the writer still runs after %.0f s\n", p.limit);
            return -1;
        }
    }
}

static int
watch(const char *path, const char *config)
{
    hid_t file = open_file(path, config), dset;
    char line[128];
    long long min, n, written, unwritten;
    int failed = 0;

    if (file < 0)
        return 1;
    if ((dset = H5Dopen2(file, ROWS_DSET, H5P_DEFAULT)) < 0 || (n = extent(dset)) < 0) {
        rows_report("H5Dopen2 of /rows");
        return 1;
    }
    printf("ready %lld\n", n);
    while (rows_command(line, sizeof line)) {
        n = 0;
        if (sscanf(line, "verify %lld", &min) == 1) {
            /* after a failed "read": adopt the newest snapshot, then reopen */
            if (dset < 0 && vfdswmr_refresh(file) < 0)
                rows_report("vfdswmr_refresh");
            else if (dset < 0 && (dset = H5Dopen2(file, ROWS_DSET, H5P_DEFAULT)) < 0)
                rows_report("H5Dopen2 of /rows");
            n = dset < 0 ? -1 : wait_and_verify(dset, min);
        }
        else if (sscanf(line, "follow %lld", &min) == 1)
            n = dset < 0 || follow(file) < 0 ? -1 : wait_and_verify(dset, min);
        else if (!strcmp(line, "read")) {
            if (dset >= 0 && H5Dclose(dset) < 0)
                rows_report("H5Dclose of /rows");
            if ((dset = H5Dopen2(file, ROWS_DSET, H5P_DEFAULT)) < 0) {
                rows_report("reopening /rows");
                n = -1;
            }
            else
                n = check_rows(dset, 0, &written, &unwritten);
            if (n >= 0 && unwritten) {
                fprintf(stderr, "rowreader: %lld of %lld rows unwritten in a snapshot\n", unwritten, n);
                n = -1;
            }
        }
        else if (!strcmp(line, "refresh")) {
            int rc = vfdswmr_refresh(file);
            if (rc < 0)
                rows_report("vfdswmr_refresh");
            printf("%s\n", rc < 0 ? "refresh failed" : "refreshed");
            failed |= rc < 0;
            continue;
        }
        else if (!strcmp(line, "status")) {
            status(file);
            continue;
        }
#ifdef VFDSWMR_CTL_CC_GET_STATS
        else if (!strcmp(line, "ccstats")) {
            vfdswmr_chunk_cache_stats_t s;
            if (vfdswmr_chunk_cache_get_stats(file, &s) < 0) {
                rows_report("vfdswmr_chunk_cache_get_stats");
                printf("ccstats failed\n");
            }
            else
                printf("ccstats lookups=%llu hits=%llu invalidations=%llu entries=%llu\n", s.lookups, s.hits,
                       s.invalidations, s.entries);
            continue;
        }
#endif
        else if (!strcmp(line, "quit"))
            break;
        else {
            fprintf(stderr, "rowreader: unknown command \"%s\"\n", line);
            return 2;
        }
        if (n < 0) {
            printf("failed\n");
            failed = 1;
        }
        else
            printf("rows %lld\n", n);
    }
    if ((dset >= 0 && H5Dclose(dset) < 0) || H5Fclose(file) < 0) {
        rows_report("closing the file");
        printf("close failed\n");
        return 3;
    }
    printf("closed\n");
    return failed ? 3 : 0;
}

int
main(int argc, char **argv)
{
    const char *config = NULL;
    long long args[2] = {0, 0};
    int nargs = 0;

    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--config") && i + 1 < argc)
            config = argv[++i];
        else if (nargs < 2 && argv[i][0] >= '0' && argv[i][0] <= '9')
            args[nargs++] = atoll(argv[i]);
        else
            argc = 0;
    }
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 3 && !strcmp(argv[2], "check") && nargs >= 1)
        return check(argv[1], args[0], args[1], config);
    if (argc >= 3 && !strcmp(argv[2], "watch") && nargs == 0)
        return watch(argv[1], config);
    fprintf(stderr, "usage: rowreader FILE check MIN [GROUPS] [--config STRING]\n"
                    "       rowreader FILE watch [--config STRING]\n");
    return 2;
}
