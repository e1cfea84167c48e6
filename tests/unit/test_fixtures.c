/*
 * Every fixture in tests/fixtures/ (table in its README.md) against the load
 * protocol (metadata files) and the updater decoder: the valid files decode
 * to exactly what fixtures.h describes; a defect that a later read may not
 * show (torn or in-flight write) is retried and, when the next read is whole,
 * the load succeeds; otherwise the specific error comes back -- never data.
 * A defect that stays the same from one attempt to the next (the same
 * header bytes failing the same way) ends the load after the second
 * attempt, and an absurd index length is refused without reading it. The
 * header alone (the lag checks' read) follows the same retry policy.
 *
 * Usage: test_fixtures [DIR]   (DIR holds md/ and ud/, made by gen_fixtures;
 * default $VFDSWMR_FIXTURES, which make check sets)
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "clock.h"
#include "fixtures.h"
#include "format.h"
#include "mdreader.h"
#include "updater.h"

static const char *dir;

struct file {
    uint8_t *p;
    size_t len;
};

static struct file
load_file(const char *sub, const char *name)
{
    char path[4096];
    struct file f = {NULL, 0};
    FILE *fp;
    long n;

    snprintf(path, sizeof path, "%s/%s/%s", dir, sub, name);
    fp = fopen(path, "rb");
    if (fp == NULL)
        fail_msg("cannot open fixture %s", path);
    fseek(fp, 0, SEEK_END);
    n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    f.len = (size_t)n;
    f.p = malloc(f.len + 1);
    assert_non_null(f.p);
    assert_int_equal(fread(f.p, 1, f.len, fp), f.len);
    fclose(fp);
    return f;
}

/* An io that serves `bad` for the first `bad_attempts` load attempts (each
 * attempt starts with a read at offset 0), then `good`; with `alternate`,
 * bad and alt take turns. Counts the reads and the longest one asked for. */
struct seq_io {
    struct file bad, good, alt;
    unsigned bad_attempts, attempts;
    bool alternate;
    unsigned reads;
    size_t longest;
};

static ssize_t
seq_pread(void *ctx, void *buf, size_t len, uint64_t off)
{
    struct seq_io *s = ctx;
    const struct file *f;

    if (off == 0)
        s->attempts++;
    s->reads++;
    if (len > s->longest)
        s->longest = len;
    f = s->attempts <= s->bad_attempts ? &s->bad : &s->good;
    if (s->alternate && s->attempts % 2 == 0)
        f = &s->alt;
    if (off >= f->len)
        return 0;
    if (len > f->len - off)
        len = (size_t)(f->len - off);
    memcpy(buf, f->p + off, len);
    return (ssize_t)len;
}

static vfdswmr_mdr_opts_t
fast_opts(void)
{
    vfdswmr_mdr_opts_t o;
    vfdswmr_mdr_opts_default(&o);
    o.first_read = FX_RESERVED_PAGES * FX_PAGE_SIZE;
    o.max_attempts = 5;
    o.backoff_us = 10;
    o.backoff_max_us = 100;
    return o;
}

/* The snapshot is exactly the valid file's, and every image reads back. */
static void
check_valid_snapshot(const vfdswmr_mdr_io_t *io, const vfdswmr_mdsnap_t *s)
{
    uint8_t img[2048];

    assert_int_equal(s->hdr.page_size, FX_PAGE_SIZE);
    assert_true(s->hdr.session == FX_SESSION);
    assert_true(s->hdr.tick == FX_TICK && s->idx.tick == FX_TICK);
    assert_true(s->hdr.eoa == FX_EOA);
    assert_int_equal(s->hdr.flags, 0);
    assert_int_equal(s->hdr.tick_len, FX_TICK_LEN);
    assert_int_equal(s->hdr.max_lag, FX_MAX_LAG);
    assert_true(s->hdr.hdf5_id == FX_HDF5_ID && s->hdr.epoch == FX_EPOCH);
    assert_int_equal(s->idx.nentries, FX_NENTRIES);
    assert_int_equal(s->idx.nranges, FX_NRANGES);
    for (unsigned k = 0; k < FX_NRANGES; k++) {
        assert_int_equal(s->idx.ranges[k].offset, fx_ranges[k].offset);
        assert_int_equal(s->idx.ranges[k].length, fx_ranges[k].length);
    }
    for (unsigned k = 0, first = 0; k < FX_NENTRIES; k++) {
        const vfdswmr_mdentry_t *e = &s->idx.entries[k];
        assert_true(e->hdf5_page == fx_entries[k].hdf5_page && e->md_page == fx_entries[k].md_page);
        assert_int_equal(e->length, fx_entries[k].length);
        assert_int_equal(e->range_first, first);
        assert_int_equal(e->nranges, fx_entry_nranges[k]);
        first += fx_entry_nranges[k];
        assert_int_equal(vfdswmr_mdr_read_image(io, FX_PAGE_SIZE, e, img), VFDSWMR_MD_OK);
        for (uint32_t i = 0; i < e->length; i++)
            assert_int_equal(img[i], fx_byte(e->hdf5_page, i));
        /* lookups: every page of the entry finds it, the page after does not belong to it */
        for (uint64_t p = e->hdf5_page; p < e->hdf5_page + vfdswmr_pages(e->length, FX_PAGE_SIZE); p++)
            assert_ptr_equal(vfdswmr_mdidx_find(&s->idx, FX_PAGE_SIZE, p), e);
    }
    assert_null(vfdswmr_mdidx_find(&s->idx, FX_PAGE_SIZE, 1));
    assert_null(vfdswmr_mdidx_find(&s->idx, FX_PAGE_SIZE, 6));
    assert_null(vfdswmr_mdidx_find(&s->idx, FX_PAGE_SIZE, 11));
}

