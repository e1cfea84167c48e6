/*
 * The publish protocol (mdwriter) against the load protocol (mdreader), on
 * real files: what a writer publishes is what a reader loads, superseded
 * images survive max_lag ticks, the index relocates and comes back, space is
 * recycled so the file stays bounded, updater files replay into an identical
 * metadata file, and a reader running concurrently with a busy writer never
 * accepts an inconsistent snapshot.
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
    return (vfdswmr_mdw_opts_t){.page_size = PS, .reserved_pages = reserved, .max_lag = 4,
                                .md_path = md ? md_path : NULL, .ud_base = ud ? ud_base : NULL};
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
    assert_non_null(strstr(err, "already exists: another writer may be active"));
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
        assert_int_equal(
            vfdswmr_mdw_publish(w, t, c, n, NULL, 0, t == 12 ? VFDSWMR_MDW_FINAL : 0, err, sizeof err), 0);
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
    assert_non_null(strstr(err, "cannot create metadata file /nonexistent-dir/x.md."));
    assert_non_null(strstr(err, "No such file or directory"));
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
        cmocka_unit_test_setup_teardown(test_concurrent_reader, setup, teardown),
    };
    int rc;

    if (!mkdtemp(dir))
        return 1;
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    rmdir(dir);
    return rc;
}
