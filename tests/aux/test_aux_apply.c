/*
 * vfd_swmr_aux's daemon (aux/apply.c) in-process, on real files, one
 * aux_poll() at a time (no threads, no sleeps; a fake clock times the lag
 * warnings). Updater files come from the mdfile writer itself; a second
 * writer with the same session and inputs keeps the metadata file the
 * local copy must equal, byte for byte.
 *
 * Covered: everything applied equals the writer's own file; FINAL removes
 * the local file (a reader's open descriptor keeps the final state);
 * out-of-order arrival; torn files retried; gaps waited out and warned
 * about; garbage names; restarts (after any number of updaters, mid-apply,
 * after CREATE_ONLY, with the directory empty at first, after FINAL was
 * applied but the file not removed) never apply an updater twice and never
 * read applied ones; a new writer session; stale files of an older session;
 * damaged updaters and local I/O errors are fatal with exact messages.
 * Hostile files: FIFOs, directories and devices where an updater or the
 * local file is expected (fatal, never blocking), trailing bytes (fatal),
 * claims larger than the file (not allocated: ru_maxrss), symbolic links
 * planted at every path the daemon creates (never followed).
 *
 * Every test runs under alarm(): an open that blocked on a FIFO would end
 * the program instead of hanging it (a guard, not a synchronisation).
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
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aux.h"
#include "checksum.h"
#include "io.h"
#include "le.h"
#include "mdreader.h"
#include "mdwriter.h"
#include "plan.h"
#include "safefile.h"
#include "testdir.h"
#include "updater.h"

#define GUARD_S 600
/* What a refused claim may add to the peak resident size. */
#define MEM_BOUND_KIB (64L * 1024)
#define TWO_GIB       (2ull << 30)

#define PS        512u
#define SESSION_A 0xa11ce00000000001ull
#define SESSION_B 0xb0b0000000000002ull
#define SESSION_C 0xc0c0000000000003ull

static char nfs[256], stage[256], local[256], ref[256], ref2[256], logpath[256];
static char ud_nfs[300], ud_stage[300];
static double fake_now;

static double
fake_clock(void)
{
    return fake_now;
}

static int
setup(void **state)
{
    (void)state;
    snprintf(nfs, sizeof nfs, "%s/nfs", dir);
    snprintf(stage, sizeof stage, "%s/stage", dir);
    snprintf(local, sizeof local, "%s/local/f.h5.md", dir);
    snprintf(ref, sizeof ref, "%s/ref.md", dir);
    snprintf(ref2, sizeof ref2, "%s/ref2.md", dir);
    snprintf(logpath, sizeof logpath, "%s/aux.log", dir);
    snprintf(ud_nfs, sizeof ud_nfs, "%s/f.h5.ud", nfs);
    snprintf(ud_stage, sizeof ud_stage, "%s/f.h5.ud", stage);
    fake_now = 1000.0;
    alarm(GUARD_S);
    char path[300];
    snprintf(path, sizeof path, "%s/local", dir);
    return mkdir(nfs, 0755) || mkdir(stage, 0755) || mkdir(path, 0755) ? -1 : 0;
}

