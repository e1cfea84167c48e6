/*
 * eoaclose: the size a file closes at after HDF5 freed space at its end
 * (docs/HDF5-TESTS.md, "eoa_close"). An ordinary HDF5 program: the
 * environment selects the driver.
 *
 *   eoaclose write FILE [wait]
 *       create FILE with /keep (16 ints, i * 7) and dataset /d (1 MiB,
 *       allocated at once, last in the file), close it; open it again
 *       read-write, H5Fflush, print "flushed"; with `wait`, wait for a line
 *       on stdin; delete /d, H5Fclose, and print "closed SIZE" with the
 *       file's size on disk.
 *   eoaclose persist FILE
 *       the same, no wait, in a file whose free-space managers are persistent
 *       (H5Pset_file_space_strategy(FSM_AGGR, persist)), with a second big
 *       dataset /e after /d, deleted first.
 *   eoaclose reuse FILE MIB
 *       the same, no wait, with /d of MIB MiB; after deleting /d, create
 *       /n (1 MiB, NVALS ints i * 3, allocated at once): on sec2 it goes
 *       where /d was. Before closing, print "on disk right" when the file
 *       holds /n's values at its address (read with pread, as programs
 *       that read chunks themselves do), else "on disk stale".
 *   eoaclose cycle FILE KIB ROUNDS [wait]
 *       create FILE with /keep; in each round r (1..ROUNDS) delete /x (from
 *       round 2), create it again (KIB KiB of ints i * 3 + r, allocated at
 *       once, last in the file), H5Fflush, print "round r"; with `wait`,
 *       wait for a line first (from round 2; the end of input ends the
 *       rounds). Then H5Fclose, print
 *       "closed SIZE". On sec2 each /x goes where the last one was.
 *   eoaclose rewrite FILE KIB
 *       create FILE with /keep and /x (KIB KiB, round 1), H5Fflush, print
 *       "round 1 ADDR" (/x's address), wait for a line; delete /x and create
 *       it again with round 2 (on sec2 where the first was), print
 *       "rewritten ADDR" before any flush, wait for a line; H5Fflush, print
 *       "round 2", wait for a line; H5Fclose, print "closed SIZE".
 *   eoaclose again FILE KIB
 *       the same on FILE as `cycle FILE KIB 1` left it, opened read-write:
 *       print "opened ADDR" (/x's address), wait for a line; then as
 *       `rewrite` from "rewritten ADDR" on (nothing flushed before it).
 *       rewrite and again open FILE with H5Pset_alignment(fapl, 1, N) when
 *       the environment has EOACLOSE_ALIGN=N.
 *   eoaclose small FILE N
 *       FILE as `cycle FILE KIB 1` left it, opened read-write: delete /x,
 *       create /s chunked (N chunks of 1000 ints i * 5, no chunk cache),
 *       written a chunk per H5Dwrite, H5Fclose, print "closed SIZE".
 *   eoaclose smallcheck FILE N
 *       open FILE read-only, check /keep and /s (N chunks), print "checked".
 *   eoaclose cycleread FILE
 *       open FILE read-only, check /x holds round 1, print "round 1", wait
 *       for a line; read /x again through the same open file (the snapshot
 *       it holds): print "still 1" when it holds round 1, "failed" when the
 *       read failed (HDF5's error stack on stderr); other values fail.
 *   eoaclose cyclecheck FILE ROUND
 *       open FILE read-only, check /keep and that /x holds ROUND, print
 *       "round ROUND".
 *   eoaclose read FILE
 *       open FILE read-only, check /keep (and /n when it exists), print
 *       "opened", wait for a line on stdin, close, print "closed".
 *   eoaclose chunks FILE [wait]
 *       create FILE with a deflated chunked dataset /c (CHUNK ints, one
 *       chunk, no chunk cache), write it with round 1's values, H5Fflush,
 *       print "flushed SIZE"; with `wait`, wait for a line; write round 2's
 *       values, which compress far worse (HDF5 moves the grown chunk, freeing
 *       the old one at the end of the file), H5Fflush, print "flushed SIZE";
 *       with `wait`, wait for a line; H5Fclose, print "closed SIZE".
 *   eoaclose chunkread FILE
 *       open FILE read-only with no chunk cache, check /c holds round 1,
 *       print "round 1", wait for a line; read /c again through the same
 *       open file (the snapshot it holds), check round 1 again, print
 *       "still 1", wait for a line; open the file again, check round 2,
 *       print "round 2".
 *   eoaclose chunkcheck FILE ROUND
 *       open FILE read-only, check /c holds ROUND (1 or 2), print "round ROUND".
 *
 * Exit status 0 when everything succeeded, 1 otherwise (HDF5's error stack
 * on stderr), 2 on bad usage.
 */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "steps.h"