/* expected outcome of a metadata file fixture, from the README's table */
struct md_case {
    const char *name;
    vfdswmr_mderr_t err;
};

static const struct md_case md_cases[] = {
    {"hdr_torn_at_4.md", VFDSWMR_MD_ECHECKSUM},
    {"hdr_torn_at_6.md", VFDSWMR_MD_ECHECKSUM},
    {"hdr_torn_at_8.md", VFDSWMR_MD_ECHECKSUM},
    {"hdr_torn_at_12.md", VFDSWMR_MD_ECHECKSUM},
    {"hdr_torn_at_20.md", VFDSWMR_MD_ECHECKSUM},
    {"hdr_torn_at_28.md", VFDSWMR_MD_ECHECKSUM},
    {"hdr_torn_at_36.md", VFDSWMR_MD_ECHECKSUM},
    {"hdr_torn_at_44.md", VFDSWMR_MD_ECHECKSUM},
    {"hdr_torn_at_52.md", VFDSWMR_MD_ECHECKSUM},
    {"hdr_torn_at_56.md", VFDSWMR_MD_ECHECKSUM},
    {"hdr_torn_at_60.md", VFDSWMR_MD_ECHECKSUM},
    {"hdr_torn_at_68.md", VFDSWMR_MD_ECHECKSUM},
    {"hdr_torn_at_76.md", VFDSWMR_MD_ECHECKSUM},
    {"hdr_checksum.md", VFDSWMR_MD_ECHECKSUM},
    {"idx_checksum.md", VFDSWMR_MD_ECHECKSUM},
    {"tick_ahead.md", VFDSWMR_MD_ETICK_AHEAD},
    {"tick_mismatch.md", VFDSWMR_MD_ETICK},
    {"session_mismatch.md", VFDSWMR_MD_ESESSION},
    {"idx_beyond_eof.md", VFDSWMR_MD_EBOUNDS},
    {"idx_absurd_length.md", VFDSWMR_MD_EBOUNDS},
    {"idx_huge_claim.md", VFDSWMR_MD_EBOUNDS},
    {"idx_offset_unaligned.md", VFDSWMR_MD_EBOUNDS},
    {"idx_offset_in_header.md", VFDSWMR_MD_EBOUNDS},
    {"flags_unknown.md", VFDSWMR_MD_ERESERVED},
    {"flags_final_failed.md", VFDSWMR_MD_EFLAGS},
    {"max_lag_too_small.md", VFDSWMR_MD_EFIELD},
    {"count_overflow.md", VFDSWMR_MD_ECOUNT},
    {"range_count_overflow.md", VFDSWMR_MD_ECOUNT},
    {"unsorted.md", VFDSWMR_MD_EUNSORTED},
    {"overlap.md", VFDSWMR_MD_EOVERLAP},
    {"entry_zero_length.md", VFDSWMR_MD_EENTRY},
    {"entry_in_page0.md", VFDSWMR_MD_EENTRY},
    {"entry_offset_overflow.md", VFDSWMR_MD_EENTRY},
    {"range_first_wrong.md", VFDSWMR_MD_ERANGE},
    {"range_count_mismatch.md", VFDSWMR_MD_ERANGE},
    {"range_past_image.md", VFDSWMR_MD_ERANGE},
    {"range_empty.md", VFDSWMR_MD_ERANGE},
    {"ranges_unsorted.md", VFDSWMR_MD_ERANGE},
    {"wrong_magic.md", VFDSWMR_MD_EMAGIC},
    {"idx_wrong_magic.md", VFDSWMR_MD_EMAGIC},
    {"wrong_version.md", VFDSWMR_MD_EVERSION},
    {"v1_file.md", VFDSWMR_MD_EVERSION},
    {"v2_file.md", VFDSWMR_MD_EVERSION},
    {"page_size_zero.md", VFDSWMR_MD_EPAGESIZE},
    {"page_size_not_pow2.md", VFDSWMR_MD_EPAGESIZE},
    {"empty.md", VFDSWMR_MD_ESHORT},
    {"truncated_header.md", VFDSWMR_MD_ESHORT},
    {"truncated_index.md", VFDSWMR_MD_EBOUNDS},
};