static int
teardown(void **state)
{
    char cmd[300];

    (void)state;
    alarm(0);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'/*", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---- files ---------------------------------------------------------------- */

static const char *
ud(const char *base, uint64_t seq)
{
    static char names[4][320];
    static unsigned next;
    char *out = names[next++ % 4];

    assert_int_equal(vfdswmr_updater_name(out, sizeof names[0], base, seq), 0);
    return out;
}

/* Updater seq appears in the watched directory (as the writer's rename). */
static void
move_in(uint64_t seq)
{
    assert_int_equal(rename(ud(ud_stage, seq), ud(ud_nfs, seq)), 0);
}

static void
move_range(uint64_t from, uint64_t to)
{
    for (uint64_t s = from; s <= to; s++)
        move_in(s);
}

/* Lines of the log at path containing `what`. */
static int
log_count(const char *path, const char *what)
{
    FILE *fp = fopen(path, "r");
    char line[2048];
    int n = 0;

    assert_non_null(fp);
    while (fgets(line, sizeof line, fp))
        n += strstr(line, what) != NULL;
    fclose(fp);
    return n;
}

/* ---- the writer side ------------------------------------------------------ */

typedef struct gen_t {
    vfdswmr_mdw_t *ud, *ref; /* ref: the same publishes into a metadata file; may be NULL */
    uint64_t t;
    bool relocated; /* the index left the reserved page at some tick */
} gen_t;

static void
fill(uint8_t *img, uint32_t len, uint64_t p, uint64_t t)
{
    for (uint32_t i = 0; i < len; i++)
        img[i] = (uint8_t)(p * 13u + t * 101u + i * 7u);
}

static void
gen_open(gen_t *g, const char *ud_base, const char *ref_path, uint64_t session)
{
    vfdswmr_mdw_opts_t o = {.page_size = PS, .reserved_pages = 1, .max_lag = 3, .ud_base = ud_base, .session = session};
    char err[VFDSWMR_MDW_ERRLEN];

    *g = (gen_t){0};
    assert_int_equal(vfdswmr_mdw_open(&o, &g->ud, err, sizeof err), 0);
    if (ref_path) {
        o.ud_base = NULL;
        o.md_path = ref_path;
        assert_int_equal(vfdswmr_mdw_open(&o, &g->ref, err, sizeof err), 0);
    }
}

/*
 * Publish the next tick on both writers: 1 to 5 changes, single pages and
 * odd-length multi-page entries, with 0 to 2 metadata ranges each,
 * sometimes a removal; with one reserved page (index slots of 216 bytes)
 * the index is relocated once its entries and ranges need more.
 */
static void
gen_tick(gen_t *g, unsigned flags)
{
    static uint8_t imgs[5][3 * PS];
    uint64_t t = g->t + 1, p0 = (t * 11) % 50, removal = p0 ? p0 - 1 : 0;
    vfdswmr_mdchange_t c[5];
    vfdswmr_mdrange_t r[5][2];
    size_t n = 1 + (size_t)(t * 7 % 5), nr = t % 4 == 0 && p0 > 0;
    char err[VFDSWMR_MDW_ERRLEN];

    for (size_t i = 0; i < n; i++) {
        uint64_t p = p0 + 4 * i;
        uint32_t len = (i + t) % 3 == 0 ? 2 * PS + 100 : PS;
        fill(imgs[i], len, p, t);
        r[i][0] = (vfdswmr_mdrange_t){(uint32_t)t % 7, 9};
        r[i][1] = (vfdswmr_mdrange_t){100, len - 100};
        c[i] = (vfdswmr_mdchange_t){p, len, imgs[i], r[i], (uint32_t)((i + t) % 3)};
    }
    assert_int_equal(vfdswmr_mdw_publish(g->ud, t * 4096, c, n, &removal, nr, flags, err, sizeof err), 0);
    if (g->ref)
        assert_int_equal(vfdswmr_mdw_publish(g->ref, t * 4096, c, n, &removal, nr, flags, err, sizeof err), 0);
    g->relocated |= vfdswmr_mdw_index_relocated(g->ud);
    g->t = t;
}

static void
gen_ticks(gen_t *g, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        gen_tick(g, 0);
}

static void
gen_close(gen_t *g)
{
    char err[VFDSWMR_MDW_ERRLEN];

    assert_int_equal(vfdswmr_mdw_close(g->ud, false, err, sizeof err), 0);
    if (g->ref)
        assert_int_equal(vfdswmr_mdw_close(g->ref, false, err, sizeof err), 0);
}

/* ---- the daemon ----------------------------------------------------------- */

static aux_opts_t
opts(void)
{
    aux_opts_t o;

    aux_opts_defaults(&o);
    o.md_file = local;
    o.ud_base = ud_nfs;
    o.log_file = logpath;
    o.tick_len = 1; /* 0.1 s: lag warnings after 0.3 s of the fake clock */
    o.max_lag = 3;
    o.polls_per_tick = 1;    /* list the directory on every idle poll */
    o.md_pages_reserved = 1; /* as the writers: same initial size */
    o.clock = fake_clock;
    return o;
}

static aux_t *
start_with(const aux_opts_t *o)
{
    char err[AUX_ERRLEN];
    aux_t *a;

    if (aux_open(o, &a, err, sizeof err) < 0)
        fail_msg("aux_open: %s", err);
    return a;
}

static aux_t *
start(void)
{
    aux_opts_t o = opts();
    return start_with(&o);
}

/* The message of the last poll or run that failed (aux.h: the caller's err). */
static char last_err[AUX_ERRLEN];

static aux_status_t
poll1(aux_t *a)
{
    return aux_poll(a, last_err, sizeof last_err);
}

/* Poll until nothing more can be done now. */
static aux_status_t
drain(aux_t *a)
{
    aux_status_t s;

    while ((s = poll1(a)) == AUX_PROGRESS)
        ;
    return s;
}

/* Poll until `n` updaters were applied or skipped. */
static void
steps(aux_t *a, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        assert_int_equal(poll1(a), AUX_PROGRESS);
}

/* ---- comparing with the writer's own metadata file ------------------------- */

static void
load_fd(int fd, vfdswmr_mdsnap_t *s)
{
    vfdswmr_mdr_io_t io = vfdswmr_mdr_fd_io(&fd);
    vfdswmr_mdr_opts_t o;
    char why[256];

    vfdswmr_mdr_opts_default(&o);
    o.max_attempts = 1;
    if (vfdswmr_mdr_load(&io, &o, s, why, sizeof why) != VFDSWMR_MD_OK)
        fail_msg("cannot load: %s", why);
}

/* Whether byte `off` lies in the header, the index or an image of snapshot s. */
static bool
named(const vfdswmr_mdsnap_t *s, uint64_t off)
{
    if (off < VFDSWMR_MDHDR_SIZE || (off >= s->hdr.index_offset && off < s->hdr.index_offset + s->hdr.index_length))
        return true;
    for (uint32_t i = 0; i < s->idx.nentries; i++) {
        uint64_t start = s->idx.entries[i].md_page * PS;
        if (off >= start && off < start + s->idx.entries[i].length)
            return true;
    }
    return false;
}

/*
 * The local file open on lfd holds what the reference metadata file holds:
 * the same header and index (as a reader loads them), the same image for
 * every entry, and the same bytes up to the reference's size. Returns how
 * many bytes differ; each must be one the writer's file has as zero because
 * it shrank its file (ftruncate) and grew it again -- updater files do not
 * carry that, so the local file still has what was written there before --
 * and so lie outside everything the snapshot names.
 */
static uint64_t
compare_fd(int lfd, const char *ref_path)
{
    int rfd = open(ref_path, O_RDONLY);
    vfdswmr_mdr_io_t lio = vfdswmr_mdr_fd_io(&lfd), rio = vfdswmr_mdr_fd_io(&rfd);
    vfdswmr_mdsnap_t l, r;
    struct stat ls, rs;
    uint8_t *lb, *rb;
    uint64_t diffs = 0;

    assert_true(rfd >= 0);
    load_fd(lfd, &l);
    load_fd(rfd, &r);
    assert_true(l.hdr.session == r.hdr.session && l.hdr.tick == r.hdr.tick && l.hdr.eoa == r.hdr.eoa &&
                l.hdr.index_offset == r.hdr.index_offset && l.hdr.index_length == r.hdr.index_length);
    assert_int_equal(l.idx.nentries, r.idx.nentries);
    assert_int_equal(l.idx.nranges, r.idx.nranges);
    if (r.idx.nranges)
        assert_memory_equal(l.idx.ranges, r.idx.ranges, r.idx.nranges * sizeof *r.idx.ranges);
    for (uint32_t i = 0; i < r.idx.nentries; i++) {
        uint8_t a[3 * PS], b[3 * PS];
        const vfdswmr_mdentry_t *e = &r.idx.entries[i];
        assert_memory_equal(&l.idx.entries[i], e, sizeof *e);
        assert_int_equal(vfdswmr_mdr_read_image(&lio, PS, e, a), VFDSWMR_MD_OK);
        assert_int_equal(vfdswmr_mdr_read_image(&rio, PS, e, b), VFDSWMR_MD_OK);
        assert_memory_equal(a, b, e->length);
    }
    assert_int_equal(fstat(lfd, &ls), 0);
    assert_int_equal(fstat(rfd, &rs), 0);
    assert_true(ls.st_size >= rs.st_size);
    assert_non_null(lb = malloc((size_t)rs.st_size));
    assert_non_null(rb = malloc((size_t)rs.st_size));
    assert_int_equal(vfdswmr_pread_all(lfd, lb, (size_t)rs.st_size, 0), 0);
    assert_int_equal(vfdswmr_pread_all(rfd, rb, (size_t)rs.st_size, 0), 0);
    for (off_t i = 0; i < rs.st_size; i++)
        if (lb[i] != rb[i]) {
            if (rb[i] != 0 || named(&r, (uint64_t)i))
                fail_msg("local and writer's metadata files differ at byte %lld", (long long)i);
            diffs++;
        }
    vfdswmr_mdsnap_free(&l);
    vfdswmr_mdsnap_free(&r);
    free(lb);
    free(rb);
    close(rfd);
    return diffs;
}

/* Compare (compare_fd) and require every byte to be equal. */
static void
compare(const char *ref_path)
{
    int fd = open(local, O_RDONLY);

    assert_true(fd >= 0);
    assert_int_equal(compare_fd(fd, ref_path), 0);
    close(fd);
}

/* Tick of the local file's header. */
static uint64_t
local_tick(void)
{
    vfdswmr_mdsnap_t s;
    uint64_t t;
    int fd = open(local, O_RDONLY);

    assert_true(fd >= 0);
    load_fd(fd, &s);
    t = s.hdr.tick;
    vfdswmr_mdsnap_free(&s);
    close(fd);
    return t;
}

/* ---- tests ---------------------------------------------------------------- */

/* Everything applied: the local file is the writer's; FINAL removes it. */
static void
test_apply_all(void **state)
{
    gen_t g;
    aux_t *a;
    int held;

    (void)state;
    gen_open(&g, ud_nfs, ref, SESSION_A);
    gen_ticks(&g, 25); /* updaters 0 (CREATE_ONLY), 1 (tick 0) .. 26 (tick 25) */
    assert_true(g.relocated);
    a = start();
    assert_int_equal(drain(a), AUX_WAITING);
    assert_int_equal(aux_expected(a), 27);
    const aux_stats_t *st = aux_stats(a);
    assert_true(st->applied == 27 && st->skipped == 0 && st->retries == 0 && st->gaps == 0 && st->garbage == 0);
    assert_true(st->bytes > 25 * PS && st->apply_max > 0 && st->apply_total >= st->apply_max);
    compare(ref);

    /* a reader holds the file open; FINAL is applied, then the file removed */
    held = open(local, O_RDONLY);
    assert_true(held >= 0);
    gen_tick(&g, VFDSWMR_MDW_FINAL);
    assert_int_equal(drain(a), AUX_DONE);
    assert_int_equal(access(local, F_OK), -1);
    assert_int_equal(errno, ENOENT);
    assert_int_equal(compare_fd(held, ref), 0);
    close(held);
    assert_int_equal(poll1(a), AUX_DONE);
    assert_int_equal(st->applied, 28);
    aux_close(a);
    assert_int_equal(log_count(logpath, " applying seq="), 28);
    assert_int_equal(log_count(logpath, " applied seq="), 28);
    assert_int_equal(log_count(logpath, " applied seq=27 tick=26 "), 1);
    assert_int_equal(log_count(logpath, " applying seq=27 tick=26 images="), 1);
    assert_int_equal(log_count(logpath, " final sequence 27 was the writer's last"), 1);
    gen_close(&g);
}

/*
 * A long run (400 ticks): the writer's file shrinks and grows again many
 * times; after every tick the local file loads the same snapshot, and it
 * differs from the writer's only in bytes nothing names (see compare_fd).
 */
static void
test_long_run(void **state)
{
    uint64_t diffs = 0;
    gen_t g;
    aux_t *a;
    int fd;

    (void)state;
    gen_open(&g, ud_nfs, ref, SESSION_A);
    a = start();
    for (int t = 0; t < 400; t++) {
        gen_tick(&g, 0);
        assert_int_equal(drain(a), AUX_WAITING);
        assert_true((fd = open(local, O_RDONLY)) >= 0);
        uint64_t d = compare_fd(fd, ref);
        close(fd);
        if (d > diffs)
            diffs = d;
    }
    assert_int_equal(aux_stats(a)->applied, 402);
    assert_true(diffs > 0); /* the case compare_fd allows for did occur */
    aux_close(a);
    gen_close(&g);
}

/* Updaters appearing in any order are applied in sequence, never past a hole. */
static void
test_out_of_order(void **state)
{
    enum { N = 32 };
    bool present[N] = {false};
    uint64_t perm[N], x = 12345;
    gen_t g;
    aux_t *a;

    (void)state;
    gen_open(&g, ud_stage, ref, SESSION_A);
    gen_ticks(&g, N - 2);
    for (uint64_t i = 0; i < N; i++)
        perm[i] = i;
    for (uint64_t i = N - 1; i > 0; i--) { /* Fisher-Yates with a fixed LCG */
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t j = (x >> 33) % (i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    a = start();
    assert_int_equal(drain(a), AUX_WAITING);
    for (unsigned k = 0; k < N; k++) {
        uint64_t prefix = 0;
        move_in(perm[k]);
        present[perm[k]] = true;
        while (prefix < N && present[prefix])
            prefix++;
        assert_int_equal(drain(a), AUX_WAITING);
        assert_int_equal(aux_expected(a), prefix);
        assert_int_equal(aux_stats(a)->applied, prefix);
    }
    assert_true(aux_stats(a)->gaps >= 1);
    compare(ref);
    aux_close(a);
    gen_close(&g);
}

/* A torn updater at the final name is "not there yet" until it is whole. */
static void
test_torn(void **state)
{
    gen_t g;
    aux_t *a;
    uint8_t *whole;
    size_t len;

    (void)state;
    gen_open(&g, ud_stage, ref, SESSION_A);
    gen_ticks(&g, 6); /* 0 .. 7 */
    move_range(0, 3);
    a = start();
    assert_int_equal(drain(a), AUX_WAITING);
    assert_int_equal(aux_expected(a), 4);
    whole = slurp(ud(ud_stage, 4), &len);
    assert_true(len > 2 * PS);

    spill(ud(ud_nfs, 4), whole, 30); /* part of the header */
    assert_int_equal(drain(a), AUX_WAITING);
    assert_int_equal(aux_stats(a)->retries, 1);
    spill(ud(ud_nfs, 4), whole, len / 2); /* header whole, images cut */
    assert_int_equal(drain(a), AUX_WAITING);
    assert_int_equal(aux_stats(a)->retries, 2);
    whole[len - 1] ^= 0x40; /* whole length, last byte (the header image) wrong */
    spill(ud(ud_nfs, 4), whole, len);
    whole[len - 1] ^= 0x40;
    assert_int_equal(drain(a), AUX_WAITING);
    assert_int_equal(aux_stats(a)->retries, 3);
    /* torn for longer than max_lag ticks: one warning */
    assert_int_equal(aux_stats(a)->warnings, 0);
    fake_now += 0.5;
    assert_int_equal(drain(a), AUX_WAITING);
    assert_int_equal(drain(a), AUX_WAITING);
    assert_int_equal(aux_stats(a)->warnings, 1);
    assert_int_equal(aux_stats(a)->retries, 5);
    spill(ud(ud_nfs, 4), whole, 0); /* created, nothing written yet */
    assert_int_equal(drain(a), AUX_WAITING);
    assert_int_equal(aux_stats(a)->retries, 6);
    assert_int_equal(aux_expected(a), 4);
    assert_int_equal(local_tick(), 2);

    spill(ud(ud_nfs, 4), whole, len); /* now whole */
    move_range(5, 7);
    assert_int_equal(drain(a), AUX_WAITING);
    assert_int_equal(aux_expected(a), 8);
    assert_int_equal(aux_stats(a)->applied, 8);
    assert_int_equal(aux_stats(a)->retries, 6);
    compare(ref);
    aux_close(a);
    assert_int_equal(log_count(logpath, " retry "), 1); /* logged once per sequence */
    assert_int_equal(log_count(logpath, " warning updater "), 1);
    free(whole);
    gen_close(&g);
}

/* A missing updater with later ones present: logged once, warned once after max_lag ticks, never skipped. */
static void
test_gap(void **state)
{
    gen_t g;
    aux_t *a;

    (void)state;
    gen_open(&g, ud_stage, ref, SESSION_A);
    gen_ticks(&g, 8); /* 0 .. 9 */
    move_range(0, 2);
    move_range(4, 6);
    a = start();
    assert_int_equal(drain(a), AUX_WAITING);
    assert_int_equal(aux_expected(a), 3);
    assert_int_equal(aux_stats(a)->gaps, 1);
    fake_now += 0.2; /* 2 ticks: not yet */
    assert_int_equal(drain(a), AUX_WAITING);
    assert_int_equal(aux_stats(a)->warnings, 0);
    fake_now += 0.2; /* 4 ticks > max_lag 3 */
    assert_int_equal(drain(a), AUX_WAITING);
    assert_int_equal(drain(a), AUX_WAITING);
    assert_int_equal(aux_stats(a)->warnings, 1);
    assert_int_equal(aux_stats(a)->gaps, 1);
    assert_int_equal(aux_expected(a), 3);

    move_in(3);
    assert_int_equal(drain(a), AUX_WAITING);
    assert_int_equal(aux_expected(a), 7);
    move_range(8, 9); /* 7 missing: a second gap */
    assert_int_equal(drain(a), AUX_WAITING);
    assert_int_equal(aux_stats(a)->gaps, 2);
    move_in(7);
    assert_int_equal(drain(a), AUX_WAITING);
    assert_int_equal(aux_expected(a), 10);
    assert_int_equal(aux_stats(a)->warnings, 1);
    compare(ref);
    aux_close(a);
    assert_int_equal(log_count(logpath, " gap sequence 3 missing while later updaters (up to 6) are present"), 1);
    assert_int_equal(log_count(logpath, " gap "), 2);
    {
        char want[1024];
        snprintf(want, sizeof want,
                 " warning updater %s has been missing while later ones are present for 0.4 s, more than "
                 "max_lag=3 ticks: readers of %s fall behind\n",
                 ud(ud_nfs, 3), local);
        assert_int_equal(log_count(logpath, want), 1);
    }
    gen_close(&g);
}

/* Started after the writer removed its first updaters: waits, and says why it may wait forever. */
static void
test_gap_removed(void **state)
{
    char want[1024];
    gen_t g;
    aux_t *a;

    (void)state;
    gen_open(&g, ud_stage, NULL, SESSION_A);
    gen_ticks(&g, 6);
    move_range(4, 7);
    a = start();
    assert_int_equal(drain(a), AUX_WAITING);
    fake_now += 0.5;
    assert_int_equal(drain(a), AUX_WAITING);
    assert_true(aux_expected(a) == 0 && aux_stats(a)->gaps == 1 && aux_stats(a)->warnings == 1);
    aux_close(a);
    snprintf(want, sizeof want,
             " warning updater %s has been missing while later ones are present for 0.5 s, more than max_lag=3 "
             "ticks: readers of %s fall behind; if the writer has removed it already (updater_keep_ticks), this "
             "copy cannot be completed\n",
             ud(ud_nfs, 0), local);
    assert_int_equal(log_count(logpath, want), 1);
    gen_close(&g);
}

static void
test_names(void **state)
{
    static const struct {
        const char *name;
        aux_name_kind_t kind;
        uint64_t seq;
    } cases[] = {
        {"f.h5.ud.0", AUX_NAME_UPDATER, 0},
        {"f.h5.ud.17", AUX_NAME_UPDATER, 17},
        {"f.h5.ud.18446744073709551615", AUX_NAME_UPDATER, UINT64_MAX},
        {"f.h5.ud.18446744073709551616", AUX_NAME_GARBAGE, 0},
        {"f.h5.ud.017", AUX_NAME_GARBAGE, 0},
        {"f.h5.ud.00", AUX_NAME_GARBAGE, 0},
        {"f.h5.ud.", AUX_NAME_GARBAGE, 0},
        {"f.h5.ud.x", AUX_NAME_GARBAGE, 0},
        {"f.h5.ud.3x", AUX_NAME_GARBAGE, 0},
        {"f.h5.ud.-3", AUX_NAME_GARBAGE, 0},
        {"f.h5.ud.+3", AUX_NAME_GARBAGE, 0},
        {"f.h5.ud.3.tmp", AUX_NAME_TMP, 3},
        {"f.h5.ud.03.tmp", AUX_NAME_GARBAGE, 0},
        {"f.h5.ud..tmp", AUX_NAME_GARBAGE, 0},
        {"f.h5.ud.3.tmpx", AUX_NAME_GARBAGE, 0},
        {"f.h5.ud.3.Ab-_5fGhIjKl.tmp", AUX_NAME_TMP, 3},
        {"f.h5.ud.18446744073709551615.AAAAAAAAAAAA.tmp", AUX_NAME_TMP, UINT64_MAX},
        {"f.h5.ud.03.AbCdEfGhIjKl.tmp", AUX_NAME_GARBAGE, 0},
        {"f.h5.ud.3.AbCdEfGhIjK.tmp", AUX_NAME_GARBAGE, 0},
        {"f.h5.ud.3.AbCdEfGhIjKlm.tmp", AUX_NAME_GARBAGE, 0},
        {"f.h5.ud.3.AbCdEf.hIjKl.tmp", AUX_NAME_GARBAGE, 0},
        {"f.h5.ud.AbCdEfGhIjKl.tmp", AUX_NAME_GARBAGE, 0},
        {"f.h5.ud", AUX_NAME_OTHER, 0},
        {"f.h5.udx.3", AUX_NAME_OTHER, 0},
        {"f.h5", AUX_NAME_OTHER, 0},
        {"other", AUX_NAME_OTHER, 0},
    };

    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t seq = 99;
        aux_name_kind_t k = aux_classify_name("f.h5.ud", cases[i].name, &seq);
        if (k != cases[i].kind)
            fail_msg("%s: kind %d, expected %d", cases[i].name, (int)k, (int)cases[i].kind);
        if (k == AUX_NAME_UPDATER || k == AUX_NAME_TMP)
            assert_true(seq == cases[i].seq);
    }
}

/* Garbage in the directory is ignored and counted once per name. */
static void
test_garbage(void **state)
{
    static const char *garbage[] = {"f.h5.ud.x", "f.h5.ud.01", "f.h5.ud.3x", "f.h5.ud.",
                                    "f.h5.ud.99999999999999999999"};
    static const char *ignored[] = {"f.h5.ud.2.tmp", "f.h5.ud.9.tmp", "f.h5", "other", "f.h5.udx.1"};
    char path[400];
    gen_t g;
    aux_t *a;

    (void)state;
    for (size_t i = 0; i < 5; i++) {
        snprintf(path, sizeof path, "%s/%s", nfs, garbage[i]);
        spill(path, "junk", 4);
        snprintf(path, sizeof path, "%s/%s", nfs, ignored[i]);
        spill(path, "junk", 4);
    }
    snprintf(path, sizeof path, "%s/f.h5.ud.dir", nfs); /* a directory is garbage too */
    assert_int_equal(mkdir(path, 0755), 0);
    gen_open(&g, ud_nfs, ref, SESSION_A);
    gen_ticks(&g, 3);
    a = start();
    for (int i = 0; i < 5; i++)
        assert_int_equal(drain(a), AUX_WAITING);
    assert_int_equal(aux_stats(a)->garbage, 6);
    assert_int_equal(aux_stats(a)->gaps, 0);
    assert_int_equal(aux_stats(a)->applied, 5);
    compare(ref);
    aux_close(a);
    assert_int_equal(log_count(logpath, " garbage ignoring "), 6);
    gen_close(&g);
}

/*
 * Restart after a crash between updaters: nothing applied twice, and the
 * applied updater files are not read at all (they are all destroyed first).
 */
static void
test_restart(void **state)
{
    char log2[300];
    gen_t g;
    aux_t *a;
    aux_opts_t o = opts();

    (void)state;
    gen_open(&g, ud_nfs, ref, SESSION_A);
    gen_ticks(&g, 12); /* 0 .. 13 */
    a = start();
    steps(a, 6); /* 0 .. 5 applied: tick 4 */
    aux_close(a);
    assert_int_equal(local_tick(), 4);
    for (uint64_t s = 0; s <= 5; s++) {
        size_t len;
        uint8_t *b = slurp(ud(ud_nfs, s), &len);
        memset(b, 0xAA, len);
        spill(ud(ud_nfs, s), b, len);
        free(b);
    }
    snprintf(log2, sizeof log2, "%s/aux2.log", dir);
    o.log_file = log2;
    a = start_with(&o);
    assert_int_equal(aux_expected(a), 6);
    assert_int_equal(drain(a), AUX_WAITING);
    assert_int_equal(aux_expected(a), 14);
    const aux_stats_t *st = aux_stats(a);
    assert_true(st->applied == 8 && st->skipped == 0 && st->retries == 0);
    compare(ref);
    aux_close(a);
    assert_int_equal(log_count(log2, " resume local file of session a11ce00000000001 at tick 4: continuing at "
                                     "sequence 6"),
                     1);
    for (uint64_t s = 0; s <= 13; s++) {
        char what[64];
        snprintf(what, sizeof what, " applied seq=%llu ", (unsigned long long)s);
        assert_int_equal(log_count(logpath, what) + log_count(log2, what), 1);
    }
    gen_close(&g);
}

/* Killed in the middle of applying: images and index written, header not.
 * The index went to the slot the local header does not name (or to fresh
 * pages), so the local file still loads at the previous tick. */
static void
test_restart_mid_apply(void **state)
{
    vfdswmr_updater_t u;
    uint8_t *buf;
    size_t len;
    gen_t g;
    aux_t *a;
    int fd;

    (void)state;
    gen_open(&g, ud_nfs, ref, SESSION_A);
    gen_ticks(&g, 8); /* 0 .. 9 */
    a = start();
    steps(a, 5); /* tick 3 */
    aux_close(a);
    buf = slurp(ud(ud_nfs, 5), &len);
    assert_int_equal(vfdswmr_updater_decode(buf, len, &u), VFDSWMR_MD_OK);
    assert_true((fd = open(local, O_RDWR)) >= 0);
    for (size_t i = 0; i < u.plan.nimages; i++)
        assert_int_equal(
            vfdswmr_pwrite_all(fd, u.plan.images[i].image, u.plan.images[i].length, u.plan.images[i].md_page * PS), 0);
    assert_int_equal(vfdswmr_pwrite_all(fd, u.plan.index_image, u.plan.index_len, u.plan.index_offset), 0);
    close(fd);
    vfdswmr_updater_free(&u);
    free(buf);
    assert_int_equal(local_tick(), 3);

    a = start();
    assert_int_equal(aux_expected(a), 5);
    assert_int_equal(drain(a), AUX_WAITING);
    assert_int_equal(aux_expected(a), 10);
    assert_true(aux_stats(a)->applied == 5 && aux_stats(a)->skipped == 0);
    compare(ref);
    aux_close(a);
    gen_close(&g);
}

/* Killed after CREATE_ONLY: the file has no header; go on at sequence 1. */
static void
test_restart_empty(void **state)
{
    struct stat st;
    gen_t g;
    aux_t *a;

    (void)state;
    gen_open(&g, ud_nfs, ref, SESSION_A);
    gen_ticks(&g, 3); /* 0 .. 4 */
    a = start();
    steps(a, 1);
    aux_close(a);
    assert_int_equal(stat(local, &st), 0);
    assert_int_equal(st.st_size, PS); /* md_pages_reserved pages, all zero */
    a = start();
    assert_int_equal(aux_expected(a), 1);
    assert_int_equal(drain(a), AUX_WAITING);
    assert_true(aux_expected(a) == 5 && aux_stats(a)->applied == 4 && aux_stats(a)->skipped == 0);
    compare(ref);
    aux_close(a);
    assert_int_equal(log_count(logpath, " resume local file without a header yet: continuing at sequence 1"), 1);
    gen_close(&g);
}

/* Restart while the directory is empty (not mounted yet, say): the
 * updaters that appear later are scanned from the smallest, by header. */
static void
test_restart_scan(void **state)
{
    gen_t g;
    aux_t *a;

    (void)state;
    gen_open(&g, ud_stage, ref, SESSION_A);
    gen_ticks(&g, 6); /* 0 .. 7 */
    move_range(0, 7);
    a = start();
    assert_int_equal(drain(a), AUX_WAITING);
    aux_close(a);
    for (uint64_t s = 0; s <= 7; s++) /* gone again */
        assert_int_equal(rename(ud(ud_nfs, s), ud(ud_stage, s)), 0);
    gen_ticks(&g, 2); /* 8, 9 */
    a = start();
    assert_int_equal(drain(a), AUX_WAITING);
    assert_int_equal(drain(a), AUX_WAITING);
    assert_int_equal(aux_stats(a)->skipped + aux_stats(a)->applied, 0);
    move_range(0, 9);
    assert_int_equal(drain(a), AUX_WAITING);
    assert_int_equal(aux_expected(a), 10);
    assert_true(aux_stats(a)->skipped == 8 && aux_stats(a)->applied == 2);
    compare(ref);
    aux_close(a);
    assert_int_equal(log_count(logpath, " resume looking for the updater after tick 6 from sequence 0"), 1);
    assert_int_equal(log_count(logpath, " skip "), 8);
    gen_close(&g);
}

/* Killed after FINAL was applied but before the file was removed. */
static void
test_restart_after_final(void **state)
{
    vfdswmr_updater_t u;
    uint8_t *buf;
    size_t len;
    gen_t g;
    aux_t *a;
    int fd;

    (void)state;
    gen_open(&g, ud_nfs, NULL, SESSION_A);
    gen_ticks(&g, 4);
    gen_tick(&g, VFDSWMR_MDW_FINAL); /* 0 .. 6, 6 FINAL */
    a = start();
    steps(a, 6);
    aux_close(a);
    buf = slurp(ud(ud_nfs, 6), &len);
    assert_int_equal(vfdswmr_updater_decode(buf, len, &u), VFDSWMR_MD_OK);
    assert_true(u.hdr.flags & VFDSWMR_UD_FINAL);
    assert_true((fd = open(local, O_RDWR)) >= 0);
    assert_int_equal(vfdswmr_mdplan_apply(fd, &u.plan, false), 0);
    close(fd);
    vfdswmr_updater_free(&u);
    free(buf);
    a = start();
    assert_int_equal(aux_expected(a), 6);
    assert_int_equal(poll1(a), AUX_DONE);
    assert_int_equal(access(local, F_OK), -1);
    assert_true(aux_stats(a)->applied == 0 && aux_stats(a)->skipped == 0);
    aux_close(a);
    gen_close(&g);
}

/* A new writer session takes over the names: start over, on a new inode. */
static void
test_new_writer(void **state)
{
    vfdswmr_mdsnap_t s;
    struct stat before, after;
    gen_t ga, gb;
    aux_t *a;
    int held;

    (void)state;
    gen_open(&ga, ud_nfs, ref, SESSION_A);
    gen_ticks(&ga, 5); /* 0 .. 6; the writer then crashes: no FINAL */
    a = start();
    assert_int_equal(drain(a), AUX_WAITING);
    assert_int_equal(aux_expected(a), 7);
    held = open(local, O_RDONLY);
    assert_true(held >= 0 && fstat(held, &before) == 0);

    gen_open(&gb, ud_nfs, ref2, SESSION_B);
    gen_ticks(&gb, 8); /* 0 .. 9 of session B */
    assert_int_equal(drain(a), AUX_WAITING);
    assert_int_equal(aux_expected(a), 10);
    assert_int_equal(aux_stats(a)->applied, 7 + 10);
    compare(ref2);
    assert_int_equal(stat(local, &after), 0);
    assert_true(after.st_ino != before.st_ino);
    load_fd(held, &s); /* a reader of session A still has A's last state */
    assert_true(s.hdr.session == SESSION_A && s.hdr.tick == 5);
    vfdswmr_mdsnap_free(&s);
    close(held);
    aux_close(a);
    assert_int_equal(log_count(logpath, " session updater 7 and updater 0 belong to session b0b0000000000002, not "
                                        "a11ce00000000001: a new writer; starting over at sequence 0"),
                     1);
    gen_close(&ga);
    gen_close(&gb);
}

/* Files of an older session beyond the current writer's are waited out. */
static void
test_stale_leftovers(void **state)
{
    gen_t gc, gb;
    aux_t *a;

    (void)state;
    gen_open(&gc, ud_nfs, NULL, SESSION_C);
    gen_ticks(&gc, 8); /* 0 .. 9 of C */
    gen_close(&gc);
    gen_open(&gb, ud_nfs, ref, SESSION_B);
    gen_ticks(&gb, 3); /* 0 .. 4 of B; 5 .. 9 are C's */
    a = start();
    assert_int_equal(drain(a), AUX_WAITING);
    assert_int_equal(aux_expected(a), 5);
    compare(ref);
    fake_now += 1.0;
    assert_int_equal(drain(a), AUX_WAITING);
    assert_int_equal(aux_stats(a)->warnings, 1);
    gen_tick(&gb, 0); /* B's 5 replaces C's */
    assert_int_equal(drain(a), AUX_WAITING);
    assert_int_equal(aux_expected(a), 6);
    compare(ref);
    assert_true(aux_stats(a)->applied == 6 && aux_stats(a)->skipped == 0);
    aux_close(a);
    assert_int_equal(log_count(logpath, " session updater "), 2); /* once for 5, once for 6 */
    gen_close(&gb);
}

/* An aux that applied updaters 0 .. 3 (from ud_stage), waiting for 4 at tick 2. */
static aux_t *
at_four(void)
{
    aux_t *a;

    move_range(0, 3);
    a = start();
    assert_int_equal(drain(a), AUX_WAITING);
    assert_int_equal(aux_expected(a), 4);
    return a;
}

/* a fails now with exactly `want`, stays failed, and the local file stays at tick 2. */
static void
fails_with(aux_t *a, const char *want)
{
    last_err[0] = '\0';
    assert_int_equal(drain(a), AUX_FATAL);
    assert_string_equal(last_err, want);
    assert_int_equal(poll1(a), AUX_FATAL); /* stays failed, and says so */
    assert_string_equal(last_err, "an earlier poll failed (its reason was reported then)");
    assert_int_equal(local_tick(), 2); /* untouched */
    aux_close(a);
    assert_int_equal(log_count(logpath, " error updater file "), 1);
}

/* The expected failure of an aux on updaters 0 .. 3 applied, then `bad` at 4. */
static void
expect_fatal(const uint8_t *bad, size_t len, const char *want_fmt, ...)
{
    char want[AUX_ERRLEN];
    va_list ap;
    aux_t *a;

    va_start(ap, want_fmt); /* first: the arguments may be ud()'s rotating buffers */
    vsnprintf(want, sizeof want, want_fmt, ap);
    va_end(ap);
    a = at_four();
    spill(ud(ud_nfs, 4), bad, len);
    fails_with(a, want);
}

static void
test_damaged_sequence(void **state)
{
    uint8_t *b;
    size_t len;
    gen_t g;

    (void)state;
    gen_open(&g, ud_stage, NULL, SESSION_A);
    gen_ticks(&g, 6);
    b = slurp(ud(ud_stage, 2), &len);
    expect_fatal(b, len,
                 "updater file %s is damaged: its header says it is sequence 2; the local metadata file %s stays at "
                 "tick 2",
                 ud(ud_nfs, 4), local);
    free(b);
    gen_close(&g);
}

static void
test_damaged_version(void **state)
{
    uint8_t *b;
    size_t len;
    gen_t g;

    (void)state;
    gen_open(&g, ud_stage, NULL, SESSION_A);
    gen_ticks(&g, 6);
    b = slurp(ud(ud_stage, 4), &len);
    b[4] = 1; /* version 1, with a checksum that matches */
    vfdswmr_le32_encode(b + 52, vfdswmr_checksum(b, 52));
    expect_fatal(b, len, "updater file %s is damaged: %s; the local metadata file %s stays at tick 2", ud(ud_nfs, 4),
                 vfdswmr_mderr_str(VFDSWMR_MD_EVERSION), local);
    free(b);
    gen_close(&g);
}

/* A change list its checksum vouches for, with a wrong header image length. */
static void
test_damaged_change_list(void **state)
{
    vfdswmr_udhdr_t h;
    uint8_t *b;
    size_t len;
    gen_t g;

    (void)state;
    gen_open(&g, ud_stage, NULL, SESSION_A);
    gen_ticks(&g, 6);
    b = slurp(ud(ud_stage, 4), &len);
    assert_int_equal(vfdswmr_udhdr_decode(b, len, &h), VFDSWMR_MD_OK);
    vfdswmr_le32_encode(b + 56 + 20, 57); /* hdr_len */
    vfdswmr_le32_encode(b + 56 + h.cl_length - 4, vfdswmr_checksum(b + 56, (size_t)h.cl_length - 4));
    expect_fatal(b, len, "updater file %s is damaged: %s; the local metadata file %s stays at tick 2", ud(ud_nfs, 4),
                 vfdswmr_mderr_str(VFDSWMR_MD_ELENGTH), local);
    free(b);
    gen_close(&g);
}

/* An updater of a later tick where the next was expected: history is missing. */
static void
test_tick_jump(void **state)
{
    vfdswmr_updater_t u;
    uint8_t *b, *out;
    size_t len, outlen;
    gen_t g;

    (void)state;
    gen_open(&g, ud_stage, NULL, SESSION_A);
    gen_ticks(&g, 6);
    b = slurp(ud(ud_stage, 6), &len); /* tick 5 */
    assert_int_equal(vfdswmr_updater_decode(b, len, &u), VFDSWMR_MD_OK);
    assert_int_equal(vfdswmr_updater_encode(&u.plan, 0, 4, PS, SESSION_A, 5, &out, &outlen), 0);
    expect_fatal(out, outlen,
                 "updater file %s carries tick 5 but the local metadata file %s is at tick 2: the updaters in "
                 "between are missing",
                 ud(ud_nfs, 4), local);
    vfdswmr_updater_free(&u);
    free(out);
    free(b);
    gen_close(&g);
}

static void
test_local_errors(void **state)
{
    char path[300], err[AUX_ERRLEN], want[AUX_ERRLEN];
    aux_opts_t o = opts();
    gen_t g;
    aux_t *a;

    (void)state;
    gen_open(&g, ud_nfs, NULL, SESSION_A);
    /* the local file's directory does not exist */
    snprintf(path, sizeof path, "%s/nodir/f.h5.md", dir);
    o.md_file = path;
    a = start_with(&o);
    assert_int_equal(drain(a), AUX_FATAL);
    snprintf(want, sizeof want, "cannot create the local metadata file %s: No such file or directory", path);
    assert_string_equal(last_err, want);
    aux_close(a);
    /* the local file is a directory */
    snprintf(path, sizeof path, "%s/local", dir);
    assert_int_equal(aux_open(&o, &a, err, sizeof err), -1);
    snprintf(want, sizeof want, "the local metadata file %s is not a regular file (a directory)", path);
    assert_string_equal(err, want);
    /* ud_base is a directory */
    o = opts();
    o.ud_base = nfs;
    assert_int_equal(aux_open(&o, &a, err, sizeof err), -1);
    snprintf(want, sizeof want,
             "<ud_base> %s is a directory; give the base path of the updater files, e.g. %s/FILE.h5.md.ud", nfs, nfs);
    assert_string_equal(err, want);
    /* the log file cannot be created */
    o = opts();
    snprintf(path, sizeof path, "%s/nodir/aux.log", dir);
    o.log_file = path;
    assert_int_equal(aux_open(&o, &a, err, sizeof err), -1);
    snprintf(want, sizeof want, "cannot open the log file %s: No such file or directory", path);
    assert_string_equal(err, want);
    gen_close(&g);
}

/* ---- hostile files ---------------------------------------------------------- */

/* The exact size vfdswmr_updater_size() gives is every updater's real size. */
static void
test_updater_size(void **state)
{
    gen_t g;

    (void)state;
    gen_open(&g, ud_nfs, NULL, SESSION_A);
    gen_ticks(&g, 40); /* 0 .. 41, single and multi-page images, a relocated index */
    gen_tick(&g, VFDSWMR_MDW_FINAL);
    for (uint64_t s = 0; s <= 42; s++) {
        size_t len;
        uint8_t *b = slurp(ud(ud_nfs, s), &len);
        vfdswmr_udhdr_t h;
        vfdswmr_udcl_t cl;

        assert_int_equal(vfdswmr_udhdr_decode(b, len, &h), VFDSWMR_MD_OK);
        assert_true(vfdswmr_updater_size(&h, NULL) <= len);
        if (s == 0) {
            assert_true(h.flags & VFDSWMR_UD_CREATE_ONLY);
            assert_int_equal(vfdswmr_updater_size(&h, NULL), VFDSWMR_UDHDR_SIZE);
            assert_int_equal(len, VFDSWMR_UDHDR_SIZE);
        }
        else {
            assert_int_equal(vfdswmr_udcl_decode(b + h.cl_offset, (size_t)h.cl_length, h.page_size, len, &cl),
                             VFDSWMR_MD_OK);
            assert_int_equal(vfdswmr_updater_size(&h, &cl), len);
            /* the least size: every entry a page, then index and header */
            assert_int_equal(vfdswmr_updater_size(&h, NULL),
                             (vfdswmr_pages(h.cl_offset + h.cl_length, PS) + cl.nentries + 1) * PS +
                                 VFDSWMR_MDHDR_SIZE);
            free(cl.entries);
        }
        free(b);
    }
    gen_close(&g);
}

static void
plant_fifo(const char *p)
{
    assert_int_equal(mkfifo(p, 0644), 0);
}

static void
plant_dir(const char *p)
{
    assert_int_equal(mkdir(p, 0755), 0);
}

static void
plant_dev_link(const char *p)
{
    assert_int_equal(symlink("/dev/null", p), 0);
}

/* Something that is not a regular file where updater 4 is expected: fatal at once. */
static void
not_regular_updater(void (*plant)(const char *), const char *kind)
{
    char want[AUX_ERRLEN];
    gen_t g;
    aux_t *a;

    gen_open(&g, ud_stage, NULL, SESSION_A);
    gen_ticks(&g, 6);
    a = at_four();
    plant(ud(ud_nfs, 4));
    snprintf(want, sizeof want,
             "updater file %s is not a regular file (%s); the local metadata file %s stays at tick 2", ud(ud_nfs, 4),
             kind, local);
    fails_with(a, want);
    gen_close(&g);
}

static void
test_updater_fifo(void **state)
{
    (void)state;
    not_regular_updater(plant_fifo, "a FIFO");
}

static void
test_updater_dir(void **state)
{
    (void)state;
    not_regular_updater(plant_dir, "a directory");
}

static void
test_updater_device(void **state)
{
    (void)state;
    not_regular_updater(plant_dev_link, "a character device");
}

/* Only the expected updater matters: a FIFO at a later sequence is never opened
 * for its header by the resume probe; the daemon stops at it when it is due. */
static void
test_updater_fifo_later(void **state)
{
    char want[AUX_ERRLEN];
    gen_t g;
    aux_t *a;

    (void)state;
    gen_open(&g, ud_nfs, NULL, SESSION_A);
    gen_ticks(&g, 8); /* 0 .. 9 */
    a = start();
    steps(a, 6); /* 0 .. 5: tick 4 */
    aux_close(a);
    assert_int_equal(unlink(ud(ud_nfs, 6)), 0); /* the probe looks at 6 (tick 5) first */
    plant_fifo(ud(ud_nfs, 6));
    a = start();
    assert_int_equal(aux_expected(a), 6); /* found from 5 (tick 4) */
    snprintf(want, sizeof want,
             "updater file %s is not a regular file (a FIFO); the local metadata file %s stays at tick 4",
             ud(ud_nfs, 6), local);
    assert_int_equal(drain(a), AUX_FATAL);
    assert_string_equal(last_err, want);
    assert_int_equal(local_tick(), 4);
    aux_close(a);
    gen_close(&g);
}

/* A valid updater followed by anything: damage, not applied. */
static void
test_trailing_bytes(void **state)
{
    uint8_t *b;
    size_t len;
    gen_t g;

    (void)state;
    gen_open(&g, ud_stage, NULL, SESSION_A);
    gen_ticks(&g, 6);
    b = slurp(ud(ud_stage, 4), &len);
    b[len] = 0; /* slurp leaves a spare byte */
    expect_fatal(b, len + 1,
                 "updater file %s is damaged: trailing bytes after the updater's last image (the file has %zu bytes, "
                 "the updater ends at byte %zu); the local metadata file %s stays at tick 2",
                 ud(ud_nfs, 4), len + 1, len, local);
    free(b);
    gen_close(&g);
}

/* CREATE_ONLY is a header alone: anything after it is damage; no local file is made. */
static void
test_trailing_create_only(void **state)
{
    char want[AUX_ERRLEN];
    uint8_t *b;
    size_t len;
    gen_t g;
    aux_t *a;

    (void)state;
    gen_open(&g, ud_nfs, NULL, SESSION_A);
    b = slurp(ud(ud_nfs, 0), &len);
    assert_int_equal(len, VFDSWMR_UDHDR_SIZE);
    b[len] = 'x';
    spill(ud(ud_nfs, 0), b, len + 1);
    a = start();
    assert_int_equal(drain(a), AUX_FATAL);
    snprintf(want, sizeof want,
             "updater file %s is damaged: trailing bytes after the updater's last image (the file has %zu bytes, the "
             "updater ends at byte %zu); the local metadata file %s stays not created",
             ud(ud_nfs, 0), len + 1, len, local);
    assert_string_equal(last_err, want);
    assert_int_equal(access(local, F_OK), -1);
    aux_close(a);
    free(b);
    gen_close(&g);
}

static long
maxrss_kib(void)
{
    struct rusage ru;

    assert_int_equal(getrusage(RUSAGE_SELF, &ru), 0);
    return ru.ru_maxrss;
}

/* A valid updater with a 2 GiB (sparse) tail: refused without reading the tail. */
static void
test_huge_tail(void **state)
{
    char want[AUX_ERRLEN];
    uint8_t *b;
    size_t len;
    long rss0;
    gen_t g;
    aux_t *a;

    (void)state;
    gen_open(&g, ud_stage, NULL, SESSION_A);
    gen_ticks(&g, 6);
    b = slurp(ud(ud_stage, 4), &len);
    a = at_four();
    rss0 = maxrss_kib();
    spill(ud(ud_nfs, 4), b, len);
    assert_int_equal(truncate(ud(ud_nfs, 4), (off_t)TWO_GIB), 0);
    snprintf(want, sizeof want,
             "updater file %s is damaged: trailing bytes after the updater's last image (the file has %llu bytes, "
             "the updater ends at byte %zu); the local metadata file %s stays at tick 2",
             ud(ud_nfs, 4), (unsigned long long)TWO_GIB, len, local);
    fails_with(a, want);
    assert_true(maxrss_kib() - rss0 < MEM_BOUND_KIB);
    free(b);
    gen_close(&g);
}

/*
 * A header whose checksum vouches for a change list of 2^26 entries (2 GiB)
 * in a file that cannot hold what such a change list describes, even with a
 * sparse 2 GiB tail: not yet complete -- nothing read or allocated, retried
 * (logged once) until the real updater replaces it, then applied.
 */
static void
test_huge_claim(void **state)
{
    vfdswmr_udhdr_t h;
    uint8_t *b;
    size_t len;
    long rss0;
    gen_t g;
    aux_t *a;

    (void)state;
    gen_open(&g, ud_stage, ref, SESSION_A);
    gen_ticks(&g, 6);
    b = slurp(ud(ud_stage, 4), &len);
    assert_int_equal(vfdswmr_udhdr_decode(b, len, &h), VFDSWMR_MD_OK);
    h.cl_length = vfdswmr_udcl_size(1u << 26);
    assert_true(h.cl_length > TWO_GIB);
    vfdswmr_udhdr_encode(&h, b);
    a = at_four();
    rss0 = maxrss_kib();
    for (int variant = 0; variant < 2; variant++) {
        spill(ud(ud_nfs, 4), b, len);
        if (variant == 1) /* the change list "fits" in the file */
            assert_int_equal(truncate(ud(ud_nfs, 4), (off_t)(h.cl_length + PS)), 0);
        for (int i = 0; i < 10; i++)
            assert_int_equal(drain(a), AUX_WAITING);
        assert_int_equal(aux_expected(a), 4);
        assert_int_equal(aux_stats(a)->retries, 10 * (unsigned)(variant + 1));
    }
    assert_true(maxrss_kib() - rss0 < MEM_BOUND_KIB);
    assert_int_equal(local_tick(), 2);
    move_range(4, 7); /* the real one */
    assert_int_equal(drain(a), AUX_WAITING);
    assert_int_equal(aux_expected(a), 8);
    compare(ref);
    aux_close(a);
    {
        char want[1024];
        snprintf(want, sizeof want,
                 " retry %s: incomplete: %zu bytes, its header implies at least %llu; trying again\n", ud(ud_nfs, 4),
                 len, (unsigned long long)vfdswmr_updater_size(&h, NULL));
        assert_int_equal(log_count(logpath, want), 1);
        assert_int_equal(log_count(logpath, " retry "), 1);
    }
    free(b);
    gen_close(&g);
}

/* The file at p holds exactly len bytes of want. */
static void
assert_holds(const char *p, const void *want, size_t wlen)
{
    size_t len;
    uint8_t *b = slurp(p, &len);

    assert_int_equal(len, wlen);
    assert_memory_equal(b, want, len);
    free(b);
}

static void
assert_link_to(const char *p, const char *target)
{
    char got[512];
    ssize_t n = readlink(p, got, sizeof got - 1);

    assert_true(n > 0);
    got[n] = '\0';
    assert_string_equal(got, target);
}

/* A link, a FIFO or a directory at the local metadata file or the log file:
 * aux_open() refuses with the path, without blocking; nothing is followed. */
static void
test_local_and_log_refused(void **state)
{
    char victim[300], absent[300], err[AUX_ERRLEN], want[AUX_ERRLEN];
    static const char precious[] = "precious";
    aux_opts_t o = opts();
    gen_t g;
    aux_t *a;

    (void)state;
    gen_open(&g, ud_nfs, NULL, SESSION_A);
    gen_ticks(&g, 3);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    snprintf(absent, sizeof absent, "%s/absent", dir);
    spill(victim, precious, sizeof precious);
    for (int target = 0; target < 2; target++) { /* 0: the local file, 1: the log file */
        const char *p = target == 0 ? local : logpath, *what = target == 0 ? "the local metadata file" : "the log file";
        for (int kind = 0; kind < 4; kind++) {
            unlink(logpath);
            switch (kind) {
            case 0:
                assert_int_equal(symlink(victim, p), 0);
                break;
            case 1:
                assert_int_equal(symlink(absent, p), 0);
                break;
            case 2:
                plant_fifo(p);
                break;
            case 3:
                plant_dir(p);
                break;
            }
            if (kind < 2)
                snprintf(want, sizeof want,
                         "%s %s is a symbolic link; vfd_swmr_aux does not follow links to the files it writes", what,
                         p);
            else
                snprintf(want, sizeof want, "%s %s is not a regular file (%s)", what, p,
                         kind == 2 ? "a FIFO" : "a directory");
            assert_int_equal(aux_open(&o, &a, err, sizeof err), -1);
            assert_string_equal(err, want);
            assert_null(a);
            assert_holds(victim, precious, sizeof precious);
            assert_int_equal(access(absent, F_OK), -1);
            assert_int_equal(kind == 3 ? rmdir(p) : unlink(p), 0);
        }
    }
    gen_close(&g);
}

/*
 * Links planted at every name the daemon creates or replaces -- the local
 * file (after the daemon looked: sequence 0 renames over it), the old
 * predictable temporary names -- and a dangling one: the daemon applies
 * everything and no link is followed.
 */
static void
test_planted_links(void **state)
{
    char victim[300], absent[300], tmp1[300], tmp2[300], tmp3[300];
    static const char precious[] = "precious";
    struct stat st;
    gen_t g;
    aux_t *a;

    (void)state;
    gen_open(&g, ud_nfs, ref, SESSION_A);
    gen_ticks(&g, 5); /* 0 .. 6 */
    snprintf(victim, sizeof victim, "%s/victim", dir);
    snprintf(absent, sizeof absent, "%s/absent", dir);
    snprintf(tmp1, sizeof tmp1, "%s.aux.tmp", local);
    snprintf(tmp2, sizeof tmp2, "%s.tmp", local);
    snprintf(tmp3, sizeof tmp3, "%s.%ld.tmp", local, (long)getpid());
    spill(victim, precious, sizeof precious);
    assert_int_equal(symlink(victim, tmp1), 0);
    assert_int_equal(symlink(absent, tmp2), 0);
    assert_int_equal(symlink(victim, tmp3), 0);
    a = start(); /* no local file: sequence 0 next */
    assert_int_equal(aux_expected(a), 0);
    assert_int_equal(symlink(victim, local), 0);
    assert_int_equal(drain(a), AUX_WAITING);
    assert_int_equal(aux_expected(a), 7);
    assert_int_equal(lstat(local, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    compare(ref);
    aux_close(a);
    assert_holds(victim, precious, sizeof precious);
    assert_int_equal(access(absent, F_OK), -1);
    assert_link_to(tmp1, victim);
    assert_link_to(tmp2, absent);
    assert_link_to(tmp3, victim);
    gen_close(&g);
}

/* Temporary files of an interrupted run are removed at start; links are left alone. */
static void
test_stale_temps(void **state)
{
    char stale[300], link[300], other[300], victim[300], want[1024];
    static const char precious[] = "precious";
    gen_t g;
    aux_t *a;

    (void)state;
    gen_open(&g, ud_nfs, ref, SESSION_A);
    gen_ticks(&g, 2);
    snprintf(stale, sizeof stale, "%s.Ab-_5fGhIjKl.tmp", local);
    snprintf(link, sizeof link, "%s.BBBBBBBBBBBB.tmp", local);
    snprintf(other, sizeof other, "%s.x.tmp", local);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    spill(victim, precious, sizeof precious);
    spill(stale, "stale", 5);
    spill(other, "other", 5);
    assert_int_equal(symlink(victim, link), 0);
    a = start();
    assert_int_equal(access(stale, F_OK), -1);
    assert_link_to(link, victim);
    assert_holds(other, "other", 5);
    assert_int_equal(drain(a), AUX_WAITING);
    compare(ref);
    aux_close(a);
    assert_holds(victim, precious, sizeof precious);
    snprintf(want, sizeof want, " start removed %s, a temporary file left by an interrupted run\n", stale);
    assert_int_equal(log_count(logpath, want), 1);
    assert_int_equal(log_count(logpath, " start removed "), 1);
    gen_close(&g);
}

/* aux_run: to the end without sleeping when everything is there; a stop
 * request is honoured before anything is applied; fatal errors give 1. */
static void
test_run(void **state)
{
    volatile sig_atomic_t stop = 1;
    gen_t g;
    aux_t *a;

    (void)state;
    gen_open(&g, ud_stage, NULL, SESSION_A);
    gen_ticks(&g, 3);
    gen_tick(&g, VFDSWMR_MDW_FINAL); /* 0 .. 5 */
    move_range(0, 5);
    a = start();
    assert_int_equal(aux_run(a, &stop, last_err, sizeof last_err), 0);
    assert_true(aux_expected(a) == 0 && aux_stats(a)->applied == 0);
    stop = 0;
    assert_int_equal(aux_run(a, &stop, last_err, sizeof last_err), 0);
    assert_int_equal(aux_stats(a)->applied, 6);
    assert_int_equal(access(local, F_OK), -1);
    aux_close(a);
    /* fatal: 1 */
    spill(ud(ud_nfs, 0), "VUDHjunk", 8); /* wrong length for a header: torn (ESHORT), retried... */
    a = start();
    assert_int_equal(poll1(a), AUX_WAITING);
    aux_close(a);
    {
        size_t len;
        uint8_t *b = slurp(ud(ud_nfs, 1), &len);
        spill(ud(ud_nfs, 0), b, len); /* ...a header saying sequence 1: damage */
        free(b);
    }
    a = start();
    last_err[0] = '\0';
    assert_int_equal(aux_run(a, &stop, last_err, sizeof last_err), 1);
    assert_non_null(strstr(last_err, "is damaged"));
    aux_close(a);
    gen_close(&g);
}

int
main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_apply_all),
        T(test_long_run),
        T(test_out_of_order),
        T(test_torn),
        T(test_gap),
        T(test_gap_removed),
        T(test_names),
        T(test_garbage),
        T(test_restart),
        T(test_restart_mid_apply),
        T(test_restart_empty),
        T(test_restart_scan),
        T(test_restart_after_final),
        T(test_new_writer),
        T(test_stale_leftovers),
        T(test_damaged_sequence),
        T(test_damaged_version),
        T(test_damaged_change_list),
        T(test_tick_jump),
        T(test_local_errors),
        T(test_run),
        T(test_updater_size),
        T(test_updater_fifo),
        T(test_updater_dir),
        T(test_updater_device),
        T(test_updater_fifo_later),
        T(test_trailing_bytes),
        T(test_trailing_create_only),
        T(test_huge_tail),
        T(test_huge_claim),
        T(test_local_and_log_refused),
        T(test_planted_links),
        T(test_stale_temps),
    };
    return cmocka_run_group_tests(tests, testdir_setup, testdir_teardown);
}
