/*
 * The writer's seal on the HDF5 file's superblock (common/superblock.h,
 * docs/DESIGN.md "The seal"): while a writer has the file, and after it
 * died until recovery finished, the superblock *on disk* carries a flag bit
 * HDF5 refuses to decode, so plain HDF5 -- which would read a file that
 * mixes the writer's last ticks, and whose read-write close would truncate
 * it below what recovery needs -- cannot open it at all.
 *
 * Invariants (asserted where they are kept):
 *  - HDF5 never sees the seal: every byte the writer reads from the HDF5
 *    file (reads, page images made from the file) has it cleared, and page
 *    images hold the superblock as HDF5 wrote it;
 *  - every write of the superblock to the HDF5 file during the session
 *    carries it (store_page writes a sealed copy of the page);
 *  - it leaves the file only at close, after every page was written
 *    (vfdswmr_seal_clear), so a writer that dies at any moment leaves it set.
 * All functions run in the main thread: at open before the tick thread
 * starts, otherwise with `lock` held (asserted).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "h5err.h"
#include "recover.h"
#include "safefile.h"
#include "sessname.h"
#include "superblock.h"
#include "testhook.h"
#include "writer.h"

#define LOWER(w) ((w)->base.lower)

/* The superblock's bytes as HDF5 sees them: read whole from the file, seal
 * cleared. 0, or -1 (errno). */
static int
unsealed_sb(vfdswmr_writer_t *w, uint8_t sb[VFDSWMR_SB_SEAL_SPAN])
{
    vfdswmr_recover_io_t io;

    vfdswmr_recover_io_lower(LOWER(w), &io);
    if (io.read(io.ctx, w->sb_addr, sb, VFDSWMR_SB_SEAL_SPAN) < 0)
        return -1;
    vfdswmr_sb_set_seal(sb, VFDSWMR_SB_SEAL_SPAN, false);
    return 0;
}

/* Sealed, but no metadata file to recover it from: a writer with another
 * md_file_path, or one whose metadata file was removed. The file mixes that
 * writer's last ticks; reading it as it is would hide the damage. What the
 * file records (sessname.h) was not followed (vfdswmr_claim_md): say what
 * it names and why it is not used. Always -1. */
static int
refuse_unexplained_seal(const vfdswmr_writer_t *w, const char *name)
{
    vfdswmr_sessname_t rec;
    char why[VFDSWMR_SESSNAME_MAX + 200] = "";

    if (vfdswmr_sessname_read(name, &rec) && strcmp(rec.path, VFDSWMR_SESSNAME_NONE) == 0)
        snprintf(why, sizeof why,
                 " (the file records a session whose writer kept no metadata file: recover from "
                 "vfd_swmr_aux's copy of it, or vfd_swmr_recover --force)");
    else if (rec.path[0])
        snprintf(why, sizeof why, " (the file records %s as its session's metadata file, %s)", rec.path,
                 access(rec.path, F_OK) < 0 && errno == ENOENT
                     ? "which is not there"
                     : "which cannot be used: not a regular file naming this HDF5 file");
    VFDSWMR_ERR(H5E_CANTOPENFILE,
                "%s: \"%s\" was left by a vfd_swmr_writer that died, and its metadata file is not at %s%s: open "
                "it with that writer's configuration (md_file_path, md_file_name) or run vfd_swmr_recover "
                "--config with it; if the metadata file is lost, vfd_swmr_recover --force takes the file as "
                "it is on disk (it may mix the writer's last ticks)",
                VFDSWMR_WRITER_NAME, name, w->md_path, why);
    return -1;
}

int
vfdswmr_writer_name_fd(const vfdswmr_writer_t *w, const char *name)
{
    if (w->hdf5_fd >= 0)
        return w->hdf5_fd;
    return name ? vfdswmr_open_regular(name, O_RDONLY) : -1;
}

void
vfdswmr_seal_unname_session(vfdswmr_writer_t *w, const char *name)
{
    int fd = vfdswmr_writer_name_fd(w, name);

    if (fd < 0)
        return;
    vfdswmr_sessname_erase_session(fd, w->session_named);
    if (fd != w->hdf5_fd)
        close(fd);
}

