/*
 * The reader driver (vfd_swmr_reader) against a simulated writer: HDF5
 * files made with plain sec2, and metadata files published with the
 * mdfile writer API (mdwriter.h), page images of a newer version of the
 * file than the one on disk. Needs the built plugin on HDF5_PLUGIN_PATH
 * (make check sets it).
 *
 * The simulated writer: version 1 of the file holds dataset "a"; version 2
 * adds dataset "b". Tick 1 publishes every page of version 2 that differs
 * from version 1, with version 2's size as EOA; the file on disk keeps
 * version 1's metadata pages (and, in most tests, version 2's new pages,
 * which hold b's raw data). Everything the reader shows of "b" thus comes
 * from the snapshot.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <H5FDdevelop.h>
#include <hdf5.h>
#include <H5VLnative.h>

#include "clock.h"
#include "le.h"
#include "lookup3.h"
#include "marks.h"
#include "mdlock.h"
#include "mdwriter.h"
#include "superblock.h"
#include "vfdswmr.h"

#define PS      4096u
#define NA      1024 /* ints in "a": one page */
#define NB      2048 /* ints in "b": two pages */
#define MAX_LAG 3

#include "testdir.h"

/* The simulated writer's error messages (mdwriter.h: the caller owns them). */
static char mdw_err[512];

typedef struct fx_t {
    char h5[256], md[300];
    uint8_t *v1, *v2; /* the file's bytes, version 1 and 2 */
    size_t n1, n2;
    vfdswmr_mdw_t *w; /* the simulated writer */
} fx_t;

/* ---- helpers: files (slurp and spill: testdir.h) -------------------------- */

static void
add_dataset(hid_t file, const char *name, int n, int mul)
{
    hsize_t dims = (hsize_t)n;
    int *v = malloc(sizeof *v * (size_t)n);
    hid_t space = H5Screate_simple(1, &dims, NULL), d;

    for (int i = 0; i < n; i++)
        v[i] = i * mul + 1;
    d = H5Dcreate2(file, name, H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(d >= 0);
    assert_true(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    H5Dclose(d);
    H5Sclose(space);
    free(v);
}

static hid_t
sec2_fapl(void)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);

    assert_true(H5Pset_fapl_sec2(fapl) >= 0);
    assert_true(H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST) >= 0);
    return fapl;
}

/* Versions 1 and 2 of `name` (paged file space, so metadata and raw data
 * never share a page); leaves version 2 on disk. */
static void
make_versions(fx_t *fx, const char *name)
{
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE), fapl = sec2_fapl(), file;

    snprintf(fx->h5, sizeof fx->h5, "%s/%s", dir, name);
    snprintf(fx->md, sizeof fx->md, "%s.md", fx->h5);
    assert_true(H5Pset_file_space_strategy(fcpl, H5F_FSPACE_STRATEGY_PAGE, 0, 1) >= 0);
    assert_true(H5Pset_file_space_page_size(fcpl, PS) >= 0);
    file = H5Fcreate(fx->h5, H5F_ACC_TRUNC, fcpl, fapl);
    assert_true(file >= 0);
    add_dataset(file, "a", NA, 3);
    assert_true(H5Fclose(file) >= 0);
    fx->v1 = slurp(fx->h5, &fx->n1);
    file = H5Fopen(fx->h5, H5F_ACC_RDWR, fapl);
    assert_true(file >= 0);
    add_dataset(file, "b", NB, 7);
    assert_true(H5Fclose(file) >= 0);
    fx->v2 = slurp(fx->h5, &fx->n2);
    assert_true(fx->n2 > fx->n1);
    H5Pclose(fcpl);
    H5Pclose(fapl);
}

static bool
page_differs(const fx_t *fx, uint64_t p)
{
    size_t off = (size_t)p * PS, len = fx->n2 - off < PS ? fx->n2 - off : PS;

    return off + len > fx->n1 || memcmp(fx->v1 + off, fx->v2 + off, len) != 0;
}

/* Make the superblock in img look like a running writer's: consistency
 * flags set, stored end of file still version 1's size. */
static void
writer_superblock(const fx_t *fx, uint8_t *img)
{
    img[11] = 0x05;
    vfdswmr_le64_encode(img + 12 + 16, (uint64_t)fx->n1);
    vfdswmr_le32_encode(img + 44, vfdswmr_hashlittle(img, 44, 0));
}

static vfdswmr_mdw_t *
start_writer(const fx_t *fx)
{
    vfdswmr_mdw_opts_t o = {.page_size = PS, .reserved_pages = 4, .max_lag = MAX_LAG, .md_path = fx->md};
    vfdswmr_mdw_t *w = NULL;
    char err[VFDSWMR_MDW_ERRLEN];
    struct stat st;

    /* as the writer driver does: the HDF5 file's inode (a header naming no
     * file is another file's for a reader that can stat its own) */
    assert_int_equal(stat(fx->h5, &st), 0);
    o.hdf5_id = (uint64_t)st.st_ino;
    if (vfdswmr_mdw_open(&o, &w, err, sizeof err) < 0)
        fail_msg("%s", err);
    /* as the writer driver does once readers can find it (mdlock.h): a
     * reader holding the file as it is looks for a writer again by then */
    int fd = open(fx->h5, O_RDONLY);
    assert_true(fd >= 0);
    vfdswmr_mdlock_quiet_wait(fd);
    close(fd);
    return w;
}

/* Pages [p, p + k) of version 2, zero-padded to whole pages. */
static uint8_t *
pages_image(const fx_t *fx, uint64_t p, size_t k)
{
    uint8_t *img = calloc(k, PS);
    size_t off = (size_t)p * PS;

    memcpy(img, fx->v2 + off, fx->n2 - off < k * PS ? fx->n2 - off : k * PS);
    return img;
}

