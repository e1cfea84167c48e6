/* The raw-data write log; see rawlog.h (and docs/FORMAT.md, "VRAW"). */
#include "rawlog.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "io.h"
#include "safefile.h"

/* Invariant: r[0 .. n) sorted by tick (adds come in tick order), every tick
 * >= first_tick; first_tick only rises. Invariant builds (common/check.h)
 * assert it at every add and check the whole log at every publish. */
struct vfdswmr_rawlog {
    int fd;
    char *path;
    vfdswmr_file_id_t id;
    uint64_t session, first_tick;
    vfdswmr_rawrange_t r[VFDSWMR_RAWLOG_CAP];
    uint32_t n;
    size_t file_len; /* bytes in the file: a shorter log is written over a longer one, then cut */
    size_t buf_len;  /* bytes of buf prepared for the next write */
    uint8_t buf[VFDSWMR_RAWLOG_HDR_SIZE + VFDSWMR_RAWLOG_CAP * VFDSWMR_RAWRANGE_SIZE + 4]; /* the encoded log */
#ifdef VFDSWMR_INVARIANTS
    vfdswmr_pace_t pace; /* when the next check_log() is due */
#endif
};

/* The invariant above: NULL when it holds, else what is broken; *n gets the
 * ranges. */
VFDSWMR_CHECKER const char *
check_log(const vfdswmr_rawlog_t *l, uint64_t *n)
{
    *n = l->n;
    for (uint32_t k = 0; k < l->n; k++)
        if (l->r[k].tick < l->first_tick || (k > 0 && l->r[k].tick < l->r[k - 1].tick))
            return "raw-data write log not sorted by tick, or holding a tick below first_tick";
    return NULL;
}

