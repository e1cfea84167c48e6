/*
 * The daemon proper: wait for updater file `expect`, verify it, apply it to
 * the local metadata file, go on with expect + 1.
 *
 * State: the local file is absent (NONE), created but without a header
 * (EMPTY), or VALID with the session and tick of its header. Each updater
 * is judged by its 56-byte header first (decide()), and read whole only
 * when it is to be applied, so files already applied before a restart are
 * never read past their header -- and with the resume probe of aux_open()
 * usually not at all.
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
#include "plan.h"
#include "updater.h"

typedef enum local_t { LOCAL_NONE, LOCAL_EMPTY, LOCAL_VALID } local_t;

struct aux_t {
    aux_opts_t o;
    aux_report_t rep;
    aux_stats_t st;
    aux_udir_t *udir;
    char *md_tmp;          /* <md_file>.aux.tmp: sequence 0 builds the new file here */
    int fd;                /* the local file, or -1 */
    local_t local;
    uint64_t session;      /* of the local file's session; 0: not known */
    uint64_t tick;         /* LOCAL_VALID: the tick its header names */
    bool expect_known;     /* false: resume at the smallest updater that appears */
    uint64_t expect;
    bool done, failed;
    /* The wait for `expect`. */
    unsigned idle;         /* polls since it became expected that found nothing to do */
    double trouble_since;  /* when a gap, torn file or foreign session was first seen; < 0: none */
    bool gap_noted, torn_noted, foreign_noted, warned;
    bool gap_below;        /* every updater present is later than expect */
    char name[AUX_MAX_PATH + 64];
    char err[AUX_ERRLEN];
};

typedef enum read_t { READ_OK, READ_MISSING, READ_ERROR } read_t;

static double
clock_now(const aux_t *a)
{
    return a->o.clock ? a->o.clock() : vfdswmr_now();
}

static double
tick_seconds(const aux_t *a)
{
    return a->o.tick_len ? a->o.tick_len * 0.1 : 0.1; /* as the writer's ticker */
}

__attribute__((format(printf, 2, 3))) static aux_status_t
fatal(aux_t *a, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(a->err, sizeof a->err, fmt, ap);
    va_end(ap);
    aux_report(&a->rep, "error", "%s", a->err);
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
 * Read the first `max` bytes of path (all of it with SIZE_MAX) into a
 * malloc'd *buf. READ_MISSING when it does not exist; READ_ERROR with errno
 * (ENODATA: it shrank while being read).
 */
static read_t
read_file(const char *path, size_t max, uint8_t **buf, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC), saved;
    struct stat st;

    *buf = NULL;
    *len = 0;
    if (fd < 0)
        return errno == ENOENT ? READ_MISSING : READ_ERROR;
    if (fstat(fd, &st) < 0)
        goto fail;
    if ((uint64_t)st.st_size > SIZE_MAX - 1) {
        errno = EFBIG;
        goto fail;
    }
    *len = (uint64_t)st.st_size < max ? (size_t)st.st_size : max;
    if (NULL == (*buf = malloc(*len + 1)) || vfdswmr_pread_all(fd, *buf, *len, 0) < 0)
        goto fail;
    close(fd);
    return READ_OK;
fail:
    saved = errno;
    close(fd);
    free(*buf);
    *buf = NULL;
    errno = saved;
    return READ_ERROR;
}

typedef enum hdr_t { HDR_OK, HDR_MISSING, HDR_TORN, HDR_DAMAGED } hdr_t;

