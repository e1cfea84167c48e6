/*
 * Crash recovery (common/recover.c) against a metadata file written by the
 * real mdfile writer and a model HDF5 file on disk: exactly the metadata
 * ranges of the last snapshot go back into the HDF5 file, raw bytes written
 * after the publish survive, nothing is written when the metadata file is
 * damaged or belongs to another file, a killed recovery is finished by the
 * next one, and readers still holding the snapshot are not disturbed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "testdir.h"

#include "io.h"
#include "mdreader.h"
#include "mdwriter.h"
#include "recover.h"
#include "checksum.h"
#include "craftmd.h"
#include "superblock.h"

#define PS      512u
#define NPAGES  16u
#define MAX_LAG 3u

static char md_path[256], h5_path[256];

/* ---- the model HDF5 file, reached through a POSIX io (writes; reads: vfdswmr_recover_io_readonly) ---- */

static int
f_write(void *ctx, uint64_t addr, const void *buf, size_t len)
{
    return vfdswmr_pwrite_all(*(int *)ctx, buf, len, addr);
}

static uint64_t extended_to;

static int
f_extend(void *ctx, uint64_t size)
{
    struct stat st;
    extended_to = size;
    if (fstat(*(int *)ctx, &st) < 0)
        return -1;
    return (uint64_t)st.st_size >= size ? 0 : ftruncate(*(int *)ctx, (off_t)size);
}

static int
f_sync(void *ctx)
{
    return fsync(*(int *)ctx);
}

static uint8_t model[NPAGES * PS];

static void
make_model(void)
{
    for (size_t i = 0; i < sizeof model; i++)
        model[i] = (uint8_t)(i / PS + 100);
    spill(h5_path, model, sizeof model);
}

/* A writer session: tick 1 changes page 2 (metadata at [0,100) and
 * [300,350)), tick 2 changes page 5 (all metadata); flags for tick 2. */
static uint64_t
write_session(uint64_t hdf5_id, unsigned final_flags)
{
    static uint8_t img2[PS], img5[PS];
    static const vfdswmr_mdrange_t r2[] = {{0, 100}, {300, 50}}, r5[] = {{0, PS}};
    vfdswmr_mdw_opts_t o = {.page_size = PS,
                            .reserved_pages = 2,
                            .max_lag = MAX_LAG,
                            .md_path = md_path,
                            .tick_len = 1,
                            .hdf5_id = hdf5_id};
    vfdswmr_mdw_t *w;
    char err[256];
    uint64_t session;

    unlink(md_path);
    memset(img2, 0xAA, PS);
    memset(img5, 0xBB, PS);
    vfdswmr_mdchange_t c2 = {.hdf5_page = 2, .length = PS, .image = img2, .ranges = r2, .nranges = 2};
    vfdswmr_mdchange_t c5 = {.hdf5_page = 5, .length = PS, .image = img5, .ranges = r5, .nranges = 1};
    assert_int_equal(vfdswmr_mdw_open(&o, &w, err, sizeof err), 0);
    assert_int_equal(vfdswmr_mdw_publish(w, NPAGES * PS, &c2, 1, NULL, 0, 0, err, sizeof err), 0);
    assert_int_equal(vfdswmr_mdw_publish(w, NPAGES * PS, &c5, 1, NULL, 0, final_flags, err, sizeof err), 0);
    session = vfdswmr_mdw_session(w);
    /* "crash": keep the metadata file */
    assert_int_equal(vfdswmr_mdw_close(w, true, err, sizeof err), 0);
    return session;
}

/* The session the HDF5 file records as its own elsewhere (0: none), for run(). */
static uint64_t recorded_session;

static int
run(bool force, uint64_t hdf5_id, vfdswmr_recover_report_t *rep, char *err, size_t errlen)
{
    int md = open(md_path, O_RDWR), h5 = open(h5_path, O_RDWR), rc;
    vfdswmr_recover_io_t io;
    vfdswmr_sessname_t rec = {.session = recorded_session, .path = "/elsewhere/f.h5.md"};

    assert_true(md >= 0 && h5 >= 0);
    vfdswmr_recover_io_readonly(&h5, &io); /* reads and size as the tool's; writes to the model */
    io.write = f_write;
    io.extend = f_extend;
    io.sync = f_sync;
    rc = vfdswmr_recover_run(md, md_path, &io, h5_path, hdf5_id, recorded_session ? &rec : NULL, force, rep, err,
                             errlen);
    close(md);
    close(h5);
    return rc;
}