int
vfdswmr_seal_name_session(vfdswmr_writer_t *w, const char *name, bool strict)
{
    const char *path = w->base.cfg.maintain_metadata_file ? w->md_path : VFDSWMR_SESSNAME_NONE;
    int fd = vfdswmr_writer_name_fd(w, name), rc = 0;
    vfdswmr_sessname_t before;
    bool had;

    VFDSWMR_ASSERT(!w->ticker_running);
    if (fd < 0) /* no file by that name (a family member pattern, ...): nothing to record on */
        return 0;
    had = vfdswmr_sessname_read_fd(fd, &before) == 1;
    w->session_named = w->pred ? w->pred_session : vfdswmr_mdw_session(w->mdw);
    strict = strict && had && before.session != w->session_named; /* refuse, keeping that record, on failure */
    if (vfdswmr_sessname_record(fd, path, w->session_named, strict) == 0) {
        w->named = true;
        if (w->hdf5_fd < 0 && w->rec_name == NULL)
            w->rec_name = strdup(name); /* to remove it at close (NULL: it stays; only a hint) */
    }
    else if (strict) {
        /* The file records another session, which stays findable by its own
         * configuration: sealed by us without our record, its metadata file
         * would look like this file's crashed session. */
        VFDSWMR_ERR(H5E_CANTOPENFILE,
                    "%s: cannot record this session on \"%s\" (%s), which records an earlier session (%s): a "
                    "writer that cannot say the earlier session is over must not write the file; free space for "
                    "extended attributes, or remove that session's record once it is no longer needed",
                    VFDSWMR_WRITER_NAME, name, strerror(errno), before.path);
        rc = -1;
    }
    else
        VFDSWMR_LOG(&w->log, "warning",
                    "cannot record the session on the HDF5 file (%s): readers reaching it by another name "
                    "or configuration are refused instead of finding it",
                    strerror(errno));
    if (fd != w->hdf5_fd)
        close(fd);
    return rc;
}

int
vfdswmr_seal_at_open(vfdswmr_writer_t *w, const char *name, bool recovered)
{
    vfdswmr_recover_io_t io;
    haddr_t eoa = VFDSWMR_GUARDED(haddr_t, H5FDget_eoa(LOWER(w), H5FD_MEM_DEFAULT), _r == HADDR_UNDEF);
    uint64_t size, addr;
    int rc, was = 0;

    VFDSWMR_ASSERT(!w->ticker_running);
    vfdswmr_recover_io_lower(LOWER(w), &io);
    if (eoa == HADDR_UNDEF || io.size(io.ctx, &size) < 0)
        goto failed;
    if ((rc = vfdswmr_sb_find(io.read, io.ctx, size, &addr)) < 0 ||
        (rc > 0 && (was = vfdswmr_recover_sealed(&io, addr)) == -1))
        goto failed;
    if (was == 1 && !recovered) {
        (void)VFDSWMR_GUARDED(herr_t, H5FDset_eoa(LOWER(w), H5FD_MEM_DEFAULT, eoa), _r < 0);
        return refuse_unexplained_seal(w, name);
    }
    /* Named before sealed: a sealed file names its session from the moment
     * the seal is on disk (a new file's seal comes with its first publish). */
    if (vfdswmr_seal_name_session(w, name, true) < 0) {
        (void)VFDSWMR_GUARDED(herr_t, H5FDset_eoa(LOWER(w), H5FD_MEM_DEFAULT, eoa), _r < 0);
        return -1;
    }
    if (rc > 0 && vfdswmr_recover_set_seal(&io, addr, true) < 0)
        goto failed;
    /* the reads above raised the lower EOA to what they read: put it back,
     * HDF5 sets it once it has read the superblock */
    if (VFDSWMR_GUARDED(herr_t, H5FDset_eoa(LOWER(w), H5FD_MEM_DEFAULT, eoa), _r < 0) < 0)
        goto failed;
    if (rc == 0)
        return 0; /* no superblock (yet): HDF5 decides */
    w->sb_addr = addr;
    w->sb_sealed = true; /* ours from here: an open that fails later clears it (open.c) */
    if (w->base.cfg.durable && io.sync(io.ctx) < 0)
        goto failed;
    vfdswmr_test_kill_point("sealed"); /* recorded and sealed; a crashed writer's metadata file not replaced yet */
    return 0;
failed:
    VFDSWMR_ERR(H5E_WRITEERROR, "%s: cannot seal the superblock of \"%s\" as being written: %s", VFDSWMR_WRITER_NAME,
                name, strerror(errno ? errno : EIO));
    return -1;
}

void
vfdswmr_seal_learn(vfdswmr_writer_t *w, haddr_t addr, const void *buf, size_t size)
{
    /* Any metadata type: the accumulator hands the superblock over with
     * what follows it, typed H5FD_MEM_DEFAULT. The superblock is HDF5's
     * first metadata write to a new file, so no earlier write can hold the
     * signature at a place HDF5 would look. */
    for (uint64_t c = 0; w->sb_addr == UINT64_MAX && c < addr + size; c = vfdswmr_sb_next_candidate(c))
        if (c >= addr && vfdswmr_sb_signature((const uint8_t *)buf + (c - addr), size - (size_t)(c - addr)))
            w->sb_addr = c;
}

