/*
 * Read marks (mdfile/marks.c) and the table header's encoder/decoder: the
 * lag the writer keeps follows the oldest live mark, a reader that goes
 * away (its lock dropped) pins nothing, marks older than the limit are
 * released and the reader can tell, and readers of another session or
 * beyond the table's slots are not registered. Closing, the writer asks
 * whether every mark is at a tick, never misled by a tick an earlier owner
 * of the slot left; and it counts the readers registered on the HDF5 file
 * (mdfile/mdlock.c), each on a byte of its own. The raw-data lock
 * (mdlock.h) is shared by readers and excludes the writer.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testdir.h"

#include "format.h"
#include "le.h"
#include "kept.h"
#include "marks.h"
#include "mdlock.h"

static char md[256];
static int mdfd = -1;          /* the metadata file: a table a reader makes is its owner's, with its mode */
static vfdswmr_file_id_t mdid; /* ... and the writer's, which has md's name */

/* The writer's table as a reader makes it (the first reader that needs
 * one), and the writer finds it. */
static int
make_table(uint64_t session, vfdswmr_marks_t **m)
{
    vfdswmr_mark_t r;

    assert_int_equal(vfdswmr_mark_attach(&r, md, session, mdfd), VFDSWMR_ATTACHED);
    assert_true(r.created);
    vfdswmr_mark_detach(&r);
    return vfdswmr_marks_find(md, session, &mdid, m);
}

static void
test_header_codec(void **state)
{
    uint8_t b[VFDSWMR_MARKSHDR_SIZE];
    vfdswmr_markshdr_t h = {.session = 0x1122334455667788ull, .release_below = 42, .nslots = 64}, d;

    (void)state;
    vfdswmr_markshdr_encode(&h, b);
    assert_memory_equal(b, "VRDM", 4);
    assert_int_equal(vfdswmr_markshdr_decode(b, sizeof b, &d), VFDSWMR_MD_OK);
    assert_true(d.session == h.session && d.release_below == 42 && d.nslots == 64);
    assert_int_equal(vfdswmr_le64_decode(b + VFDSWMR_MARKSHDR_RELEASE_OFFSET), 42);
    assert_int_equal(vfdswmr_markshdr_decode(b, sizeof b - 1, &d), VFDSWMR_MD_ESHORT);
    b[63] = 1;
    assert_int_equal(vfdswmr_markshdr_decode(b, sizeof b, &d), VFDSWMR_MD_ERESERVED);
    assert_int_equal(d.session, 0);
    b[63] = 0;
    assert_int_equal(b[4], 3);
    b[4] = 1; /* version 1 held ticks, not epochs */
    assert_int_equal(vfdswmr_markshdr_decode(b, sizeof b, &d), VFDSWMR_MD_EVERSION);
    b[4] = 2; /* version 2: its readers read no kept list, so they must not mark */
    assert_int_equal(vfdswmr_markshdr_decode(b, sizeof b, &d), VFDSWMR_MD_EVERSION);
    b[4] = 4;
    assert_int_equal(vfdswmr_markshdr_decode(b, sizeof b, &d), VFDSWMR_MD_EVERSION);
    b[4] = 3;
    b[24] = 0;
    assert_int_equal(vfdswmr_markshdr_decode(b, sizeof b, &d), VFDSWMR_MD_ECOUNT);
    b[0] = 'X';
    assert_int_equal(vfdswmr_markshdr_decode(b, sizeof b, &d), VFDSWMR_MD_EMAGIC);
}