/* What the HDF5 file must hold after recovering write_session(). */
static void
expect_recovered(void)
{
    size_t len;
    uint8_t *f = slurp(h5_path, &len), want[sizeof model];

    memcpy(want, model, sizeof want);
    memset(want + 2 * PS, 0xAA, 100);
    memset(want + 2 * PS + 300, 0xAA, 50);
    memset(want + 5 * PS, 0xBB, PS);
    assert_int_equal(len, NPAGES * PS); /* at least the snapshot's EOA */
    assert_memory_equal(f, want, sizeof want);
    for (size_t i = sizeof want; i < len; i++)
        assert_int_equal(f[i], 0);
    free(f);
}

/* The HDF5 file must still be exactly the model: nothing was written. */
static void
expect_untouched(void)
{
    size_t len;
    uint8_t *f = slurp(h5_path, &len);

    assert_int_equal(len, sizeof model);
    assert_memory_equal(f, model, sizeof model);
    free(f);
}

static uint64_t
md_tick(void)
{
    int fd = open(md_path, O_RDONLY);
    vfdswmr_mdr_io_t io = vfdswmr_mdr_fd_io(&fd);
    vfdswmr_mdr_opts_t o;
    vfdswmr_mdsnap_t s;
    char why[256];

    vfdswmr_mdr_opts_default(&o);
    assert_int_equal(vfdswmr_mdr_load(&io, &o, &s, why, sizeof why), VFDSWMR_MD_OK);
    assert_int_equal(s.idx.nentries, 2); /* the same snapshot */
    vfdswmr_mdsnap_free(&s);
    close(fd);
    return s.hdr.tick;
}

static void
test_exact_ranges_and_raw_kept(void **state)
{
    vfdswmr_recover_report_t rep;
    char err[512];
    uint64_t session;

    (void)state;
    make_model();
    session = write_session(0, 0);
    /* raw data written into page 2 after the publish, outside its metadata */
    model[2 * PS + 150] = 0x55;
    spill(h5_path, model, sizeof model);
    assert_int_equal(run(false, 0, &rep, err, sizeof err), 0);
    assert_true(rep.needed);
    assert_int_equal(rep.session, session);
    assert_int_equal(rep.tick, 2);
    assert_int_equal(rep.pages, 2);
    assert_int_equal(rep.bytes, 150 + PS);
    assert_int_equal(extended_to, NPAGES * PS);
    expect_recovered();
    /* readers older than the snapshot must notice: republished max_lag - 1 later */
    assert_int_equal(md_tick(), 2 + MAX_LAG - 1);
    /* idempotent: a second run gives the same file */
    assert_int_equal(run(false, 0, &rep, err, sizeof err), 0);
    expect_recovered();
}

/* A dry run (vfd_swmr_inspect) must not write: any write fails the test. */
static int
no_write(void *ctx, uint64_t addr, const void *buf, size_t len)
{
    (void)ctx, (void)addr, (void)buf, (void)len;
    fail_msg("vfdswmr_recover_predict wrote to the HDF5 file");
    return -1;
}

static int
no_extend(void *ctx, uint64_t size)
{
    (void)ctx, (void)size;
    fail_msg("vfdswmr_recover_predict extended the HDF5 file");
    return -1;
}

static int
no_sync(void *ctx)
{
    (void)ctx;
    fail_msg("vfdswmr_recover_predict synced the HDF5 file");
    return -1;
}

static int
predict(uint64_t hdf5_id, vfdswmr_recover_report_t *rep, char *err, size_t errlen)
{
    int md = open(md_path, O_RDONLY), h5 = open(h5_path, O_RDONLY), rc;
    vfdswmr_recover_io_t io;

    assert_true(md >= 0 && h5 >= 0);
    vfdswmr_recover_io_readonly(&h5, &io); /* its reads; its writes refuse ... */
    errno = 0;
    assert_int_equal(io.write(io.ctx, 0, "x", 1), -1);
    assert_int_equal(errno, EROFS);
    assert_int_equal(io.extend(io.ctx, 1 << 20), -1);
    assert_int_equal(io.sync(io.ctx), -1);
    /* ... and these fail the test: a dry run must not even try */
    io.write = no_write;
    io.extend = no_extend;
    io.sync = no_sync;
    rc = vfdswmr_recover_predict(md, md_path, &io, h5_path, hdf5_id, NULL, rep, err, errlen);
    close(md);
    close(h5);
    return rc;
}