/* Tick 1: every page of version 2 that differs from version 1, one entry
 * per page, or (merge) one multi-page entry per run of such pages. */
static void
publish_diff(fx_t *fx, bool merge)
{
    size_t npages = (fx->n2 + PS - 1) / PS, n = 0;
    vfdswmr_mdchange_t *c = calloc(npages, sizeof *c);

    for (uint64_t p = 0; p < npages; p++) {
        size_t k = 1;
        uint8_t *img;

        if (!page_differs(fx, p))
            continue;
        while (merge && p + k < npages && page_differs(fx, p + k))
            k++;
        img = pages_image(fx, p, k);
        if (p == 0)
            writer_superblock(fx, img);
        c[n++] = (vfdswmr_mdchange_t){.hdf5_page = p, .length = (uint32_t)(k * PS), .image = img};
        p += k - 1;
    }
    assert_true(n > 0 && c[0].hdf5_page == 0);
    if (vfdswmr_mdw_publish(fx->w, fx->n2, c, n, NULL, 0, 0, mdw_err, sizeof mdw_err) < 0)
        fail_msg("%s", mdw_err);
    for (size_t i = 0; i < n; i++)
        free((void *)c[i].image);
    free(c);
}

static void
publish_empty_ticks(fx_t *fx, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (vfdswmr_mdw_publish(fx->w, fx->n2, NULL, 0, NULL, 0, 0, mdw_err, sizeof mdw_err) < 0)
            fail_msg("%s", mdw_err);
}

enum disk { DISK_HYBRID, DISK_V1, DISK_V2 };

/* Put a version of the file on disk: V1, V2, or HYBRID (version 1 where
 * both have the page, version 2 past version 1's end). */
static void
put_disk(const fx_t *fx, enum disk d)
{
    uint8_t *buf;

    if (d == DISK_V1) {
        spill(fx->h5, fx->v1, fx->n1);
        return;
    }
    buf = malloc(fx->n2);
    memcpy(buf, fx->v2, fx->n2);
    if (d == DISK_HYBRID)
        memcpy(buf, fx->v1, fx->n1);
    spill(fx->h5, buf, fx->n2);
    free(buf);
}

/* A file being written: versions made, writer at tick 1, disk as asked. */
static void
fx_setup_merged(fx_t *fx, const char *name, enum disk d, bool merge)
{
    memset(fx, 0, sizeof *fx);
    make_versions(fx, name);
    put_disk(fx, d);
    fx->w = start_writer(fx);
    publish_diff(fx, merge);
    assert_int_equal(vfdswmr_mdw_tick(fx->w), 1);
}

static void
fx_setup(fx_t *fx, const char *name, enum disk d)
{
    fx_setup_merged(fx, name, d, false);
}

static void
fx_teardown(fx_t *fx)
{
    char table[sizeof fx->md + 16];

    if (fx->w)
        assert_int_equal(vfdswmr_mdw_close(fx->w, false, mdw_err, sizeof mdw_err), 0);
    free(fx->v1);
    free(fx->v2);
    unlink(fx->h5);
    /* the simulated writer removes no read-mark table a reader made */
    if (vfdswmr_marks_name(table, sizeof table, fx->md) == 0 && unlink(table) < 0)
        (void)rmdir(table);
}

/* Readers of fx cannot register (a directory where the read-mark table
 * would be, so none can be made): the max_lag contract, as for readers
 * behind vfd_swmr_aux. (A registered reader is kept by its writer, which
 * the simulated writer is not: integration tests cover it.) */
static void
fx_unregistered(const fx_t *fx)
{
    char table[sizeof fx->md + 16];

    assert_int_equal(vfdswmr_marks_name(table, sizeof table, fx->md), 0);
    assert_int_equal(mkdir(table, 0755), 0);
}

/* ---- helpers: reading through the driver ------------------------------- */

/* Evict on close: every H5Dopen of a closed dataset reads its metadata. */
static hid_t
reader_fapl(const char *config)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);

    assert_true(vfdswmr_set_fapl_reader(fapl, config) >= 0);
    assert_true(H5Pset_evict_on_close(fapl, 1) >= 0);
    return fapl;
}

/* H5Fopen through the reader; a failure's error stack is kept. */
static hid_t
open_reader(const fx_t *fx, unsigned flags, const char *config)
{
    hid_t fapl = reader_fapl(config), file = H5Fopen(fx->h5, flags, fapl), errors;

    errors = H5Eget_current_stack(); /* H5Pclose would clear it */
    H5Pclose(fapl);
    H5Eset_current_stack(errors);
    return file;
}

static herr_t
collect(unsigned n, const H5E_error2_t *e, void *data)
{
    char *buf = data;
    (void)n;
    strncat(buf, e->desc ? e->desc : "", 8191 - strlen(buf));
    strncat(buf, "\n", 8191 - strlen(buf));
    return 0;
}

/* The current error stack must contain `want`. */
static void
assert_error(const char *want)
{
    char buf[8192] = "";

    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect, buf);
    if (strstr(buf, want) == NULL)
        fail_msg("error stack lacks \"%s\":\n%s", want, buf);
}

/* Read dataset `name` (n ints, values i * mul + 1); 0 if every value is right. */
static int
read_dataset(hid_t file, const char *name, int n, int mul)
{
    int *v = calloc((size_t)n, sizeof *v), bad = 0;
    hid_t d = H5Dopen2(file, name, H5P_DEFAULT);

    if (d < 0) {
        free(v);
        return -1;
    }
    if (H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0)
        bad = -1;
    for (int i = 0; i < n && !bad; i++)
        bad = v[i] != i * mul + 1;
    H5Dclose(d);
    free(v);
    return bad;
}