static void
test_lag_follows_oldest_mark(void **state)
{
    vfdswmr_marks_t *m;
    vfdswmr_mark_t a, b;
    unsigned n;

    (void)state;
    assert_int_equal(make_table(7, &m), 1);
    assert_int_equal(vfdswmr_marks_lag(m, 10, 3, 60, &n), 3); /* nobody: max_lag */
    assert_int_equal(n, 0);
    assert_int_equal(vfdswmr_mark_attach(&a, md, 7, mdfd), VFDSWMR_ATTACHED);
    assert_int_equal(vfdswmr_mark_attach(&b, md, 7, mdfd), VFDSWMR_ATTACHED);
    assert_int_not_equal(a.slot, b.slot);
    assert_int_equal(vfdswmr_marks_lag(m, 10, 3, 60, &n), 3); /* registered, no tick yet */
    assert_int_equal(vfdswmr_mark_set(&a, 4), 0);
    assert_int_equal(vfdswmr_mark_set(&b, 9), 0);
    assert_int_equal(vfdswmr_marks_lag(m, 20, 3, 60, &n), 17); /* for tick 4 at tick 20 */
    assert_int_equal(n, 2);
    assert_int_equal(vfdswmr_marks_lag(m, 5, 3, 60, &n), 3); /* recent enough: max_lag */
    /* a reader that goes away (or dies: the kernel drops its lock) pins nothing */
    vfdswmr_mark_detach(&a);
    assert_int_equal(vfdswmr_marks_lag(m, 20, 3, 60, &n), 12);
    assert_int_equal(n, 1);
    vfdswmr_mark_detach(&b);
    assert_int_equal(vfdswmr_marks_lag(m, 20, 3, 60, &n), 3);
    /* tick 0 (a reader holding the file as it was before the writer) is a mark too */
    assert_int_equal(vfdswmr_mark_attach(&a, md, 7, mdfd), VFDSWMR_ATTACHED);
    assert_int_equal(vfdswmr_mark_set(&a, 0), 0);
    assert_int_equal(vfdswmr_marks_lag(m, 20, 3, 60, &n), 21);
    assert_int_equal(n, 1);
    vfdswmr_mark_detach(&a);
    char table[300];
    assert_int_equal(vfdswmr_marks_name(table, sizeof table, md), 0);
    assert_int_equal(access(table, F_OK), 0);
    vfdswmr_marks_close(m);
    assert_int_equal(access(table, F_OK), -1); /* removed with the writer */
}

static void
test_release(void **state)
{
    vfdswmr_marks_t *m;
    vfdswmr_mark_t a, b;
    unsigned n;

    (void)state;
    assert_int_equal(make_table(7, &m), 1);
    assert_int_equal(vfdswmr_mark_attach(&a, md, 7, mdfd), VFDSWMR_ATTACHED);
    assert_int_equal(vfdswmr_mark_attach(&b, md, 7, mdfd), VFDSWMR_ATTACHED);
    assert_int_equal(vfdswmr_mark_set(&a, 5), 0);
    assert_int_equal(vfdswmr_mark_set(&b, 50), 0);
    assert_int_equal(vfdswmr_marks_lag(m, 64, 3, 60, &n), 60); /* 5 still kept: exactly the limit */
    assert_int_equal(vfdswmr_mark_released(&a, 5), 0);
    /* one tick more: 5 is released (and learns it), 50 decides the lag */
    assert_int_equal(vfdswmr_marks_lag(m, 65, 3, 60, &n), 16);
    assert_int_equal(n, 1);
    assert_int_equal(vfdswmr_mark_released(&a, 5), 1);
    assert_int_equal(vfdswmr_mark_released(&b, 50), 0);
    /* a refresh re-marks: kept again */
    assert_int_equal(vfdswmr_mark_set(&a, 60), 0);
    assert_int_equal(vfdswmr_mark_released(&a, 60), 0);
    assert_int_equal(vfdswmr_marks_lag(m, 66, 3, 60, &n), 17);
    assert_int_equal(n, 2);
    /* closing: limit max_lag releases everything older */
    assert_int_equal(vfdswmr_marks_lag(m, 70, 3, 3, &n), 3);
    assert_int_equal(vfdswmr_mark_released(&b, 50), 1);
    vfdswmr_mark_detach(&a);
    vfdswmr_mark_detach(&b);
    vfdswmr_marks_close(m);
}