/* The header of updater `seq`; on HDR_TORN/HDR_DAMAGED, why says what is wrong. */
static hdr_t
read_header(aux_t *a, uint64_t seq, vfdswmr_udhdr_t *h, char *why, size_t whylen)
{
    uint8_t *buf;
    size_t len;
    vfdswmr_mderr_t err;
    read_t r = read_file(ud_name(a, seq), VFDSWMR_UDHDR_SIZE, &buf, &len);

    if (r != READ_OK) {
        snprintf(why, whylen, "%s", strerror(errno));
        return r == READ_MISSING ? HDR_MISSING : HDR_TORN;
    }
    err = vfdswmr_udhdr_decode(buf, len, h);
    free(buf);
    if (err == VFDSWMR_MD_OK && h->sequence != seq) {
        snprintf(why, whylen, "its header says it is sequence %llu", (unsigned long long)h->sequence);
        return HDR_DAMAGED;
    }
    if (err != VFDSWMR_MD_OK)
        snprintf(why, whylen, "%s", vfdswmr_mderr_str(err));
    return err == VFDSWMR_MD_OK ? HDR_OK : vfdswmr_mderr_retryable(err) ? HDR_TORN : HDR_DAMAGED;
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

    if (a->warned || a->trouble_since < 0 || waited <= a->o.max_lag * tick_seconds(a))
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
decide(aux_t *a, const vfdswmr_udhdr_t *h)
{
    char d[64];

    if (h->sequence == 0) /* creates the local file -- unless it made this one */
        return a->local != LOCAL_NONE && a->session == h->session ? ACT_SKIP : ACT_APPLY;
    if (a->session != 0 && h->session != a->session)
        return ACT_FOREIGN;
    switch (a->local) {
    case LOCAL_NONE:
        fatal(a, "updater file %s: no local metadata file to apply it to (sequence 0 creates it)", a->name);
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
    fatal(a,
          "updater file %s carries tick %llu but the local metadata file %s is %s: the updaters in between are "
          "missing",
          a->name, (unsigned long long)h->tick, a->o.md_file, local_desc(a, d, sizeof d));
    return ACT_FATAL;
}

/* The FINAL updater is applied: remove the local file (readers keep theirs open). */
static aux_status_t
finish(aux_t *a)
{
    if (a->fd >= 0)
        close(a->fd);
    a->fd = -1;
    if (unlink(a->o.md_file) < 0 && errno != ENOENT)
        return fatal(a, "cannot remove the local metadata file %s: %s", a->o.md_file, strerror(errno));
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
    vfdswmr_udhdr_t h0;
    char why[128];

    if (read_header(a, 0, &h0, why, sizeof why) == HDR_OK && (h0.flags & VFDSWMR_UD_CREATE_ONLY) &&
        h0.session == h->session) {
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
    int fd = open(a->md_tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

    if (fd < 0 || ftruncate(fd, (off_t)((uint64_t)a->o.md_pages_reserved * page_size)) < 0 || fsync(fd) < 0 ||
        rename(a->md_tmp, a->o.md_file) < 0 || vfdswmr_fsync_dir_of(a->o.md_file) < 0) {
        int saved = errno;
        if (fd >= 0)
            close(fd);
        unlink(a->md_tmp);
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

/*
 * Apply updater `expect`, whose header h said it is due.
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
apply(aux_t *a, const vfdswmr_udhdr_t *h)
{
    double t0 = vfdswmr_now(), dt;
    uint8_t *buf;
    size_t len;
    vfdswmr_updater_t u;
    vfdswmr_mderr_t err;
    uint64_t bytes = 0;
    char d[64];

    if (read_file(ud_name(a, a->expect), SIZE_MAX, &buf, &len) != READ_OK)
        return torn(a, strerror(errno)); /* it was there a moment ago: replaced, or an I/O hiccup */
    if ((err = vfdswmr_updater_decode(buf, len, &u)) != VFDSWMR_MD_OK) {
        free(buf);
        if (vfdswmr_mderr_retryable(err))
            return torn(a, vfdswmr_mderr_str(err));
        return fatal(a, "updater file %s is damaged: %s; the local metadata file %s stays %s", a->name,
                     vfdswmr_mderr_str(err), a->o.md_file, local_desc(a, d, sizeof d));
    }
    if (u.hdr.session != h->session || u.hdr.tick != h->tick || u.hdr.flags != h->flags ||
        u.hdr.sequence != h->sequence) {
        vfdswmr_updater_free(&u);
        free(buf);
        return torn(a, "replaced while being read");
    }
    if (!(h->flags & VFDSWMR_UD_CREATE_ONLY))
        bytes = plan_bytes(&u.plan);
    aux_report(&a->rep, "applying", "seq=%llu tick=%llu images=%zu bytes=%llu%s%s", (unsigned long long)a->expect,
               (unsigned long long)h->tick, u.plan.nimages, (unsigned long long)bytes,
               (h->flags & VFDSWMR_UD_CREATE_ONLY) ? " create_only" : "",
               (h->flags & VFDSWMR_UD_FINAL) ? " final" : "");
    if (h->sequence == 0 && create_local(a, h->page_size) < 0) {
        vfdswmr_updater_free(&u);
        free(buf);
        return fatal(a, "cannot create the local metadata file %s: %s", a->o.md_file, strerror(errno));
    }
    a->session = h->session;
    if (!(h->flags & VFDSWMR_UD_CREATE_ONLY)) {
        if (a->fd < 0)
            a->fd = open(a->o.md_file, O_RDWR | O_CLOEXEC);
        if (a->fd < 0 || vfdswmr_mdplan_apply(a->fd, &u.plan, true) < 0) {
            vfdswmr_updater_free(&u);
            free(buf);
            return fatal(a, "cannot write the local metadata file %s: %s", a->o.md_file, strerror(errno));
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
        return finish(a);
    advance(a, a->expect + 1);
    return AUX_PROGRESS;
}

aux_status_t
aux_poll(aux_t *a)
{
    vfdswmr_udhdr_t h;
    char why[256], d[64];

    if (a->failed)
        return AUX_FATAL;
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
    switch (read_header(a, a->expect, &h, why, sizeof why)) {
    case HDR_MISSING:
        return missing(a);
    case HDR_TORN:
        return torn(a, why);
    case HDR_DAMAGED:
        return fatal(a, "updater file %s is damaged: %s; the local metadata file %s stays %s", a->name, why,
                     a->o.md_file, local_desc(a, d, sizeof d));
    case HDR_OK:
        break;
    }
    switch (decide(a, &h)) {
    case ACT_APPLY:
        return apply(a, &h);
    case ACT_SKIP:
        a->st.skipped++;
        aux_report(&a->rep, "skip", "seq=%llu tick=%llu: already applied", (unsigned long long)a->expect,
                   (unsigned long long)h.tick);
        advance(a, a->expect + 1);
        return AUX_PROGRESS;
    case ACT_FINISH:
        return finish(a);
    case ACT_FOREIGN:
        return foreign(a, &h);
    case ACT_FATAL:
        break;
    }
    return AUX_FATAL;
}

/* ---- open, resume, run ---------------------------------------------------- */

/* Whether updater seq exists with this session and tick (its header only). */
static bool
probe(aux_t *a, uint64_t seq, uint64_t tick, vfdswmr_udhdr_t *h)
{
    char why[128];

    return read_header(a, seq, h, why, sizeof why) == HDR_OK && h->session == a->session && h->tick == tick;
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
    vfdswmr_udhdr_t h0;
    char why[128];
    ssize_t n;

    if ((a->fd = open(a->o.md_file, O_RDWR | O_CLOEXEC)) < 0) {
        if (errno != ENOENT) {
            snprintf(err, errlen, "cannot open the local metadata file %s: %s", a->o.md_file, strerror(errno));
            return -1;
        }
        a->local = LOCAL_NONE;
        advance(a, 0);
        a->expect_known = true;
        aux_report(&a->rep, "resume", "no local metadata file: starting at sequence 0");
        return 0;
    }
    while ((n = pread(a->fd, buf, sizeof buf, 0)) < 0 && errno == EINTR)
        ;
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
                       (unsigned long long)a->session, (unsigned long long)a->tick,
                       (unsigned long long)a->tick + 1);
        return 0;
    }
    /* Created by sequence 0, then interrupted before sequence 1's header was
     * written: sequence 1 is next, of the session sequence 0 names (if it is
     * still there), so that a stale sequence 1 of an earlier writer waits. */
    a->local = LOCAL_EMPTY;
    if (read_header(a, 0, &h0, why, sizeof why) == HDR_OK && (h0.flags & VFDSWMR_UD_CREATE_ONLY))
        a->session = h0.session;
    advance(a, 1);
    a->expect_known = true;
    aux_report(&a->rep, "resume", "local file without a header yet: continuing at sequence 1");
    return 0;
}

int
aux_open(const aux_opts_t *o, aux_t **out, char *err, size_t errlen)
{
    aux_t *a = calloc(1, sizeof *a);
    struct stat st;

    *out = NULL;
    if (a == NULL || NULL == (a->md_tmp = malloc(strlen(o->md_file) + sizeof ".aux.tmp"))) {
        free(a);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    a->o = *o;
    a->fd = -1;
    a->trouble_since = -1;
    sprintf(a->md_tmp, "%s.aux.tmp", o->md_file);
    if (stat(o->ud_base, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, errlen,
                 "<ud_base> %s is a directory; give the base path of the updater files, e.g. %s/FILE.h5.md.ud",
                 o->ud_base, o->ud_base);
        goto fail;
    }
    if (aux_report_open(&a->rep, o->log_file, o->verbose) < 0) {
        snprintf(err, errlen, "cannot open the log file %s: %s", o->log_file, strerror(errno));
        goto fail;
    }
    if (NULL == (a->udir = aux_udir_new(o->ud_base))) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    aux_report(&a->rep, "start", "md_file=%s ud_base=%s tick_len=%u polls_per_tick=%u max_lag=%u "
               "md_pages_reserved=%u pid=%ld", o->md_file, o->ud_base, o->tick_len, o->polls_per_tick,
               o->max_lag, o->md_pages_reserved, (long)getpid());
    if (strcmp(o->under, VFDSWMR_DEFAULT_UNDER) != 0)
        aux_report(&a->rep, "start", "--vfd_config under=%s is not used: the local metadata file is written "
                   "with POSIX I/O", o->under);
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
    free(a->md_tmp);
    free(a);
}

int
aux_run(aux_t *a, volatile sig_atomic_t *stop)
{
    double pause = tick_seconds(a) / a->o.polls_per_tick;
    struct timespec ts = {(time_t)pause, (long)((pause - (double)(time_t)pause) * 1e9)};

    while (!*stop) {
        switch (aux_poll(a)) {
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

const char *aux_error(const aux_t *a) { return a->err; }
const aux_stats_t *aux_stats(const aux_t *a) { return &a->st; }
uint64_t aux_expected(const aux_t *a) { return a->expect; }