static void
test_md_valid(void **state)
{
    struct seq_io s = {.bad_attempts = 0};
    vfdswmr_mdr_io_t io = {seq_pread, &s};
    vfdswmr_mdr_opts_t o = fast_opts();
    vfdswmr_mdsnap_t snap;
    char why[256];

    (void)state;
    for (const char *const *n = (const char *const[]){"valid.md", "valid_slot1.md", "valid_reloc.md", NULL}; *n; n++) {
        s.good = load_file("md", *n);
        s.attempts = 0;
        assert_int_equal(vfdswmr_mdr_load(&io, &o, &snap, why, sizeof why), VFDSWMR_MD_OK);
        assert_string_equal(why, "");
        assert_int_equal(snap.attempts, 1);
        check_valid_snapshot(&io, &snap);
        vfdswmr_mdsnap_free(&snap);
        /* a reader that expects another session refuses the file */
        o.session = FX_SESSION + 1;
        assert_int_equal(vfdswmr_mdr_load(&io, &o, &snap, why, sizeof why), VFDSWMR_MD_ESESSION);
        assert_null(snap.idx.entries);
        o.session = FX_SESSION;
        assert_int_equal(vfdswmr_mdr_load(&io, &o, &snap, why, sizeof why), VFDSWMR_MD_OK);
        vfdswmr_mdsnap_free(&snap);
        o.session = 0;
        free(s.good.p);
    }
}

/* Served forever, each defective file gives its specific error: at once
 * when retrying cannot help, else after the second attempt, which read the
 * same header and failed the same way. */
static void
test_md_defects_persistent(void **state)
{
    vfdswmr_mdr_opts_t o = fast_opts();
    char why[256];

    (void)state;
    for (size_t i = 0; i < sizeof md_cases / sizeof md_cases[0]; i++) {
        struct seq_io s = {.bad_attempts = ~0u};
        vfdswmr_mdr_io_t io = {seq_pread, &s};
        vfdswmr_mdsnap_t snap;
        vfdswmr_mderr_t err;

        s.bad = load_file("md", md_cases[i].name);
        err = vfdswmr_mdr_load(&io, &o, &snap, why, sizeof why);
        if (err != md_cases[i].err)
            fail_msg("%s: got \"%s\" (%d), expected \"%s\" (%d)", md_cases[i].name, vfdswmr_mderr_str(err), err,
                     vfdswmr_mderr_str(md_cases[i].err), md_cases[i].err);
        assert_null(snap.idx.entries);
        assert_null(snap.idx.ranges);
        assert_int_equal(snap.attempts, vfdswmr_mderr_retryable(err) ? 2 : 1);
        assert_true(snap.permanent);
        assert_non_null(strstr(why, vfdswmr_mderr_str(err)));
        free(s.bad.p);
    }
}

/* The same defects, seen once: retryable ones give way to the whole file on
 * the next attempt; the others still fail at once. */