static void
test_not_registered(void **state)
{
    vfdswmr_marks_t *m;
    vfdswmr_mark_t r[VFDSWMR_MARKS_SLOTS + 1];

    (void)state;
    assert_int_equal(vfdswmr_mark_attach(&r[0], md, 7, -1), VFDSWMR_ATTACH_NONE); /* no table, none made */
    assert_int_equal(r[0].fd, -1);
    assert_int_equal(make_table(7, &m), 1);
    assert_int_equal(vfdswmr_mark_attach(&r[0], md, 8, mdfd), VFDSWMR_ATTACH_NONE); /* another session's table */
    for (unsigned i = 0; i < VFDSWMR_MARKS_SLOTS; i++)
        assert_int_equal(vfdswmr_mark_attach(&r[i], md, 7, mdfd), VFDSWMR_ATTACHED);
    assert_int_equal(vfdswmr_mark_attach(&r[VFDSWMR_MARKS_SLOTS], md, 7, mdfd), VFDSWMR_ATTACH_NONE); /* full */
    for (unsigned i = 0; i < VFDSWMR_MARKS_SLOTS; i++)
        vfdswmr_mark_detach(&r[i]);
    vfdswmr_marks_close(m);
}

static void
test_marks_tick(void **state)
{
    vfdswmr_marks_t *m;
    vfdswmr_mark_t a, b, c;
    uint64_t t = 99;

    (void)state;
    assert_int_equal(make_table(7, &m), 1);
    assert_int_equal(vfdswmr_marks_tick(m, 0, &t), VFDSWMR_SLOT_FREE); /* free */
    assert_int_equal(vfdswmr_mark_attach(&a, md, 7, mdfd), VFDSWMR_ATTACHED);
    assert_int_equal(vfdswmr_marks_tick(m, a.slot, &t), VFDSWMR_SLOT_UNMARKED); /* live, not marked yet */
    assert_int_equal(vfdswmr_mark_set(&a, 5), 0);
    assert_int_equal(vfdswmr_marks_tick(m, a.slot, &t), VFDSWMR_SLOT_MARKED);
    assert_int_equal(t, 5);
    assert_int_equal(vfdswmr_mark_attach(&b, md, 7, mdfd), VFDSWMR_ATTACHED);
    assert_int_equal(vfdswmr_mark_set(&b, 9), 0);
    /* b goes, leaving 9 in its slot; c takes the slot: until c marks, the
     * slot is "not marked yet", never tick 9 */
    unsigned slot = b.slot;
    vfdswmr_mark_detach(&b);
    assert_int_equal(vfdswmr_marks_tick(m, slot, &t), VFDSWMR_SLOT_FREE);
    assert_int_equal(vfdswmr_mark_attach(&c, md, 7, mdfd), VFDSWMR_ATTACHED);
    assert_int_equal(c.slot, slot);
    assert_int_equal(vfdswmr_marks_tick(m, slot, &t), VFDSWMR_SLOT_UNMARKED);
    assert_int_equal(vfdswmr_mark_set(&c, 11), 0);
    assert_int_equal(vfdswmr_marks_tick(m, slot, &t), VFDSWMR_SLOT_MARKED);
    assert_int_equal(t, 11);
    /* the same through a descriptor of its own, read-only (vfd_swmr_inspect) */
    vfdswmr_markshdr_t h;
    int ro = vfdswmr_marks_open(md, 7, O_RDONLY, &h);
    assert_true(ro >= 0);
    t = 0;
    assert_int_equal(vfdswmr_marks_slot(ro, slot, &t), VFDSWMR_SLOT_MARKED);
    assert_int_equal(t, 11);
    assert_int_equal(vfdswmr_marks_slot(ro, a.slot, &t), VFDSWMR_SLOT_MARKED);
    assert_int_equal(t, 5);
    assert_int_equal(vfdswmr_marks_slot(ro, 63, &t), VFDSWMR_SLOT_FREE);
    close(ro);
    vfdswmr_mark_detach(&a);
    vfdswmr_mark_detach(&c);
    assert_int_equal(vfdswmr_marks_tick(NULL, 0, &t), VFDSWMR_SLOT_FREE); /* no table: cannot tell */
    assert_int_equal(vfdswmr_marks_tick(m, VFDSWMR_MARKS_SLOTS, &t), VFDSWMR_SLOT_FREE);
    vfdswmr_marks_close(m);
}

