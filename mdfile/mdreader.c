/*
 * Metadata file reader: the load protocol of RFC 3.5.3.1 with bounded
 * retries. Nothing a load returns has failed a check; see mdreader.h.
 *
 * Fail fast on absurd claims: no index buffer is allocated before a 1-byte
 * read shows that the index's last byte lies inside the file, and an
 * attempt that reads the byte-identical header of the previous attempt and
 * fails the same way ends the load: the writer never overwrites the index
 * its current header names (format.h, index slots), so those bytes will
 * keep failing.
 */
#include "mdreader.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "checksum.h"

/* Indexes larger than this are absurd (2^24 entries, 2^26 ranges: 1 GiB). */
#define MAX_INDEX_LEN ((uint64_t)vfdswmr_mdidx_size(1u << 24, 1u << 26))

static ssize_t
fd_pread(void *ctx, void *buf, size_t len, uint64_t off)
{
    int fd = *(int *)ctx;
    size_t got = 0;

    while (got < len) {
        ssize_t n = pread(fd, (char *)buf + got, len - got, (off_t)(off + got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        got += (size_t)n;
    }
    return (ssize_t)got;
}

vfdswmr_mdr_io_t
vfdswmr_mdr_fd_io(int *fd)
{
    return (vfdswmr_mdr_io_t){.pread = fd_pread, .ctx = fd};
}

void
vfdswmr_mdr_opts_default(vfdswmr_mdr_opts_t *o)
{
    *o = (vfdswmr_mdr_opts_t){.first_read = 64 * 1024, .max_attempts = 40, .backoff_us = 100,
                              .backoff_max_us = 50 * 1000, .session = 0};
}

/* What one attempt read and what went wrong, for the message and for
 * telling a permanent failure. */
struct attempt {
    vfdswmr_mderr_t err;
    const char *what; /* "header", "index", "header and index" */
    uint8_t hdr[VFDSWMR_MDHDR_SIZE]; /* the header bytes read (fewer at end of file) */
    size_t hdr_len;
};

/* The same header bytes failing the same way twice. */
static bool
same_failure(const struct attempt *x, const struct attempt *y)
{
    return x->err == y->err && strcmp(x->what, y->what) == 0 && x->hdr_len == y->hdr_len &&
           memcmp(x->hdr, y->hdr, x->hdr_len) == 0;
}

static vfdswmr_mderr_t
note(struct attempt *a, const char *what, vfdswmr_mderr_t err)
{
    a->what = what;
    return a->err = err;
}

static vfdswmr_mderr_t
read_index(const vfdswmr_mdr_io_t *io, const vfdswmr_mdhdr_t *h, const uint8_t *buf, size_t got,
           vfdswmr_mdidx_t *idx, struct attempt *a)
{
    const uint8_t *src = buf;
    uint8_t *own = NULL, last;
    vfdswmr_mderr_t err;

    if (h->index_length > MAX_INDEX_LEN)
        return note(a, "index", VFDSWMR_MD_EBOUNDS);
    if (h->index_offset + h->index_length <= got)
        src = buf + h->index_offset;
    else {
        /* the header decoder saw to it that the sum does not overflow */
        ssize_t n = io->pread(io->ctx, &last, 1, h->index_offset + h->index_length - 1);
        if (n != 1)
            return note(a, "index", n < 0 ? VFDSWMR_MD_EIO : VFDSWMR_MD_EBOUNDS);
        if (NULL == (own = malloc((size_t)h->index_length)))
            return note(a, "index", VFDSWMR_MD_ENOMEM);
        n = io->pread(io->ctx, own, (size_t)h->index_length, h->index_offset);
        if (n < 0 || (uint64_t)n != h->index_length) {
            free(own);
            return note(a, "index", n < 0 ? VFDSWMR_MD_EIO : VFDSWMR_MD_EBOUNDS);
        }
        src = own;
    }
    err = vfdswmr_mdidx_decode(src, (size_t)h->index_length, h->page_size, idx);
    free(own);
    return note(a, "index", err);
}

static vfdswmr_mderr_t
try_load(const vfdswmr_mdr_io_t *io, const vfdswmr_mdr_opts_t *o, uint8_t *buf, vfdswmr_mdsnap_t *s,
         struct attempt *a)
{
    ssize_t got = io->pread(io->ctx, buf, o->first_read, 0);
    vfdswmr_mderr_t err;

    a->hdr_len = got < 0 ? 0 : got < VFDSWMR_MDHDR_SIZE ? (size_t)got : VFDSWMR_MDHDR_SIZE;
    memcpy(a->hdr, buf, a->hdr_len);
    if (got < 0)
        return note(a, "header", VFDSWMR_MD_EIO);
    if ((err = vfdswmr_mdhdr_decode(buf, (size_t)got, &s->hdr)) != VFDSWMR_MD_OK)
        return note(a, "header", err);
    if (o->session && s->hdr.session != o->session)
        return note(a, "header", VFDSWMR_MD_ESESSION);
    if ((err = read_index(io, &s->hdr, buf, (size_t)got, &s->idx, a)) != VFDSWMR_MD_OK)
        return err;
    /* An index newer than the header: the writer published twice or more
     * since the header was read and reused its slot -- read again. */
    if (s->idx.session != s->hdr.session)
        err = VFDSWMR_MD_ESESSION;
    else if (s->idx.tick > s->hdr.tick || s->idx.tick + 1 == s->hdr.tick)
        err = VFDSWMR_MD_ETICK_AHEAD;
    else if (s->idx.tick != s->hdr.tick)
        err = VFDSWMR_MD_ETICK;
    if (err != VFDSWMR_MD_OK)
        vfdswmr_mdidx_free(&s->idx);
    return note(a, "header and index", err);
}

static void
pause_us(unsigned us)
{
    struct timespec ts = {.tv_sec = us / 1000000, .tv_nsec = (long)(us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

vfdswmr_mderr_t
vfdswmr_mdr_load(const vfdswmr_mdr_io_t *io, const vfdswmr_mdr_opts_t *opts, vfdswmr_mdsnap_t *snap, char *why,
                 size_t whylen)
{
    size_t first = opts->first_read < VFDSWMR_MDHDR_SIZE ? VFDSWMR_MDHDR_SIZE : opts->first_read;
    vfdswmr_mdr_opts_t o = *opts;
    uint8_t *buf = malloc(first);
    struct attempt a = {VFDSWMR_MD_OK, "header", {0}, 0}, prev;
    unsigned pause = opts->backoff_us, n;
    int saved_errno = 0;

    memset(snap, 0, sizeof *snap);
    if (why && whylen)
        why[0] = '\0';
    if (buf == NULL) {
        if (why && whylen)
            snprintf(why, whylen, "out of memory");
        return VFDSWMR_MD_ENOMEM;
    }
    o.first_read = first;
    for (n = 1;; n++) {
        if (try_load(io, &o, buf, snap, &a) == VFDSWMR_MD_OK)
            break;
        saved_errno = errno;
        if (!vfdswmr_mderr_retryable(a.err) || (n > 1 && same_failure(&a, &prev))) {
            snap->permanent = true;
            break;
        }
        if (n >= (opts->max_attempts ? opts->max_attempts : 1))
            break;
        prev = a;
        pause_us(pause);
        pause = pause * 2 > opts->backoff_max_us ? opts->backoff_max_us : pause * 2;
    }
    free(buf);
    snap->attempts = n;
    if (a.err != VFDSWMR_MD_OK && why && whylen)
        snprintf(why, whylen, "%s: %s%s%s, after %u attempt%s", a.what, vfdswmr_mderr_str(a.err),
                 a.err == VFDSWMR_MD_EIO ? ": " : "", a.err == VFDSWMR_MD_EIO ? strerror(saved_errno) : "", n,
                 n == 1 ? "" : "s");
    return a.err;
}

void
vfdswmr_mdsnap_free(vfdswmr_mdsnap_t *snap)
{
    vfdswmr_mdidx_free(&snap->idx);
}

vfdswmr_mderr_t
vfdswmr_mdr_read_header(int fd, vfdswmr_mdhdr_t *h)
{
    uint8_t buf[VFDSWMR_MDHDR_SIZE];
    vfdswmr_mderr_t err = VFDSWMR_MD_OK;

    for (unsigned i = 0; i < VFDSWMR_MDR_HDR_ATTEMPTS; i++) {
        ssize_t n = fd_pread(&fd, buf, sizeof buf, 0);

        if (n < 0)
            return VFDSWMR_MD_EIO;
        err = vfdswmr_mdhdr_decode(buf, (size_t)n, h);
        if (err == VFDSWMR_MD_OK || !vfdswmr_mderr_retryable(err))
            break;
        pause_us(50);
    }
    return err;
}

const vfdswmr_mdentry_t *
vfdswmr_mdidx_find(const vfdswmr_mdidx_t *idx, uint32_t page_size, uint64_t page)
{
    uint32_t lo = 0, hi = idx->nentries;

    while (lo < hi) { /* first entry starting after page */
        uint32_t mid = lo + (hi - lo) / 2;
        if (idx->entries[mid].hdf5_page <= page)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const vfdswmr_mdentry_t *e = &idx->entries[lo - 1];
    return page < e->hdf5_page + vfdswmr_pages(e->length, page_size) ? e : NULL;
}

vfdswmr_mderr_t
vfdswmr_mdr_read_image(const vfdswmr_mdr_io_t *io, uint32_t page_size, const vfdswmr_mdentry_t *e, void *buf)
{
    ssize_t n = io->pread(io->ctx, buf, e->length, e->md_page * page_size);

    if (n < 0)
        return VFDSWMR_MD_EIO;
    if ((size_t)n != e->length)
        return VFDSWMR_MD_ESHORT;
    return vfdswmr_checksum(buf, e->length) == e->checksum ? VFDSWMR_MD_OK : VFDSWMR_MD_ECHECKSUM;
}
