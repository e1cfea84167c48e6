/* Kept old bytes: the list's I/O; see kept.h. */
#include "kept.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "io.h"
#include "le.h"

int
vfdswmr_kept_write_list(int fd, uint64_t session, const vfdswmr_keptent_t *e, uint32_t n)
{
    uint8_t buf[VFDSWMR_KEPT_LIST_SPACE];
    vfdswmr_kepthdr_t h = {.session = session, .count = n};

    VFDSWMR_ASSERT(n <= VFDSWMR_KEPT_MAX);
    vfdswmr_kept_encode(&h, e, buf);
    return vfdswmr_pwrite_all(fd, buf, vfdswmr_kept_size(n), VFDSWMR_KEPT_LIST_OFFSET);
}

int
vfdswmr_kept_read_list(int fd, vfdswmr_kepthdr_t *h, vfdswmr_keptent_t *e)
{
    return vfdswmr_kept_read_list_tries(fd, h, e, VFDSWMR_KEPT_TRIES);
}

int
vfdswmr_kept_read_list_tries(int fd, vfdswmr_kepthdr_t *h, vfdswmr_keptent_t *e, unsigned tries)
{
    static const uint8_t zero[4];
    uint8_t buf[VFDSWMR_KEPT_LIST_SPACE];

    for (unsigned i = 0; i < tries; i++) {
        if (i >= 16) { /* the writer is in the middle of its pwrite: let it finish */
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
        ssize_t n = vfdswmr_pread_upto(fd, buf, sizeof buf, VFDSWMR_KEPT_LIST_OFFSET);
        if (n < 0)
            return -1;
        if ((size_t)n < sizeof zero || memcmp(buf, zero, sizeof zero) == 0) {
            memset(h, 0, sizeof *h);
            return 0; /* never written: nothing kept */
        }
        /* An empty list needs no checksum: a count (at most 64: its upper
         * bytes are always zero) reads as 0 only from a list that is empty
         * or about to be -- a torn read takes each byte from the old or the
         * new list. The writer writes nothing into a range before the list
         * naming it is whole, and empties it only once no reader may need
         * it (the lag check after the read says so). */
        if ((size_t)n >= VFDSWMR_KEPT_HDR_SIZE && vfdswmr_le_decode(buf + 16, 4) == 0) {
            *h = (vfdswmr_kepthdr_t){.session = vfdswmr_le_decode(buf + 8, 8), .count = 0};
            return 0;
        }
        if (vfdswmr_kept_decode(buf, (size_t)n, VFDSWMR_KEPT_DATA_OFFSET, h, e) == VFDSWMR_MD_OK)
            return 0;
    }
    errno = EIO;
    return -1;
}
