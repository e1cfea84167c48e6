/*
 * The reader side of the metadata file (docs/DESIGN.md section 5): load a consistent
 * header + index, or the header alone, retrying with bounded back-off across
 * torn or in-flight writes (one retry policy for both, see
 * vfdswmr_mdr_load()), and read page images with their checksums verified.
 *
 * A snapshot is accepted only when header and index each pass their
 * checksums and every field check (format.h), belong to the same writer
 * session (and to the expected one, when given) and carry the same tick.
 *
 * Error contract: functions return VFDSWMR_MD_OK or a vfdswmr_mderr_t;
 * vfdswmr_mdr_load() also writes one line into the caller's `why` buffer.
 * Nothing is printed or kept in an object.
 */
#ifndef VFDSWMR_MDFILE_MDREADER_H
#define VFDSWMR_MDFILE_MDREADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "format.h"

/* How the reader reaches the file: pread-like, returning the bytes read
 * (fewer at end of file) or -1 with errno. Tests substitute their own. */
/* Indexes longer than this are absurd (2^24 entries, 2^26 ranges: 1 GiB):
 * refused unread (EBOUNDS) by every reader of a metadata file, recovery's
 * in-place one (mdidx_file.c) too. */
#define VFDSWMR_MDIDX_MAX_LEN ((uint64_t)VFDSWMR_MDIDX_HEAD + 4u + 32ull * (1u << 24) + 8ull * (1u << 26))

typedef struct vfdswmr_mdr_io_t {
    ssize_t (*pread)(void *ctx, void *buf, size_t len, uint64_t off);
    void *ctx;
} vfdswmr_mdr_io_t;

/* An io reading the file descriptor *fd. */
vfdswmr_mdr_io_t vfdswmr_mdr_fd_io(int *fd);

typedef struct vfdswmr_mdr_opts_t {
    size_t first_read;       /* bytes read at offset 0 in one go (md_pages_reserved x page size); >= 72 */
    unsigned max_attempts;   /* >= 1 */
    unsigned backoff_us;     /* first pause between attempts; doubles each time ... */
    unsigned backoff_max_us; /* ... up to this */
    uint64_t session;        /* expected writer session, 0 for any */
} vfdswmr_mdr_opts_t;

/* first_read 64 KiB, 40 attempts, 100 us doubling to 50 ms (about 1.5 s in all). */
void vfdswmr_mdr_opts_default(vfdswmr_mdr_opts_t *o);

typedef struct vfdswmr_mdsnap_t {
    vfdswmr_mdhdr_t hdr;
    vfdswmr_mdidx_t idx; /* entries malloc'd */
    unsigned attempts;   /* how many attempts the load took */
    bool permanent;      /* on failure: retrying cannot help (see vfdswmr_mdr_load) */
} vfdswmr_mdsnap_t;

/*
 * Load the current snapshot. Returns VFDSWMR_MD_OK, or the last error once
 * it is permanent or the attempts are used up, with a one-line explanation
 * in why (e.g. "header: checksum mismatch (torn write or damage), after 40
 * attempts"). An error is permanent (snap->permanent) when it is not
 * retryable, or when two consecutive attempts read the byte-identical header
 * and failed the same way: the index a header names is never rewritten
 * while that header is current, so the same bytes fail again. An index is
 * read into memory only after a 1-byte read at its last byte found it inside
 * the file (else EBOUNDS), and never when longer than about 1 GiB.
 */
vfdswmr_mderr_t vfdswmr_mdr_load(const vfdswmr_mdr_io_t *io, const vfdswmr_mdr_opts_t *opts, vfdswmr_mdsnap_t *snap,
                                 char *why, size_t whylen);
void vfdswmr_mdsnap_free(vfdswmr_mdsnap_t *snap);

/* Read and decode just the header of the metadata file open on fd (the
 * writer's tick, session, flags): the lag checks' one pread of 72 bytes.
 * A torn read is retried as vfdswmr_mdr_load() retries, with the default
 * options (vfdswmr_mdr_opts_default()): the same policy, one place
 * (mdreader.c, retry()). On failure *h is all zero; with VFDSWMR_MD_EIO,
 * errno says why. */
vfdswmr_mderr_t vfdswmr_mdr_read_header(int fd, vfdswmr_mdhdr_t *h);

/* Verify an entry's image in pieces of at most `len` bytes of buf (memory
 * independent of e->length): the same results as vfdswmr_mdr_read_image;
 * ENOMEM as EIO with errno ENOMEM. */
vfdswmr_mderr_t vfdswmr_mdr_verify_image(const vfdswmr_mdr_io_t *io, uint32_t page_size, const vfdswmr_mdentry_t *e,
                                         void *buf, size_t len);

/* Read an entry's image (e->length bytes) into buf and verify its checksum:
 * VFDSWMR_MD_OK, ESHORT (file too short), EIO or ECHECKSUM. */
vfdswmr_mderr_t vfdswmr_mdr_read_image(const vfdswmr_mdr_io_t *io, uint32_t page_size, const vfdswmr_mdentry_t *e,
                                       void *buf);

#endif