static void
test_reader_count(void **state)
{
    char path[300];
    int w, fd;
    vfdswmr_reg_t r[40];
    unsigned n = 99;

    (void)state;
    snprintf(path, sizeof path, "%s/count.h5", dir);
    assert_true((w = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644)) >= 0);
    assert_int_equal(vfdswmr_mdlock_readers(w, &n), VFDSWMR_COUNTED);
    assert_int_equal(n, 0);
    for (int i = 0; i < 40; i++) { /* each open() is a reader of its own */
        assert_true((fd = open(path, O_RDONLY)) >= 0);
        assert_int_equal(vfdswmr_reg_join(&r[i], fd), 0);
        assert_int_equal(vfdswmr_mdlock_readers(w, &n), VFDSWMR_COUNTED);
        assert_int_equal(n, (unsigned)i + 1);
    }
    for (int i = 0; i < 40; i += 2)
        vfdswmr_reg_leave(&r[i]); /* a reader that closes or dies */
    assert_int_equal(vfdswmr_mdlock_readers(w, &n), VFDSWMR_COUNTED);
    assert_int_equal(n, 20);
    /* a reader with a mark moves to its slot's byte, and back */
    assert_int_equal(vfdswmr_mdlock_marked(w, 3), 0);
    assert_int_equal(vfdswmr_reg_marked(&r[1], 3), 0);
    assert_int_equal(vfdswmr_mdlock_marked(w, 3), 1);
    assert_int_equal(vfdswmr_mdlock_readers(w, &n), VFDSWMR_COUNTED);
    assert_int_equal(n, 19);
    assert_int_equal(vfdswmr_mdlock_registered(w, &n), VFDSWMR_COUNTED); /* all of them: the marked one too */
    assert_int_equal(n, 20);
    assert_int_equal(vfdswmr_reg_marked(&r[1], 3), 0);  /* again: nothing changes */
    assert_int_equal(vfdswmr_reg_marked(&r[1], 4), -1); /* one slot at a time */
    assert_int_equal(vfdswmr_reg_unmarked(&r[1]), 0);
    assert_int_equal(vfdswmr_mdlock_marked(w, 3), 0);
    assert_int_equal(vfdswmr_mdlock_readers(w, &n), VFDSWMR_COUNTED);
    assert_int_equal(n, 20);
    /* a marked reader that dies: its slot byte goes with it */
    assert_int_equal(vfdswmr_reg_marked(&r[3], 5), 0);
    vfdswmr_reg_leave(&r[3]);
    assert_int_equal(vfdswmr_mdlock_marked(w, 5), 0);
    /* a reader registered on the shared byte is seen, not counted */
    struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = VFDSWMR_READER_LOCK_OFFSET, .l_len = 1};
    assert_true((fd = open(path, O_RDONLY)) >= 0);
    assert_int_equal(fcntl(fd, F_OFD_SETLK, &fl), 0);
    assert_int_equal(vfdswmr_mdlock_readers(w, &n), VFDSWMR_COUNT_SHARED);
    close(fd);
    for (int i = 1; i < 40; i += 2)
        vfdswmr_reg_leave(&r[i]);
    assert_int_equal(vfdswmr_mdlock_readers(w, &n), VFDSWMR_COUNTED);
    assert_int_equal(n, 0);
    close(w);
}

/* What the writer asks before it lists kept old bytes (vfd-swmr-writer/kept.c):
 * is any reader unmarked (a byte of its own, the shared byte), is any on a
 * slot's byte. */
