/*
 * Metadata file reader: the load protocol (docs/FORMAT.md, "Retrying") with bounded
 * retries, one policy (retry() below) for a whole snapshot and for the
 * header alone. Nothing a load returns has failed a check; see mdreader.h.
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
#include <unistd.h>

#include "check.h"
#include "checksum.h"
#include "clock.h"
#include "io.h"

static ssize_t
fd_pread(void *ctx, void *buf, size_t len, uint64_t off)
{
    return vfdswmr_pread_upto(*(int *)ctx, buf, len, off);
}

vfdswmr_mdr_io_t
vfdswmr_mdr_fd_io(int *fd)
{
    return (vfdswmr_mdr_io_t){.pread = fd_pread, .ctx = fd};
}

void
vfdswmr_mdr_opts_default(vfdswmr_mdr_opts_t *o)
{
    *o = (vfdswmr_mdr_opts_t){
        .first_read = 64 * 1024, .max_attempts = 40, .backoff_us = 100, .backoff_max_us = 50 * 1000, .session = 0};
}

/* What one attempt read and what went wrong, for the message and for
 * telling a permanent failure. */
struct attempt {
    vfdswmr_mderr_t err;
    const char *what;                /* "header", "index", "header and index" */
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
read_index(const vfdswmr_mdr_io_t *io, const vfdswmr_mdhdr_t *h, const uint8_t *buf, size_t got, vfdswmr_mdidx_t *idx,
           struct attempt *a)
{
    const uint8_t *src = buf;
    uint8_t *own = NULL, last;
    vfdswmr_mderr_t err;

    if (h->index_length > VFDSWMR_MDIDX_MAX_LEN)
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

/* One attempt: the header from the first o->first_read bytes, and with
 * `with_index` the index it names. */
static vfdswmr_mderr_t
try_load(const vfdswmr_mdr_io_t *io, const vfdswmr_mdr_opts_t *o, uint8_t *buf, bool with_index, vfdswmr_mdsnap_t *s,
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
    if (!with_index)
        return note(a, "header", VFDSWMR_MD_OK);
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

/*
 * The retry policy, the one every read of the metadata file's header follows,
 * alone (vfdswmr_mdr_read_header: the lag checks) or with its index
 * (vfdswmr_mdr_load: adopting a snapshot). A writer publishes with plain
 * pwrites (plan.h), so a reader may see a torn or in-flight write: an
 * attempt that fails with a retryable error (format.h) is repeated after a
 * pause of o->backoff_us, doubling up to o->backoff_max_us, at most
 * o->max_attempts attempts in all (vfdswmr_mdr_opts_default(): 40 attempts,
 * 100 us doubling to 50 ms, about 1.5 s: far longer than a publish takes).
 * It stops at once, with snap->permanent, on an error that is not
 * retryable, and when two consecutive attempts read the byte-identical
 * header and failed the same way: the index a header names is never
 * rewritten while that header is current (format.h, index slots), so no
 * write in flight explains it and the same bytes would fail again.
 * Returns the last attempt's error; *n gets the attempts made, *saved_errno
 * errno after the last failed one.
 */
static vfdswmr_mderr_t
retry(const vfdswmr_mdr_io_t *io, const vfdswmr_mdr_opts_t *o, uint8_t *buf, bool with_index, vfdswmr_mdsnap_t *snap,
      struct attempt *a, unsigned *n, int *saved_errno)
{
    struct attempt prev;
    unsigned pause = o->backoff_us;

    for (*n = 1;; (*n)++) {
        if (try_load(io, o, buf, with_index, snap, a) == VFDSWMR_MD_OK)
            break;
        *saved_errno = errno;
        if (!vfdswmr_mderr_retryable(a->err) || (*n > 1 && same_failure(a, &prev))) {
            snap->permanent = true;
            break;
        }
        if (*n >= (o->max_attempts ? o->max_attempts : 1))
            break;
        prev = *a;
        vfdswmr_sleep(pause * 1e-6);
        pause = pause * 2 > o->backoff_max_us ? o->backoff_max_us : pause * 2;
    }
    return a->err;
}

vfdswmr_mderr_t
vfdswmr_mdr_load(const vfdswmr_mdr_io_t *io, const vfdswmr_mdr_opts_t *opts, vfdswmr_mdsnap_t *snap, char *why,
                 size_t whylen)
{
    size_t first = opts->first_read < VFDSWMR_MDHDR_SIZE ? VFDSWMR_MDHDR_SIZE : opts->first_read;
    vfdswmr_mdr_opts_t o = *opts;
    uint8_t *buf = malloc(first);
    struct attempt a = {VFDSWMR_MD_OK, "header", {0}, 0};
    unsigned n;
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
    retry(io, &o, buf, true, snap, &a, &n, &saved_errno);
    free(buf);
    /* accepted: header and index of one session (the expected one) and one tick (mdreader.h) */
    VFDSWMR_ASSERT(a.err != VFDSWMR_MD_OK ||
                   (snap->idx.session == snap->hdr.session && snap->idx.tick == snap->hdr.tick &&
                    (opts->session == 0 || snap->hdr.session == opts->session)));
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
    vfdswmr_mdr_io_t io = vfdswmr_mdr_fd_io(&fd);
    vfdswmr_mdr_opts_t o;
    vfdswmr_mdsnap_t s;
    struct attempt a = {VFDSWMR_MD_OK, "header", {0}, 0};
    unsigned n;
    int saved_errno = 0;

    vfdswmr_mdr_opts_default(&o);
    o.first_read = sizeof buf; /* the header alone */
    memset(&s, 0, sizeof s);
    retry(&io, &o, buf, false, &s, &a, &n, &saved_errno);
    *h = s.hdr; /* all zero on failure (format.h) */
    if (a.err == VFDSWMR_MD_EIO)
        errno = saved_errno; /* why the read failed */
    return a.err;
}

vfdswmr_mderr_t
vfdswmr_mdr_verify_image(const vfdswmr_mdr_io_t *io, uint32_t page_size, const vfdswmr_mdentry_t *e, void *buf,
                         size_t len)
{
    vfdswmr_checksum_stream_t *cs = vfdswmr_checksum_begin();
    uint64_t at = e->md_page * page_size;
    vfdswmr_mderr_t rc = VFDSWMR_MD_OK;
    int saved = 0;

    VFDSWMR_ASSERT(len > 0);
    if (cs == NULL) {
        errno = ENOMEM;
        return VFDSWMR_MD_EIO;
    }
    for (uint64_t done = 0; done < e->length && rc == VFDSWMR_MD_OK;) {
        size_t want = e->length - done < len ? (size_t)(e->length - done) : len;
        ssize_t n = io->pread(io->ctx, buf, want, at + done);
        if (n < 0) {
            rc = VFDSWMR_MD_EIO;
            saved = errno;
        }
        else if ((size_t)n != want)
            rc = VFDSWMR_MD_ESHORT;
        else
            vfdswmr_checksum_update(cs, buf, want);
        done += want;
    }
    if (vfdswmr_checksum_end(cs) != e->checksum && rc == VFDSWMR_MD_OK)
        rc = VFDSWMR_MD_ECHECKSUM;
    if (rc == VFDSWMR_MD_EIO)
        errno = saved;
    return rc;
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