#define KEEP  16
#define CHUNK 16384
#define NVALS (1 << 18)

static int
fail(const char *what)
{
    return step_fail("eoaclose", what);
}

/* /n as a program reading the file itself finds it (PyTables' Blosc2 path,
 * kerchunk): its bytes at its address in FILE, read with pread. */
static const char *
n_on_disk(hid_t f, const char *name)
{
    static int v[NVALS];
    hid_t d = H5Dopen2(f, "n", H5P_DEFAULT);
    haddr_t at = d < 0 ? HADDR_UNDEF : H5Dget_offset(d);
    int fd = open(name, O_RDONLY);
    ssize_t got = fd < 0 || at == HADDR_UNDEF ? -1 : pread(fd, v, sizeof v, (off_t)at);

    if (fd >= 0)
        close(fd);
    if (d >= 0)
        H5Dclose(d);
    if (got != (ssize_t)sizeof v)
        return "unreadable";
    for (int i = 0; i < NVALS; i++)
        if (v[i] != i * 3)
            return "stale";
    return "right";
}

/* /n: NVALS ints i * 3, allocated at once. */
static int
write_n(hid_t f)
{
    static int v[NVALS];
    hsize_t n = NVALS;
    hid_t s = H5Screate_simple(1, &n, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE), d;

    for (int i = 0; i < NVALS; i++)
        v[i] = i * 3;
    if (H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY) < 0 ||
        (d = H5Dcreate2(f, "n", H5T_NATIVE_INT, s, H5P_DEFAULT, dcpl, H5P_DEFAULT)) < 0 ||
        H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0 || H5Dclose(d) < 0)
        return fail("creating /n");
    H5Sclose(s);
    H5Pclose(dcpl);
    return 0;
}

/* reuse_mib > 0: /d has that many MiB, and /n is created after deleting it. */
static int
write_file(const char *name, int wait, int persist, int reuse_mib)
{
    hsize_t big = reuse_mib > 0 ? (hsize_t)reuse_mib << 18 : 1 << 18, small = KEEP;
    int v[KEEP];
    struct stat st;
    hid_t f, s, dcpl, d;

    for (int i = 0; i < KEEP; i++)
        v[i] = i * 7;
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    if (persist && H5Pset_file_space_strategy(fcpl, H5F_FSPACE_STRATEGY_FSM_AGGR, 1, 1) < 0)
        return fail("H5Pset_file_space_strategy");
    if ((f = H5Fcreate(name, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT)) < 0)
        return fail("H5Fcreate");
    H5Pclose(fcpl);
    s = H5Screate_simple(1, &small, NULL);
    if ((d = H5Dcreate2(f, "keep", H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
        H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0 || H5Dclose(d) < 0)
        return fail("creating /keep");
    H5Sclose(s);
    s = H5Screate_simple(1, &big, NULL);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY) < 0 ||
        (d = H5Dcreate2(f, "d", H5T_NATIVE_INT, s, H5P_DEFAULT, dcpl, H5P_DEFAULT)) < 0 || H5Dclose(d) < 0)
        return fail("creating /d");
    if (persist && ((d = H5Dcreate2(f, "e", H5T_NATIVE_INT, s, H5P_DEFAULT, dcpl, H5P_DEFAULT)) < 0 || H5Dclose(d) < 0))
        return fail("creating /e");
    H5Sclose(s);
    H5Pclose(dcpl);
    if (H5Fclose(f) < 0)
        return fail("H5Fclose after creating");
    if ((f = H5Fopen(name, H5F_ACC_RDWR, H5P_DEFAULT)) < 0)
        return fail("H5Fopen");
    if (H5Fflush(f, H5F_SCOPE_GLOBAL) < 0)
        return fail("H5Fflush");
    printf("flushed\n");
    fflush(stdout);
    if (wait)
        step_wait();
    if ((persist && H5Ldelete(f, "e", H5P_DEFAULT) < 0) || H5Ldelete(f, "d", H5P_DEFAULT) < 0)
        return fail("H5Ldelete");
    if (reuse_mib > 0 && write_n(f))
        return 1;
    if (reuse_mib > 0) {
        printf("on disk %s\n", n_on_disk(f, name));
        fflush(stdout);
    }
    if (H5Fclose(f) < 0)
        return fail("H5Fclose");
    if (stat(name, &st) < 0)
        return fail("stat");
    printf("closed %lld\n", (long long)st.st_size);
    return 0;
}