static void
test_unmarked_reader(void **state)
{
    char path[300];
    int w, fd, sh;
    vfdswmr_reg_t a, b;
    struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = VFDSWMR_READER_LOCK_OFFSET, .l_len = 1};

    (void)state;
    snprintf(path, sizeof path, "%s/unmarked.h5", dir);
    assert_true((w = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644)) >= 0);
    assert_int_equal(vfdswmr_mdlock_unmarked_reader(w), 0);
    assert_int_equal(vfdswmr_mdlock_any_marked(w), 0);
    assert_true((fd = open(path, O_RDONLY)) >= 0);
    assert_int_equal(vfdswmr_reg_join(&a, fd), 0);
    assert_int_equal(vfdswmr_mdlock_unmarked_reader(w), 1); /* registered, not marked */
    assert_int_equal(vfdswmr_mdlock_any_marked(w), 0);
    assert_int_equal(vfdswmr_reg_marked(&a, 7), 0);
    assert_int_equal(vfdswmr_mdlock_unmarked_reader(w), 0); /* marked: it reads the list */
    assert_int_equal(vfdswmr_mdlock_any_marked(w), 1);
    assert_true((fd = open(path, O_RDONLY)) >= 0);
    assert_int_equal(vfdswmr_reg_join(&b, fd), 0);
    assert_int_equal(vfdswmr_mdlock_unmarked_reader(w), 1); /* one of two unmarked */
    vfdswmr_reg_leave(&b);
    assert_int_equal(vfdswmr_mdlock_unmarked_reader(w), 0);
    assert_true((sh = open(path, O_RDONLY)) >= 0); /* the shared byte: never marked */
    assert_int_equal(fcntl(sh, F_OFD_SETLK, &fl), 0);
    assert_int_equal(vfdswmr_mdlock_unmarked_reader(w), 1);
    close(sh);
    assert_int_equal(vfdswmr_mdlock_unmarked_reader(w), 0);
    assert_int_equal(vfdswmr_reg_unmarked(&a), 0);
    assert_int_equal(vfdswmr_mdlock_unmarked_reader(w), 1);
    assert_int_equal(vfdswmr_mdlock_any_marked(w), 0);
    vfdswmr_reg_leave(&a);
    assert_int_equal(vfdswmr_mdlock_unmarked_reader(w), 0);
    close(w);
}

/* The raw-data lock: readers share it, the writer's excludes them, a wait is
 * bounded, and a reader holding it is not taken for a registered reader. */
static void
test_raw_lock(void **state)
{
    char path[300];
    int w, r1, r2;
    unsigned n = 99;

    (void)state;
    snprintf(path, sizeof path, "%s/raw.h5", dir);
    assert_true((w = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644)) >= 0);
    assert_true((r1 = open(path, O_RDONLY)) >= 0);
    assert_true((r2 = open(path, O_RDONLY)) >= 0);
    assert_int_equal(vfdswmr_rawlock_take(r1, F_RDLCK, 0), VFDSWMR_TAKEN);
    assert_int_equal(vfdswmr_rawlock_take(r2, F_RDLCK, 0), VFDSWMR_TAKEN); /* readers share it */
    assert_int_equal(vfdswmr_mdlock_any_reader(w), 0);                     /* and are not registered by it */
    assert_int_equal(vfdswmr_mdlock_readers(w, &n), VFDSWMR_COUNTED);
    assert_int_equal(n, 0);
    assert_int_equal(vfdswmr_rawlock_take(w, F_WRLCK, 0.01), VFDSWMR_TAKE_BUSY); /* waited, gave up */
    vfdswmr_rawlock_drop(r1);
    assert_int_equal(vfdswmr_rawlock_take(w, F_WRLCK, 0), VFDSWMR_TAKE_BUSY); /* r2 still reads */
    vfdswmr_rawlock_drop(r2);
    assert_int_equal(vfdswmr_rawlock_take(w, F_WRLCK, 0), VFDSWMR_TAKEN);
    assert_int_equal(vfdswmr_rawlock_take(r1, F_RDLCK, 0.01), VFDSWMR_TAKE_BUSY); /* the writer writes */
    assert_int_equal(vfdswmr_mdlock_hdf5_held(r1), 0);                            /* not the writer's liveness lock */
    vfdswmr_rawlock_drop(w);
    assert_int_equal(vfdswmr_rawlock_take(r1, F_RDLCK, 0), VFDSWMR_TAKEN);
    close(r1); /* closing drops it */
    assert_int_equal(vfdswmr_rawlock_take(w, F_WRLCK, 0), VFDSWMR_TAKEN);
    assert_int_equal(vfdswmr_rawlock_take(-1, F_RDLCK, 0), VFDSWMR_TAKE_ERROR);
    close(r2);
    close(w);
}

/* The first reader that needs the table makes it; the writer finds it;
 * what else may be at the name is never written through or kept. */