/* The status through the client (H5FDctl's output), checked against the
 * older form (the structure as the input) through H5FDctl directly. */
static vfdswmr_status_t
status_of(hid_t file)
{
    vfdswmr_status_t st, old;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    int marker = 1;
    void *h = NULL;

    assert_true(vfdswmr_get_status(file, &st) >= 0);
    assert_true(H5Pinsert2(fapl, VFDSWMR_HANDLE_PROPERTY, sizeof marker, &marker, NULL, NULL, NULL, NULL, NULL, NULL) >=
                0);
    assert_true(H5Fget_vfd_handle(file, fapl, &h) >= 0);
    H5Pclose(fapl);
    memset(&old, 0xee, sizeof old);
    assert_true(H5FDctl(h, VFDSWMR_CTL_GET_STATUS, H5FD_CTL_FAIL_IF_UNKNOWN_FLAG, &old, NULL) >= 0);
    assert_true(old.is_writer == st.is_writer && old.tick == st.tick && old.session == st.session &&
                old.eoa == st.eoa && old.writer_state == st.writer_state);
    return st;
}

/* Opening `name` (a dataset) must fail with `want` on the error stack. */
static void
assert_open_fails(hid_t file, const char *name, const char *want)
{
    hid_t d;

    H5E_BEGIN_TRY
    {
        d = H5Dopen2(file, name, H5P_DEFAULT);
    }
    H5E_END_TRY
    if (d >= 0)
        H5Dclose(d);
    assert_true(d < 0);
    assert_error(want);
}

/* ---- tests --------------------------------------------------------------- */

