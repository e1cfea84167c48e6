/*
 * The daemon proper: wait for updater file `expect`, verify it, apply it to
 * the local metadata file, go on with expect + 1.
 *
 * State: the local file is absent (NONE), created but without a header
 * (EMPTY), or VALID with the session and tick of its header. Each updater
 * is judged by its header first (decide()), and read whole only when it is
 * to be applied, so files already applied before a restart are never read
 * past their header -- and with the resume probe of aux_open() usually not
 * at all.
 *
 * Invariants (see also aux.h):
 *  - expect only grows, by one, after its updater was applied or found
 *    already applied (tick <= the local tick, same session) -- except when
 *    a new writer session took over sequence 0, which starts over at 0.
 *  - A VALID local file at tick T only ever receives the updater of tick
 *    T + 1 of its session; an EMPTY one only sequence 1 (the first state of
 *    the session that created it). Anything else is a gap in the history:
 *    fatal, never papered over.
 *  - Sequence 0 always (re)creates the local file under a new inode
 *    (temporary name, rename): readers of an earlier session keep theirs.
 *  - A torn or incomplete updater (vfdswmr_mderr_retryable) is "not there
 *    yet"; one that fails a check its checksum vouches for is damage: fatal,
 *    the local file stays as it was.
 *  - Memory follows what a valid updater needs, never what a file claims:
 *    the header is read first, the change list only when the file is long
 *    enough for the least updater that header allows, the rest only when
 *    the file is exactly as long as the updater its change list describes
 *    (vfdswmr_updater_size()): shorter is incomplete, longer is damage
 *    (trailing bytes).
 *  - Hostile names: updater files and the local file are opened with
 *    vfdswmr_open_regular() (a FIFO or device never blocks the daemon, and
 *    is fatal where an updater or the local file is expected); files the
 *    daemon creates are created without following links: the local file
 *    under a vfdswmr_create_temp() name, renamed into place.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "aux.h"
#include "check.h"
#include "clock.h"
#include "errtext.h"
#include "io.h"
#include "paths.h"
#include "plan.h"
#include "safefile.h"
#include "updater.h"

typedef enum local_t { LOCAL_NONE, LOCAL_EMPTY, LOCAL_VALID } local_t;

struct aux_t {
    aux_opts_t o;
    aux_report_t rep;
    aux_stats_t st;
    aux_udir_t *udir;
    char md_tmp[AUX_MAX_PATH + VFDSWMR_TEMP_SUFFIX_LEN + 1]; /* sequence 0 builds the new file here */
    int fd;                                                  /* the local file, or -1 */
    local_t local;
    uint64_t session;  /* of the local file's session; 0: not known */
    uint64_t tick;     /* LOCAL_VALID: the tick its header names */
    bool expect_known; /* false: resume at the smallest updater that appears */
    uint64_t expect;
    bool done, failed;
    /* The wait for `expect`. */
    unsigned idle;        /* polls since it became expected that found nothing to do */
    double trouble_since; /* when a gap, torn file or foreign session was first seen; < 0: none */
    bool gap_noted, torn_noted, foreign_noted, warned;
    bool gap_below; /* every updater present is later than expect */
    char name[AUX_MAX_PATH + 64];
};

static double
clock_now(const aux_t *a)
{
    return a->o.clock ? a->o.clock() : vfdswmr_now();
}

/* The daemon fails: the reason goes to the report and to the caller's err;
 * every later poll returns AUX_FATAL at once. */
__attribute__((format(printf, 4, 5))) static aux_status_t
fatal(aux_t *a, char *err, size_t errlen, const char *fmt, ...)
{
    char line[AUX_ERRLEN];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    aux_report(&a->rep, "error", "%s", line);
    vfdswmr_errtext(err, errlen, "%s", line);
    a->failed = true;
    return AUX_FATAL;
}

static const char *
ud_name(aux_t *a, uint64_t seq)
{
    /* Fits: ud_base is at most AUX_MAX_PATH bytes (options.c). */
    vfdswmr_updater_name(a->name, sizeof a->name, a->o.ud_base, seq);
    return a->name;
}