/* The prediction is the recovery's own report, and changes no byte of either file. */
static void
test_predict_is_the_recovery(void **state)
{
    vfdswmr_recover_report_t want, got;
    char err[512], err2[512];
    size_t md_len, len;
    uint8_t *md_before, *md_after;

    (void)state;
    make_model();
    write_session(0, 0);
    model[2 * PS + 150] = 0x55; /* raw data after the publish, as above */
    spill(h5_path, model, sizeof model);
    md_before = slurp(md_path, &md_len);
    assert_int_equal(predict(0, &want, err, sizeof err), 0);
    expect_untouched();
    md_after = slurp(md_path, &len);
    assert_int_equal(len, md_len);
    assert_memory_equal(md_after, md_before, md_len);
    free(md_before);
    free(md_after);
    assert_true(want.needed);
    assert_int_equal(run(false, 0, &got, err, sizeof err), 0);
    expect_recovered();
    assert_int_equal(got.session, want.session);
    assert_int_equal(got.tick, want.tick);
    assert_int_equal(got.eoa, want.eoa);
    assert_int_equal(got.pages, want.pages);
    assert_int_equal(got.bytes, want.bytes);
    /* a refusal is predicted with the recovery's own words */
    make_model();
    write_session(1234, 0);
    assert_int_equal(predict(999, &want, err, sizeof err), -1);
    assert_int_equal(run(false, 999, &got, err2, sizeof err2), -1);
    assert_string_equal(err, err2);
    expect_untouched();
}

static void
test_foreign_refused(void **state)
{
    vfdswmr_recover_report_t rep;
    char err[512];

    (void)state;
    make_model();
    write_session(1234, 0);
    assert_int_equal(run(false, 999, &rep, err, sizeof err), -1);
    assert_non_null(strstr(err, "belongs to another HDF5 file (inode 1234, but"));
    assert_non_null(strstr(err, "is inode 999"));
    expect_untouched();
    assert_int_equal(run(true, 999, &rep, err, sizeof err), 0); /* --force */
    expect_recovered();
    /* a header that names no file (0) is no permission for one that has an inode */
    make_model();
    write_session(0, 0);
    assert_int_equal(run(false, 999, &rep, err, sizeof err), -1);
    assert_non_null(strstr(err, "belongs to another HDF5 file (inode 0, but"));
    expect_untouched();
    assert_int_equal(run(false, 0, &rep, err, sizeof err), 0); /* an opener that cannot tell either */
    expect_recovered();
}

/* The HDF5 file records another session (a later writer of it kept its
 * metadata file elsewhere): this metadata file is stale. */
static void
test_other_session_recorded_refused(void **state)
{
    vfdswmr_recover_report_t rep;
    char err[512], want[128];
    uint64_t session;

    (void)state;
    make_model();
    session = write_session(1234, 0);
    recorded_session = session ^ 1;
    assert_int_equal(run(false, 1234, &rep, err, sizeof err), -1);
    snprintf(want, sizeof want, "holds session %016llx of", (unsigned long long)session);
    assert_non_null(strstr(err, want));
    snprintf(want, sizeof want, "records session %016llx as its own, with its metadata file at /elsewhere/f.h5.md",
             (unsigned long long)(session ^ 1));
    assert_non_null(strstr(err, want));
    assert_non_null(strstr(err, "this one is stale; nothing was written"));
    expect_untouched();
    recorded_session = session; /* its own session recorded: recovered */
    assert_int_equal(run(false, 1234, &rep, err, sizeof err), 0);
    expect_recovered();
    make_model();
    write_session(1234, 0);
    recorded_session = 99; /* --force writes it anyway */
    assert_int_equal(run(true, 1234, &rep, err, sizeof err), 0);
    expect_recovered();
    /* a FINAL one of another session over a file no writer sealed: the file
     * is whole as it is, nothing to do (over a sealed one: stale, below) */
    make_model();
    write_session(1234, VFDSWMR_MDW_FINAL);
    assert_int_equal(run(false, 1234, &rep, err, sizeof err), 0);
    assert_false(rep.needed);
    expect_untouched();
    recorded_session = 0;
}