static long long size_of(const char *name);

/* /x of `kib` KiB holding round `r`: i * 3 + r. */
static int
create_x(hid_t f, int kib, int r)
{
    hsize_t n = (hsize_t)kib << 8;
    int *v = malloc(n * sizeof *v);
    hid_t s = H5Screate_simple(1, &n, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE), d;
    int rc = 0;

    if (v == NULL)
        return fail("malloc");
    for (hsize_t i = 0; i < n; i++)
        v[i] = (int)(i * 3 + (hsize_t)r);
    if (H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY) < 0 ||
        (d = H5Dcreate2(f, "x", H5T_NATIVE_INT, s, H5P_DEFAULT, dcpl, H5P_DEFAULT)) < 0 ||
        H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0 || H5Dclose(d) < 0)
        rc = fail("creating /x");
    free(v);
    H5Sclose(s);
    H5Pclose(dcpl);
    return rc;
}

/* 0: /x holds round r; 1: it holds other values (reported); -1: the read
 * failed. */
static int
check_x(hid_t f, int r)
{
    hid_t d = H5Dopen2(f, "x", H5P_DEFAULT), s;
    hssize_t n;
    int *v, rc = 0;

    if (d < 0 || (s = H5Dget_space(d)) < 0 || (n = H5Sget_simple_extent_npoints(s)) <= 0)
        return -1;
    H5Sclose(s);
    if ((v = malloc((size_t)n * sizeof *v)) == NULL)
        return fail("malloc");
    if (H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0)
        rc = -1;
    for (hssize_t i = 0; rc == 0 && i < n; i++)
        if (v[i] != (int)(i * 3 + r)) {
            fprintf(stderr, "eoaclose: /x[%lld] is %d, not round %d's %d\n", (long long)i, v[i], r, (int)(i * 3 + r));
            rc = 1;
        }
    free(v);
    H5Dclose(d);
    return rc;
}

static int
cycle(const char *name, int kib, int rounds, int wait)
{
    int v[KEEP];
    hsize_t small = KEEP;
    hid_t f, s, d;

    for (int i = 0; i < KEEP; i++)
        v[i] = i * 7;
    if ((f = H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) < 0)
        return fail("H5Fcreate");
    s = H5Screate_simple(1, &small, NULL);
    if ((d = H5Dcreate2(f, "keep", H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
        H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0 || H5Dclose(d) < 0)
        return fail("creating /keep");
    H5Sclose(s);
    for (int r = 1; r <= rounds; r++) {
        if (r > 1 && wait && !step_wait()) /* end of input: close */
            break;
        if (r > 1 && H5Ldelete(f, "x", H5P_DEFAULT) < 0)
            return fail("H5Ldelete");
        if (create_x(f, kib, r))
            return 1;
        if (H5Fflush(f, H5F_SCOPE_GLOBAL) < 0)
            return fail("H5Fflush");
        printf("round %d\n", r);
        fflush(stdout);
    }
    if (H5Fclose(f) < 0)
        return fail("H5Fclose");
    printf("closed %lld\n", size_of(name));
    return 0;
}

static haddr_t
x_addr(hid_t f)
{
    hid_t d = H5Dopen2(f, "x", H5P_DEFAULT);
    haddr_t a = d < 0 ? HADDR_UNDEF : H5Dget_offset(d);

    if (d >= 0)
        H5Dclose(d);
    return a;
}

/* again: FILE exists (cycle FILE KIB 1 made it); opened read-write, not
 * created, and nothing is flushed before round 2. */
static int
rewrite(const char *name, int kib, int again)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), f;
    const char *align = getenv("EOACLOSE_ALIGN");

    if (fapl < 0 || (align && H5Pset_alignment(fapl, 1, (hsize_t)atoll(align)) < 0))
        return fail("the file access property list");
    f = again ? H5Fopen(name, H5F_ACC_RDWR, fapl) : H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5Pclose(fapl);

    if (f < 0)
        return fail(again ? "H5Fopen" : "H5Fcreate");
    if (!again && (create_x(f, kib, 1) || H5Fflush(f, H5F_SCOPE_GLOBAL) < 0))
        return fail("round 1");
    printf("%s %llu\n", again ? "opened" : "round 1", (unsigned long long)x_addr(f));
    fflush(stdout);
    step_wait();
    if (H5Ldelete(f, "x", H5P_DEFAULT) < 0 || create_x(f, kib, 2))
        return fail("round 2");
    printf("rewritten %llu\n", (unsigned long long)x_addr(f));
    fflush(stdout);
    step_wait();
    if (H5Fflush(f, H5F_SCOPE_GLOBAL) < 0)
        return fail("H5Fflush");
    printf("round 2\n");
    fflush(stdout);
    step_wait();
    if (H5Fclose(f) < 0)
        return fail("H5Fclose");
    printf("closed %lld\n", size_of(name));
    return 0;
}

