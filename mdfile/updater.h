/*
 * Updater files (docs/FORMAT.md, "Updater files"): one per publish, named <base>.<sequence>,
 * each carrying a tick's plan (plan.h) so that vfd_swmr_aux can apply it to a
 * local copy of the metadata file. Layout: header at 0, change list right
 * after it, then page-aligned images in the order they are applied: entries,
 * index, metadata file header (docs/FORMAT.md).
 *
 * Error contract: encode and write return 0, or -1 with errno set; decode
 * returns a vfdswmr_mderr_t. The caller writes the messages.
 */
#ifndef VFDSWMR_MDFILE_UPDATER_H
#define VFDSWMR_MDFILE_UPDATER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format.h"
#include "plan.h"

typedef struct vfdswmr_updater_t {
    vfdswmr_udhdr_t hdr;
    vfdswmr_mdplan_t plan;     /* meaningless with VFDSWMR_UD_CREATE_ONLY */
    vfdswmr_mdimage_t *images; /* owned; image pointers point into the decoded buffer */
} vfdswmr_updater_t;

/*
 * Pack `plan` (NULL together with VFDSWMR_UD_CREATE_ONLY) into a malloc'd
 * updater file image. Returns 0, or -1 (out of memory, errno set).
 */
int vfdswmr_updater_encode(const vfdswmr_mdplan_t *plan, uint16_t flags, uint64_t sequence, uint32_t page_size,
                           uint64_t session, uint64_t tick, uint8_t **out, size_t *outlen);

/*
 * Decode and verify an updater file image of `len` bytes: header, change
 * list, the checksum of every image, and that the embedded metadata file
 * header and index decode and agree with the updater (page size, session,
 * tick, index place and length). On success u->plan points into buf, which
 * must outlive it; free with vfdswmr_updater_free().
 */
vfdswmr_mderr_t vfdswmr_updater_decode(const uint8_t *buf, size_t len, vfdswmr_updater_t *u);
void vfdswmr_updater_free(vfdswmr_updater_t *u);

/*
 * The size of an updater file, from its decoded header h and, when not
 * NULL, its decoded change list cl (vfdswmr_udcl_decode(), any file_len):
 *  - with cl: the exact size of the valid updater they describe, the end
 *    of its last image (the embedded metadata file header). A file of
 *    another size is not that updater: shorter, it is still being written;
 *    longer, it has trailing bytes.
 *  - without: the least size any valid updater with this header has (its
 *    change list's entries each take a page, then index and header
 *    follow), so that a file too short for what its header claims is
 *    known incomplete before the change list is read or allocated.
 * VFDSWMR_UDHDR_SIZE with VFDSWMR_UD_CREATE_ONLY.
 */
uint64_t vfdswmr_updater_size(const vfdswmr_udhdr_t *h, const vfdswmr_udcl_t *cl);

/* "<base>.<sequence>" into out; -1 when it does not fit. */
int vfdswmr_updater_name(char *out, size_t outlen, const char *base, uint64_t sequence);

/*
 * Make an updater file visible atomically: write a new temporary file
 * "<base>.<sequence>.<random>.tmp" (vfdswmr_create_temp(): nothing planted
 * at a predictable name is followed), fsync it when durable, rename it to
 * "<base>.<sequence>" (and fsync the directory when durable). Returns 0, or
 * -1 with errno set; the temporary file is removed on failure.
 */
int vfdswmr_updater_write(const char *base, uint64_t sequence, const uint8_t *buf, size_t len, bool durable);

#endif