/* A file shorter than the snapshot's EOA was truncated or replaced after
 * the crash (the writer keeps it that long): refused; --force extends it. */
static void
test_shorter_file_refused(void **state)
{
    vfdswmr_recover_report_t rep;
    char err[512];
    size_t len;
    uint8_t *f;

    (void)state;
    make_model();
    write_session(0, 0);
    spill(h5_path, model, 8 * PS); /* rewritten in place, shorter: same inode */
    assert_int_equal(run(false, 0, &rep, err, sizeof err), -1);
    assert_non_null(strstr(err, "is 4096 bytes, shorter than the 8192 bytes of the snapshot"));
    assert_non_null(strstr(err, "nothing was written"));
    f = slurp(h5_path, &len);
    assert_int_equal(len, 8 * PS);
    assert_memory_equal(f, model, 8 * PS);
    free(f);
    assert_int_equal(run(true, 0, &rep, err, sizeof err), 0);
    f = slurp(h5_path, &len);
    assert_int_equal(len, NPAGES * PS); /* extended to the EOA, then the snapshot written */
    assert_int_equal(f[5 * PS], 0xBB);
    free(f);
}

static void
test_damaged_image_writes_nothing(void **state)
{
    vfdswmr_recover_report_t rep;
    char err[512];
    size_t len;
    uint8_t *md;

    (void)state;
    make_model();
    write_session(0, 0);
    /* damage page 5's image (the last one written: the highest md page) */
    md = slurp(md_path, &len);
    for (size_t i = 2 * PS; i < len; i++)
        if (md[i] == 0xBB) {
            md[i] = 0xBC;
            break;
        }
    spill(md_path, md, len);
    free(md);
    assert_int_equal(run(false, 0, &rep, err, sizeof err), -1);
    assert_non_null(strstr(err, "is damaged: the image of HDF5 page 5"));
    assert_non_null(strstr(err, "nothing was written to the HDF5 file"));
    expect_untouched();
}

static void
test_final_needs_nothing(void **state)
{
    vfdswmr_recover_report_t rep;
    char err[512];

    (void)state;
    make_model();
    write_session(0, VFDSWMR_MDW_FINAL);
    assert_int_equal(run(false, 0, &rep, err, sizeof err), 0);
    assert_false(rep.needed);
    expect_untouched();
}

/* FINAL over a file whose superblock is still sealed: the close clears the
 * seal before it publishes FINAL, so the two disagree -- damage, not
 * permission. Refused, nothing written; --force clears the seal only. */
static void
test_final_over_sealed_refused(void **state)
{
    vfdswmr_recover_report_t rep;
    char err[1024];
    size_t len;
    uint8_t *f;

    (void)state;
    make_model();
    /* a version 0 superblock at 0: signature, version 0, 8-byte offsets and lengths */
    memcpy(model, "\211HDF\r\n\032\n", 8);
    memset(model + 8, 0, 16);
    model[13] = model[14] = 8;
    assert_int_equal(vfdswmr_sb_sealed(model, sizeof model), 0);
    spill(h5_path, model, sizeof model);
    write_session(0, VFDSWMR_MDW_FINAL);
    assert_int_equal(run(false, 0, &rep, err, sizeof err), 0); /* unsealed: closed cleanly, nothing to do */
    assert_false(rep.needed);
    expect_untouched();
    assert_int_equal(vfdswmr_sb_set_seal(model, sizeof model, true), 1);
    spill(h5_path, model, sizeof model);
    /* sealed by a later session recorded elsewhere: stale, naming it -- not
     * the --force advice below, which would lose that session's data */
    recorded_session = 77;
    assert_int_equal(run(false, 0, &rep, err, sizeof err), -1);
    assert_non_null(strstr(err, "this one is stale; nothing was written"));
    assert_non_null(strstr(err, "/elsewhere/f.h5.md"));
    expect_untouched();
    recorded_session = 0;
    assert_int_equal(run(false, 0, &rep, err, sizeof err), -1);
    assert_non_null(strstr(err, "says its writer closed"));
    assert_non_null(strstr(err, "cleanly (FINAL), but the file's superblock is still sealed by a writer"));
    assert_non_null(strstr(err, "nothing was written (vfd_swmr_recover --force clears the seal"));
    expect_untouched();
    assert_int_equal(run(true, 0, &rep, err, sizeof err), 0);
    assert_true(rep.needed);
    f = slurp(h5_path, &len);
    assert_int_equal(len, sizeof model);
    assert_int_equal(vfdswmr_sb_sealed(f, len), 0);
    assert_memory_equal(f + 24, model + 24, sizeof model - 24); /* nothing but the seal changed */
    assert_int_equal(vfdswmr_sb_set_seal(model, sizeof model, false), 1);
    assert_memory_equal(f, model, sizeof model);
    free(f);
}