static int
cycle_read(const char *name)
{
    hid_t f = H5Fopen(name, H5F_ACC_RDONLY, H5P_DEFAULT);
    int rc;

    if (f < 0)
        return fail("H5Fopen");
    if (check_x(f, 1) != 0)
        return fail("reading round 1");
    printf("round 1\n");
    fflush(stdout);
    step_wait();
    if ((rc = check_x(f, 1)) > 0)
        return 1;
    if (rc < 0)
        H5Eprint2(H5E_DEFAULT, stderr);
    printf("%s\n", rc == 0 ? "still 1" : "failed");
    fflush(stdout);
    H5E_BEGIN_TRY
    {
        H5Fclose(f);
    }
    H5E_END_TRY
    return 0;
}

/* Round 1 compresses to almost nothing, round 2 hardly at all. */
static int
value(int round, int i)
{
    return round == 1 ? (i % 1000 == 0 ? i : 0) : (int)(((unsigned)i * 2654435761u) >> 7);
}

static long long
size_of(const char *name)
{
    struct stat st;

    return stat(name, &st) < 0 ? -1 : (long long)st.st_size;
}

static int
write_round(const char *name, hid_t d, int round, int wait)
{
    static int v[CHUNK];

    for (int i = 0; i < CHUNK; i++)
        v[i] = value(round, i);
    if (H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0)
        return fail("H5Dwrite");
    if (H5Fflush(d, H5F_SCOPE_GLOBAL) < 0)
        return fail("H5Fflush");
    printf("flushed %lld\n", size_of(name));
    fflush(stdout);
    if (wait)
        step_wait();
    return 0;
}

static int
write_chunks(const char *name, int wait)
{
    hsize_t n = CHUNK;
    hid_t f, s, dcpl, dapl, d;

    if ((f = H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) < 0)
        return fail("H5Fcreate");
    s = H5Screate_simple(1, &n, NULL);
    dcpl = H5Pcreate(H5P_DATASET_CREATE);
    dapl = H5Pcreate(H5P_DATASET_ACCESS);
    if (H5Pset_chunk(dcpl, 1, &n) < 0 || H5Pset_deflate(dcpl, 1) < 0 || H5Pset_chunk_cache(dapl, 0, 0, 1.0) < 0 ||
        (d = H5Dcreate2(f, "c", H5T_NATIVE_INT, s, H5P_DEFAULT, dcpl, dapl)) < 0)
        return fail("creating /c");
    if (write_round(name, d, 1, wait) || write_round(name, d, 2, wait))
        return 1;
    if (H5Dclose(d) < 0 || H5Fclose(f) < 0)
        return fail("H5Fclose");
    printf("closed %lld\n", size_of(name));
    return 0;
}

/* Open /c with no chunk cache (every read reaches the driver) and check it
 * holds `round`. */