static void
test_reader_makes_table(void **state)
{
    char table[300], other[300];
    vfdswmr_marks_t *m;
    vfdswmr_mark_t a, b;
    struct stat st;
    unsigned n;
    int fd;

    (void)state;
    assert_int_equal(vfdswmr_marks_name(table, sizeof table, md), 0);
    assert_int_equal(vfdswmr_marks_find(md, 7, &mdid, &m), 0); /* no reader yet: none */
    assert_null(m);
    assert_int_equal(vfdswmr_mark_attach(&a, md, 7, mdfd), VFDSWMR_ATTACHED);
    assert_true(a.created);
    assert_int_equal(stat(table, &st), 0); /* whole, the metadata file's owner and mode (and the owner's rw) */
    assert_int_equal(st.st_size, VFDSWMR_MARKSHDR_SIZE + VFDSWMR_MARKS_SLOTS * VFDSWMR_MARKSLOT_SIZE);
    assert_int_equal(st.st_mode & 0777, 0640);
    assert_int_equal(st.st_uid, geteuid());
    assert_int_equal(vfdswmr_mark_attach(&b, md, 7, mdfd), VFDSWMR_ATTACHED); /* the second uses it */
    assert_false(b.created);
    assert_int_not_equal(a.slot, b.slot);
    assert_int_equal(vfdswmr_mark_set(&a, 4), 0);
    assert_int_equal(vfdswmr_marks_find(md, 7, &mdid, &m), 1); /* the writer finds it, with the marks in it */
    assert_int_equal(vfdswmr_marks_lag(m, 20, 3, 60, &n), 17);
    assert_int_equal(n, 1);
    vfdswmr_mark_detach(&a);
    vfdswmr_mark_detach(&b);
    vfdswmr_marks_close(m);
    assert_int_equal(access(table, F_OK), -1); /* removed with the writer */

    /* a table a reader made for a writer that is gone: the reader removes it */
    assert_int_equal(vfdswmr_mark_attach(&a, md, 7, mdfd), VFDSWMR_ATTACHED);
    assert_int_equal(vfdswmr_mark_attach(&b, md, 7, mdfd), VFDSWMR_ATTACHED);
    vfdswmr_mark_abandon(&b, md); /* not its own: stays */
    assert_int_equal(access(table, F_OK), 0);
    vfdswmr_mark_abandon(&a, md);
    assert_int_equal(access(table, F_OK), -1);
    assert_int_equal(a.fd, -1);

    /* another session's (a reader of an earlier writer made it late): a
     * reader of ours is not registered, the writer removes it */
    assert_int_equal(make_table(8, &m), 1);
    vfdswmr_marks_forget(m); /* that writer is gone */
    vfdswmr_marks_close(m);
    assert_int_equal(vfdswmr_mark_attach(&a, md, 7, mdfd), VFDSWMR_ATTACH_NONE);
    assert_int_equal(access(table, F_OK), 0);
    assert_int_equal(vfdswmr_marks_find(md, 7, &mdid, &m), 0);
    assert_int_equal(access(table, F_OK), -1);

    /* ... but not by a writer whose metadata file no longer has its name
     * (its HDF5 file was removed and made again while it was open: the
     * name space is the new session's) */
    assert_int_equal(make_table(8, &m), 1);
    vfdswmr_marks_forget(m);
    vfdswmr_marks_close(m);
    vfdswmr_file_id_t gone = {mdid.dev, mdid.ino + 1};
    assert_int_equal(vfdswmr_marks_find(md, 7, &gone, &m), 0);
    assert_int_equal(access(table, F_OK), 0);
    assert_int_equal(vfdswmr_marks_find(md, 7, &mdid, &m), 0);
    assert_int_equal(access(table, F_OK), -1);

    /* not a table at all: kept by readers, removed by the writer */
    assert_true((fd = open(table, O_RDWR | O_CREAT | O_EXCL, 0644)) >= 0);
    assert_int_equal(write(fd, "not a table", 11), 11);
    close(fd);
    assert_int_equal(vfdswmr_mark_attach(&a, md, 7, mdfd), VFDSWMR_ATTACH_NONE);
    assert_int_equal(stat(table, &st), 0);
    assert_int_equal(st.st_size, 11);
    assert_int_equal(vfdswmr_marks_find(md, 7, &mdid, &m), 0);
    assert_int_equal(access(table, F_OK), -1);

    /* a link to someone's file: never written through, followed or kept */
    snprintf(other, sizeof other, "%s/victim", dir);
    assert_true((fd = open(other, O_RDWR | O_CREAT | O_TRUNC, 0644)) >= 0);
    close(fd);
    assert_int_equal(symlink(other, table), 0);
    assert_int_equal(vfdswmr_mark_attach(&a, md, 7, mdfd), VFDSWMR_ATTACH_NONE);
    assert_int_equal(vfdswmr_marks_find(md, 7, &mdid, &m), 0);
    assert_int_equal(lstat(table, &st), -1);
    assert_int_equal(stat(other, &st), 0);
    assert_int_equal(st.st_size, 0);
    unlink(other);

    /* the writer's open clears whatever is there */
    assert_int_equal(make_table(9, &m), 1);
    vfdswmr_marks_forget(m);
    vfdswmr_marks_close(m);
    vfdswmr_marks_clear(md);
    assert_int_equal(access(table, F_OK), -1);
}