static void
test_md_defects_transient(void **state)
{
    vfdswmr_mdr_opts_t o = fast_opts();
    struct file good = load_file("md", "valid.md");
    char why[256];

    (void)state;
    for (size_t i = 0; i < sizeof md_cases / sizeof md_cases[0]; i++) {
        struct seq_io s = {.bad_attempts = 1, .good = good};
        vfdswmr_mdr_io_t io = {seq_pread, &s};
        vfdswmr_mdsnap_t snap;
        vfdswmr_mderr_t err;

        s.bad = load_file("md", md_cases[i].name);
        err = vfdswmr_mdr_load(&io, &o, &snap, why, sizeof why);
        if (vfdswmr_mderr_retryable(md_cases[i].err)) {
            if (err != VFDSWMR_MD_OK)
                fail_msg("%s: a whole second read should succeed, got %s", md_cases[i].name, why);
            assert_int_equal(snap.attempts, 2);
            check_valid_snapshot(&io, &snap);
            vfdswmr_mdsnap_free(&snap);
        }
        else
            assert_int_equal(err, md_cases[i].err);
        free(s.bad.p);
    }
    free(good.p);
}

/* A retryable defect whose header changes from one attempt to the next
 * (two different torn headers, in turns) is retried to the last attempt. */
static void
test_md_defects_changing(void **state)
{
    vfdswmr_mdr_opts_t o = fast_opts();
    struct seq_io s = {.bad_attempts = ~0u, .alternate = true};
    vfdswmr_mdr_io_t io = {seq_pread, &s};
    vfdswmr_mdsnap_t snap;
    char why[256];

    (void)state;
    s.bad = load_file("md", "hdr_torn_at_28.md");
    s.alt = load_file("md", "hdr_checksum.md");
    assert_int_equal(vfdswmr_mdr_load(&io, &o, &snap, why, sizeof why), VFDSWMR_MD_ECHECKSUM);
    assert_int_equal(snap.attempts, o.max_attempts);
    assert_false(snap.permanent);
    assert_string_equal(why, "header: checksum mismatch (torn write or damage), after 5 attempts");
    free(s.bad.p);
    free(s.alt.p);
    /* the same header failing in two ways is not permanent either: here
     * the index is torn once, then whole but of another session */
    s = (struct seq_io){.bad_attempts = ~0u, .alternate = true};
    s.bad = load_file("md", "idx_checksum.md");
    s.alt = load_file("md", "session_mismatch.md");
    assert_int_equal(vfdswmr_mdr_load(&io, &o, &snap, why, sizeof why), VFDSWMR_MD_ECHECKSUM);
    assert_int_equal(snap.attempts, o.max_attempts);
    assert_string_equal(why, "index: checksum mismatch (torn write or damage), after 5 attempts");
    assert_false(snap.permanent);
    free(s.bad.p);
    free(s.alt.p);
}

/*
 * A header claiming a huge index (512 MiB, or 64 GiB) in a small file fails
 * fast: two attempts, and no read longer than the first read of the header
 * page (the index would be read whole, into memory allocated for it, only
 * after a 1-byte read found its last byte inside the file). Counted, not
 * timed.
 */
static void
test_md_huge_index_claim(void **state)
{
    vfdswmr_mdr_opts_t o = fast_opts();
    vfdswmr_mdsnap_t snap;
    char why[256];

    (void)state;
    o.max_attempts = 40;
    for (const char *const *n = (const char *const[]){"idx_huge_claim.md", "idx_absurd_length.md", NULL}; *n; n++) {
        struct seq_io s = {.bad_attempts = ~0u};
        vfdswmr_mdr_io_t io = {seq_pread, &s};
        s.bad = load_file("md", *n);
        assert_int_equal(vfdswmr_mdr_load(&io, &o, &snap, why, sizeof why), VFDSWMR_MD_EBOUNDS);
        assert_int_equal(snap.attempts, 2);
        assert_true(snap.permanent);
        assert_null(snap.idx.entries);
        assert_int_equal(s.longest, o.first_read);
        /* per attempt: the header page, and for the 512 MiB claim one 1-byte probe */
        assert_int_equal(s.reads, strcmp(*n, "idx_huge_claim.md") == 0 ? 4 : 2);
        assert_string_equal(why, "index: an offset or length lies outside the file, or is absurd, after 2 attempts");
        free(s.bad.p);
    }
}