/* Pages larger than recovery's piece (1 MiB): ranges that straddle pieces
 * go back exactly, every other byte stays the file's. */
static void
test_large_pages_in_pieces(void **state)
{
    enum { BIG = 4u << 20, PAGES = 3 };
    static const vfdswmr_mdrange_t r[] = {{0, 8}, {(1u << 20) - 100, 300}, {(3u << 20) + 5, 10}, {BIG - 7, 7}};
    vfdswmr_mdw_opts_t o = {
        .page_size = BIG, .reserved_pages = 1, .max_lag = MAX_LAG, .md_path = md_path, .tick_len = 1};
    vfdswmr_mdw_t *w;
    vfdswmr_recover_report_t rep;
    uint8_t *file = malloc((size_t)PAGES * BIG), *img = malloc(BIG), *got;
    char err[512];
    size_t len;

    (void)state;
    assert_non_null(file);
    assert_non_null(img);
    for (size_t i = 0; i < (size_t)PAGES * BIG; i++)
        file[i] = (uint8_t)(i * 7 + i / 4099);
    spill(h5_path, file, (size_t)PAGES * BIG);
    memset(img, 0xCD, BIG);
    unlink(md_path);
    vfdswmr_mdchange_t c = {.hdf5_page = 1, .length = BIG, .image = img, .ranges = r, .nranges = 4};
    assert_int_equal(vfdswmr_mdw_open(&o, &w, err, sizeof err), 0);
    assert_int_equal(vfdswmr_mdw_publish(w, (uint64_t)PAGES * BIG, &c, 1, NULL, 0, 0, err, sizeof err), 0);
    assert_int_equal(vfdswmr_mdw_close(w, true, err, sizeof err), 0); /* "crash" */
    assert_int_equal(run(false, 0, &rep, err, sizeof err), 0);
    assert_int_equal(rep.bytes, 8 + 300 + 10 + 7);
    for (size_t k = 0; k < 4; k++)
        memset(file + BIG + r[k].offset, 0xCD, r[k].length);
    got = slurp(h5_path, &len);
    assert_int_equal(len, (size_t)PAGES * BIG);
    assert_memory_equal(got, file, len);
    free(got);
    free(img);
    free(file);
}

/* A crafted, sparse metadata file: 8 entries of 8 MiB whose images are
 * holes, the last under a wrong checksum. Recovery verifies in pieces:
 * refused as damaged, nothing written, and the process that ran it grew by
 * far less than the 64 MiB the images state (it used to hold them all
 * before writing anything). */