int
vfdswmr_rawlog_name(char *out, size_t len, const char *md_path)
{
    int n = snprintf(out, len, "%s.raw", md_path);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

int
vfdswmr_rawlog_create(const char *md_path, uint64_t session, uint64_t first_tick, vfdswmr_rawlog_t **out)
{
    vfdswmr_rawlog_t *l = calloc(1, sizeof *l);
    size_t plen = strlen(md_path) + 8;
    int e;

    *out = NULL;
    if (l == NULL || NULL == (l->path = malloc(plen)) || vfdswmr_rawlog_name(l->path, plen, md_path) < 0) {
        e = ENOMEM;
        goto fail;
    }
    VFDSWMR_ASSERT(first_tick >= 1); /* tick 0 wrote nothing: the file as it was */
    l->session = session;
    l->first_tick = first_tick;
    l->file_len = vfdswmr_rawlog_size(0);
    /* lists ticks first_tick .. first_tick - 1: nothing yet */
    vfdswmr_rawlog_encode(&(vfdswmr_rawloghdr_t){session, first_tick, first_tick - 1, 0}, NULL, l->buf);
    if ((l->fd = vfdswmr_create_named(l->path, l->buf, l->file_len, 0644, &l->id)) < 0) {
        e = errno;
        goto fail;
    }
    *out = l;
    return 0;
fail:
    if (l)
        free(l->path);
    free(l);
    errno = e;
    return -1;
}

/* Make room for one more range of `tick`: drop the oldest tick, or, when
 * every range is of `tick`, collapse them into one covering them all. */
static void
make_room(vfdswmr_rawlog_t *l, uint64_t tick)
{
    uint32_t k = 0;

    if (l->r[0].tick < tick) {
        uint64_t oldest = l->r[0].tick;
        VFDSWMR_ASSERT(oldest >= l->first_tick); /* so first_tick rises */
        while (k < l->n && l->r[k].tick == oldest)
            k++;
        memmove(l->r, l->r + k, (l->n - k) * sizeof l->r[0]);
        l->n -= k;
        l->first_tick = oldest + 1;
        return;
    }
    uint64_t lo = UINT64_MAX, hi = 0;
    for (k = 0; k < l->n; k++) {
        lo = l->r[k].addr < lo ? l->r[k].addr : lo;
        hi = l->r[k].addr + l->r[k].len > hi ? l->r[k].addr + l->r[k].len : hi;
    }
    l->r[0] = (vfdswmr_rawrange_t){tick, lo, hi - lo};
    l->n = 1;
}

void
vfdswmr_rawlog_add(vfdswmr_rawlog_t *l, uint64_t tick, uint64_t addr, uint64_t len)
{
    vfdswmr_rawrange_t *last;

    if (l == NULL || len == 0)
        return;
    if (addr + len < addr)
        len = UINT64_MAX - addr;
    last = l->n ? &l->r[l->n - 1] : NULL;
    /* appends (the common case) extend the previous range */
    if (last && last->tick == tick && addr <= last->addr + last->len && addr + len >= last->addr) {
        uint64_t lo = addr < last->addr ? addr : last->addr;
        uint64_t hi = addr + len > last->addr + last->len ? addr + len : last->addr + last->len;
        last->addr = lo;
        last->len = hi - lo;
        return;
    }
    if (l->n == VFDSWMR_RAWLOG_CAP)
        make_room(l, tick);
    if (l->n == VFDSWMR_RAWLOG_CAP) { /* collapsed to one of this tick: widen it */
        vfdswmr_rawlog_add(l, tick, addr, len);
        return;
    }
    /* adds come in tick order, none below first_tick */
    VFDSWMR_ASSERT(tick >= l->first_tick && (l->n == 0 || l->r[l->n - 1].tick <= tick));
    l->r[l->n++] = (vfdswmr_rawrange_t){tick, addr, len};
}

void
vfdswmr_rawlog_prepare(vfdswmr_rawlog_t *l, uint64_t tick, uint64_t window)
{
    uint32_t k = 0;

    /* keep ticks tick - window + 1 .. tick */
    if (tick >= window && tick - window + 1 > l->first_tick) {
        l->first_tick = tick - window + 1;
        while (k < l->n && l->r[k].tick < l->first_tick)
            k++;
        memmove(l->r, l->r + k, (l->n - k) * sizeof l->r[0]);
        l->n -= k;
    }
    VFDSWMR_CHECK_INVARIANTS(&l->pace, check_log(l, &l->pace.size));
    vfdswmr_rawloghdr_t h = {l->session, l->first_tick, tick, 0};
    while (h.count < l->n && l->r[h.count].tick <= tick)
        h.count++; /* adds for later ticks wait for their publish */
    l->buf_len = vfdswmr_rawlog_size(h.count);
    vfdswmr_rawlog_encode(&h, l->r, l->buf);
}

int
vfdswmr_rawlog_write(vfdswmr_rawlog_t *l)
{
    size_t len = l->buf_len;

    if (vfdswmr_pwrite_all(l->fd, l->buf, len, 0) < 0 || (len < l->file_len && ftruncate(l->fd, (off_t)len) < 0))
        return -1;
    l->file_len = len;
    return 0;
}

void
vfdswmr_rawlog_forget(vfdswmr_rawlog_t *l)
{
    if (l->fd >= 0)
        close(l->fd);
    l->fd = -1;
}

void
vfdswmr_rawlog_close(vfdswmr_rawlog_t *l)
{
    if (l == NULL)
        return;
    if (l->fd >= 0) { /* -1: forgotten (a fork child's copy): not ours to remove */
        vfdswmr_unlink_if_same(l->path, &l->id);
        close(l->fd);
    }
    free(l->path);
    free(l);
}

int
vfdswmr_rawlog_read(const char *md_path, uint64_t session, uint64_t from, uint64_t to,
                    void (*fn)(void *ctx, uint64_t addr, uint64_t len), void *ctx)
{
    char path[4096 + 64];
    size_t cap = vfdswmr_rawlog_size(VFDSWMR_RAWLOG_CAP);
    uint8_t *buf;
    vfdswmr_rawloghdr_t h;
    vfdswmr_rawrange_t *r = NULL;
    ssize_t got;
    int fd, ok;

    if (vfdswmr_rawlog_name(path, sizeof path, md_path) < 0 || (fd = vfdswmr_open_regular(path, O_RDONLY)) < 0)
        return 0;
    if ((buf = malloc(cap)) == NULL) {
        close(fd);
        return 0;
    }
    got = vfdswmr_pread_upto(fd, buf, cap, 0);
    close(fd);
    ok = got > 0 && vfdswmr_rawlog_decode(buf, (size_t)got, &h, &r) == VFDSWMR_MD_OK && h.session == session &&
         h.first_tick <= from + 1 && h.last_tick >= to;
    free(buf);
    for (uint32_t i = 0; ok && i < h.count; i++)
        if (r[i].tick > from && r[i].tick <= to)
            fn(ctx, r[i].addr, r[i].len);
    free(r);
    return ok;
}