static void
test_md_page_checksum(void **state)
{
    struct seq_io s = {.bad_attempts = 0};
    vfdswmr_mdr_io_t io = {seq_pread, &s};
    vfdswmr_mdr_opts_t o = fast_opts();
    vfdswmr_mdsnap_t snap;
    uint8_t img[2048];

    (void)state;
    s.good = load_file("md", "page_checksum.md");
    assert_int_equal(vfdswmr_mdr_load(&io, &o, &snap, NULL, 0), VFDSWMR_MD_OK);
    /* the damaged byte is in the image of entry 1 only */
    assert_int_equal(vfdswmr_mdr_read_image(&io, FX_PAGE_SIZE, &snap.idx.entries[0], img), VFDSWMR_MD_OK);
    assert_int_equal(vfdswmr_mdr_read_image(&io, FX_PAGE_SIZE, &snap.idx.entries[1], img), VFDSWMR_MD_ECHECKSUM);
    assert_int_equal(vfdswmr_mdr_read_image(&io, FX_PAGE_SIZE, &snap.idx.entries[2], img), VFDSWMR_MD_OK);
    /* an image past the end of the file */
    s.good.len = 3 * FX_PAGE_SIZE + 10;
    assert_int_equal(vfdswmr_mdr_read_image(&io, FX_PAGE_SIZE, &snap.idx.entries[1], img), VFDSWMR_MD_ESHORT);
    vfdswmr_mdsnap_free(&snap);
    free(s.good.p);
}

/* ---- updater files -------------------------------------------------------- */

struct ud_case {
    const char *name;
    vfdswmr_mderr_t err;
};

static const struct ud_case ud_cases[] = {
    {"hdr_checksum.ud", VFDSWMR_MD_ECHECKSUM},      {"cl_checksum.ud", VFDSWMR_MD_ECHECKSUM},
    {"image_checksum.ud", VFDSWMR_MD_ECHECKSUM},    {"embedded_index_checksum.ud", VFDSWMR_MD_ECHECKSUM},
    {"embedded_header_tick.ud", VFDSWMR_MD_ETICK},  {"wrong_magic.ud", VFDSWMR_MD_EMAGIC},
    {"cl_wrong_magic.ud", VFDSWMR_MD_EMAGIC},       {"wrong_version.ud", VFDSWMR_MD_EVERSION},
    {"v1_version.ud", VFDSWMR_MD_EVERSION},         {"cl_hdr_len_v1.ud", VFDSWMR_MD_ELENGTH},
    {"embedded_range_empty.ud", VFDSWMR_MD_ERANGE}, {"page_size_zero.ud", VFDSWMR_MD_EPAGESIZE},
    {"unknown_flag.ud", VFDSWMR_MD_ERESERVED},      {"create_only_with_changes.ud", VFDSWMR_MD_EFLAGS},
    {"session_mismatch.ud", VFDSWMR_MD_ESESSION},   {"cl_length_beyond_eof.ud", VFDSWMR_MD_EBOUNDS},
    {"cl_count_overflow.ud", VFDSWMR_MD_ECOUNT},    {"cl_unsorted.ud", VFDSWMR_MD_EUNSORTED},
    {"cl_image_beyond_eof.ud", VFDSWMR_MD_EBOUNDS}, {"empty.ud", VFDSWMR_MD_ESHORT},
    {"truncated_header.ud", VFDSWMR_MD_ESHORT},     {"truncated_half.ud", VFDSWMR_MD_EBOUNDS},
    {"truncated_last_byte.ud", VFDSWMR_MD_EBOUNDS},
};

static void
test_ud_valid(void **state)
{
    struct file f = load_file("ud", "valid.ud"), md = load_file("md", "valid.md");
    vfdswmr_updater_t u;

    (void)state;
    assert_int_equal(vfdswmr_updater_decode(f.p, f.len, &u), VFDSWMR_MD_OK);
    assert_int_equal(u.hdr.flags, 0);
    assert_true(u.hdr.sequence == FX_UD_SEQUENCE && u.hdr.tick == FX_TICK && u.hdr.session == FX_SESSION);
    assert_int_equal(u.plan.nimages, FX_NENTRIES);
    for (unsigned k = 0; k < FX_NENTRIES; k++) {
        const vfdswmr_mdimage_t *im = &u.plan.images[k];
        assert_true(im->md_page == fx_entries[k].md_page && im->hdf5_page == fx_entries[k].hdf5_page);
        assert_int_equal(im->length, fx_entries[k].length);
        for (uint32_t i = 0; i < im->length; i++)
            assert_int_equal(((const uint8_t *)im->image)[i], fx_byte(im->hdf5_page, i));
    }
    /* the header and index images are those of the valid metadata file */
    assert_int_equal(u.plan.index_offset, VFDSWMR_MDHDR_SIZE);
    assert_memory_equal(u.plan.header_image, md.p, VFDSWMR_MDHDR_SIZE);
    assert_memory_equal(u.plan.index_image, md.p + VFDSWMR_MDHDR_SIZE, u.plan.index_len);
    vfdswmr_updater_free(&u);
    free(f.p);

    f = load_file("ud", "final.ud");
    assert_int_equal(vfdswmr_updater_decode(f.p, f.len, &u), VFDSWMR_MD_OK);
    assert_int_equal(u.hdr.flags, VFDSWMR_UD_FINAL);
    assert_int_equal(u.plan.nimages, FX_NENTRIES);
    vfdswmr_updater_free(&u);
    free(f.p);

    f = load_file("ud", "create_only.ud");
    assert_int_equal(vfdswmr_updater_decode(f.p, f.len, &u), VFDSWMR_MD_OK);
    assert_int_equal(u.hdr.flags, VFDSWMR_UD_CREATE_ONLY);
    assert_true(u.hdr.sequence == 0);
    assert_int_equal(u.plan.nimages, 0);
    vfdswmr_updater_free(&u);
    free(f.p);
    free(md.p);
}

