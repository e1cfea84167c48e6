/*
 * vfd_swmr_reader: the writer's copies of freed space (mdfile/kept.h).
 * HDF5 may give space it freed at the end of the file to new raw data at
 * once; the writer first copies the old bytes for snapshots from before
 * that, into the read-mark table's file, and lists them. After every read
 * from the HDF5 file, a reader whose snapshot is older than an entry lays
 * the copy over what it read, and then does its lag check (callers).
 *
 * Invariants:
 *  - kept_fd, when >= 0, is the read-mark table's file of session
 *    kept_session, opened read-only; nothing here writes.
 *  - Entries apply to a snapshot of the list's session with a tick below
 *    theirs; of several, the oldest wins (the bytes as they were when the
 *    first copy after the snapshot was made).
 */
#include "reader.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "format.h"
#include "h5err.h"
#include "io.h"
#include "kept.h"

void
vfdswmr_rdr_kept_release(rdr_md_t *md)
{
    if (md->kept_fd >= 0)
        close(md->kept_fd);
    md->kept_fd = -1;
    md->kept_session = 0;
}

/*
 * The list of our snapshot's writer: its read-mark table, opened once a
 * session while that writer's metadata file is ours (the table exists
 * before the metadata file has its name), and kept open after the writer
 * closed or died (the copies stay valid for our snapshot; the lag check
 * says when our snapshot is no longer ours to read). A writer lists copies
 * only while every registered reader is marked in its table (kept.c in the
 * writer), so readers without a snapshot of it -- no writer when they
 * opened, a closed writer's -- need none. 1: kept_fd holds it; 0: none
 * (no table: no list); -1 with the reason on the stack.
 */
static int
kept_source(rdr_md_t *md)
{
    vfdswmr_markshdr_t h;

    if (md->fd < 0)
        return 0;
    if (md->kept_session == md->snap.hdr.session)
        return md->kept_fd >= 0;
    vfdswmr_rdr_kept_release(md);
    if ((md->kept_fd = vfdswmr_marks_open(md->path, md->snap.hdr.session, O_RDONLY, &h)) == -1) {
        VFDSWMR_ERR(H5E_READERROR, "%s: cannot read the writer's read-mark table \"%s.readers\": %s", RDR_NAME,
                    md->path, strerror(errno));
        return -1;
    }
    /* none (updater files, the writer is gone) or not our writer's: no list */
    md->kept_session = md->snap.hdr.session;
    if (md->kept_fd == VFDSWMR_MARKS_NONE)
        md->kept_fd = -1;
    return md->kept_fd >= 0;
}

int
vfdswmr_rdr_kept_patch(rdr_t *r, haddr_t addr, size_t size, void *buf)
{
    rdr_md_t *md = &r->md;
    vfdswmr_kepthdr_t h;
    vfdswmr_keptent_t e[VFDSWMR_KEPT_MAX];
    haddr_t end = addr + size;
    uint64_t tick = md->snap.hdr.tick;
    int rc = 0;

    if (size == 0 || (rc = kept_source(md)) <= 0)
        return rc;
    if (vfdswmr_kept_read_list(md->kept_fd, &h, e) < 0) {
        VFDSWMR_ERR(H5E_READERROR, "%s: cannot read the writer's list of kept old bytes in \"%s.readers\": %s",
                    RDR_NAME, md->path, errno == EIO ? "it does not decode (damaged?)" : strerror(errno));
        return -1;
    }
    if (h.session != md->kept_session)
        return 0; /* nothing listed yet */
    VFDSWMR_ASSERT(md->kept_session == md->snap.hdr.session);
    /* newest first, so that the oldest entry above our tick is laid last */
    for (uint32_t i = h.count; i-- > 0 && e[i].tick > tick;) {
        haddr_t lo = e[i].addr > addr ? e[i].addr : addr, hi = e[i].addr + e[i].len < end ? e[i].addr + e[i].len : end;
        if (lo >= hi)
            continue;
        if (vfdswmr_pread_all(md->kept_fd, (uint8_t *)buf + (lo - addr), hi - lo, e[i].data + (lo - e[i].addr)) < 0) {
            VFDSWMR_ERR(H5E_READERROR, "%s: cannot read %llu kept old bytes of address %llu from \"%s.readers\": %s",
                        RDR_NAME, (unsigned long long)(hi - lo), (unsigned long long)lo, md->path,
                        errno == ENODATA ? "the file is shorter than its list says (damaged?)" : strerror(errno));
            return -1;
        }
        vfdswmr_rdr_log(r, "kept_read addr=%llu size=%llu tick=%llu below=%llu", (unsigned long long)lo,
                        (unsigned long long)(hi - lo), (unsigned long long)tick, (unsigned long long)e[i].tick);
    }
    return 0;
}