static void
test_crafted_huge_entries_bounded(void **state)
{
    enum { N = 8, CPS = 4096 };
    const uint32_t L = 8u << 20;
    struct rusage ru;
    uint64_t eoa, last = 1 + (uint64_t)(N - 1) * (L / CPS);
    int status;
    pid_t pid;

    (void)state;
    make_model();
    uint8_t *zeros = calloc(1, L);
    assert_non_null(zeros);
    uint32_t zsum = vfdswmr_checksum(zeros, L);
    free(zeros);
    unlink(md_path);
    assert_int_equal(craft_md(md_path, CPS, N, L, zsum, zsum ^ 1, 0, &eoa), 0);
    if ((pid = fork()) == 0) {
        vfdswmr_recover_report_t rep;
        char err[512], want[128];
        long before;
        if (getrusage(RUSAGE_SELF, &ru) < 0)
            _exit(2);
        before = ru.ru_maxrss;
        /* --force: past the size check (the model file is shorter) */
        int rc = run(true, 0, &rep, err, sizeof err);
        snprintf(want, sizeof want, "is damaged: the image of HDF5 page %llu (tick 5)", (unsigned long long)last);
        if (rc != -1 || !strstr(err, want) || getrusage(RUSAGE_SELF, &ru) < 0)
            _exit(3);
        /* KiB: the peak grew by less than 3 of the 8 images */
        _exit(ru.ru_maxrss - before < 24 * 1024 ? 0 : 4);
    }
    assert_true(pid > 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    expect_untouched();
}

/* A writer killed before tick 1 leaves tick 0, written before it opened
 * the HDF5 file: hdf5_id 0, empty index. Recovery takes it (nothing to
 * restore) and republishes it naming the file, so that a recovery killed
 * after the republish is run again -- not refused as another file's. */
static void
test_tick0_recovered_twice(void **state)
{
    vfdswmr_mdw_opts_t o = {
        .page_size = PS, .reserved_pages = 2, .max_lag = MAX_LAG, .md_path = md_path, .tick_len = 1};
    vfdswmr_recover_report_t rep;
    vfdswmr_mdw_t *w;
    char err[512];

    (void)state;
    make_model();
    unlink(md_path);
    assert_int_equal(vfdswmr_mdw_open(&o, &w, err, sizeof err), 0);
    assert_int_equal(vfdswmr_mdw_link(w, false, err, sizeof err), 0);
    assert_int_equal(vfdswmr_mdw_close(w, true, err, sizeof err), 0); /* "crash" at tick 0 */
    assert_int_equal(run(false, 999, &rep, err, sizeof err), 0);
    assert_int_equal(rep.pages, 0);
    int fd = open(md_path, O_RDONLY);
    vfdswmr_mdhdr_t h;
    assert_true(fd >= 0);
    assert_int_equal(vfdswmr_mdr_read_header(fd, &h), VFDSWMR_MD_OK);
    close(fd);
    assert_true(h.tick == MAX_LAG - 1 && h.hdf5_id == 999); /* republished, naming the file */
    assert_int_equal(run(false, 999, &rep, err, sizeof err), 0);
    assert_int_equal(run(false, 998, &rep, err, sizeof err), -1); /* it names inode 999 now */
    assert_non_null(strstr(err, "belongs to another HDF5 file (inode 999, but"));
    expect_untouched();
}

static void
test_killed_recovery_finished_by_next(void **state)
{
    vfdswmr_recover_report_t rep;
    char err[512];
    size_t len;
    uint8_t *f;
    int status;
    pid_t pid;

    (void)state;
#ifndef VFDSWMR_INVARIANTS
    skip(); /* the kill hook exists in invariant builds only (common/recover.h) */
#endif
    make_model();
    write_session(0, 0);
    if ((pid = fork()) == 0) {
        setenv("VFDSWMR_TEST_KILL_AT", "recover:1", 1);
        run(false, 0, &rep, err, sizeof err);
        _exit(0); /* not reached: killed after the first page */
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    f = slurp(h5_path, &len);
    assert_int_equal(f[2 * PS], 0xAA); /* page 2 written ... */
    assert_int_equal(f[5 * PS], 105);  /* ... page 5 not yet */
    free(f);
    assert_int_equal(run(false, 0, &rep, err, sizeof err), 0);
    expect_recovered();
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_ranges_and_raw_kept),        cmocka_unit_test(test_foreign_refused),
        cmocka_unit_test(test_predict_is_the_recovery),          cmocka_unit_test(test_shorter_file_refused),
        cmocka_unit_test(test_damaged_image_writes_nothing),     cmocka_unit_test(test_final_needs_nothing),
        cmocka_unit_test(test_final_over_sealed_refused),        cmocka_unit_test(test_large_pages_in_pieces),
        cmocka_unit_test(test_crafted_huge_entries_bounded),     cmocka_unit_test(test_tick0_recovered_twice),
        cmocka_unit_test(test_killed_recovery_finished_by_next), cmocka_unit_test(test_other_session_recorded_refused),
    };
    if (testdir_setup(NULL) < 0)
        return 1;
    snprintf(md_path, sizeof md_path, "%s/f.h5.md", dir);
    snprintf(h5_path, sizeof h5_path, "%s/f.h5", dir);
    int rc = cmocka_run_group_tests(tests, NULL, testdir_teardown);
    return rc;
}