int
vfdswmr_seal_incoming(vfdswmr_writer_t *w, haddr_t addr, size_t size, void *buf)
{
    uint8_t sb[VFDSWMR_SB_SEAL_SPAN];
    uint64_t lo, hi;

    VFDSWMR_ASSERT_LOCKED(w);
    if (!w->sb_sealed || addr >= w->sb_addr + VFDSWMR_SB_SEAL_SPAN || addr + size <= w->sb_addr)
        return 0;
    if (unsealed_sb(w, sb) < 0) {
        VFDSWMR_ERR(H5E_READERROR, "%s: cannot read the superblock: %s", VFDSWMR_WRITER_NAME, strerror(errno));
        return -1;
    }
    lo = addr > w->sb_addr ? addr : w->sb_addr;
    hi = addr + size < w->sb_addr + VFDSWMR_SB_SEAL_SPAN ? addr + size : w->sb_addr + VFDSWMR_SB_SEAL_SPAN;
    memcpy((uint8_t *)buf + (lo - addr), sb + (lo - w->sb_addr), hi - lo);
    return 0;
}

const uint8_t *
vfdswmr_seal_outgoing(vfdswmr_writer_t *w, uint64_t addr, const uint8_t *image, size_t len,
                      uint8_t copy[VFDSWMR_WRITER_PAGE_SIZE])
{
    size_t off;

    VFDSWMR_ASSERT_LOCKED(w);
    if (w->sb_addr == UINT64_MAX || w->sb_addr < addr || w->sb_addr - addr >= len)
        return image;
    VFDSWMR_ASSERT(len <= VFDSWMR_WRITER_PAGE_SIZE);
    off = (size_t)(w->sb_addr - addr);
    /* page images hold the superblock as HDF5 wrote it */
    VFDSWMR_ASSERT(vfdswmr_sb_sealed(image + off, len - off) != 1);
    memcpy(copy, image, len);
    if (!vfdswmr_sb_set_seal(copy + off, len - off, true))
        return image; /* not (yet) a superblock there */
    w->sb_sealed = true;
    return copy;
}

/*
 * A file the writer found without a superblock at the superblock's address
 * (created, or empty) shows HDF5's signature on disk from its first publish
 * on, not only once the delayed-write rule writes the superblock's page
 * (max_lag ticks later, or at close if the writer goes idle): programs that
 * look for the signature themselves before opening a file through HDF5
 * (the netCDF library: "Unknown file format") recognise it within a flush.
 * What is written: the page's image as last published, sealed (plain HDF5
 * refuses it, as any live file's).
 *
 * Why no reader reads wrong bytes: every snapshot published since names the
 * page (it stays in the index until the delayed-write rule writes it), so
 * no reader of one reads it from the file; the one snapshot that does not
 * is tick 0, the file as found, which has no superblock. The page is
 * written only after a publish completed, so a reader that finds the
 * signature on disk finds tick 1 or later in the metadata file too, and
 * loads it again before it reads (vfd-swmr-reader/reader.c,
 * refuse_unpublished). Recovery writes the page from the snapshot anyway.
 * Not with updater files: a reader on another host sees the metadata file
 * through vfd_swmr_aux, possibly later than the HDF5 file.
 */
int
vfdswmr_seal_show(vfdswmr_writer_t *w)
{
    uint64_t page, addr;
    const uint8_t *image;

    VFDSWMR_ASSERT_LOCKED(w);
    if (w->sb_shown || w->sb_addr == UINT64_MAX || w->tick == 0 || w->base.cfg.generate_updater_files)
        return 0;
    if (w->tick0_eoa > w->sb_addr) { /* the file had bytes there: its own superblock */
        w->sb_shown = true;
        return 0;
    }
    page = w->sb_addr / VFDSWMR_WRITER_PAGE_SIZE;
    addr = page * VFDSWMR_WRITER_PAGE_SIZE;
    if ((image = vfdswmr_pb_pub_image(w->pb, page)) == NULL || addr >= w->eoa)
        return 0; /* not published yet (or written already: store_page noted it) */
    if (vfdswmr_writer_store_page(w, page, image,
                                  w->eoa - addr < VFDSWMR_WRITER_PAGE_SIZE ? (size_t)(w->eoa - addr)
                                                                           : VFDSWMR_WRITER_PAGE_SIZE) < 0) {
        VFDSWMR_ERR(H5E_WRITEERROR, "%s: cannot write the superblock's page to the HDF5 file", VFDSWMR_WRITER_NAME);
        return -1;
    }
    VFDSWMR_LOG(&w->log, "superblock_shown", "tick=%llu page=%llu", (unsigned long long)w->tick,
                (unsigned long long)page);
    return 0;
}

int
vfdswmr_seal_clear(vfdswmr_writer_t *w)
{
    vfdswmr_recover_io_t io;

    VFDSWMR_ASSERT_LOCKED(w);
    if (!w->sb_sealed)
        return 0;
    vfdswmr_recover_io_lower(LOWER(w), &io);
    if (vfdswmr_recover_set_seal(&io, w->sb_addr, false) < 0) {
        VFDSWMR_ERR(H5E_WRITEERROR, "%s: cannot clear the superblock's seal: %s", VFDSWMR_WRITER_NAME, strerror(errno));
        return -1;
    }
    w->sb_sealed = false;
    return 0;
}