/* The writer's word that it has the table (its list, written when it
 * adopts it); a table removed from its name: before the writer had it,
 * its readers can tell; after, the writer releases every mark in it. */
static void
test_adopted_or_lost(void **state)
{
    char table[300];
    vfdswmr_marks_t *m;
    vfdswmr_mark_t a, b;
    unsigned n;

    (void)state;
    assert_int_equal(vfdswmr_marks_name(table, sizeof table, md), 0);
    assert_int_equal(vfdswmr_mark_attach(&a, md, 7, mdfd), VFDSWMR_ATTACHED);
    assert_int_equal(vfdswmr_mark_confirm(&a, md), 0); /* at its name, not adopted yet */
    assert_int_equal(vfdswmr_marks_find(md, 7, &mdid, &m), 1);
    assert_int_equal(vfdswmr_mark_confirm(&a, md), 0); /* found, but not said so */
    assert_int_equal(vfdswmr_kept_write_list(vfdswmr_marks_fd(m), 7, NULL, 0), 0);
    assert_int_equal(vfdswmr_mark_confirm(&a, md), 1);
    assert_true(a.acked);
    /* removed (by hand) after that: the writer sees it and releases all */
    assert_int_equal(vfdswmr_marks_named(m), 1);
    assert_int_equal(vfdswmr_mark_set(&a, 40), 0);
    assert_int_equal(unlink(table), 0);
    assert_int_equal(vfdswmr_mark_confirm(&a, md), 1); /* adopted: the release tells */
    assert_int_equal(vfdswmr_marks_named(m), 0);
    assert_int_equal(vfdswmr_mark_released(&a, 40), 0);
    assert_int_equal(vfdswmr_marks_release_all(m), 0);
    assert_int_equal(vfdswmr_mark_released(&a, 40), 1);
    assert_int_equal(vfdswmr_mark_released(&a, UINT64_MAX - 1), 1);
    assert_int_equal(vfdswmr_marks_lag(m, 50, 3, 60, &n), 3); /* nothing kept for it any more */
    assert_int_equal(n, 0);
    vfdswmr_marks_forget(m);
    vfdswmr_marks_close(m);
    vfdswmr_mark_detach(&a);
    /* replaced: another file at the name is not the writer's table */
    assert_int_equal(make_table(7, &m), 1);
    assert_int_equal(unlink(table), 0);
    assert_int_equal(vfdswmr_mark_attach(&b, md, 7, mdfd), VFDSWMR_ATTACHED);
    assert_true(b.created);
    assert_int_equal(vfdswmr_marks_named(m), 0);
    /* removed before the writer had it: the reader can tell */
    assert_int_equal(vfdswmr_mark_confirm(&b, md), 0);
    assert_int_equal(unlink(table), 0);
    assert_int_equal(vfdswmr_mark_confirm(&b, md), -1);
    vfdswmr_mark_detach(&b);
    vfdswmr_marks_forget(m);
    vfdswmr_marks_close(m);

    /* a table of another owner is nobody's: readers do not register in it,
     * the writer removes it (root only: only root gives files away) */
    if (geteuid() == 0) {
        assert_int_equal(vfdswmr_mark_attach(&a, md, 7, mdfd), VFDSWMR_ATTACHED);
        vfdswmr_mark_detach(&a);
        assert_int_equal(chown(table, 65534, 65534), 0);
        assert_int_equal(vfdswmr_mark_attach(&a, md, 7, mdfd), VFDSWMR_ATTACH_NONE);
        assert_int_equal(vfdswmr_marks_find(md, 7, &mdid, &m), 0);
        assert_int_equal(access(table, F_OK), -1);
    }
}