static const char *
local_desc(const aux_t *a, char *buf, size_t len)
{
    if (a->local == LOCAL_VALID)
        snprintf(buf, len, "at tick %llu", (unsigned long long)a->tick);
    else
        snprintf(buf, len, "%s", a->local == LOCAL_EMPTY ? "still empty" : "not created");
    return buf;
}

/*
 * Why vfdswmr_open_regular() of `path` (`what`, e.g. "the log file")
 * returned rc < 0, as a message into err. Call it with errno as the open
 * left it.
 */
static void
open_refusal(char *err, size_t errlen, const char *what, const char *path, int rc)
{
    int e = errno;
    struct stat st;

    if (rc == VFDSWMR_OPEN_NOT_REGULAR)
        snprintf(err, errlen, "%s %s is not a regular file (%s)", what, path, vfdswmr_path_kind(path));
    else if (e == ELOOP && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
        snprintf(err, errlen, "%s %s is a symbolic link; " AUX_PROG " does not follow links to the files it writes",
                 what, path);
    else
        snprintf(err, errlen, "cannot open %s %s: %s", what, path, strerror(e));
}

/* An updater file, open, with its header. */
typedef struct udfile_t {
    int fd;            /* -1: not open */
    uint64_t size;     /* when it was opened */
    vfdswmr_udhdr_t h; /* valid with HDR_OK */
} udfile_t;

static void
ud_close(udfile_t *f)
{
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
}

typedef enum hdr_t { HDR_OK, HDR_MISSING, HDR_TORN, HDR_DAMAGED, HDR_NOT_REGULAR } hdr_t;

/*
 * Open updater `seq` and decode its header. HDR_OK leaves f->fd open (close
 * it with ud_close()); otherwise it is closed and why says what is wrong
 * (for HDR_NOT_REGULAR what the name is instead, e.g. "a FIFO").
 */
static hdr_t
read_header(aux_t *a, uint64_t seq, udfile_t *f, char *why, size_t whylen)
{
    const char *name = ud_name(a, seq);
    uint8_t buf[VFDSWMR_UDHDR_SIZE];
    vfdswmr_mderr_t err;
    struct stat st;
    size_t len;

    memset(f, 0, sizeof *f);
    f->fd = vfdswmr_open_regular(name, O_RDONLY);
    if (f->fd == VFDSWMR_OPEN_NOT_REGULAR) {
        f->fd = -1;
        snprintf(why, whylen, "%s", vfdswmr_path_kind(name));
        return HDR_NOT_REGULAR;
    }
    if (f->fd < 0) {
        snprintf(why, whylen, "%s", strerror(errno));
        return errno == ENOENT ? HDR_MISSING : HDR_TORN;
    }
    if (fstat(f->fd, &st) < 0) {
        snprintf(why, whylen, "%s", strerror(errno));
        ud_close(f);
        return HDR_TORN;
    }
    f->size = (uint64_t)st.st_size;
    len = f->size < sizeof buf ? (size_t)f->size : sizeof buf;
    if (vfdswmr_pread_all(f->fd, buf, len, 0) < 0) {
        snprintf(why, whylen, "%s", strerror(errno)); /* ENODATA: it shrank while being read */
        ud_close(f);
        return HDR_TORN;
    }
    err = vfdswmr_udhdr_decode(buf, len, &f->h);
    if (err == VFDSWMR_MD_OK && f->h.sequence != seq) {
        snprintf(why, whylen, "its header says it is sequence %llu", (unsigned long long)f->h.sequence);
        ud_close(f);
        return HDR_DAMAGED;
    }
    if (err == VFDSWMR_MD_OK)
        return HDR_OK;
    snprintf(why, whylen, "%s", vfdswmr_mderr_str(err));
    ud_close(f);
    return vfdswmr_mderr_retryable(err) ? HDR_TORN : HDR_DAMAGED;
}

/* ---- the wait for `expect` ------------------------------------------------ */

static void
on_garbage(void *ctx, const char *name)
{
    aux_t *a = ctx;

    a->st.garbage++;
    aux_report(&a->rep, "garbage", "ignoring %s/%s: not an updater file name", aux_udir_dir(a->udir), name);
}

/* List the directory (garbage, gaps) on the first idle poll and once per tick. */
static int
scan(aux_t *a, aux_scan_t *s)
{
    if (aux_udir_scan(a->udir, s, on_garbage, a) < 0) {
        aux_report(&a->rep, "warning", "cannot list %s: %s", aux_udir_dir(a->udir), strerror(errno));
        return -1;
    }
    return 0;
}

static void
trouble(aux_t *a)
{
    if (a->trouble_since < 0)
        a->trouble_since = clock_now(a);
}

/* A gap, torn file or foreign session that lasts longer than max_lag ticks. */
static void
check_lag(aux_t *a, const char *what, const char *hint)
{
    double waited = clock_now(a) - a->trouble_since;

    if (a->warned || a->trouble_since < 0 || waited <= a->o.max_lag * vfdswmr_tick_seconds(a->o.tick_len))
        return;
    a->warned = true;
    a->st.warnings++;
    aux_warn(&a->rep, "updater %s %s for %.1f s, more than max_lag=%u ticks: readers of %s fall behind%s%s",
             ud_name(a, a->expect), what, waited, a->o.max_lag, a->o.md_file, hint ? "; " : "", hint ? hint : "");
}

static aux_status_t
idle(aux_t *a)
{
    a->idle++;
    return AUX_WAITING;
}

static aux_status_t
missing(aux_t *a)
{
    aux_scan_t s;

    if (a->idle % a->o.polls_per_tick == 0 && scan(a, &s) == 0 && s.any && s.max > a->expect && !a->gap_noted) {
        a->gap_noted = true;
        a->gap_below = s.min > a->expect;
        a->st.gaps++;
        trouble(a);
        aux_report(&a->rep, "gap", "sequence %llu missing while later updaters (up to %llu) are present: waiting",
                   (unsigned long long)a->expect, (unsigned long long)s.max);
    }
    if (a->gap_noted)
        check_lag(a, "has been missing while later ones are present",
                  a->gap_below ? "if the writer has removed it already (updater_keep_ticks), this copy cannot be "
                                 "completed"
                               : NULL);
    return idle(a);
}

static aux_status_t
torn(aux_t *a, const char *why)
{
    a->st.retries++;
    trouble(a);
    if (!a->torn_noted)
        aux_report(&a->rep, "retry", "%s: %s; trying again", ud_name(a, a->expect), why);
    a->torn_noted = true;
    check_lag(a, "has been torn or incomplete", NULL);
    return idle(a);
}

static void
advance(aux_t *a, uint64_t next)
{
    a->expect = next;
    a->idle = 0;
    a->trouble_since = -1;
    a->gap_noted = a->torn_noted = a->foreign_noted = a->warned = false;
}

/* ---- decisions ------------------------------------------------------------ */

typedef enum act_t { ACT_APPLY, ACT_SKIP, ACT_FINISH, ACT_FOREIGN, ACT_FATAL } act_t;

static act_t
decide(aux_t *a, const vfdswmr_udhdr_t *h, char *err, size_t errlen)
{
    char d[64];

    if (h->sequence == 0) /* creates the local file -- unless it made this one */
        return a->local != LOCAL_NONE && a->session == h->session ? ACT_SKIP : ACT_APPLY;
    if (a->session != 0 && h->session != a->session)
        return ACT_FOREIGN;
    switch (a->local) {
    case LOCAL_NONE:
        fatal(a, err, errlen, "updater file %s: no local metadata file to apply it to (sequence 0 creates it)",
              a->name);
        return ACT_FATAL;
    case LOCAL_EMPTY: /* expect is 1: the first state of the session */
        return ACT_APPLY;
    case LOCAL_VALID:
        if (h->tick == a->tick + 1)
            return ACT_APPLY;
        if (h->tick <= a->tick)
            return h->tick == a->tick && (h->flags & VFDSWMR_UD_FINAL) ? ACT_FINISH : ACT_SKIP;
        break;
    }
    fatal(a, err, errlen,
          "updater file %s carries tick %llu but the local metadata file %s is %s: the updaters in between are "
          "missing",
          a->name, (unsigned long long)h->tick, a->o.md_file, local_desc(a, d, sizeof d));
    return ACT_FATAL;
}

/* The FINAL updater is applied: remove the local file (readers keep theirs open). */
static aux_status_t
finish(aux_t *a, char *err, size_t errlen)
{
    if (a->fd >= 0)
        close(a->fd);
    a->fd = -1;
    if (unlink(a->o.md_file) < 0 && errno != ENOENT)
        return fatal(a, err, errlen, "cannot remove the local metadata file %s: %s", a->o.md_file, strerror(errno));
    vfdswmr_fsync_dir_of(a->o.md_file);
    a->local = LOCAL_NONE;
    a->done = true;
    aux_report(&a->rep, "final", "sequence %llu was the writer's last: removed %s", (unsigned long long)a->expect,
               a->o.md_file);
    return AUX_DONE;
}

/* An updater of another session at `expect`: a new writer, or a leftover. */
static aux_status_t
foreign(aux_t *a, const vfdswmr_udhdr_t *h)
{
    udfile_t f0;
    char why[128];
    bool created = read_header(a, 0, &f0, why, sizeof why) == HDR_OK;

    ud_close(&f0);
    if (created && (f0.h.flags & VFDSWMR_UD_CREATE_ONLY) && f0.h.session == h->session) {
        aux_report(&a->rep, "session",
                   "updater %llu and updater 0 belong to session %llx, not %llx: a new writer; starting over at "
                   "sequence 0",
                   (unsigned long long)a->expect, (unsigned long long)h->session, (unsigned long long)a->session);
        advance(a, 0);
        return AUX_PROGRESS;
    }
    if (!a->foreign_noted)
        aux_report(&a->rep, "session",
                   "updater %s belongs to session %llx, not %llx (left over from an earlier writer?): waiting",
                   ud_name(a, a->expect), (unsigned long long)h->session, (unsigned long long)a->session);
    a->foreign_noted = true;
    trouble(a);
    check_lag(a, "has belonged to another writer session", NULL);
    return idle(a);
}

/* ---- applying ------------------------------------------------------------- */

/* Sequence 0: a fresh, empty local file of md_pages_reserved pages (as the
 * writer's own), put in place by rename so it is a new inode. */
static int
create_local(aux_t *a, uint32_t page_size)
{
    int fd = vfdswmr_create_temp(a->o.md_file, a->md_tmp, sizeof a->md_tmp, 0644);

    if (fd < 0)
        return -1;
    if (ftruncate(fd, (off_t)((uint64_t)a->o.md_pages_reserved * page_size)) < 0 || fsync(fd) < 0 ||
        rename(a->md_tmp, a->o.md_file) < 0 || vfdswmr_fsync_dir_of(a->o.md_file) < 0) {
        int saved = errno;
        close(fd);
        unlink(a->md_tmp); /* ENOENT once renamed: harmless */
        errno = saved;
        return -1;
    }
    if (a->fd >= 0)
        close(a->fd);
    a->fd = fd;
    a->local = LOCAL_EMPTY;
    return 0;
}

static uint64_t
plan_bytes(const vfdswmr_mdplan_t *p)
{
    uint64_t n = p->index_len + VFDSWMR_MDHDR_SIZE;

    for (size_t i = 0; i < p->nimages; i++)
        n += p->images[i].length;
    return n;
}

static aux_status_t
damaged(aux_t *a, const char *why, char *err, size_t errlen)
{
    char d[64];

    return fatal(a, err, errlen, "updater file %s is damaged: %s; the local metadata file %s stays %s", a->name, why,
                 a->o.md_file, local_desc(a, d, sizeof d));
}

/*
 * The whole of updater f, verified, into *buf / *u -- or the status to
 * return instead (AUX_PROGRESS never): not yet complete (torn), damaged
 * (fatal). Reads and allocates no more than the updater the file is.
 */
static bool
load_updater(aux_t *a, const udfile_t *f, uint8_t **buf, vfdswmr_updater_t *u, aux_status_t *st, char *err,
             size_t errlen)
{
    const vfdswmr_udhdr_t *h = &f->h;
    uint64_t need = vfdswmr_updater_size(h, NULL);
    vfdswmr_mderr_t me;
    char why[256];

    *buf = NULL;
    if (f->size < need) { /* also: the change list is in the file */
        snprintf(why, sizeof why, "incomplete: %llu bytes, its header implies at least %llu",
                 (unsigned long long)f->size, (unsigned long long)need);
        *st = torn(a, why);
        return false;
    }
    if (!(h->flags & VFDSWMR_UD_CREATE_ONLY)) {
        vfdswmr_udcl_t cl;
        uint8_t *clb = malloc((size_t)h->cl_length);

        if (clb == NULL || vfdswmr_pread_all(f->fd, clb, (size_t)h->cl_length, h->cl_offset) < 0) {
            free(clb);
            *st = torn(a, strerror(errno));
            return false;
        }
        /* The file's size is judged below, from the size the list implies. */
        me = vfdswmr_udcl_decode(clb, (size_t)h->cl_length, h->page_size, UINT64_MAX, &cl);
        free(clb);
        if (me != VFDSWMR_MD_OK) {
            *st = vfdswmr_mderr_retryable(me) ? torn(a, vfdswmr_mderr_str(me))
                                              : damaged(a, vfdswmr_mderr_str(me), err, errlen);
            return false;
        }
        need = vfdswmr_updater_size(h, &cl);
        free(cl.entries);
    }
    if (f->size < need) {
        snprintf(why, sizeof why, "incomplete: %llu of its %llu bytes", (unsigned long long)f->size,
                 (unsigned long long)need);
        *st = torn(a, why);
        return false;
    }
    if (f->size > need) {
        snprintf(why, sizeof why,
                 "trailing bytes after the updater's last image (the file has %llu bytes, the "
                 "updater ends at byte %llu)",
                 (unsigned long long)f->size, (unsigned long long)need);
        *st = damaged(a, why, err, errlen);
        return false;
    }
    if (NULL == (*buf = malloc((size_t)need)) || vfdswmr_pread_all(f->fd, *buf, (size_t)need, 0) < 0) {
        *st = torn(a, strerror(errno)); /* ENODATA: it shrank: replaced in place, or an I/O hiccup */
        free(*buf);
        *buf = NULL;
        return false;
    }
    if ((me = vfdswmr_updater_decode(*buf, (size_t)need, u)) != VFDSWMR_MD_OK) {
        *st = vfdswmr_mderr_retryable(me) ? torn(a, vfdswmr_mderr_str(me))
                                          : damaged(a, vfdswmr_mderr_str(me), err, errlen);
        free(*buf);
        *buf = NULL;
        return false;
    }
    if (u->hdr.session != h->session || u->hdr.tick != h->tick || u->hdr.flags != h->flags ||
        u->hdr.sequence != h->sequence) {
        vfdswmr_updater_free(u);
        free(*buf);
        *buf = NULL;
        *st = torn(a, "replaced while being read");
        return false;
    }
    return true;
}

/*
 * Apply updater `expect`, open as f, whose header said it is due.
 *
 * Crash safety: vfdswmr_mdplan_apply() writes the images, then the index,
 * fdatasync, then the header, fdatasync. Killed before the header is
 * written, the local file still has the previous header (tick T). The new
 * images went to pages no index of the last max_lag ticks names (the
 * writer's space rule), so no reader's snapshot changed; the index went
 * to the reserved-page slot header T does not name, or to fresh pages, so
 * header T and its index are intact. On restart
 * the header says T, so this same updater (tick T + 1) is applied again:
 * the same bytes to the same places, the header last, which completes the
 * interrupted write exactly as if it had not been interrupted.
 */
static aux_status_t
apply(aux_t *a, const udfile_t *f, char *err, size_t errlen)
{
    const vfdswmr_udhdr_t *h = &f->h;
    double t0 = vfdswmr_now(), dt;
    uint8_t *buf;
    vfdswmr_updater_t u;
    aux_status_t st;
    uint64_t bytes = 0;

    /* Updater n + 1 never before n (aux.h); a VALID local file at tick T
     * receives only tick T + 1 of its session, an EMPTY one only sequence 1. */
    VFDSWMR_ASSERT(h->sequence == a->expect);
    VFDSWMR_ASSERT(
        h->sequence == 0 || (a->local == LOCAL_EMPTY && h->sequence == 1) ||
        (a->local == LOCAL_VALID && h->tick == a->tick + 1 && (a->session == 0 || h->session == a->session)));
    if (!load_updater(a, f, &buf, &u, &st, err, errlen))
        return st;
    if (!(h->flags & VFDSWMR_UD_CREATE_ONLY))
        bytes = plan_bytes(&u.plan);
    aux_report(&a->rep, "applying", "seq=%llu tick=%llu images=%zu bytes=%llu%s%s", (unsigned long long)a->expect,
               (unsigned long long)h->tick, u.plan.nimages, (unsigned long long)bytes,
               (h->flags & VFDSWMR_UD_CREATE_ONLY) ? " create_only" : "",
               (h->flags & VFDSWMR_UD_FINAL) ? " final" : "");
    if (h->sequence == 0 && create_local(a, h->page_size) < 0) {
        vfdswmr_updater_free(&u);
        free(buf);
        return fatal(a, err, errlen, "cannot create the local metadata file %s: %s", a->o.md_file, strerror(errno));
    }
    a->session = h->session;
    if (!(h->flags & VFDSWMR_UD_CREATE_ONLY)) {
        char why[AUX_ERRLEN] = "";
        int rc = a->fd >= 0 ? a->fd : vfdswmr_open_regular(a->o.md_file, O_RDWR);

        if (rc < 0) {
            open_refusal(why, sizeof why, "the local metadata file", a->o.md_file, rc);
        }
        else {
            a->fd = rc;
            if (vfdswmr_mdplan_apply(a->fd, &u.plan, true) < 0)
                snprintf(why, sizeof why, "cannot write the local metadata file %s: %s", a->o.md_file, strerror(errno));
        }
        if (why[0] != '\0') {
            vfdswmr_updater_free(&u);
            free(buf);
            return fatal(a, err, errlen, "%s", why);
        }
        a->local = LOCAL_VALID;
        a->tick = h->tick;
    }
    vfdswmr_updater_free(&u);
    free(buf);
    dt = vfdswmr_now() - t0;
    a->st.applied++;
    a->st.bytes += bytes;
    a->st.apply_total += dt;
    if (dt > a->st.apply_max)
        a->st.apply_max = dt;
    aux_report(&a->rep, "applied", "seq=%llu tick=%llu us=%.0f", (unsigned long long)a->expect,
               (unsigned long long)h->tick, dt * 1e6);
    if (h->flags & VFDSWMR_UD_FINAL)
        return finish(a, err, errlen);
    advance(a, a->expect + 1);
    return AUX_PROGRESS;
}

aux_status_t
aux_poll(aux_t *a, char *err, size_t errlen)
{
    udfile_t f;
    aux_status_t st = AUX_FATAL;
    char why[256], d[64];

    if (a->failed)
        return fatal(a, err, errlen, "an earlier poll failed (its reason was reported then)");
    if (a->done)
        return AUX_DONE;
    if (!a->expect_known) {
        aux_scan_t s;
        if (scan(a, &s) < 0 || !s.any)
            return idle(a);
        advance(a, s.min);
        a->expect_known = true;
        aux_report(&a->rep, "resume", "looking for the updater after tick %llu from sequence %llu",
                   (unsigned long long)a->tick, (unsigned long long)s.min);
    }
    switch (read_header(a, a->expect, &f, why, sizeof why)) {
    case HDR_MISSING:
        return missing(a);
    case HDR_TORN:
        return torn(a, why);
    case HDR_DAMAGED:
        return damaged(a, why, err, errlen);
    case HDR_NOT_REGULAR: /* never the writer's: nothing to wait for, nothing to read */
        return fatal(a, err, errlen, "updater file %s is not a regular file (%s); the local metadata file %s stays %s",
                     a->name, why, a->o.md_file, local_desc(a, d, sizeof d));
    case HDR_OK:
        break;
    }
    switch (decide(a, &f.h, err, errlen)) {
    case ACT_APPLY:
        st = apply(a, &f, err, errlen);
        break;
    case ACT_SKIP:
        a->st.skipped++;
        aux_report(&a->rep, "skip", "seq=%llu tick=%llu: already applied", (unsigned long long)a->expect,
                   (unsigned long long)f.h.tick);
        advance(a, a->expect + 1);
        st = AUX_PROGRESS;
        break;
    case ACT_FINISH:
        st = finish(a, err, errlen);
        break;
    case ACT_FOREIGN:
        st = foreign(a, &f.h);
        break;
    case ACT_FATAL:
        break;
    }
    ud_close(&f);
    return st;
}

/* ---- open, resume, run ---------------------------------------------------- */

/* Whether updater seq exists with this session and tick (its header only). */
static bool
probe(aux_t *a, uint64_t seq, uint64_t tick, vfdswmr_udhdr_t *h)
{
    udfile_t f;
    char why[128];
    bool ok = read_header(a, seq, &f, why, sizeof why) == HDR_OK && f.h.session == a->session && f.h.tick == tick;

    ud_close(&f);
    *h = f.h;
    return ok;
}

/*
 * Where to continue with a VALID local file at tick T. The writer numbers
 * updaters so that sequence n carries tick n - 1; try that first (reading
 * two headers at most), else scan from the smallest updater that exists.
 */
static void
resume_valid(aux_t *a)
{
    vfdswmr_udhdr_t h;
    uint64_t t = a->tick;

    a->expect_known = true;
    if (t < UINT64_MAX - 2 && probe(a, t + 2, t + 1, &h))
        advance(a, t + 2);
    else if (t < UINT64_MAX - 1 && probe(a, t + 1, t, &h))
        advance(a, (h.flags & VFDSWMR_UD_FINAL) ? t + 1 : t + 2); /* FINAL again: finish the removal */
    else
        a->expect_known = false;
}

/* Look at the local file: absent, without a header, or valid. */
static int
examine_local(aux_t *a, char *err, size_t errlen)
{
    uint8_t buf[VFDSWMR_MDHDR_SIZE];
    vfdswmr_mdhdr_t mh;
    udfile_t f0;
    char why[128];
    ssize_t n;
    int rc = vfdswmr_open_regular(a->o.md_file, O_RDWR);

    if (rc < 0) {
        a->fd = -1;
        if (rc == VFDSWMR_OPEN_NOT_REGULAR || errno != ENOENT) {
            open_refusal(err, errlen, "the local metadata file", a->o.md_file, rc);
            return -1;
        }
        a->local = LOCAL_NONE;
        advance(a, 0);
        a->expect_known = true;
        aux_report(&a->rep, "resume", "no local metadata file: starting at sequence 0");
        return 0;
    }
    a->fd = rc;
    n = vfdswmr_pread_upto(a->fd, buf, sizeof buf, 0);
    if (n < 0) {
        snprintf(err, errlen, "cannot read the local metadata file %s: %s", a->o.md_file, strerror(errno));
        return -1;
    }
    if (vfdswmr_mdhdr_decode(buf, (size_t)n, &mh) == VFDSWMR_MD_OK) {
        a->local = LOCAL_VALID;
        a->session = mh.session;
        a->tick = mh.tick;
        resume_valid(a);
        if (a->expect_known)
            aux_report(&a->rep, "resume", "local file of session %llx at tick %llu: continuing at sequence %llu",
                       (unsigned long long)a->session, (unsigned long long)a->tick, (unsigned long long)a->expect);
        else
            aux_report(&a->rep, "resume", "local file of session %llx at tick %llu: looking for tick %llu",
                       (unsigned long long)a->session, (unsigned long long)a->tick, (unsigned long long)a->tick + 1);
        return 0;
    }
    /* Created by sequence 0, then interrupted before sequence 1's header was
     * written: sequence 1 is next, of the session sequence 0 names (if it is
     * still there), so that a stale sequence 1 of an earlier writer waits. */
    a->local = LOCAL_EMPTY;
    if (read_header(a, 0, &f0, why, sizeof why) == HDR_OK && (f0.h.flags & VFDSWMR_UD_CREATE_ONLY))
        a->session = f0.h.session;
    ud_close(&f0);
    advance(a, 1);
    a->expect_known = true;
    aux_report(&a->rep, "resume", "local file without a header yet: continuing at sequence 1");
    return 0;
}

/*
 * Remove the temporary files an earlier run killed in create_local() left:
 * regular files named <md_file>.<random>.tmp (vfdswmr_create_temp()).
 * Only names are removed (unlink): never a link's target.
 */
static void
remove_temp(const char *path, void *ctx)
{
    if (unlink(path) == 0)
        aux_report(&((aux_t *)ctx)->rep, "start", "removed %s, a temporary file left by an interrupted run", path);
}

static void
remove_stale_temps(aux_t *a)
{
    vfdswmr_temps_each(a->o.md_file, remove_temp, a);
}

int
aux_open(const aux_opts_t *o, aux_t **out, char *err, size_t errlen)
{
    aux_t *a = calloc(1, sizeof *a);
    struct stat st;
    int rc;

    *out = NULL;
    if (a == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    a->o = *o;
    a->fd = -1;
    a->trouble_since = -1;
    if (stat(o->ud_base, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, errlen,
                 "<ud_base> %s is a directory; give the base path of the updater files, e.g. %s/FILE.h5.md.ud",
                 o->ud_base, o->ud_base);
        goto fail;
    }
    if ((rc = aux_report_open(&a->rep, o->log_file, o->verbose)) < 0) {
        open_refusal(err, errlen, "the log file", o->log_file, rc);
        goto fail;
    }
    if (NULL == (a->udir = aux_udir_new(o->ud_base))) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    aux_report(&a->rep, "start",
               "md_file=%s ud_base=%s tick_len=%u polls_per_tick=%u max_lag=%u "
               "md_pages_reserved=%u pid=%ld",
               o->md_file, o->ud_base, o->tick_len, o->polls_per_tick, o->max_lag, o->md_pages_reserved,
               (long)getpid());
    if (strcmp(o->under, VFDSWMR_DEFAULT_UNDER) != 0)
        aux_report(&a->rep, "start",
                   "--vfd_config under=%s is not used: the local metadata file is written "
                   "with POSIX I/O",
                   o->under);
    remove_stale_temps(a);
    if (examine_local(a, err, errlen) < 0)
        goto fail;
    *out = a;
    return 0;
fail:
    aux_report(&a->rep, "error", "%s", err);
    aux_close(a);
    return -1;
}

void
aux_close(aux_t *a)
{
    if (a == NULL)
        return;
    if (a->fd >= 0)
        close(a->fd);
    aux_udir_free(a->udir);
    aux_report_close(&a->rep);
    free(a);
}

int
aux_run(aux_t *a, volatile sig_atomic_t *stop, char *err, size_t errlen)
{
    double pause = vfdswmr_tick_seconds(a->o.tick_len) / a->o.polls_per_tick;
    struct timespec ts = vfdswmr_timespec(pause);

    while (!*stop) {
        switch (aux_poll(a, err, errlen)) {
        case AUX_PROGRESS:
            continue;
        case AUX_WAITING:
            nanosleep(&ts, NULL); /* a signal cuts it short */
            continue;
        case AUX_DONE:
            return 0;
        case AUX_FATAL:
            return 1;
        }
    }
    aux_report(&a->rep, "stop", "signal: stopping before sequence %llu", (unsigned long long)a->expect);
    return 0;
}

const aux_stats_t *
aux_stats(const aux_t *a)
{
    return &a->st;
}
uint64_t
aux_expected(const aux_t *a)
{
    return a->expect;
}
