/*
 * mdfile/mdidx_file.c: an index read in place. It accepts exactly the
 * images vfdswmr_mdidx_decode accepts and refuses the others with the same
 * error (valid indexes of many sizes, and tens of thousands of damaged
 * ones: bytes changed with the checksum made right again, so the
 * structural checks are reached, and without); what it returns entry by
 * entry, range by range and by page search is what the decoder returns;
 * an index that lies past the file's end, one longer than any reader
 * accepts and one that lies partly in a hole are refused before they are
 * read or hashed.
 * Indexes span many of its 64 KiB windows.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "checksum.h"
#include "format.h"
#include "le.h"
#include "mdidx_file.h"
#include "mdreader.h"
#include "testdir.h"

#define PS     4096u
#define OFFSET 4096u /* where the index image sits in the file */

static uint64_t rng = 88172645463325252ull;

static uint64_t
rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* A valid index of n entries (1- to 3-page images, gaps, 0 to 4 ranges
 * each), encoded: its image (malloc'd) and length. */
static uint8_t *
make_index(uint32_t n, size_t *len)
{
    vfdswmr_mdidx_t idx = {.session = rnd(), .tick = rnd() % 1000, .nentries = n};
    uint64_t page = rnd() % 4;
    uint8_t *img;

    idx.entries = calloc(n ? n : 1, sizeof *idx.entries);
    idx.ranges = calloc(n ? 4 * (size_t)n : 1, sizeof *idx.ranges);
    assert_non_null(idx.entries);
    assert_non_null(idx.ranges);
    for (uint32_t i = 0; i < n; i++) {
        vfdswmr_mdentry_t *e = &idx.entries[i];
        uint32_t pages = 1 + rnd() % 3, off = 0;
        e->hdf5_page = page;
        e->md_page = 1 + rnd() % 100000;
        e->length = (pages - 1) * PS + 1 + rnd() % PS;
        e->checksum = (uint32_t)rnd();
        e->range_first = idx.nranges;
        e->nranges = rnd() % 5;
        for (uint32_t k = 0; k < e->nranges; k++) {
            uint32_t room = e->length - off, gap, l;
            if (room < 2) {
                e->nranges = k;
                break;
            }
            gap = rnd() % (room / 2);
            l = 1 + rnd() % (room - gap - 1 > 0 ? room - gap - 1 : 1);
            idx.ranges[idx.nranges++] = (vfdswmr_mdrange_t){off + gap, l};
            off += gap + l;
        }
        page += pages + rnd() % 3;
    }
    *len = vfdswmr_mdidx_size(idx.nentries, idx.nranges);
    img = malloc(*len);
    assert_non_null(img);
    vfdswmr_mdidx_encode(&idx, img);
    free(idx.entries);
    free(idx.ranges);
    return img;
}

static void
reseal(uint8_t *img, size_t len)
{
    vfdswmr_le32_encode(img + len - 4, vfdswmr_checksum(img, len - 4));
}

/* The image in a file at OFFSET (fd open), and its header's place fields. */
static int
put_file(const uint8_t *img, size_t len, vfdswmr_mdhdr_t *h)
{
    char path[sizeof dir + 16];
    int fd;

    snprintf(path, sizeof path, "%s/idx", dir);
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(vfdswmr_pwrite_all(fd, img, len, OFFSET), 0);
    *h = (vfdswmr_mdhdr_t){.page_size = PS, .index_offset = OFFSET, .index_length = len};
    return fd;
}

/* In place and in memory: the same verdict; when valid, the same content. */
static vfdswmr_mderr_t
agree(const uint8_t *img, size_t len)
{
    vfdswmr_mdidx_t idx;
    vfdswmr_mdidx_file_t f;
    vfdswmr_mdhdr_t h;
    vfdswmr_mderr_t mem = vfdswmr_mdidx_decode(img, len, PS, &idx);
    int fd = put_file(img, len, &h);
    vfdswmr_mderr_t file = vfdswmr_mdidx_file_open(&f, fd, &h);

    assert_int_equal(file, mem);
    if (mem == VFDSWMR_MD_OK) {
        assert_int_equal(f.head.session, idx.session);
        assert_int_equal(f.head.tick, idx.tick);
        assert_int_equal(f.head.nentries, idx.nentries);
        assert_int_equal(f.head.nranges, idx.nranges);
        for (uint32_t i = 0; i < idx.nentries; i++) {
            vfdswmr_mdentry_t e;
            assert_int_equal(vfdswmr_mdidx_file_entry(&f, i, &e), 0);
            assert_memory_equal(&e, &idx.entries[i], sizeof e);
            for (uint32_t k = 0; k < e.nranges; k++) {
                vfdswmr_mdrange_t r;
                assert_int_equal(vfdswmr_mdidx_file_range(&f, &e, k, &r), 0);
                assert_memory_equal(&r, &idx.ranges[e.range_first + k], sizeof r);
            }
        }
        /* the search: pages around every entry's first and last, and below the first */
        for (uint32_t i = 0; i <= idx.nentries; i++) {
            const vfdswmr_mdentry_t *x = i < idx.nentries ? &idx.entries[i] : NULL;
            uint64_t first = x ? x->hdf5_page : 0, end = x ? first + vfdswmr_pages(x->length, PS) : 0;
            uint64_t probes[] = {first - 1, first, end - 1, end, end + 1};
            for (size_t j = 0; j < sizeof probes / sizeof probes[0]; j++) {
                const vfdswmr_mdentry_t *m = vfdswmr_mdidx_find(&idx, PS, probes[j]);
                vfdswmr_mdentry_t e;
                int found = vfdswmr_mdidx_file_find(&f, probes[j], &e);
                assert_int_equal(found, m != NULL);
                if (m)
                    assert_memory_equal(&e, m, sizeof e);
            }
        }
        vfdswmr_mdidx_free(&idx);
    }
    vfdswmr_mdidx_file_close(&f);
    close(fd);
    return mem;
}

/* Is this run under valgrind (make check-valgrind sets VFDSWMR_VALGRIND)?
 * There every pread costs some 50 us: the largest cases are left to the
 * other builds, since memory errors show in the smaller ones as well. */
static bool
under_valgrind(void)
{
    const char *vg = getenv("VFDSWMR_VALGRIND");
    return vg != NULL && *vg != '\0';
}

/* Indexes of many sizes, each read in place entry by entry and searched
 * around every entry (40,000 entries: 4.5 minutes under valgrind, so the
 * largest there is 5,000). */
static void
test_valid_indexes(void **state)
{
    static const uint32_t sizes[] = {0, 1, 2, 7, 100, 2047, 2048, 2049, 5000, 40000};
    size_t nsizes = sizeof sizes / sizeof sizes[0] - (under_valgrind() ? 1 : 0);

    (void)state;
    for (size_t s = 0; s < nsizes; s++) {
        size_t len;
        uint8_t *img = make_index(sizes[s], &len);
        assert_int_equal(agree(img, len), VFDSWMR_MD_OK);
        free(img);
    }
}

/* Where the in-place reader says an entry or range is at fault (bad_entry,
 * bad_at: vfd_swmr_inspect reports it), it read the changed bytes at `at`
 * already: the walk goes in order, so it cannot stop before them. */
static void
stops_at_or_after(const uint8_t *img, size_t len, size_t at)
{
    vfdswmr_mdidx_file_t f;
    vfdswmr_mdhdr_t h;
    int fd = put_file(img, len, &h);

    if (vfdswmr_mdidx_file_open(&f, fd, &h) != VFDSWMR_MD_OK && f.bad_entry != UINT32_MAX) {
        assert_true(f.bad_entry < f.head.nentries);
        assert_true(at < f.bad_at + VFDSWMR_MDIDX_ENTRY);
    }
    else
        assert_int_equal(f.bad_entry, UINT32_MAX);
    vfdswmr_mdidx_file_close(&f);
    close(fd);
}

/* Bytes changed, resealed (structural checks) or not (checksum): the same
 * verdict every time; and both ways see damage somewhere. 400 indexes, 20
 * damages each (under valgrind 50: the 400 take a minute there). */
static void
test_damaged_indexes_agree(void **state)
{
    unsigned refused = 0, trials = 0, indexes = under_valgrind() ? 50 : 400;

    (void)state;
    for (unsigned t = 0; t < indexes; t++) {
        size_t len;
        uint8_t *img = make_index(1 + rnd() % 300, &len);
        for (unsigned j = 0; j < 20; j++, trials++) {
            uint8_t *m = malloc(len);
            size_t at = rnd() % (len - 4), count = 1 + rnd() % 3;
            memcpy(m, img, len);
            for (size_t c = 0; c < count && at + c < len - 4; c++)
                m[at + c] ^= (uint8_t)(1 + rnd() % 255);
            if (rnd() % 8)
                reseal(m, len);
            refused += agree(m, len) != VFDSWMR_MD_OK;
            stops_at_or_after(m, len, at);
            free(m);
        }
        free(img);
    }
    /* most changes break a check; a few (a checksum or an md_page) do not */
    assert_true(refused > trials / 2);
}

/* A length the counts do not explain, or one too short, and an image past
 * the file's end (refused before it is read). */
static void
test_lengths_and_bounds(void **state)
{
    size_t len;
    uint8_t *img = make_index(10, &len);
    vfdswmr_mdidx_file_t f;
    vfdswmr_mdhdr_t h;
    int fd;

    (void)state;
    assert_int_equal(agree(img, len - 8), VFDSWMR_MD_ECHECKSUM); /* shorter: checksum in the wrong place */
    vfdswmr_le32_encode(img + 20, 11);                           /* 11 entries stated */
    reseal(img, len);
    assert_int_not_equal(agree(img, len), VFDSWMR_MD_OK);
    fd = put_file(img, len, &h);
    h.index_length = len + 4096; /* past the end of the file */
    assert_int_equal(vfdswmr_mdidx_file_open(&f, fd, &h), VFDSWMR_MD_EBOUNDS);
    vfdswmr_mdidx_file_close(&f);
    close(fd);
    free(img);
}

/* Does this file system report holes (lseek SEEK_HOLE)? */
static bool
holes_reported(void)
{
    char path[sizeof dir + 16];
    int fd;
    off_t h;

    snprintf(path, sizeof path, "%s/probe", dir);
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(vfdswmr_pwrite_all(fd, "x", 1, 1 << 20), 0);
    h = lseek(fd, 0, SEEK_HOLE);
    close(fd);
    unlink(path);
    return h == 0;
}

/* An index longer than any reader accepts is refused unread; one that
 * lies partly in a hole of the file (never written: a crafted sparse file)
 * is refused before its stated bytes are hashed. */
static void
test_absurd_and_holes(void **state)
{
    size_t len;
    uint8_t *img = make_index(2000, &len); /* 64 KiB and more */
    vfdswmr_mdidx_file_t f;
    vfdswmr_mdhdr_t h;
    int fd;

    (void)state;
    fd = put_file(img, len, &h);
    h.index_length = VFDSWMR_MDIDX_MAX_LEN + 8;
    assert_int_equal(vfdswmr_mdidx_file_open(&f, fd, &h), VFDSWMR_MD_EBOUNDS);
    vfdswmr_mdidx_file_close(&f);
    /* the same image with its middle never written */
    assert_int_equal(ftruncate(fd, 0), 0);
    assert_int_equal(vfdswmr_pwrite_all(fd, img, 4096, OFFSET), 0);
    assert_int_equal(vfdswmr_pwrite_all(fd, img + len - 4096, 4096, OFFSET + len - 4096), 0);
    h.index_length = len;
    assert_int_equal(vfdswmr_mdidx_file_open(&f, fd, &h), holes_reported() ? VFDSWMR_MD_EBOUNDS : VFDSWMR_MD_ECHECKSUM);
    vfdswmr_mdidx_file_close(&f);
    close(fd);
    free(img);
}

/* The wrapped in-memory index answers as the decoded one. */
static void
test_wrap(void **state)
{
    size_t len;
    uint8_t *img = make_index(300, &len);
    vfdswmr_mdidx_t idx;
    vfdswmr_mdidx_file_t f;
    vfdswmr_mdentry_t e;

    (void)state;
    assert_int_equal(vfdswmr_mdidx_decode(img, len, PS, &idx), VFDSWMR_MD_OK);
    vfdswmr_mdidx_file_wrap(&f, &idx, PS);
    assert_int_equal(f.head.nentries, 300);
    assert_int_equal(vfdswmr_mdidx_file_entry(&f, 299, &e), 0);
    assert_memory_equal(&e, &idx.entries[299], sizeof e);
    assert_int_equal(vfdswmr_mdidx_file_find(&f, idx.entries[150].hdf5_page, &e), 1);
    assert_memory_equal(&e, &idx.entries[150], sizeof e);
    vfdswmr_mdidx_file_close(&f);
    vfdswmr_mdidx_free(&idx);
    free(img);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_indexes),
        cmocka_unit_test(test_damaged_indexes_agree),
        cmocka_unit_test(test_lengths_and_bounds),
        cmocka_unit_test(test_absurd_and_holes),
        cmocka_unit_test(test_wrap),
    };
    return cmocka_run_group_tests(tests, testdir_setup, testdir_teardown);
}
