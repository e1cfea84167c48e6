/*
 * vfd_swmr_reader: the writer's copies of freed space (mdfile/kept.h).
 * HDF5 may give space it freed at the end of the file to new raw data at
 * once; the writer first copies the old bytes for snapshots from before
 * that, into the read-mark table's file, and lists them. After every read
 * from the HDF5 file, a reader whose snapshot is older than an entry lays
 * the copy over what it read, and then does its lag check (callers).
 *
 * Invariants:
 *  - The list is read from the read-mark table the reader is marked in
 *    (its mark's descriptor): the writer lists copies only while every
 *    reader registered on the HDF5 file holds a slot's byte (is marked:
 *    vfd-swmr-writer/kept.c), and only in the table it has, which a marked
 *    reader's table is (vfdswmr_mark_confirm; a table the writer lets go
 *    of has its marks released first, and the lag check that follows every
 *    read fails). Nothing here writes.
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

/*
 * Where our snapshot's writer lists copies for us: the table we are marked
 * in (returned, *opened false); else, while we hold a slot's byte of an
 * earlier session's table (we could not move off it: locate.c, unmark) --
 * which the writer counts as marked -- its own table, looked up by name
 * each time (*opened true: the caller closes it); else none (-1): a reader
 * registered unmarked keeps the writer from listing anything.
 */
static int
kept_source(rdr_md_t *md, bool *opened)
{
    vfdswmr_markshdr_t h;
    int fd;

    *opened = false;
    if (md->fd < 0)
        return -1; /* no writer when we opened: nothing kept for us */
    if (md->mark.fd >= 0 && md->mark.session == md->snap.hdr.session)
        return md->mark.fd;
    if (md->reg.slot < 0)
        return -1;
    if ((fd = vfdswmr_marks_open(md->path, md->snap.hdr.session, O_RDONLY, &h)) == -1) {
        VFDSWMR_ERR(H5E_READERROR, "%s: cannot read the writer's read-mark table \"%s.readers\": %s", RDR_NAME,
                    md->path, strerror(errno));
        return -2;
    }
    *opened = fd >= 0;
    return fd >= 0 ? fd : -1;
}

int
vfdswmr_rdr_kept_patch(rdr_t *r, haddr_t addr, size_t size, void *buf)
{
    rdr_md_t *md = &r->md;
    vfdswmr_kepthdr_t h;
    vfdswmr_keptent_t e[VFDSWMR_KEPT_MAX];
    haddr_t end = addr + size;
    uint64_t tick = md->snap.hdr.tick;
    bool opened;
    int fd = -1, rc = 0; /* size 0: no source asked, none used */

    if (size == 0 || (fd = kept_source(md, &opened)) < 0)
        return fd == -2 ? -1 : 0;
    if (vfdswmr_kept_read_list(fd, &h, e) < 0) {
        VFDSWMR_ERR(H5E_READERROR, "%s: cannot read the writer's list of kept old bytes in \"%s.readers\": %s",
                    RDR_NAME, md->path, errno == EIO ? "it does not decode (damaged?)" : strerror(errno));
        rc = -1;
    }
    else if (h.session != md->snap.hdr.session)
        h.count = 0; /* nothing listed yet */
    /* newest first, so that the oldest entry above our tick is laid last */
    for (uint32_t i = rc ? 0 : h.count; i-- > 0 && e[i].tick > tick;) {
        haddr_t lo = e[i].addr > addr ? e[i].addr : addr, hi = e[i].addr + e[i].len < end ? e[i].addr + e[i].len : end;
        if (lo >= hi)
            continue;
        if (vfdswmr_pread_all(fd, (uint8_t *)buf + (lo - addr), hi - lo, e[i].data + (lo - e[i].addr)) < 0) {
            VFDSWMR_ERR(H5E_READERROR, "%s: cannot read %llu kept old bytes of address %llu from \"%s.readers\": %s",
                        RDR_NAME, (unsigned long long)(hi - lo), (unsigned long long)lo, md->path,
                        errno == ENODATA ? "the file is shorter than its list says (damaged?)" : strerror(errno));
            rc = -1;
            break;
        }
        vfdswmr_rdr_log(r, "kept_read addr=%llu size=%llu tick=%llu below=%llu", (unsigned long long)lo,
                        (unsigned long long)(hi - lo), (unsigned long long)tick, (unsigned long long)e[i].tick);
    }
    if (opened)
        close(fd);
    return rc;
}