static void
test_ud_defects(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof ud_cases / sizeof ud_cases[0]; i++) {
        struct file f = load_file("ud", ud_cases[i].name);
        vfdswmr_updater_t u;
        vfdswmr_mderr_t err = vfdswmr_updater_decode(f.p, f.len, &u);

        if (err != ud_cases[i].err)
            fail_msg("%s: got \"%s\" (%d), expected \"%s\" (%d)", ud_cases[i].name, vfdswmr_mderr_str(err), err,
                     vfdswmr_mderr_str(ud_cases[i].err), ud_cases[i].err);
        assert_null(u.images);
        free(f.p);
    }
}

/* The header alone (vfdswmr_mdr_read_header, the lag checks' read) follows
 * the load's retry policy: a whole header decodes whatever its index, a
 * defect in its own bytes comes back as the load reports it, and a defect
 * that stays the same ends the retries at the second attempt (not after
 * the default 40 attempts, about 1.5 s). */
static void
test_md_read_header(void **state)
{
    static const struct {
        const char *name;
        vfdswmr_mderr_t err;
    } cases[] = {
        {"valid.md", VFDSWMR_MD_OK},
        {"idx_checksum.md", VFDSWMR_MD_OK},
        {"tick_ahead.md", VFDSWMR_MD_OK},
        {"empty.md", VFDSWMR_MD_ESHORT},
        {"hdr_checksum.md", VFDSWMR_MD_ECHECKSUM},
        {"wrong_magic.md", VFDSWMR_MD_EMAGIC},
        {"page_size_zero.md", VFDSWMR_MD_EPAGESIZE},
    };

    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[4096];
        vfdswmr_mdhdr_t h;
        vfdswmr_mderr_t err;
        double t0;
        int fd;

        snprintf(path, sizeof path, "%s/md/%s", dir, cases[i].name);
        assert_true((fd = open(path, O_RDONLY)) >= 0);
        t0 = vfdswmr_now();
        err = vfdswmr_mdr_read_header(fd, &h);
        close(fd);
        if (err != cases[i].err)
            fail_msg("%s: got \"%s\", expected \"%s\"", cases[i].name, vfdswmr_mderr_str(err),
                     vfdswmr_mderr_str(cases[i].err));
        if (err == VFDSWMR_MD_OK) {
            assert_true(h.session == FX_SESSION && h.tick >= FX_TICK);
            continue;
        }
        assert_true(h.session == 0 && h.tick == 0 && h.page_size == 0 && h.index_length == 0);
        assert_true(vfdswmr_now() - t0 < 1.0);
    }
}

int
main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_md_valid),
        cmocka_unit_test(test_md_defects_persistent),
        cmocka_unit_test(test_md_defects_transient),
        cmocka_unit_test(test_md_defects_changing),
        cmocka_unit_test(test_md_huge_index_claim),
        cmocka_unit_test(test_md_page_checksum),
        cmocka_unit_test(test_md_read_header),
        cmocka_unit_test(test_ud_valid),
        cmocka_unit_test(test_ud_defects),
    };

    dir = argc > 1 ? argv[1] : getenv("VFDSWMR_FIXTURES");
    if (dir == NULL) {
        fprintf(stderr, "usage: test_fixtures DIR (or set VFDSWMR_FIXTURES)\n");
        return 2;
    }
    return cmocka_run_group_tests(tests, NULL, NULL);
}
