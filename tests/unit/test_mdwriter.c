/*
 * The publish protocol (mdwriter) against the load protocol (mdreader), on
 * real files: what a writer publishes is what a reader loads, superseded
 * images survive max_lag ticks, the index relocates and comes back, space is
 * recycled so the file stays bounded, updater files replay into an identical
 * metadata file, and a reader running concurrently with a busy writer never
 * accepts an inconsistent snapshot. Format version 2: header fields and
 * FINAL, metadata ranges, the two index slots (the index the previous header
 * named survives the next publish; a writer killed before the header leaves
 * the previous snapshot whole), FAILED, and the error contract.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checksum.h"
#include "io.h"
#include "mdreader.h"
#include "mdwriter.h"
#include "plan.h"
#include "updater.h"

#define PS 512u

static char dir[] = "/tmp/vfdswmr-mdw.XXXXXX";
static char md_path[256], ud_base[256];

/* Image of HDF5 page p as written at tick t: every byte derives from both. */
static void
fill(uint8_t *img, uint32_t len, uint64_t p, uint64_t t)
{
    for (uint32_t i = 0; i < len; i++)
        img[i] = (uint8_t)(p * 13u + t * 101u + i * 7u);
}

static vfdswmr_mdw_opts_t
opts(uint32_t reserved, bool md, bool ud)
{
    return (vfdswmr_mdw_opts_t){.page_size = PS,
                                .reserved_pages = reserved,
                                .max_lag = 4,
                                .md_path = md ? md_path : NULL,
                                .ud_base = ud ? ud_base : NULL};
}

static int
setup(void **state)
{
    (void)state;
    snprintf(md_path, sizeof md_path, "%s/f.h5.md", dir);
    snprintf(ud_base, sizeof ud_base, "%s/f.h5.ud", dir);
    return 0;
}