static int
check_round(hid_t f, int round)
{
    static int v[CHUNK];
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS), d;

    if (H5Pset_chunk_cache(dapl, 0, 0, 1.0) < 0 || (d = H5Dopen2(f, "c", dapl)) < 0 ||
        H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0 || H5Dclose(d) < 0)
        return fail("reading /c");
    H5Pclose(dapl);
    for (int i = 0; i < CHUNK; i++)
        if (v[i] != value(round, i)) {
            fprintf(stderr, "eoaclose: /c[%d] is %d, not round %d's %d\n", i, v[i], round, value(round, i));
            return 1;
        }
    return 0;
}

static int
read_chunks(const char *name)
{
    hid_t f;

    if ((f = H5Fopen(name, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0)
        return fail("H5Fopen");
    if (check_round(f, 1))
        return 1;
    printf("round 1\n");
    fflush(stdout);
    step_wait();
    if (check_round(f, 1))
        return 1;
    printf("still 1\n");
    fflush(stdout);
    step_wait();
    if (H5Fclose(f) < 0 || (f = H5Fopen(name, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0)
        return fail("opening again");
    if (check_round(f, 2) || H5Fclose(f) < 0)
        return 1;
    printf("round 2\n");
    return 0;
}

/* Dataset `name` of f holds n ints i * mul. */
static int
check_ints(hid_t f, const char *name, int n, int mul)
{
    int *v = malloc((size_t)n * sizeof *v), rc = 0;
    hid_t d;

    if (v == NULL)
        return fail("malloc");
    if ((d = H5Dopen2(f, name, H5P_DEFAULT)) < 0 || H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0 ||
        H5Dclose(d) < 0)
        rc = fail(name);
    for (int i = 0; rc == 0 && i < n; i++)
        if (v[i] != i * mul) {
            fprintf(stderr, "eoaclose: /%s[%d] is %d, not %d\n", name, i, v[i], i * mul);
            rc = 1;
        }
    free(v);
    return rc;
}

/* small: FILE as `cycle FILE KIB 1` left it, opened read-write: delete /x,
 * create /s chunked (n chunks of 1000 ints i * 5, no chunk cache), write a
 * chunk per H5Dwrite, close; print "closed SIZE". smallcheck: /keep and /s. */
static int
small_chunks(const char *name, int n)
{
    hsize_t dim = (hsize_t)n * 1000, chunk = 1000;
    hid_t f = H5Fopen(name, H5F_ACC_RDWR, H5P_DEFAULT), s = H5Screate_simple(1, &dim, NULL), m = -1, d = -1;
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE), dapl = H5Pcreate(H5P_DATASET_ACCESS);
    int v[1000];
    struct stat st;

    if (f < 0 || s < 0 || dcpl < 0 || dapl < 0 || H5Pset_chunk(dcpl, 1, &chunk) < 0 ||
        H5Pset_chunk_cache(dapl, 0, 0, 1.0) < 0 || H5Ldelete(f, "x", H5P_DEFAULT) < 0 ||
        (d = H5Dcreate2(f, "s", H5T_NATIVE_INT, s, H5P_DEFAULT, dcpl, dapl)) < 0 ||
        (m = H5Screate_simple(1, &chunk, NULL)) < 0)
        return fail("creating /s");
    for (int c = 0; c < n; c++) {
        hsize_t start = (hsize_t)c * 1000;
        for (int i = 0; i < 1000; i++)
            v[i] = (c * 1000 + i) * 5;
        if (H5Sselect_hyperslab(s, H5S_SELECT_SET, &start, NULL, &chunk, NULL) < 0 ||
            H5Dwrite(d, H5T_NATIVE_INT, m, s, H5P_DEFAULT, v) < 0)
            return fail("writing /s");
    }
    if (H5Dclose(d) < 0 || H5Sclose(m) < 0 || H5Sclose(s) < 0 || H5Pclose(dcpl) < 0 || H5Pclose(dapl) < 0 ||
        H5Fclose(f) < 0 || stat(name, &st) < 0)
        return fail("closing");
    printf("closed %lld\n", (long long)st.st_size);
    return 0;
}

static int
read_file(const char *name)
{
    hid_t f;

    if ((f = H5Fopen(name, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0)
        return fail("H5Fopen");
    if (check_ints(f, "keep", KEEP, 7) || (H5Lexists(f, "n", H5P_DEFAULT) > 0 && check_ints(f, "n", NVALS, 3)))
        return 1;
    printf("opened\n");
    fflush(stdout);
    step_wait();
    if (H5Fclose(f) < 0)
        return fail("H5Fclose");
    printf("closed\n");
    return 0;
}

int
main(int argc, char **argv)
{
    if (argc >= 3 && argc <= 4 && strcmp(argv[1], "write") == 0 && (argc == 3 || strcmp(argv[3], "wait") == 0))
        return write_file(argv[2], argc == 4, 0, 0);
    if (argc == 3 && strcmp(argv[1], "persist") == 0)
        return write_file(argv[2], 0, 1, 0);
    if (argc == 4 && strcmp(argv[1], "reuse") == 0 && atoi(argv[3]) > 0 && atoi(argv[3]) <= 1024)
        return write_file(argv[2], 0, 0, atoi(argv[3]));
    if (argc >= 5 && argc <= 6 && strcmp(argv[1], "cycle") == 0 && atoi(argv[3]) > 0 && atoi(argv[3]) <= 262144 &&
        atoi(argv[4]) > 0 && (argc == 5 || strcmp(argv[5], "wait") == 0))
        return cycle(argv[2], atoi(argv[3]), atoi(argv[4]), argc == 6);
    if (argc == 4 && (strcmp(argv[1], "rewrite") == 0 || strcmp(argv[1], "again") == 0) && atoi(argv[3]) > 0 &&
        atoi(argv[3]) <= 262144)
        return rewrite(argv[2], atoi(argv[3]), strcmp(argv[1], "again") == 0);
    if (argc == 3 && strcmp(argv[1], "cycleread") == 0)
        return cycle_read(argv[2]);
    if (argc == 4 && strcmp(argv[1], "cyclecheck") == 0 && atoi(argv[3]) > 0) {
        hid_t f = H5Fopen(argv[2], H5F_ACC_RDONLY, H5P_DEFAULT);
        if (f < 0)
            return fail("H5Fopen");
        if (check_x(f, atoi(argv[3])) != 0 || H5Fclose(f) < 0)
            return fail("checking /x");
        printf("round %s\n", argv[3]);
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "read") == 0)
        return read_file(argv[2]);
    if (argc == 4 && strcmp(argv[1], "small") == 0 && atoi(argv[3]) > 0 && atoi(argv[3]) <= 100000)
        return small_chunks(argv[2], atoi(argv[3]));
    if (argc == 4 && strcmp(argv[1], "smallcheck") == 0 && atoi(argv[3]) > 0 && atoi(argv[3]) <= 100000) {
        hid_t f = H5Fopen(argv[2], H5F_ACC_RDONLY, H5P_DEFAULT);
        if (f < 0 || check_ints(f, "keep", KEEP, 7) || check_ints(f, "s", atoi(argv[3]) * 1000, 5) || H5Fclose(f) < 0)
            return fail("checking /s");
        printf("checked\n");
        return 0;
    }
    if (argc >= 3 && argc <= 4 && strcmp(argv[1], "chunks") == 0 && (argc == 3 || strcmp(argv[3], "wait") == 0))
        return write_chunks(argv[2], argc == 4);
    if (argc == 3 && strcmp(argv[1], "chunkread") == 0)
        return read_chunks(argv[2]);
    if (argc == 4 && strcmp(argv[1], "chunkcheck") == 0 && (!strcmp(argv[3], "1") || !strcmp(argv[3], "2"))) {
        hid_t f = H5Fopen(argv[2], H5F_ACC_RDONLY, H5P_DEFAULT);
        if (f < 0)
            return fail("H5Fopen");
        if (check_round(f, argv[3][0] - '0') || H5Fclose(f) < 0)
            return 1;
        printf("round %s\n", argv[3]);
        return 0;
    }
    fprintf(stderr,
            "usage: eoaclose write|chunks FILE [wait] | eoaclose persist FILE | eoaclose read|chunkread FILE | "
            "eoaclose reuse FILE MIB | eoaclose cycle FILE KIB ROUNDS [wait] | eoaclose rewrite|again FILE KIB | "
            "eoaclose cycleread FILE | "
            "eoaclose cyclecheck FILE ROUND | eoaclose chunkcheck FILE 1|2\n");
    return 2;
}