/* Readers racing to make the table: exactly one makes it, all of them
 * hold a slot of that one table, each its own. */
static void
test_readers_race_to_make(void **state)
{
    enum { N = 8 };
    int up[N][2], down[N][2], status;
    pid_t pid[N];
    unsigned made = 0, slots = 0;
    vfdswmr_marks_t *m;
    uint64_t t;

    (void)state;
    for (int i = 0; i < N; i++) {
        assert_int_equal(pipe(up[i]), 0);
        assert_int_equal(pipe(down[i]), 0);
        assert_true((pid[i] = fork()) >= 0);
        if (pid[i] == 0) {
            vfdswmr_mark_t r;
            char out[2] = {'x', 'x'};
            if (vfdswmr_mark_attach(&r, md, 7, mdfd) == VFDSWMR_ATTACHED && vfdswmr_mark_set(&r, 100 + r.slot) == 0)
                out[0] = (char)('A' + r.slot), out[1] = r.created ? 'c' : 'u';
            if (write(up[i][1], out, 2) != 2)
                _exit(1);
            char c;
            if (read(down[i][0], &c, 1) != 1) /* hold the slot until told */
                _exit(1);
            _exit(0);
        }
    }
    char got[N][2];
    for (int i = 0; i < N; i++) {
        assert_int_equal(read(up[i][0], got[i], 2), 2);
        assert_true(got[i][0] >= 'A' && got[i][0] < 'A' + N);
        made += got[i][1] == 'c';
        for (int j = 0; j < i; j++)
            assert_int_not_equal(got[i][0], got[j][0]); /* a slot each */
    }
    assert_int_equal(made, 1);
    assert_int_equal(vfdswmr_marks_find(md, 7, &mdid, &m), 1);
    for (unsigned i = 0; i < VFDSWMR_MARKS_SLOTS; i++)
        if (vfdswmr_marks_tick(m, i, &t) == VFDSWMR_SLOT_MARKED) {
            assert_int_equal(t, 100 + i); /* each child's mark, in the one table */
            slots++;
        }
    assert_int_equal(slots, N);
    for (int i = 0; i < N; i++) {
        assert_int_equal(write(down[i][1], "g", 1), 1);
        assert_int_equal(waitpid(pid[i], &status, 0), pid[i]);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        close(up[i][0]), close(up[i][1]), close(down[i][0]), close(down[i][1]);
    }
    vfdswmr_marks_close(m);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_codec),
        cmocka_unit_test(test_lag_follows_oldest_mark),
        cmocka_unit_test(test_release),
        cmocka_unit_test(test_not_registered),
        cmocka_unit_test(test_marks_tick),
        cmocka_unit_test(test_reader_count),
        cmocka_unit_test(test_unmarked_reader),
        cmocka_unit_test(test_raw_lock),
        cmocka_unit_test(test_reader_makes_table),
        cmocka_unit_test(test_adopted_or_lost),
        cmocka_unit_test(test_readers_race_to_make),
    };
    if (testdir_setup(NULL) < 0)
        return 1;
    snprintf(md, sizeof md, "%s/f.h5.md", dir);
    struct stat st;
    if ((mdfd = open(md, O_RDWR | O_CREAT | O_TRUNC, 0640)) < 0 || fchmod(mdfd, 0640) < 0 || fstat(mdfd, &st) < 0)
        return 1;
    mdid = (vfdswmr_file_id_t){st.st_dev, st.st_ino};
    return cmocka_run_group_tests(tests, NULL, testdir_teardown);
}