static void
check_reads_resolve(unsigned flags, bool merge)
{
    fx_t fx;
    hid_t file, plain;
    vfdswmr_status_t st;

    fx_setup_merged(&fx, "resolve.h5", DISK_HYBRID, merge);
    /* Plain sec2 sees only version 1 on disk. */
    plain = H5Fopen(fx.h5, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(plain >= 0);
    assert_int_equal(H5Lexists(plain, "b", H5P_DEFAULT), 0);
    H5Fclose(plain);

    file = open_reader(&fx, flags, "max_lag=3");
    assert_true(file >= 0);
    assert_int_equal(H5Lexists(file, "b", H5P_DEFAULT), 1);
    assert_int_equal(read_dataset(file, "a", NA, 3), 0);
    assert_int_equal(read_dataset(file, "b", NB, 7), 0);
    st = status_of(file);
    assert_int_equal(st.is_writer, 0);
    assert_int_equal(st.tick, 1);
    assert_int_equal(st.session, vfdswmr_mdw_session(fx.w));
    assert_int_equal(st.eoa, fx.n2);
    assert_true(st.index_entries > 0);
    assert_true(H5Fclose(file) >= 0);
    fx_teardown(&fx);
}

static void
test_reads_resolve_rdonly(void **state)
{
    (void)state;
    check_reads_resolve(H5F_ACC_RDONLY, false);
}

static void
test_reads_resolve_swmr_read(void **state)
{
    (void)state;
    check_reads_resolve(H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, false);
}

/* Entries longer than a page (one per run of changed pages). */
static void
test_reads_resolve_multipage(void **state)
{
    (void)state;
    check_reads_resolve(H5F_ACC_RDONLY, true);
    check_reads_resolve(H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, true);
}

/* The file on disk is shorter than the snapshot's EOA (version 1 exactly):
 * a plain read-only open still works, "b" is there. */
static void
test_eof_below_snapshot_eoa(void **state)
{
    fx_t fx;
    hid_t file, d, space;
    hsize_t dims = 0;

    (void)state;
    fx_setup(&fx, "short.h5", DISK_V1);
    file = open_reader(&fx, H5F_ACC_RDONLY, "max_lag=3");
    assert_true(file >= 0);
    d = H5Dopen2(file, "b", H5P_DEFAULT);
    assert_true(d >= 0);
    space = H5Dget_space(d);
    assert_int_equal(H5Sget_simple_extent_dims(space, &dims, NULL), 1);
    assert_int_equal(dims, NB);
    H5Sclose(space);
    H5Dclose(d);
    assert_int_equal(read_dataset(file, "a", NA, 3), 0);
    assert_true(H5Fclose(file) >= 0);
    fx_teardown(&fx);
}

/* A reader max_lag ticks behind fails its next metadata read; a refresh
 * (vfdswmr_refresh or H5Drefresh) brings it back. */
static void
test_lag_check(void **state)
{
    fx_t fx;
    hid_t file, b;
    char want[256];

    (void)state;
    fx_setup(&fx, "lag.h5", DISK_HYBRID);
    fx_unregistered(&fx);
    file = open_reader(&fx, H5F_ACC_RDONLY, "max_lag=3");
    assert_true(file >= 0);
    b = H5Dopen2(file, "b", H5P_DEFAULT);
    assert_true(b >= 0);
    assert_int_equal(read_dataset(file, "a", NA, 3), 0);

    publish_empty_ticks(&fx, MAX_LAG - 1); /* tick 3: still within max_lag */
    assert_int_equal(read_dataset(file, "a", NA, 3), 0);
    /* The status tells the lag: the snapshot's tick and the writer's newest. */
    assert_int_equal(status_of(file).tick, 1);
    assert_int_equal(status_of(file).writer_tick, 3);
    publish_empty_ticks(&fx, 1); /* tick 4 = 1 + max_lag */
    assert_open_fails(file, "a",
                      "vfd_swmr_reader: reader fell behind: its snapshot (tick 1) is max_lag=3 or more ticks older "
                      "than the writer's (tick 4): refresh more often");

    assert_true(vfdswmr_refresh(file) >= 0);
    assert_int_equal(status_of(file).tick, 4);
    assert_int_equal(status_of(file).writer_tick, 4);
    assert_int_equal(read_dataset(file, "a", NA, 3), 0);

    /* H5Drefresh reaches the driver's flush: it adopts tick 7 itself. */
    publish_empty_ticks(&fx, MAX_LAG);
    snprintf(want, sizeof want, "its snapshot (tick 4) is max_lag=3 or more ticks older than the writer's (tick 7)");
    assert_open_fails(file, "a", want);
    assert_true(H5Drefresh(b) >= 0);
    assert_int_equal(status_of(file).tick, 7);
    assert_int_equal(read_dataset(file, "a", NA, 3), 0);
    H5Dclose(b);
    assert_true(H5Fclose(file) >= 0);
    fx_teardown(&fx);
}

/* No metadata file: reads come from the HDF5 file (tick 0); a writer that
 * appears is adopted at the next refresh, and one that got max_lag ticks
 * ahead of the pretend snapshot meanwhile is noticed. */
static void
test_no_writer(void **state)
{
    fx_t fx = {0};
    hid_t file;
    vfdswmr_status_t st;

    (void)state;
    make_versions(&fx, "nowriter.h5");
    file = open_reader(&fx, H5F_ACC_RDONLY, "max_lag=3");
    assert_true(file >= 0);
    assert_int_equal(read_dataset(file, "b", NB, 7), 0);
    st = status_of(file);
    assert_int_equal(st.tick, 0);
    assert_int_equal(st.session, 0);
    assert_int_equal(st.index_entries, 0);

    fx.w = start_writer(&fx); /* tick 0: no HDF5 page may have changed yet */
    publish_empty_ticks(&fx, MAX_LAG - 1);
    assert_true(H5Oexists_by_name(file, "a", H5P_DEFAULT) > 0);
    assert_int_equal(read_dataset(file, "a", NA, 3), 0);
    publish_empty_ticks(&fx, 1);
    assert_open_fails(file, "a",
                      "reader fell behind: its snapshot (tick 0) is max_lag=3 or more ticks older "
                      "than the writer's (tick 3)");
    assert_true(vfdswmr_refresh(file) >= 0);
    st = status_of(file);
    assert_int_equal(st.tick, 3);
    assert_int_equal(st.session, vfdswmr_mdw_session(fx.w));
    assert_int_equal(read_dataset(file, "a", NA, 3), 0);
    assert_true(H5Fclose(file) >= 0);
    fx_teardown(&fx);
}

/* presume_posix_semantics=0: the metadata file must appear within
 * open_timeout, else the open fails and says so. */
static void
test_wait_timeout(void **state)
{
    fx_t fx = {0};
    hid_t file;
    double t0, s;
    char want[600];

    (void)state;
    make_versions(&fx, "timeout.h5");
    t0 = vfdswmr_now();
    H5E_BEGIN_TRY
    {
        file = open_reader(&fx, H5F_ACC_RDONLY, "presume_posix_semantics=0;open_timeout=3");
    }
    H5E_END_TRY
    s = vfdswmr_now() - t0;
    assert_true(file < 0);
    assert_true(s >= 0.3 && s < 3.0);
    snprintf(want, sizeof want,
             "vfd_swmr_reader: the metadata file \"%s\" did not appear within open_timeout=3 (0.3 s)", fx.md);
    assert_error(want);
    fx_teardown(&fx);
}

static void *
late_writer(void *arg)
{
    fx_t *fx = arg;

    vfdswmr_sleep(0.2);
    fx->w = start_writer(fx);
    return NULL;
}

static void
test_wait_then_appears(void **state)
{
    fx_t fx = {0};
    pthread_t t;
    hid_t file;

    (void)state;
    make_versions(&fx, "late.h5");
    assert_int_equal(pthread_create(&t, NULL, late_writer, &fx), 0);
    file = open_reader(&fx, H5F_ACC_RDONLY, "presume_posix_semantics=0;open_timeout=50");
    pthread_join(t, NULL);
    assert_true(file >= 0);
    assert_int_equal(status_of(file).session, vfdswmr_mdw_session(fx.w));
    assert_int_equal(read_dataset(file, "b", NB, 7), 0);
    assert_true(H5Fclose(file) >= 0);
    fx_teardown(&fx);
}

static void
test_refuses_write(void **state)
{
    fx_t fx = {0};
    hid_t file, fapl;
    char path[300];

    (void)state;
    make_versions(&fx, "rw.h5");
    H5E_BEGIN_TRY
    {
        file = open_reader(&fx, H5F_ACC_RDWR, "");
    }
    H5E_END_TRY
    assert_true(file < 0);
    assert_error("vfd_swmr_reader opens files read-only; use vfd_swmr_writer to write");

    snprintf(path, sizeof path, "%s/new.h5", dir);
    fapl = reader_fapl("");
    H5E_BEGIN_TRY
    {
        file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    }
    H5E_END_TRY
    assert_true(file < 0);
    assert_error("vfd_swmr_reader opens files read-only");
    assert_int_equal(access(path, F_OK), -1);
    H5Pclose(fapl);

    /* A bad configuration is still reported as such. */
    H5E_BEGIN_TRY
    {
        file = open_reader(&fx, H5F_ACC_RDWR, "max_lag=1");
    }
    H5E_END_TRY
    assert_true(file < 0);
    assert_error("vfd_swmr_reader: bad configuration (HDF5_DRIVER_CONFIG): max_lag=1");
    fx_teardown(&fx);
}

/* Offset in the metadata file of the image of HDF5 page p. */
static off_t
image_offset(const fx_t *fx, uint64_t p)
{
    uint32_t n;
    const vfdswmr_mdentry_t *e = vfdswmr_mdw_index(fx->w, &n);

    for (uint32_t i = 0; i < n; i++)
        if (e[i].hdf5_page == p)
            return (off_t)(e[i].md_page * PS);
    fail_msg("page %llu not in the index", (unsigned long long)p);
    return -1;
}

static void
flip_byte(const char *path, off_t off)
{
    int fd = open(path, O_RDWR);
    uint8_t c;

    assert_true(fd >= 0);
    assert_int_equal(pread(fd, &c, 1, off), 1);
    c ^= 0x40;
    assert_int_equal(pwrite(fd, &c, 1, off), 1);
    close(fd);
}

/* ---- the read path, byte by byte, through H5FDopen/H5FDread ----------- */

#define SYN_PAGES 16u

static uint8_t
disk_byte(uint64_t a)
{
    return (uint8_t)(a * 7u + 1u);
}

static uint8_t
image_byte(uint64_t a)
{
    return (uint8_t)(a * 13u + 5u + (a >> 12));
}

/* Entries: page 1; pages 3-5 (one 3-page entry); pages 8-10 holding only
 * 2.5 pages (the rest of page 10 is the HDF5 file's); page 12. */
static const struct {
    uint64_t page;
    uint32_t len;
} syn_entries[] = {{1, PS}, {3, 3 * PS}, {8, 5 * PS / 2}, {12, PS}};

static bool
syn_in_image(uint64_t a)
{
    for (size_t i = 0; i < sizeof syn_entries / sizeof syn_entries[0]; i++)
        if (a >= syn_entries[i].page * PS && a < syn_entries[i].page * PS + syn_entries[i].len)
            return true;
    return false;
}

static void
syn_setup(fx_t *fx)
{
    uint8_t *disk = malloc(SYN_PAGES * PS);
    vfdswmr_mdchange_t c[4];

    memset(fx, 0, sizeof *fx);
    snprintf(fx->h5, sizeof fx->h5, "%s/syn.h5", dir);
    snprintf(fx->md, sizeof fx->md, "%s.md", fx->h5);
    for (uint64_t a = 0; a < SYN_PAGES * PS; a++)
        disk[a] = disk_byte(a);
    spill(fx->h5, disk, SYN_PAGES * PS);
    free(disk);
    fx->w = start_writer(fx);
    for (size_t i = 0; i < 4; i++) {
        uint8_t *img = malloc(syn_entries[i].len);
        for (uint32_t k = 0; k < syn_entries[i].len; k++)
            img[k] = image_byte(syn_entries[i].page * PS + k);
        c[i] = (vfdswmr_mdchange_t){.hdf5_page = syn_entries[i].page, .length = syn_entries[i].len, .image = img};
    }
    if (vfdswmr_mdw_publish(fx->w, SYN_PAGES * PS, c, 4, NULL, 0, 0, mdw_err, sizeof mdw_err) < 0)
        fail_msg("%s", mdw_err);
    for (size_t i = 0; i < 4; i++)
        free((void *)c[i].image);
}

/* Read [addr, addr + size) as `type` and check every byte. */
static void
syn_check(H5FD_t *f, H5FD_mem_t type, uint64_t addr, size_t size)
{
    uint8_t *buf = malloc(size);

    assert_true(H5FDread(f, type, H5P_DEFAULT, addr, size, buf) >= 0);
    for (size_t i = 0; i < size; i++) {
        uint64_t a = addr + i;
        uint8_t want = type != H5FD_MEM_DRAW && syn_in_image(a) ? image_byte(a) : disk_byte(a);
        if (buf[i] != want)
            fail_msg("type %d read at %llu+%zu: byte %llu is %u, want %u", (int)type, (unsigned long long)addr, size,
                     (unsigned long long)a, buf[i], want);
    }
    free(buf);
}

static void
test_page_resolution(void **state)
{
    fx_t fx;
    hid_t fapl = reader_fapl("max_lag=3");
    H5FD_t *f;
    unsigned seed = 12345;

    (void)state;
    syn_setup(&fx);
    f = H5FDopen(fx.h5, H5F_ACC_RDONLY, fapl, HADDR_UNDEF);
    assert_non_null(f);
    assert_int_equal(H5FDget_eoa(f, H5FD_MEM_OHDR), SYN_PAGES * PS);
    assert_int_equal(H5FDget_eof(f, H5FD_MEM_OHDR), SYN_PAGES * PS);
    /* Whole file, each page, each entry boundary +-1. */
    syn_check(f, H5FD_MEM_OHDR, 0, SYN_PAGES * PS);
    syn_check(f, H5FD_MEM_DRAW, 0, SYN_PAGES * PS);
    for (uint64_t p = 0; p < SYN_PAGES; p++)
        syn_check(f, H5FD_MEM_BTREE, p * PS, PS);
    for (size_t i = 0; i < 4; i++) {
        uint64_t s = syn_entries[i].page * PS, e = s + syn_entries[i].len;
        syn_check(f, H5FD_MEM_OHDR, s - 1, 2);
        syn_check(f, H5FD_MEM_OHDR, e - 1, 2);
        syn_check(f, H5FD_MEM_OHDR, s - 1, e - s + 2);
    }
    /* Random reads of up to five pages. */
    for (int i = 0; i < 500; i++) {
        uint64_t addr = (uint64_t)rand_r(&seed) % (SYN_PAGES * PS - 1);
        size_t size = 1 + (size_t)rand_r(&seed) % (5 * PS);
        if (addr + size > SYN_PAGES * PS)
            size = SYN_PAGES * PS - addr;
        syn_check(f, (H5FD_mem_t)(H5FD_MEM_SUPER + rand_r(&seed) % 6), addr, size);
    }
    assert_true(H5FDclose(f) >= 0);
    H5Pclose(fapl);
    fx_teardown(&fx);
}

/* With sec2 underneath, the drivers read its descriptor themselves
 * (common/stack.c, vfdswmr_stack_read): the bytes must be sec2's, zeros
 * past the end of the file included, for metadata and raw data. */
static void
test_reads_as_sec2(void **state)
{
    fx_t fx = {0};
    hid_t rfapl = reader_fapl("max_lag=3"), sfapl = sec2_fapl();
    H5FD_t *r, *s;
    const struct {
        uint64_t back; /* the read starts this many bytes below the end of file */
        size_t size;
    } reads[] = {{PS, PS}, {100, 200}, {1, PS + 1}, {0, 64}, {0, 3 * PS}};
    uint8_t *a = malloc(4 * PS), *b = malloc(4 * PS);

    (void)state;
    make_versions(&fx, "assec2.h5");
    r = H5FDopen(fx.h5, H5F_ACC_RDONLY, rfapl, HADDR_UNDEF);
    s = H5FDopen(fx.h5, H5F_ACC_RDONLY, sfapl, HADDR_UNDEF);
    assert_non_null(r);
    assert_non_null(s);
    assert_true(H5FDset_eoa(r, H5FD_MEM_DEFAULT, fx.n2 + 4 * PS) >= 0);
    assert_true(H5FDset_eoa(s, H5FD_MEM_DEFAULT, fx.n2 + 4 * PS) >= 0);
    for (int t = 0; t < 2; t++)
        for (size_t i = 0; i < sizeof reads / sizeof reads[0]; i++) {
            H5FD_mem_t type = t ? H5FD_MEM_DRAW : H5FD_MEM_OHDR;
            uint64_t addr = fx.n2 - reads[i].back;
            memset(a, 0xaa, 4 * PS);
            memset(b, 0x55, 4 * PS);
            assert_true(H5FDread(r, type, H5P_DEFAULT, addr, reads[i].size, a) >= 0);
            assert_true(H5FDread(s, type, H5P_DEFAULT, addr, reads[i].size, b) >= 0);
            assert_memory_equal(a, b, reads[i].size);
            if (reads[i].back > 0) /* the file's own last byte */
                assert_int_equal(a[reads[i].back - 1], fx.v2[fx.n2 - 1]);
            if (reads[i].size > reads[i].back) /* and zeros after it */
                assert_int_equal(a[reads[i].size - 1], 0);
        }
    assert_true(H5FDclose(r) >= 0);
    assert_true(H5FDclose(s) >= 0);
    H5Pclose(rfapl);
    H5Pclose(sfapl);
    free(a);
    free(b);
    fx_teardown(&fx);
}

/* The HDF5 page holding the object header of `name` in version 2. */
static uint64_t
object_page(const fx_t *fx, const char *name)
{
    char path[300];
    H5O_info2_t info;
    haddr_t addr;
    hid_t file;

    snprintf(path, sizeof path, "%s.v2", fx->h5);
    spill(path, fx->v2, fx->n2);
    file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(file >= 0);
    assert_true(H5Oget_info_by_name3(file, name, &info, H5O_INFO_BASIC, H5P_DEFAULT) >= 0);
    assert_true(H5VLnative_token_to_addr(file, info.token, &addr) >= 0);
    H5Fclose(file);
    unlink(path);
    return addr / PS;
}

/* A damaged image is reported as damage, and never returned; unless the
 * reader fell behind, which explains it (its space may have been reused). */
static void
test_damaged_image(void **state)
{
    fx_t fx;
    hid_t file;
    uint64_t bpage;
    char want[200];

    (void)state;
    fx_setup(&fx, "damaged.h5", DISK_HYBRID);
    fx_unregistered(&fx);
    flip_byte(fx.md, image_offset(&fx, 0) + 100);
    H5E_BEGIN_TRY
    {
        file = open_reader(&fx, H5F_ACC_RDONLY, "max_lag=3");
    }
    H5E_END_TRY
    assert_true(file < 0);
    assert_error("vfd_swmr_reader: metadata file damaged: page 0 of the snapshot of tick 1 fails its checksum");
    flip_byte(fx.md, image_offset(&fx, 0) + 100);

    /* b's object header lies in a page only the snapshot has; it is not
     * read before b is opened. */
    bpage = object_page(&fx, "b");
    assert_true(bpage > 0);
    file = open_reader(&fx, H5F_ACC_RDONLY, "max_lag=3");
    assert_true(file >= 0);
    flip_byte(fx.md, image_offset(&fx, bpage) + 7);
    snprintf(want, sizeof want, "metadata file damaged: page %llu of the snapshot of tick 1 fails its checksum",
             (unsigned long long)bpage);
    assert_open_fails(file, "b", want);
    assert_open_fails(file, "b", want); /* not cached */
    publish_empty_ticks(&fx, MAX_LAG);
    assert_open_fails(file, "b", "reader fell behind: its snapshot (tick 1)");
    assert_true(H5Fclose(file) >= 0);
    fx_teardown(&fx);
}

/* The writer closes: everything to the HDF5 file, then an empty index,
 * then the metadata file is removed. */
static void
close_writer(fx_t *fx)
{
    uint64_t all[64];
    uint32_t n;
    const vfdswmr_mdentry_t *e = vfdswmr_mdw_index(fx->w, &n);

    put_disk(fx, DISK_V2);
    assert_true(n <= 64);
    for (uint32_t i = 0; i < n; i++)
        all[i] = e[i].hdf5_page;
    if (vfdswmr_mdw_publish(fx->w, fx->n2, NULL, 0, all, n, VFDSWMR_MDW_FINAL, mdw_err, sizeof mdw_err) < 0)
        fail_msg("%s", mdw_err);
    assert_int_equal(vfdswmr_mdw_close(fx->w, false, mdw_err, sizeof mdw_err), 0);
    fx->w = NULL;
    assert_int_equal(access(fx->md, F_OK), -1);
}

/* A reader whose writer closed and was followed by another: told its
 * session ended unless it had reached the closed writer's final snapshot;
 * a refresh adopts the new session. */
static void
test_writer_restarts(void **state)
{
    fx_t fx;
    hid_t file;
    vfdswmr_status_t st;
    uint64_t session;

    (void)state;
    fx_setup(&fx, "restart.h5", DISK_HYBRID);
    file = open_reader(&fx, H5F_ACC_RDONLY, "max_lag=3");
    assert_true(file >= 0);

    /* Writer 1 closes, writer 2 starts; the reader still holds tick 1 of 1. */
    close_writer(&fx);
    fx.w = start_writer(&fx);
    assert_open_fails(file, "a",
                      "vfd_swmr_reader: the metadata file now belongs to another writer session (the "
                      "writer was restarted): reopen the file");
    assert_true(vfdswmr_refresh(file) >= 0);
    st = status_of(file);
    assert_int_equal(st.session, vfdswmr_mdw_session(fx.w));
    assert_int_equal(st.tick, 0);
    assert_int_equal(read_dataset(file, "a", NA, 3), 0);

    /* Writer 2 closes: the reader adopts its final snapshot from the
     * removed file, and keeps it. */
    session = vfdswmr_mdw_session(fx.w);
    close_writer(&fx);
    assert_true(vfdswmr_refresh(file) >= 0);
    st = status_of(file);
    assert_int_equal(st.session, session);
    assert_int_equal(st.tick, 1);
    assert_int_equal(st.index_entries, 0);
    assert_true(vfdswmr_refresh(file) >= 0);
    assert_int_equal(status_of(file).tick, 1);
    assert_int_equal(read_dataset(file, "b", NB, 7), 0);

    /* Writer 3 starts: the final snapshot of 2 is tick 0 of 3, fine to read
     * until 3 gets max_lag ticks ahead. */
    fx.w = start_writer(&fx);
    assert_int_equal(read_dataset(file, "a", NA, 3), 0);
    publish_empty_ticks(&fx, MAX_LAG);
    assert_open_fails(file, "a",
                      "reader fell behind: its snapshot (tick 0) is max_lag=3 or more ticks older "
                      "than the writer's (tick 3)");
    assert_true(vfdswmr_refresh(file) >= 0);
    st = status_of(file);
    assert_int_equal(st.session, vfdswmr_mdw_session(fx.w));
    assert_int_equal(st.tick, MAX_LAG);
    assert_int_equal(read_dataset(file, "a", NA, 3), 0);
    assert_true(H5Fclose(file) >= 0);
    fx_teardown(&fx);
}

static void
test_writer_ops_refused(void **state)
{
    fx_t fx;
    hid_t file;
    herr_t rc;

    (void)state;
    fx_setup(&fx, "ops.h5", DISK_HYBRID);
    file = open_reader(&fx, H5F_ACC_RDONLY, "max_lag=3");
    assert_true(file >= 0);
    H5E_BEGIN_TRY
    {
        rc = vfdswmr_disable_end_of_tick(file);
    }
    H5E_END_TRY
    assert_true(rc < 0);
    assert_error("vfd_swmr_reader: only the writer (vfd_swmr_writer) can end a tick");
    H5E_BEGIN_TRY
    {
        rc = vfdswmr_enable_end_of_tick(file);
    }
    H5E_END_TRY
    assert_true(rc < 0);
    assert_true(H5Fclose(file) >= 0);
    fx_teardown(&fx);
}

static void
test_log(void **state)
{
    fx_t fx;
    hid_t file;
    char config[400], log[300], *text;
    size_t len;

    (void)state;
    fx_setup(&fx, "log.h5", DISK_HYBRID);
    snprintf(log, sizeof log, "%s/reader.log", dir);
    snprintf(config, sizeof config, "max_lag=3;log_file_path=%s", log);
    file = open_reader(&fx, H5F_ACC_RDONLY, config);
    assert_true(file >= 0);
    publish_empty_ticks(&fx, 1);
    assert_true(vfdswmr_refresh(file) >= 0);
    assert_true(H5Fclose(file) >= 0);
    text = (char *)slurp(log, &len);
    text[len] = '\0';
    assert_non_null(strstr(text, " reader open \""));
    assert_non_null(strstr(text, "reader adopted snapshot"));
    assert_non_null(strstr(text, "with metadata file: tick=1"));
    assert_non_null(strstr(text, "adopted snapshot tick=2"));
    assert_non_null(strstr(text, " close\n"));
    free(text);
    fx_teardown(&fx);
}

/* The writer's seal on the superblock of the HDF5 file at path, on disk, as
 * a real writer leaves it when it dies (the fixtures' writers are
 * mdwriter.h's alone). */
static void
seal_on_disk(const char *path, bool on)
{
    uint8_t sb[VFDSWMR_SB_SEAL_SPAN];
    uint64_t addr;
    int fd = open(path, O_RDWR);

    assert_true(fd >= 0);
    assert_int_equal(vfdswmr_sb_find_fd(fd, &addr), 1);
    assert_int_equal(vfdswmr_pread_all(fd, sb, sizeof sb, addr), 0);
    assert_int_equal(vfdswmr_sb_set_seal(sb, sizeof sb, on), 1);
    assert_int_equal(vfdswmr_pwrite_all(fd, sb, sizeof sb, addr), 0);
    close(fd);
}

/* The writer's state as a reader sees it, and the settings it adopts. */
static void
test_writer_state_and_settings(void **state)
{
    fx_t fx;
    hid_t file;
    vfdswmr_status_t st;
    char err[VFDSWMR_MDW_ERRLEN], want[300];

    (void)state;
    fx_setup(&fx, "state.h5", DISK_HYBRID);
    /* explicit settings that contradict the writer's are refused */
    H5E_BEGIN_TRY
    {
        file = open_reader(&fx, H5F_ACC_RDONLY, "max_lag=5");
    }
    H5E_END_TRY
    assert_true(file < 0);
    snprintf(want, sizeof want,
             "max_lag=5 in the reader's configuration contradicts the writer's max_lag=%u recorded in", MAX_LAG);
    assert_error(want);
    H5E_BEGIN_TRY
    {
        file = open_reader(&fx, H5F_ACC_RDONLY, "tick_len=9");
    }
    H5E_END_TRY
    assert_true(file < 0);
    assert_error("tick_len=9 in the reader's configuration contradicts the writer's tick_len=0 recorded in");
    /* none given: the writer's are adopted */
    file = open_reader(&fx, H5F_ACC_RDONLY, "");
    assert_true(file >= 0);
    st = status_of(file);
    assert_int_equal(st.max_lag, MAX_LAG);
    assert_int_equal(st.writer_state, VFDSWMR_WRITER_RUNNING);
    assert_int_equal(read_dataset(file, "b", NB, 7), 0);
    /* the writer dies (its lock goes with it, its seal stays): the snapshot
     * stays readable */
    assert_int_equal(vfdswmr_mdw_close(fx.w, true, err, sizeof err), 0);
    fx.w = NULL;
    seal_on_disk(fx.h5, true);
    assert_int_equal(status_of(file).writer_state, VFDSWMR_WRITER_DIED);
    assert_int_equal(read_dataset(file, "b", NB, 7), 0);
    assert_true(H5Fclose(file) >= 0);
    file = open_reader(&fx, H5F_ACC_RDONLY, "");
    assert_true(file >= 0);
    assert_int_equal(status_of(file).writer_state, VFDSWMR_WRITER_DIED);
    assert_int_equal(read_dataset(file, "b", NB, 7), 0);
    assert_true(H5Fclose(file) >= 0);
    /* the same dead snapshot over a superblock without the seal, which the
     * file holds already (a writer killed in its close after the seal
     * went): read (a file that does not hold it: recover_refusals.sh (f)) */
    seal_on_disk(fx.h5, false);
    file = open_reader(&fx, H5F_ACC_RDONLY, "");
    assert_true(file >= 0);
    assert_int_equal(status_of(file).writer_state, VFDSWMR_WRITER_DIED);
    assert_int_equal(read_dataset(file, "b", NB, 7), 0);
    assert_true(H5Fclose(file) >= 0);
    /* a writer that stops publishing: the reader is told, not left frozen */
    unlink(fx.md);
    fx.w = start_writer(&fx);
    publish_diff(&fx, false);
    file = open_reader(&fx, H5F_ACC_RDONLY, "");
    assert_true(file >= 0);
    assert_int_equal(vfdswmr_mdw_mark_failed(fx.w, err, sizeof err), 0);
    assert_int_equal(status_of(file).writer_state, VFDSWMR_WRITER_FAILED);
    assert_open_fails(file, "a", "the writer stopped publishing at tick 1");
    assert_true(H5Fclose(file) >= 0);
    assert_int_equal(vfdswmr_mdw_close(fx.w, false, err, sizeof err), 0);
    fx.w = NULL;
    /* a writer that closes cleanly: FINAL */
    unlink(fx.md);
    fx.w = start_writer(&fx);
    assert_int_equal(vfdswmr_mdw_publish(fx.w, fx.n2, NULL, 0, NULL, 0, VFDSWMR_MDW_FINAL, err, sizeof err), 0);
    file = open_reader(&fx, H5F_ACC_RDONLY, "");
    assert_true(file >= 0);
    assert_int_equal(status_of(file).writer_state, VFDSWMR_WRITER_CLOSED);
    assert_true(H5Fclose(file) >= 0);
    assert_int_equal(vfdswmr_mdw_close(fx.w, false, err, sizeof err), 0);
    fx.w = NULL;
    /* no metadata file at all */
    file = open_reader(&fx, H5F_ACC_RDONLY, "");
    assert_true(file >= 0);
    assert_int_equal(status_of(file).writer_state, VFDSWMR_WRITER_NONE);
    assert_true(H5Fclose(file) >= 0);
    fx_teardown(&fx);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_resolve_rdonly),
        cmocka_unit_test(test_reads_resolve_swmr_read),
        cmocka_unit_test(test_reads_resolve_multipage),
        cmocka_unit_test(test_page_resolution),
        cmocka_unit_test(test_reads_as_sec2),
        cmocka_unit_test(test_eof_below_snapshot_eoa),
        cmocka_unit_test(test_lag_check),
        cmocka_unit_test(test_no_writer),
        cmocka_unit_test(test_wait_timeout),
        cmocka_unit_test(test_wait_then_appears),
        cmocka_unit_test(test_refuses_write),
        cmocka_unit_test(test_damaged_image),
        cmocka_unit_test(test_writer_restarts),
        cmocka_unit_test(test_writer_ops_refused),
        cmocka_unit_test(test_log),
        cmocka_unit_test(test_writer_state_and_settings),
    };
    return cmocka_run_group_tests(tests, testdir_setup, testdir_teardown);
}
