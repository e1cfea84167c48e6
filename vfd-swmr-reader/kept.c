/*
 * vfd_swmr_reader: the writer's copies of freed space (mdfile/kept.h).
 * HDF5 may give space it freed at the end of the file to new raw data at
 * once; the writer first copies the old bytes for snapshots from before
 * that, into the read-mark table's file, and lists them. After every read
 * from the HDF5 file, a reader whose snapshot is older than an entry lays
 * the copy over what it read, and then does its lag check (callers).
 *
 * Invariants:
 *  - kept_fd, when >= 0, is the read-mark table's file (kept_dev,
 *    kept_ino) of session kept_session, opened read-only; nothing here
 *    writes.
 *  - Entries apply to a snapshot of the list's session with a tick below
 *    theirs, and to the file as it was before that session (tick 0); of
 *    several, the oldest wins (the bytes as they were when the first copy
 *    after the snapshot was made).
 */
#include "reader.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
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
    md->kept_dev = 0;
    md->kept_ino = 0;
}

/* Keep kept_fd on the table at its name now (none there: -1). */
static void
kept_follow(rdr_md_t *md)
{
    char path[PATH_MAX + 16];
    uint8_t buf[VFDSWMR_MARKSHDR_SIZE];
    vfdswmr_markshdr_t h;
    struct stat st;

    if (vfdswmr_marks_name(path, sizeof path, md->path) < 0 || stat(path, &st) < 0) {
        vfdswmr_rdr_kept_release(md);
        return;
    }
    if (md->kept_fd >= 0 && st.st_dev == md->kept_dev && st.st_ino == md->kept_ino)
        return;
    vfdswmr_rdr_kept_release(md);
    if ((md->kept_fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)) < 0)
        return;
    if (fstat(md->kept_fd, &st) < 0 || !S_ISREG(st.st_mode) || vfdswmr_pread_all(md->kept_fd, buf, sizeof buf, 0) < 0 ||
        vfdswmr_markshdr_decode(buf, sizeof buf, &h) != VFDSWMR_MD_OK) {
        vfdswmr_rdr_kept_release(md); /* not (yet) a table: nothing listed */
        return;
    }
    md->kept_session = h.session;
    md->kept_dev = st.st_dev;
    md->kept_ino = st.st_ino;
}

/*
 * Which list applies, for which tick. While the writer of our snapshot
 * runs, its table (the same file all its session: opened once) and our
 * snapshot's tick. Otherwise -- no writer when we opened, or ours closed or
 * was replaced -- we hold the file as it was before any writer that started
 * since, i.e. that writer's tick 0: its table, whatever is at the name now,
 * and tick 0 (or our tick, if it is still our writer's table). *tick gets
 * the tick; false: no list to read.
 */
static bool
kept_source(rdr_md_t *md, uint64_t *tick)
{
    if (md->fd >= 0 && !vfdswmr_rdr_md_unlinked(md)) {
        if (md->kept_session != md->snap.hdr.session || md->kept_fd < 0) {
            if (md->kept_session == md->snap.hdr.session && md->kept_dev == 0)
                return false; /* looked for this session's already: none */
            kept_follow(md);
            if (md->kept_session != md->snap.hdr.session) {
                vfdswmr_rdr_kept_release(md); /* remember the look: once a session */
                md->kept_session = md->snap.hdr.session;
                return false;
            }
        }
    }
    else
        kept_follow(md);
    if (md->kept_fd < 0)
        return false;
    *tick = md->kept_session == md->snap.hdr.session ? md->snap.hdr.tick : 0;
    return true;
}

int
vfdswmr_rdr_kept_patch(rdr_t *r, haddr_t addr, size_t size, void *buf)
{
    rdr_md_t *md = &r->md;
    vfdswmr_kepthdr_t h;
    vfdswmr_keptent_t e[VFDSWMR_KEPT_MAX];
    haddr_t end = addr + size;
    uint64_t tick;

    if (size == 0 || !kept_source(md, &tick))
        return 0;
    if (vfdswmr_kept_read_list(md->kept_fd, &h, e) < 0) {
        VFDSWMR_ERR(H5E_READERROR, "%s: cannot read the writer's list of kept old bytes in \"%s.readers\": %s",
                    RDR_NAME, md->path, errno == EIO ? "it does not decode (damaged?)" : strerror(errno));
        return -1;
    }
    if (h.session != md->kept_session)
        return 0; /* nothing listed yet */
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