static int
teardown(void **state)
{
    char cmd[300];
    (void)state;
    snprintf(cmd, sizeof cmd, "rm -f %s/*", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Load the metadata file at `path` into *s. */
static vfdswmr_mderr_t
load(const char *path, vfdswmr_mdsnap_t *s)
{
    int fd = open(path, O_RDONLY);
    vfdswmr_mdr_io_t io = vfdswmr_mdr_fd_io(&fd);
    vfdswmr_mdr_opts_t o;
    vfdswmr_mderr_t err;
    char why[256];

    assert_true(fd >= 0);
    vfdswmr_mdr_opts_default(&o);
    o.max_attempts = 3;
    err = vfdswmr_mdr_load(&io, &o, s, why, sizeof why);
    close(fd);
    return err;
}

/* Every entry of the snapshot must hold the image of its page as written at
 * the tick recorded in ticks[page]. */
static void
check_images(const char *path, const vfdswmr_mdsnap_t *s, const uint64_t *ticks)
{
    int fd = open(path, O_RDONLY);
    vfdswmr_mdr_io_t io = vfdswmr_mdr_fd_io(&fd);
    uint8_t got[4 * PS], want[4 * PS];

    for (uint32_t k = 0; k < s->idx.nentries; k++) {
        const vfdswmr_mdentry_t *e = &s->idx.entries[k];
        assert_true(e->length <= sizeof got);
        assert_int_equal(vfdswmr_mdr_read_image(&io, PS, e, got), VFDSWMR_MD_OK);
        fill(want, e->length, e->hdf5_page, ticks[e->hdf5_page]);
        assert_memory_equal(got, want, e->length);
        /* verified in pieces (recovery's bounded memory): the same answer,
         * for piece sizes that do and do not divide the length */
        uint8_t piece[PS + 1];
        for (size_t n = 1; n <= sizeof piece; n += n < 64 ? 13 : PS / 2)
            assert_int_equal(vfdswmr_mdr_verify_image(&io, PS, e, piece, n), VFDSWMR_MD_OK);
        vfdswmr_mdentry_t bad = *e;
        bad.checksum ^= 1;
        assert_int_equal(vfdswmr_mdr_verify_image(&io, PS, &bad, piece, 100), VFDSWMR_MD_ECHECKSUM);
        bad = *e;
        bad.md_page = 1u << 30; /* past the file's end */
        assert_int_equal(vfdswmr_mdr_verify_image(&io, PS, &bad, piece, 100), VFDSWMR_MD_ESHORT);
    }
    close(fd);
}

static void
test_open_publish_load(void **state)
{
    vfdswmr_mdw_opts_t o = opts(2, true, false);
    vfdswmr_mdw_t *w, *w2;
    vfdswmr_mdsnap_t s;
    uint8_t a[PS], b[3 * PS - 100];
    uint64_t ticks[16] = {0};
    char err[512];

    (void)state;
    assert_int_equal(vfdswmr_mdw_open(&o, &w, err, sizeof err), 0);
    /* tick 0: empty index, readable at once */
    assert_int_equal(load(md_path, &s), VFDSWMR_MD_OK);
    assert_true(s.hdr.tick == 0 && s.idx.nentries == 0 && s.hdr.session == vfdswmr_mdw_session(w));
    vfdswmr_mdsnap_free(&s);
    /* a second writer is refused, and the file is left alone */
    assert_int_equal(vfdswmr_mdw_open(&o, &w2, err, sizeof err), -1);
    assert_non_null(strstr(err, "already exists: another writer has just opened this file"));
    assert_int_equal(load(md_path, &s), VFDSWMR_MD_OK);
    assert_true(s.hdr.session == vfdswmr_mdw_session(w));
    vfdswmr_mdsnap_free(&s);

    fill(a, sizeof a, 5, 1);
    fill(b, sizeof b, 1, 1);
    ticks[5] = ticks[1] = 1;
    vfdswmr_mdchange_t c[] = {{1, sizeof b, b, NULL, 0}, {5, sizeof a, a, NULL, 0}};
    assert_int_equal(vfdswmr_mdw_publish(w, 12345, c, 2, NULL, 0, 0, err, sizeof err), 0);
    assert_int_equal(load(md_path, &s), VFDSWMR_MD_OK);
    assert_true(s.hdr.tick == 1 && s.hdr.eoa == 12345);
    assert_int_equal(s.idx.nentries, 2);
    assert_true(s.idx.entries[0].hdf5_page == 1 && s.idx.entries[0].length == sizeof b);
    assert_true(s.idx.entries[1].hdf5_page == 5 && s.idx.entries[1].length == PS);
    check_images(md_path, &s, ticks);
    vfdswmr_mdsnap_free(&s);

    /* page 2 falls inside the multi-page entry at 1: it replaces it */
    fill(a, sizeof a, 2, 2);
    ticks[2] = 2;
    vfdswmr_mdchange_t c2[] = {{2, PS, a, NULL, 0}};
    uint64_t rm[] = {5, 9};
    assert_int_equal(vfdswmr_mdw_publish(w, 20000, c2, 1, rm, 2, 0, err, sizeof err), 0);
    assert_int_equal(load(md_path, &s), VFDSWMR_MD_OK);
    assert_true(s.hdr.tick == 2 && s.hdr.eoa == 20000);
    assert_int_equal(s.idx.nentries, 1);
    assert_true(s.idx.entries[0].hdf5_page == 2);
    check_images(md_path, &s, ticks);
    vfdswmr_mdsnap_free(&s);

    /* bad input is refused with a reason, nothing published */
    vfdswmr_mdchange_t bad[] = {{7, PS, a, NULL, 0}, {3, PS, a, NULL, 0}};
    assert_int_equal(vfdswmr_mdw_publish(w, 1, bad, 2, NULL, 0, 0, err, sizeof err), -1);
    assert_non_null(strstr(err, "not sorted"));
    assert_true(vfdswmr_mdw_tick(w) == 2);

    assert_int_equal(vfdswmr_mdw_close(w, false, err, sizeof err), 0);
    assert_int_equal(access(md_path, F_OK), -1);
}

/* A superseded image stays intact, at its old place, for max_lag ticks. */
static void
test_superseded_kept_max_lag(void **state)
{
    vfdswmr_mdw_opts_t o = opts(2, true, false);
    vfdswmr_mdw_t *w;
    vfdswmr_mdsnap_t old;
    uint8_t img[PS], other[PS];
    char err[512];

    (void)state;
    assert_int_equal(vfdswmr_mdw_open(&o, &w, err, sizeof err), 0);
    fill(img, PS, 3, 1);
    vfdswmr_mdchange_t c = {3, PS, img, NULL, 0};
    assert_int_equal(vfdswmr_mdw_publish(w, 0, &c, 1, NULL, 0, 0, err, sizeof err), 0);
    assert_int_equal(load(md_path, &old), VFDSWMR_MD_OK); /* a reader holds tick 1 */

    /* every later tick rewrites page 3 and page 4: the old image's space is
     * wanted, but must not be reused before tick 1 + max_lag */
    for (uint64_t t = 2; t < 40; t++) {
        fill(img, PS, 3, t);
        fill(other, PS, 4, t);
        vfdswmr_mdchange_t cc[] = {{3, PS, img, NULL, 0}, {4, PS, other, NULL, 0}};
        assert_int_equal(vfdswmr_mdw_publish(w, 0, cc, 2, NULL, 0, 0, err, sizeof err), 0);
        int fd = open(md_path, O_RDONLY);
        vfdswmr_mdr_io_t io = vfdswmr_mdr_fd_io(&fd);
        uint8_t got[PS], want[PS];
        vfdswmr_mderr_t e = vfdswmr_mdr_read_image(&io, PS, &old.idx.entries[0], got);
        close(fd);
        fill(want, PS, 3, 1);
        /* tick 1's index was superseded at tick 2; its image may go at tick 2 + max_lag */
        if (t < 2 + o.max_lag) {
            assert_int_equal(e, VFDSWMR_MD_OK);
            assert_memory_equal(got, want, PS);
        }
    }
    vfdswmr_mdsnap_free(&old);
    /* and space is reused eventually: 2 reserved + 2 live + 2 superseded per
     * tick for max_lag + 1 ticks, where no reuse would need 2 more per tick */
    assert_true(vfdswmr_mdw_file_pages(w) <= 2 + 2 + 2 * (o.max_lag + 1));
    assert_int_equal(vfdswmr_mdw_close(w, false, err, sizeof err), 0);
}

static void
test_index_relocation(void **state)
{
    vfdswmr_mdw_opts_t o = opts(1, true, false); /* slots of 216 bytes: room for 5 entries */
    vfdswmr_mdw_t *w;
    vfdswmr_mdsnap_t s;
    enum { N = 60 };
    static uint8_t imgs[N][PS];
    vfdswmr_mdchange_t c[N];
    uint64_t ticks[N] = {0}, rm[N];
    char err[512];

    (void)state;
    assert_int_equal(vfdswmr_mdw_open(&o, &w, err, sizeof err), 0);
    for (unsigned i = 0; i < N; i++) {
        fill(imgs[i], PS, i, 1);
        ticks[i] = 1;
        c[i] = (vfdswmr_mdchange_t){i, PS, imgs[i], NULL, 0};
    }
    assert_int_equal(vfdswmr_mdw_publish(w, 0, c, N, NULL, 0, 0, err, sizeof err), 0);
    assert_true(vfdswmr_mdw_index_relocated(w));
    assert_int_equal(load(md_path, &s), VFDSWMR_MD_OK);
    assert_int_equal(s.idx.nentries, N);
    assert_true(s.hdr.index_offset % PS == 0 && s.hdr.index_offset >= PS);
    check_images(md_path, &s, ticks);
    vfdswmr_mdsnap_free(&s);

    /* drop all but 5: the index fits a slot again and moves back after the header */
    for (unsigned i = 5; i < N; i++)
        rm[i - 5] = i;
    assert_int_equal(vfdswmr_mdw_publish(w, 0, NULL, 0, rm, N - 5, 0, err, sizeof err), 0);
    assert_false(vfdswmr_mdw_index_relocated(w));
    assert_int_equal(load(md_path, &s), VFDSWMR_MD_OK);
    assert_int_equal(s.idx.nentries, 5);
    assert_int_equal(s.hdr.index_offset, VFDSWMR_MDHDR_SIZE);
    check_images(md_path, &s, ticks);
    vfdswmr_mdsnap_free(&s);
    /* after max_lag quiet ticks all that space (images and old index) is free
     * again and the file shrinks back to the reserved page plus 5 images */
    for (unsigned t = 0; t < o.max_lag; t++)
        assert_int_equal(vfdswmr_mdw_publish(w, 0, NULL, 0, NULL, 0, 0, err, sizeof err), 0);
    struct stat st;
    assert_int_equal(stat(md_path, &st), 0);
    assert_int_equal(vfdswmr_mdw_file_pages(w), 1 + 5);
    assert_true((uint64_t)st.st_size <= (1 + 5) * PS);
    assert_int_equal(vfdswmr_mdw_close(w, false, err, sizeof err), 0);
}

/* Steady state: many ticks of random rewrites keep the file bounded. */
static void
test_steady_state_bounded(void **state)
{
    vfdswmr_mdw_opts_t o = opts(2, true, false);
    vfdswmr_mdw_t *w;
    vfdswmr_mdsnap_t s;
    enum { PAGES = 50, PER_TICK = 6, TICKS = 600 };
    static uint8_t imgs[PER_TICK][2 * PS];
    uint64_t ticks[PAGES + 2] = {0}, max_pages = 0;
    char err[512];

    (void)state;
    srandom(7);
    assert_int_equal(vfdswmr_mdw_open(&o, &w, err, sizeof err), 0);
    for (uint64_t t = 1; t <= TICKS; t++) {
        vfdswmr_mdchange_t c[PER_TICK];
        unsigned n = 0;
        for (uint64_t p = (uint64_t)random() % 8; p < PAGES && n < PER_TICK; p += 1 + (uint64_t)random() % 12) {
            uint32_t len = (p % 10 == 0) ? 2 * PS - 7 : PS; /* some two-page entries */
            fill(imgs[n], len, p, t);
            ticks[p] = t;
            c[n] = (vfdswmr_mdchange_t){p, len, imgs[n], NULL, 0};
            n++;
            if (len > PS)
                p++; /* the next page belongs to this entry */
        }
        assert_int_equal(vfdswmr_mdw_publish(w, t * PS, c, n, NULL, 0, 0, err, sizeof err), 0);
        if (t > 50 && vfdswmr_mdw_file_pages(w) > max_pages)
            max_pages = vfdswmr_mdw_file_pages(w);
    }
    assert_int_equal(load(md_path, &s), VFDSWMR_MD_OK);
    assert_true(s.hdr.tick == TICKS);
    check_images(md_path, &s, ticks);
    vfdswmr_mdsnap_free(&s);
    /* live images <= PAGES + PAGES/10 pages; superseded ones of the last
     * max_lag + 1 ticks <= (max_lag + 1) * PER_TICK * 2 pages; plus reserved.
     * Allow a factor of 2 for fragmentation. Without recycling the file would
     * reach about TICKS * PER_TICK pages. */
    uint64_t bound = 2 * (PAGES + PAGES / 10 + (o.max_lag + 1) * PER_TICK * 2 + 2);
    assert_true(max_pages > 0 && max_pages <= bound);
    assert_int_equal(vfdswmr_mdw_close(w, false, err, sizeof err), 0);
}

/* Updater files replayed in order rebuild the metadata file exactly. */
static void
test_updaters_replay(void **state)
{
    vfdswmr_mdw_opts_t o = opts(1, true, true);
    vfdswmr_mdw_t *w;
    vfdswmr_mdsnap_t a, b;
    static uint8_t imgs[30][PS];
    uint64_t ticks[64] = {0};
    char err[512], local[300], name[300];
    int lfd;

    (void)state;
    o.durable = true;
    assert_int_equal(vfdswmr_mdw_open(&o, &w, err, sizeof err), 0);
    for (uint64_t t = 1; t <= 12; t++) {
        vfdswmr_mdchange_t c[30];
        unsigned n = (unsigned)(t * 5 % 30) + 1; /* enough entries, some ticks, to relocate the index */
        for (unsigned i = 0; i < n; i++) {
            uint64_t p = (i * 2 + t) % 60;
            fill(imgs[i], PS, p, t);
            c[i] = (vfdswmr_mdchange_t){p, PS, imgs[i], NULL, 0};
        }
        /* sort by page (insertion sort: small) and drop duplicates */
        for (unsigned i = 1; i < n; i++)
            for (unsigned j = i; j > 0 && c[j - 1].hdf5_page > c[j].hdf5_page; j--) {
                vfdswmr_mdchange_t x = c[j];
                c[j] = c[j - 1];
                c[j - 1] = x;
            }
        for (unsigned i = 0; i < n; i++)
            ticks[c[i].hdf5_page] = t;
        assert_int_equal(vfdswmr_mdw_publish(w, t, c, n, NULL, 0, t == 12 ? VFDSWMR_MDW_FINAL : 0, err, sizeof err), 0);
    }
    /* 0: CREATE_ONLY, 1: tick 0, 2..13: ticks 1..12 */
    assert_true(vfdswmr_mdw_next_sequence(w) == 14);

    snprintf(local, sizeof local, "%s/local.md", dir);
    lfd = open(local, O_RDWR | O_CREAT | O_TRUNC, 0644);
    assert_true(lfd >= 0);
    for (uint64_t seq = 0; seq < 14; seq++) {
        vfdswmr_updater_t u;
        struct stat st;
        uint8_t *buf;
        int fd;

        assert_int_equal(vfdswmr_updater_name(name, sizeof name, ud_base, seq), 0);
        fd = open(name, O_RDONLY);
        assert_true(fd >= 0);
        assert_int_equal(fstat(fd, &st), 0);
        buf = malloc((size_t)st.st_size);
        assert_int_equal(vfdswmr_pread_all(fd, buf, (size_t)st.st_size, 0), 0);
        close(fd);
        assert_int_equal(vfdswmr_updater_decode(buf, (size_t)st.st_size, &u), VFDSWMR_MD_OK);
        assert_true(u.hdr.sequence == seq);
        assert_int_equal(u.hdr.flags, seq == 0 ? VFDSWMR_UD_CREATE_ONLY : seq == 13 ? VFDSWMR_UD_FINAL : 0);
        if (seq > 0) {
            assert_true(u.hdr.tick == seq - 1);
            assert_int_equal(vfdswmr_mdplan_apply(lfd, &u.plan, false), 0);
        }
        vfdswmr_updater_free(&u);
        free(buf);
    }
    close(lfd);
    assert_int_equal(load(md_path, &a), VFDSWMR_MD_OK);
    assert_int_equal(load(local, &b), VFDSWMR_MD_OK);
    assert_true(a.hdr.tick == 12 && b.hdr.tick == 12 && a.hdr.session == b.hdr.session);
    assert_int_equal(a.idx.nentries, b.idx.nentries);
    assert_memory_equal(a.idx.entries, b.idx.entries, a.idx.nentries * sizeof *a.idx.entries);
    check_images(local, &b, ticks);
    vfdswmr_mdsnap_free(&a);
    vfdswmr_mdsnap_free(&b);
    assert_int_equal(vfdswmr_mdw_close(w, false, err, sizeof err), 0);
}

/* Updater files only: no metadata file is created. */
static void
test_updaters_only(void **state)
{
    vfdswmr_mdw_opts_t o = opts(2, false, true);
    vfdswmr_mdw_t *w;
    uint8_t img[PS];
    char err[512], name[300];

    (void)state;
    assert_int_equal(vfdswmr_mdw_open(&o, &w, err, sizeof err), 0);
    fill(img, PS, 1, 1);
    vfdswmr_mdchange_t c = {1, PS, img, NULL, 0};
    assert_int_equal(vfdswmr_mdw_publish(w, 0, &c, 1, NULL, 0, 0, err, sizeof err), 0);
    assert_int_equal(access(md_path, F_OK), -1);
    for (uint64_t seq = 0; seq < 3; seq++) {
        vfdswmr_updater_name(name, sizeof name, ud_base, seq);
        assert_int_equal(access(name, F_OK), 0);
    }
    vfdswmr_updater_name(name, sizeof name, ud_base, 3);
    assert_int_equal(access(name, F_OK), -1);
    assert_int_equal(vfdswmr_mdw_close(w, false, err, sizeof err), 0);
}

/* With ud_keep_ticks, the writer deletes updater files that old. */
static void
test_updaters_retired(void **state)
{
    vfdswmr_mdw_opts_t o = opts(2, false, true);
    vfdswmr_mdw_t *w;
    char err[512], name[300];

    (void)state;
    o.ud_keep_ticks = 3;
    assert_int_equal(vfdswmr_mdw_open(&o, &w, err, sizeof err), 0);
    for (int t = 1; t <= 10; t++)
        assert_int_equal(vfdswmr_mdw_publish(w, 0, NULL, 0, NULL, 0, 0, err, sizeof err), 0);
    /* sequence 0: CREATE_ONLY, 1: tick 0, s: tick s - 1; at tick 10 those of
     * ticks <= 7 are gone */
    for (uint64_t seq = 0; seq <= 11; seq++) {
        vfdswmr_updater_name(name, sizeof name, ud_base, seq);
        assert_int_equal(access(name, F_OK), seq <= 8 ? -1 : 0);
    }
    assert_int_equal(vfdswmr_mdw_close(w, false, err, sizeof err), 0);
}

static void
test_bad_options(void **state)
{
    vfdswmr_mdw_opts_t o = opts(2, true, false);
    vfdswmr_mdw_t *w;
    char err[512];

    (void)state;
    o.page_size = 1000;
    assert_int_equal(vfdswmr_mdw_open(&o, &w, err, sizeof err), -1);
    assert_string_equal(err, "page size must be a power of two from 512 bytes to 1 GiB");
    o = opts(2, false, false);
    assert_int_equal(vfdswmr_mdw_open(&o, &w, err, sizeof err), -1);
    assert_string_equal(err, "neither a metadata file nor updater files requested");
    o = opts(2, true, false);
    o.md_path = "/nonexistent-dir/x.md";
    assert_int_equal(vfdswmr_mdw_open(&o, &w, err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot create metadata file /nonexistent-dir/x.md: "));
    assert_non_null(strstr(err, "No such file or directory"));
}

/* ---- format version 2: header fields, ranges, index slots, FAILED ------- */

/* The first 72 bytes of the file at path, raw and decoded. */
static void
read_header(const char *path, uint8_t raw[VFDSWMR_MDHDR_SIZE], vfdswmr_mdhdr_t *h)
{
    int fd = open(path, O_RDONLY);

    assert_true(fd >= 0);
    assert_int_equal(vfdswmr_pread_all(fd, raw, VFDSWMR_MDHDR_SIZE, 0), 0);
    close(fd);
    assert_int_equal(vfdswmr_mdhdr_decode(raw, VFDSWMR_MDHDR_SIZE, h), VFDSWMR_MD_OK);
}

/* Decode the index that header h names, straight from the file. */
static vfdswmr_mderr_t
index_named_by(const char *path, const vfdswmr_mdhdr_t *h, vfdswmr_mdidx_t *idx)
{
    int fd = open(path, O_RDONLY);
    uint8_t *buf = malloc((size_t)h->index_length);
    vfdswmr_mderr_t err;

    assert_true(fd >= 0);
    assert_non_null(buf);
    assert_int_equal(vfdswmr_pread_all(fd, buf, (size_t)h->index_length, h->index_offset), 0);
    close(fd);
    err = vfdswmr_mdidx_decode(buf, (size_t)h->index_length, h->page_size, idx);
    free(buf);
    return err;
}

static void
assert_index_equal(const vfdswmr_mdidx_t *a, const vfdswmr_mdidx_t *b)
{
    assert_int_equal(a->session, b->session);
    assert_int_equal(a->tick, b->tick);
    assert_int_equal(a->nentries, b->nentries);
    assert_int_equal(a->nranges, b->nranges);
    if (a->nentries)
        assert_memory_equal(a->entries, b->entries, a->nentries * sizeof *a->entries);
    if (a->nranges)
        assert_memory_equal(a->ranges, b->ranges, a->nranges * sizeof *a->ranges);
}

/* Read an updater file whole and decode it; *buf must outlive u. */
static void
read_updater(uint64_t seq, uint8_t **buf, vfdswmr_updater_t *u)
{
    char name[300];
    struct stat st;
    int fd;

    assert_int_equal(vfdswmr_updater_name(name, sizeof name, ud_base, seq), 0);
    fd = open(name, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(fstat(fd, &st), 0);
    *buf = malloc((size_t)st.st_size);
    assert_non_null(*buf);
    assert_int_equal(vfdswmr_pread_all(fd, *buf, (size_t)st.st_size, 0), 0);
    close(fd);
    assert_int_equal(vfdswmr_updater_decode(*buf, (size_t)st.st_size, u), VFDSWMR_MD_OK);
}

/* Every header records tick_len, max_lag and hdf5_id; the final publish
 * sets FINAL, in the metadata file and in the header its updater carries. */
static void
test_header_fields_final(void **state)
{
    vfdswmr_mdw_opts_t o = opts(2, true, true);
    vfdswmr_mdw_t *w;
    vfdswmr_mdsnap_t s;
    vfdswmr_updater_t u;
    vfdswmr_mdhdr_t h;
    uint8_t img[PS], *buf;
    char err[512];

    (void)state;
    o.tick_len = 7;
    o.hdf5_id = 0xabcdef0123456789ull;
    assert_int_equal(vfdswmr_mdw_open(&o, &w, err, sizeof err), 0);
    assert_int_equal(load(md_path, &s), VFDSWMR_MD_OK);
    assert_int_equal(s.hdr.flags, 0);
    assert_int_equal(s.hdr.tick_len, 7);
    assert_int_equal(s.hdr.max_lag, 4);
    assert_int_equal(s.hdr.hdf5_id, 0xabcdef0123456789ull);
    vfdswmr_mdsnap_free(&s);

    fill(img, PS, 3, 1);
    vfdswmr_mdchange_t c = {3, PS, img, NULL, 0};
    assert_int_equal(vfdswmr_mdw_publish(w, PS, &c, 1, NULL, 0, 0, err, sizeof err), 0);
    assert_int_equal(load(md_path, &s), VFDSWMR_MD_OK);
    assert_true(s.hdr.tick == 1 && s.hdr.flags == 0 && s.idx.nentries == 1);
    assert_true(s.hdr.tick_len == 7 && s.hdr.max_lag == 4 && s.hdr.hdf5_id == 0xabcdef0123456789ull);
    vfdswmr_mdsnap_free(&s);

    uint64_t rm[] = {3};
    assert_int_equal(vfdswmr_mdw_publish(w, PS, NULL, 0, rm, 1, VFDSWMR_MDW_FINAL, err, sizeof err), 0);
    assert_int_equal(load(md_path, &s), VFDSWMR_MD_OK);
    assert_true(s.hdr.tick == 2 && s.hdr.flags == VFDSWMR_MDHDR_FINAL && s.idx.nentries == 0);
    assert_true(s.hdr.tick_len == 7 && s.hdr.max_lag == 4 && s.hdr.hdf5_id == 0xabcdef0123456789ull);
    vfdswmr_mdsnap_free(&s);
    assert_int_equal(vfdswmr_mdw_header(w)->flags, VFDSWMR_MDHDR_FINAL);

    /* sequence 0 CREATE_ONLY, 1 tick 0, 2 tick 1, 3 tick 2 */
    read_updater(3, &buf, &u);
    assert_int_equal(u.hdr.flags, VFDSWMR_UD_FINAL);
    assert_int_equal(vfdswmr_mdhdr_decode(u.plan.header_image, VFDSWMR_MDHDR_SIZE, &h), VFDSWMR_MD_OK);
    assert_true(h.tick == 2 && h.flags == VFDSWMR_MDHDR_FINAL && h.tick_len == 7 && h.max_lag == 4 &&
                h.hdf5_id == 0xabcdef0123456789ull);
    vfdswmr_updater_free(&u);
    free(buf);
    read_updater(2, &buf, &u);
    assert_int_equal(u.hdr.flags, 0);
    assert_int_equal(vfdswmr_mdhdr_decode(u.plan.header_image, VFDSWMR_MDHDR_SIZE, &h), VFDSWMR_MD_OK);
    assert_true(h.tick == 1 && h.flags == 0);
    vfdswmr_updater_free(&u);
    free(buf);

    assert_int_equal(vfdswmr_mdw_close(w, true, err, sizeof err), 0);
    assert_int_equal(load(md_path, &s), VFDSWMR_MD_OK); /* kept: still says FINAL */
    assert_true(s.hdr.tick == 2 && s.hdr.flags == VFDSWMR_MDHDR_FINAL);
    vfdswmr_mdsnap_free(&s);
}

/* A heap copy of n ranges: the test frees and scribbles over it after the
 * publish, so the writer must have copied it. */
static vfdswmr_mdrange_t *
ranges_dup(const vfdswmr_mdrange_t *r, uint32_t n)
{
    vfdswmr_mdrange_t *c = malloc((n ? n : 1) * sizeof *c);
    assert_non_null(c);
    memcpy(c, r, n * sizeof *c);
    return c;
}

static void
scribble_free(vfdswmr_mdrange_t *r, uint32_t n)
{
    memset(r, 0xee, n * sizeof *r);
    free(r);
}

/* The snapshot's ranges are exactly want[] (n of them), entry k owning
 * counts[k] in order. */
static void
check_ranges(const vfdswmr_mdidx_t *idx, const vfdswmr_mdrange_t *want, uint32_t n, const uint32_t *counts)
{
    uint32_t first = 0;

    assert_int_equal(idx->nranges, n);
    for (uint32_t k = 0; k < idx->nentries; k++) {
        assert_int_equal(idx->entries[k].range_first, first);
        assert_int_equal(idx->entries[k].nranges, counts[k]);
        first += counts[k];
    }
    assert_int_equal(first, n);
    for (uint32_t k = 0; k < n; k++) {
        assert_int_equal(idx->ranges[k].offset, want[k].offset);
        assert_int_equal(idx->ranges[k].length, want[k].length);
    }
}

/* Metadata ranges of the changes reach the index, follow their entries
 * through later publishes (kept, replaced, removed), and travel in updater
 * files. */
static void
test_ranges_carried(void **state)
{
    vfdswmr_mdw_opts_t o = opts(2, true, true);
    vfdswmr_mdw_t *w;
    vfdswmr_mdsnap_t s;
    vfdswmr_updater_t u;
    vfdswmr_mdidx_t ui;
    uint8_t a[PS], b[2 * PS - 100], c[PS], *buf;
    char err[512];
    const vfdswmr_mdrange_t ra[] = {{0, 10}, {20, 30}}, rb[] = {{0, 2 * PS - 100}}, rb2[] = {{5, 5}},
                            r0[] = {{0, 1}, {PS - 1, 1}};
    vfdswmr_mdrange_t *ha = ranges_dup(ra, 2), *hb = ranges_dup(rb, 1);
    uint32_t n;

    (void)state;
    assert_int_equal(vfdswmr_mdw_open(&o, &w, err, sizeof err), 0);
    fill(a, sizeof a, 1, 1);
    fill(b, sizeof b, 2, 1);
    fill(c, sizeof c, 5, 1);
    vfdswmr_mdchange_t c1[] = {{1, sizeof a, a, ha, 2}, {2, sizeof b, b, hb, 1}, {5, sizeof c, c, NULL, 0}};
    assert_int_equal(vfdswmr_mdw_publish(w, 0, c1, 3, NULL, 0, 0, err, sizeof err), 0);
    scribble_free(ha, 2);
    scribble_free(hb, 1);
    {
        const vfdswmr_mdrange_t want[] = {{0, 10}, {20, 30}, {0, 2 * PS - 100}};
        const uint32_t counts[] = {2, 1, 0};
        assert_int_equal(load(md_path, &s), VFDSWMR_MD_OK);
        assert_int_equal(s.idx.nentries, 3);
        check_ranges(&s.idx, want, 3, counts);
        assert_memory_equal(vfdswmr_mdw_ranges(w, &n), s.idx.ranges, sizeof want);
        assert_int_equal(n, 3);
        vfdswmr_mdsnap_free(&s);
    }
    /* a tick without changes keeps them */
    assert_int_equal(vfdswmr_mdw_publish(w, 0, NULL, 0, NULL, 0, 0, err, sizeof err), 0);
    /* page 2 replaced with other ranges, page 1 removed */
    fill(b, PS, 2, 3);
    vfdswmr_mdchange_t c3[] = {{2, PS, b, rb2, 1}};
    uint64_t rm[] = {1};
    assert_int_equal(vfdswmr_mdw_publish(w, 0, c3, 1, rm, 1, 0, err, sizeof err), 0);
    {
        const vfdswmr_mdrange_t want[] = {{5, 5}};
        const uint32_t counts[] = {1, 0};
        assert_int_equal(load(md_path, &s), VFDSWMR_MD_OK);
        assert_true(s.idx.nentries == 2 && s.idx.entries[0].hdf5_page == 2 && s.idx.entries[1].hdf5_page == 5);
        check_ranges(&s.idx, want, 1, counts);
        vfdswmr_mdsnap_free(&s);
    }
    /* a new first entry: everyone's range_first moves */
    fill(a, PS, 0, 4);
    vfdswmr_mdchange_t c4[] = {{0, PS, a, r0, 2}};
    assert_int_equal(vfdswmr_mdw_publish(w, 0, c4, 1, NULL, 0, 0, err, sizeof err), 0);
    {
        const vfdswmr_mdrange_t want[] = {{0, 1}, {PS - 1, 1}, {5, 5}};
        const uint32_t counts[] = {2, 1, 0};
        assert_int_equal(load(md_path, &s), VFDSWMR_MD_OK);
        assert_int_equal(s.idx.nentries, 3);
        check_ranges(&s.idx, want, 3, counts);
        /* the updater of tick 4 (sequence 5) carries the same index */
        read_updater(5, &buf, &u);
        assert_int_equal(u.hdr.tick, 4);
        assert_int_equal(vfdswmr_mdidx_decode(u.plan.index_image, u.plan.index_len, PS, &ui), VFDSWMR_MD_OK);
        assert_index_equal(&ui, &s.idx);
        vfdswmr_mdidx_free(&ui);
        vfdswmr_updater_free(&u);
        free(buf);
        vfdswmr_mdsnap_free(&s);
    }
    assert_int_equal(vfdswmr_mdw_close(w, false, err, sizeof err), 0);
}

/* Ranges that are not sorted, disjoint, nonempty and inside the image are
 * refused before anything is published. */
static void
test_ranges_refused(void **state)
{
    static const vfdswmr_mdrange_t bad[][2] = {
        {{20, 5}, {10, 5}},         /* unsorted */
        {{0, 10}, {9, 5}},          /* overlapping */
        {{0, 0}, {10, 5}},          /* empty */
        {{0, 10}, {PS - 4, 5}},     /* past the image */
        {{0, 10}, {UINT32_MAX, 1}}, /* offset + length wraps */
    };
    static const vfdswmr_mdrange_t good[2] = {{0, 10}, {10, PS - 10}};
    vfdswmr_mdw_opts_t o = opts(2, true, false);
    vfdswmr_mdw_t *w;
    uint8_t img[PS];
    char err[512];

    (void)state;
    fill(img, PS, 1, 1);
    for (size_t i = 0; i <= sizeof bad / sizeof bad[0]; i++) {
        bool null_ranges = i == sizeof bad / sizeof bad[0];
        vfdswmr_mdchange_t c[] = {{0, PS, img, good, 2}, {1, PS, img, null_ranges ? NULL : bad[i], 2}};
        assert_int_equal(vfdswmr_mdw_open(&o, &w, err, sizeof err), 0);
        assert_int_equal(vfdswmr_mdw_publish(w, 0, c, 2, NULL, 0, 0, err, sizeof err), -1);
        assert_non_null(strstr(err, "change 1 (HDF5 page 1): metadata ranges not sorted"));
        assert_int_equal(vfdswmr_mdw_tick(w), 0);
        assert_int_equal(vfdswmr_mdw_close(w, false, err, sizeof err), 0);
    }
    /* the good ones pass */
    vfdswmr_mdchange_t ok[] = {{0, PS, img, good, 2}};
    assert_int_equal(vfdswmr_mdw_open(&o, &w, err, sizeof err), 0);
    assert_int_equal(vfdswmr_mdw_publish(w, 0, ok, 1, NULL, 0, 0, err, sizeof err), 0);
    assert_int_equal(vfdswmr_mdw_close(w, false, err, sizeof err), 0);
}

/* Index sizes tick by tick: some fit a slot (5 entries at one 512-byte
 * reserved page), some are relocated. */
static const unsigned pp_sizes[] = {1, 2, 3, 0, 8, 9, 2, 5, 1, 12, 3, 4, 6, 1, 1, 0, 5};

/* Publish tick t with exactly entries 0 .. n-1 (images of tick t). */
static void
publish_exactly(vfdswmr_mdw_t *w, uint64_t t, unsigned n, uint64_t *ticks)
{
    static uint8_t imgs[16][PS];
    vfdswmr_mdchange_t c[16];
    uint64_t rm[16];
    unsigned nr = 0;
    char err[512];

    for (unsigned i = 0; i < n; i++) {
        fill(imgs[i], PS, i, t);
        ticks[i] = t;
        c[i] = (vfdswmr_mdchange_t){i, PS, imgs[i], NULL, 0};
    }
    for (unsigned i = n; i < 16; i++)
        rm[nr++] = i;
    assert_int_equal(vfdswmr_mdw_publish(w, t, c, n, rm, nr, 0, err, sizeof err), 0);
}

/* Ping-pong: after each publish the index the previous header named is
 * still there, whole, at its place, and its images still read; slot
 * indexes alternate between the two slots. */
static void
test_index_slots_ping_pong(void **state)
{
    vfdswmr_mdw_opts_t o = opts(1, true, false);
    const uint64_t s0 = vfdswmr_mdidx_slot_offset(0, 1, PS), s1 = vfdswmr_mdidx_slot_offset(1, 1, PS);
    vfdswmr_mdw_t *w;
    uint64_t ticks[16] = {0};
    unsigned in_s0 = 0, in_s1 = 0, relocated = 0;
    char err[512];

    (void)state;
    assert_int_equal(s1, 80 + 216);
    o.max_lag = 3;
    assert_int_equal(vfdswmr_mdw_open(&o, &w, err, sizeof err), 0);
    for (uint64_t t = 1; t <= sizeof pp_sizes / sizeof pp_sizes[0]; t++) {
        uint8_t raw[VFDSWMR_MDHDR_SIZE];
        vfdswmr_mdhdr_t old, now;
        vfdswmr_mdsnap_t before, after;
        vfdswmr_mdidx_t again;

        read_header(md_path, raw, &old);
        assert_int_equal(load(md_path, &before), VFDSWMR_MD_OK);
        publish_exactly(w, t, pp_sizes[t - 1], ticks);
        read_header(md_path, raw, &now);
        assert_int_equal(now.tick, t);
        assert_true(now.index_offset != old.index_offset);
        if (now.index_offset == s0)
            in_s0++;
        else if (now.index_offset == s1)
            in_s1++;
        else {
            assert_true(now.index_offset % PS == 0 && now.index_offset >= PS);
            relocated++;
        }
        assert_int_equal(now.index_offset >= PS, pp_sizes[t - 1] > 5);
        /* the old header's index: intact, and its images too */
        assert_int_equal(index_named_by(md_path, &old, &again), VFDSWMR_MD_OK);
        assert_index_equal(&again, &before.idx);
        {
            int fd = open(md_path, O_RDONLY);
            vfdswmr_mdr_io_t io = vfdswmr_mdr_fd_io(&fd);
            uint8_t got[PS];
            for (uint32_t k = 0; k < again.nentries; k++)
                assert_int_equal(vfdswmr_mdr_read_image(&io, PS, &again.entries[k], got), VFDSWMR_MD_OK);
            close(fd);
        }
        vfdswmr_mdidx_free(&again);
        vfdswmr_mdsnap_free(&before);
        /* and the new snapshot loads */
        assert_int_equal(load(md_path, &after), VFDSWMR_MD_OK);
        assert_int_equal(after.idx.nentries, pp_sizes[t - 1]);
        check_images(md_path, &after, ticks);
        vfdswmr_mdsnap_free(&after);
    }
    assert_true(in_s0 > 2 && in_s1 > 2 && relocated > 2);
    assert_int_equal(vfdswmr_mdw_close(w, false, err, sizeof err), 0);
}

/*
 * A writer killed after writing the images and the index of tick T + 1 but
 * before its header: the file then holds everything of tick T + 1 except
 * the header, which is still tick T's (vfdswmr_mdplan_apply writes the
 * header last, in a write of its own). Recreate exactly that by putting
 * tick T's header bytes back after the publish: the reader must load tick
 * T, whole, with every image as tick T wrote it -- for an index of T + 1 in
 * a slot and for a relocated one.
 */
static void
test_killed_before_header(void **state)
{
    static const unsigned next_sizes[] = {4, 14};
    (void)state;
    for (size_t k = 0; k < 2; k++) {
        vfdswmr_mdw_opts_t o = opts(1, true, false);
        vfdswmr_mdw_t *w;
        vfdswmr_mdsnap_t s, t3;
        uint64_t ticks[16] = {0}, ticks_t3[16];
        uint8_t raw[VFDSWMR_MDHDR_SIZE], raw_now[VFDSWMR_MDHDR_SIZE];
        vfdswmr_mdhdr_t h3, h4;
        char err[512];
        int fd;

        assert_int_equal(vfdswmr_mdw_open(&o, &w, err, sizeof err), 0);
        publish_exactly(w, 1, 3, ticks);
        publish_exactly(w, 2, 9, ticks);
        publish_exactly(w, 3, 4, ticks);
        memcpy(ticks_t3, ticks, sizeof ticks);
        read_header(md_path, raw, &h3);
        assert_int_equal(load(md_path, &t3), VFDSWMR_MD_OK);
        publish_exactly(w, 4, next_sizes[k], ticks); /* rewrites pages 0..3, adds more */
        read_header(md_path, raw_now, &h4);
        assert_int_equal(h4.index_offset >= PS, next_sizes[k] > 5);
        fd = open(md_path, O_WRONLY);
        assert_true(fd >= 0);
        assert_int_equal(vfdswmr_pwrite_all(fd, raw, sizeof raw, 0), 0); /* "killed before the header" */
        close(fd);
        assert_int_equal(load(md_path, &s), VFDSWMR_MD_OK);
        assert_int_equal(s.hdr.tick, 3);
        assert_index_equal(&s.idx, &t3.idx);
        check_images(md_path, &s, ticks_t3);
        vfdswmr_mdsnap_free(&s);
        vfdswmr_mdsnap_free(&t3);
        assert_int_equal(vfdswmr_mdw_close(w, false, err, sizeof err), 0);
    }
}

/* mark_failed rewrites the current header with FAILED: same tick, same
 * index, only the flags and the checksum change. */
static void
test_mark_failed(void **state)
{
    vfdswmr_mdw_opts_t o = opts(2, true, false);
    vfdswmr_mdw_t *w;
    vfdswmr_mdsnap_t s;
    vfdswmr_mdhdr_t before, after;
    uint8_t raw0[VFDSWMR_MDHDR_SIZE], raw1[VFDSWMR_MDHDR_SIZE], raw2[VFDSWMR_MDHDR_SIZE], img[PS];
    uint64_t ticks[16] = {0};
    char err[512];

    (void)state;
    o.durable = true;
    assert_int_equal(vfdswmr_mdw_open(&o, &w, err, sizeof err), 0);
    publish_exactly(w, 1, 3, ticks);
    publish_exactly(w, 2, 2, ticks);
    read_header(md_path, raw0, &before);
    assert_int_equal(vfdswmr_mdw_mark_failed(w, err, sizeof err), 0);
    read_header(md_path, raw1, &after);
    assert_int_equal(after.flags, VFDSWMR_MDHDR_FAILED);
    for (size_t i = 0; i < VFDSWMR_MDHDR_SIZE; i++)
        if (i != 6 && i != 7 && i < 68)
            assert_int_equal(raw1[i], raw0[i]);
    assert_int_equal(vfdswmr_mdw_header(w)->flags, VFDSWMR_MDHDR_FAILED);
    assert_int_equal(load(md_path, &s), VFDSWMR_MD_OK);
    assert_true(s.hdr.tick == 2 && s.hdr.flags == VFDSWMR_MDHDR_FAILED && s.idx.nentries == 2);
    assert_int_equal(s.hdr.index_offset, before.index_offset);
    check_images(md_path, &s, ticks);
    vfdswmr_mdsnap_free(&s);
    /* again: nothing changes */
    assert_int_equal(vfdswmr_mdw_mark_failed(w, err, sizeof err), 0);
    read_header(md_path, raw2, &after);
    assert_memory_equal(raw2, raw1, sizeof raw1);
    assert_int_equal(vfdswmr_mdw_close(w, false, err, sizeof err), 0);

    /* after a failed publish: the last published tick is marked */
    assert_int_equal(vfdswmr_mdw_open(&o, &w, err, sizeof err), 0);
    publish_exactly(w, 1, 1, ticks);
    fill(img, PS, 9, 2);
    vfdswmr_mdchange_t bad[] = {{9, PS, img, NULL, 0}, {3, PS, img, NULL, 0}};
    assert_int_equal(vfdswmr_mdw_publish(w, 0, bad, 2, NULL, 0, 0, err, sizeof err), -1);
    assert_int_equal(vfdswmr_mdw_mark_failed(w, err, sizeof err), 0);
    assert_int_equal(load(md_path, &s), VFDSWMR_MD_OK);
    assert_true(s.hdr.tick == 1 && s.hdr.flags == VFDSWMR_MDHDR_FAILED && s.idx.nentries == 1);
    vfdswmr_mdsnap_free(&s);
    assert_int_equal(vfdswmr_mdw_close(w, false, err, sizeof err), 0);

    /* after FINAL: a no-op, the file stays FINAL */
    assert_int_equal(vfdswmr_mdw_open(&o, &w, err, sizeof err), 0);
    assert_int_equal(vfdswmr_mdw_publish(w, 0, NULL, 0, NULL, 0, VFDSWMR_MDW_FINAL, err, sizeof err), 0);
    read_header(md_path, raw0, &before);
    assert_int_equal(vfdswmr_mdw_mark_failed(w, err, sizeof err), 0);
    read_header(md_path, raw1, &after);
    assert_memory_equal(raw1, raw0, sizeof raw0);
    assert_int_equal(after.flags, VFDSWMR_MDHDR_FINAL);
    assert_int_equal(vfdswmr_mdw_close(w, false, err, sizeof err), 0);

    /* without a metadata file: a no-op */
    o = opts(2, false, true);
    assert_int_equal(vfdswmr_mdw_open(&o, &w, err, sizeof err), 0);
    assert_int_equal(vfdswmr_mdw_mark_failed(w, err, sizeof err), 0);
    assert_int_equal(access(md_path, F_OK), -1);
    assert_int_equal(vfdswmr_mdw_close(w, false, err, sizeof err), 0);
}

/* The message goes to the caller's buffer, truncated to fit; NULL is fine. */
static void
test_error_contract(void **state)
{
    vfdswmr_mdw_opts_t o = opts(2, true, false);
    vfdswmr_mdw_t *w;
    uint8_t img[PS];
    char err[512], small[10];

    (void)state;
    fill(img, PS, 1, 1);
    vfdswmr_mdchange_t bad[] = {{7, PS, img, NULL, 0}, {3, PS, img, NULL, 0}};
    assert_int_equal(vfdswmr_mdw_open(&o, &w, err, sizeof err), 0);
    assert_int_equal(vfdswmr_mdw_publish(w, 1, bad, 2, NULL, 0, 0, NULL, 0), -1);
    memset(small, 'x', sizeof small);
    assert_int_equal(vfdswmr_mdw_publish(w, 1, bad, 2, NULL, 0, 0, small, sizeof small), -1);
    assert_int_equal(vfdswmr_mdw_publish(w, 1, bad, 2, NULL, 0, 0, err, sizeof err), -1);
    assert_string_equal(err, "changes are not sorted and disjoint at HDF5 page 7");
    assert_int_equal(strlen(small), sizeof small - 1);
    assert_memory_equal(small, err, sizeof small - 1);
    /* a metadata file someone else removed (or replaced) is not this
     * writer's to remove: close succeeds and leaves the name alone */
    assert_int_equal(unlink(md_path), 0);
    FILE *fp = fopen(md_path, "w"); /* another file takes the name */
    char back[8] = "";
    assert_non_null(fp);
    fputs("other", fp);
    fclose(fp);
    assert_int_equal(vfdswmr_mdw_close(w, false, err, sizeof err), 0);
    assert_non_null(fp = fopen(md_path, "r"));
    assert_non_null(fgets(back, sizeof back, fp));
    fclose(fp);
    assert_string_equal(back, "other");
    unlink(md_path);
}

/*
 * A writer process publishes as fast as it can while this process loads
 * snapshots and reads every image. A load must never return an inconsistent
 * snapshot; an image may fail its checksum only when the writer has moved
 * max_lag or more ticks past the snapshot (the reader fell behind), never
 * otherwise.
 */
static void
test_concurrent_reader(void **state)
{
    vfdswmr_mdw_opts_t o = opts(1, true, false);
    int ready[2];
    pid_t pid;
    char err[512], c;
    unsigned loads = 0, images = 0, behind = 0;
    uint64_t last_tick = 0;

    (void)state;
    assert_int_equal(pipe(ready), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        vfdswmr_mdw_t *w;
        static uint8_t imgs[40][PS];
        close(ready[0]);
        if (vfdswmr_mdw_open(&o, &w, err, sizeof err) < 0)
            _exit(1);
        if (write(ready[1], "r", 1) != 1)
            _exit(1);
        for (uint64_t t = 1; t <= 3000; t++) {
            vfdswmr_mdchange_t cc[40];
            unsigned n = 1 + (unsigned)(t % 37); /* index moves in and out of the reserved page */
            for (unsigned i = 0; i < n; i++) {
                uint64_t p = (t + i * 3) % 120;
                cc[i] = (vfdswmr_mdchange_t){p, PS, imgs[i], NULL, 0};
            }
            for (unsigned i = 1; i < n; i++) /* keep sorted: pages (t + 3i) % 120 wrap once */
                for (unsigned j = i; j > 0 && cc[j - 1].hdf5_page > cc[j].hdf5_page; j--) {
                    vfdswmr_mdchange_t x = cc[j];
                    cc[j] = cc[j - 1];
                    cc[j - 1] = x;
                }
            for (unsigned i = 0; i < n; i++) {
                fill(imgs[i], PS, cc[i].hdf5_page, t);
                cc[i].image = imgs[i];
            }
            if (vfdswmr_mdw_publish(w, t, cc, n, NULL, 0, 0, err, sizeof err) < 0)
                _exit(2);
        }
        _exit(vfdswmr_mdw_close(w, true, err, sizeof err) == 0 ? 0 : 3);
    }
    close(ready[1]);
    assert_int_equal(read(ready[0], &c, 1), 1); /* the writer has created the file */
    close(ready[0]);
    for (;;) {
        int fd = open(md_path, O_RDONLY), status;
        vfdswmr_mdr_io_t io = vfdswmr_mdr_fd_io(&fd);
        vfdswmr_mdr_opts_t ro;
        vfdswmr_mdsnap_t s;
        char why[256];
        pid_t done = waitpid(pid, &status, WNOHANG);

        assert_true(fd >= 0);
        vfdswmr_mdr_opts_default(&ro);
        ro.first_read = PS;
        assert_int_equal(vfdswmr_mdr_load(&io, &ro, &s, why, sizeof why), VFDSWMR_MD_OK);
        assert_true(s.hdr.tick >= last_tick);
        last_tick = s.hdr.tick;
        loads++;
        for (uint32_t k = 0; k < s.idx.nentries; k++) {
            uint8_t got[PS], want[PS];
            const vfdswmr_mdentry_t *e = &s.idx.entries[k];
            vfdswmr_mderr_t err2 = vfdswmr_mdr_read_image(&io, PS, e, got);
            if (err2 == VFDSWMR_MD_OK) {
                /* an image of this page written at some tick <= the snapshot's */
                int match = 0;
                for (uint64_t t = s.hdr.tick; t + 200 > s.hdr.tick && t > 0 && !match; t--) {
                    fill(want, PS, e->hdf5_page, t);
                    match = !memcmp(got, want, PS);
                }
                assert_true(match);
                images++;
            }
            else {
                vfdswmr_mdsnap_t now;
                /* recycled (checksum) or cut off by a shrink (short) */
                assert_true(err2 == VFDSWMR_MD_ECHECKSUM || err2 == VFDSWMR_MD_ESHORT);
                assert_int_equal(vfdswmr_mdr_load(&io, &ro, &now, why, sizeof why), VFDSWMR_MD_OK);
                assert_true(now.hdr.tick >= s.hdr.tick + o.max_lag);
                vfdswmr_mdsnap_free(&now);
                behind++;
                break;
            }
        }
        vfdswmr_mdsnap_free(&s);
        close(fd);
        if (done == pid) {
            assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
            break;
        }
    }
    assert_true(last_tick == 3000 && loads > 10 && images > 0);
    print_message("concurrent: %u loads, %u images verified, %u times behind max_lag\n", loads, images, behind);
    unlink(md_path);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_open_publish_load, setup, teardown),
        cmocka_unit_test_setup_teardown(test_superseded_kept_max_lag, setup, teardown),
        cmocka_unit_test_setup_teardown(test_index_relocation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_steady_state_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_updaters_replay, setup, teardown),
        cmocka_unit_test_setup_teardown(test_updaters_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_updaters_retired, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_options, setup, teardown),
        cmocka_unit_test_setup_teardown(test_header_fields_final, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ranges_carried, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ranges_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_index_slots_ping_pong, setup, teardown),
        cmocka_unit_test_setup_teardown(test_killed_before_header, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mark_failed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_contract, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_reader, setup, teardown),
    };
    int rc;

    if (!mkdtemp(dir))
        return 1;
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    rmdir(dir);
    return rc;
}
