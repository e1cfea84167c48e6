/*
 * vfd_swmr_reader: the driver of the processes that read a VFD SWMR file
 * while one writer (vfd_swmr_writer) writes it. The class and its
 * callbacks; the work is in locate.c, snapshot.c and pages.c (reader.h).
 *
 * Invariants:
 *  - Opened read-only or not at all: an open for writing fails before any
 *    file is touched, after the configuration was checked.
 *  - Raw data (H5FD_MEM_DRAW, which also carries the global heap) is read
 *    from the HDF5 file, with the snapshot's versioned bytes on top
 *    (pages.c); every other read goes through pages.c, so the library only
 *    ever sees metadata of one snapshot that passed every check.
 *  - The EOA and EOF the library sees are at least the snapshot's EOA (a
 *    plain H5F_ACC_RDONLY open checks both), and the lower file's EOA is
 *    kept at the same value so reads up to it reach it.
 *  - lock/unlock do nothing: a reader never blocks, nor is blocked by, the
 *    writer -- but for the raw-data lock around one raw read (read_raw),
 *    which neither side waits for longer than a bound.
 */
#include "reader.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <stdlib.h>

#include <fcntl.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "forked.h"
#include "h5err.h"
#include "io.h"
#include "mdlock.h"
#include "plugin.h"
#include "testhook.h"
#include "safefile.h"
#include "recover.h"
#include "sessname.h"
#include "superblock.h"

#define RDR(file) ((rdr_t *)(file))

/* An open for writing, once vfdswmr_stack_new() parsed (and accepted) the
 * configuration: a bad under= is reported next, then the refusal. Nothing
 * is opened. The refusal also goes to stderr: programs that copy a file
 * (nccopy, h5repack) open their output through the same HDF5_DRIVER and
 * hide HDF5's error stack ("Permission denied"), and an open for writing
 * through a read-only driver is never a probe, always a setup to change. */
static void
refuse_write(const vfdswmr_config_t *cfg, const char *name)
{
    hid_t lower_fapl = vfdswmr_lower_fapl(cfg, RDR_NAME);
    char msg[VFDSWMR_MAX_PATH + 512];

    if (lower_fapl < 0)
        return;
    VFDSWMR_GUARDED(herr_t, H5Pclose(lower_fapl), _r < 0);
    snprintf(msg, sizeof msg,
             "%s opens files read-only; use %s to write (\"%s\" was opened for writing or creation). A program "
             "that reads a live file and writes another (nccopy, h5repack, h5copy) runs with HDF5_DRIVER=%s, which "
             "reads the files it opens read-only through %s",
             RDR_NAME, VFDSWMR_WRITER_NAME, name, VFDSWMR_WRITER_NAME, RDR_NAME);
    VFDSWMR_ERR(H5E_BADVALUE, "%s", msg);
    fprintf(stderr, "%s\n", msg);
}

/* Register on the HDF5 file before anything is read (mdlock.h), so that a
 * writer closing meanwhile waits for us, and one freeing space gives it to
 * raw data only when no reader can read its old bytes. A file system
 * without locks: the reader is not seen, which only a writer of that same
 * file can notice. -1 when the file is not there (yet): a reader that went
 * on would load the metadata file unregistered and could open the HDF5 file
 * a moment later, once its writer created it, holding a snapshot that writer
 * does not know of (it gave freed space to raw data while none was
 * registered: the reader then reads other bytes where its snapshot's chunks
 * were). The caller asks the lower driver (register_or_fail). */
static int
register_reader(rdr_t *r, const char *name)
{
    int fd = vfdswmr_open_regular(name, O_RDONLY);

    r->md.reg = (vfdswmr_reg_t){.fd = -1, .own = -1, .slot = -1};
    if (fd < 0 && errno == ENOENT)
        return -1;
    if (fd >= 0)
        vfdswmr_reg_join(&r->md.reg, fd); /* closes fd when it cannot lock */
    return 0;
}

/* Register; the file not there: the lower driver's open fails, saying so as
 * on sec2 -- or the file appeared meanwhile, and we register on it now. */
static int
register_or_fail(rdr_t *r, const char *name, unsigned flags, haddr_t maxaddr)
{
    if (register_reader(r, name) == 0)
        return 0;
    if (vfdswmr_stack_open_lower(&r->base, name, flags, maxaddr) < 0)
        return -1;
    (void)VFDSWMR_GUARDED(herr_t, H5FDclose(r->base.lower), _r < 0);
    r->base.lower = NULL;
    if (register_reader(r, name) == 0)
        return 0;
    VFDSWMR_ERR(H5E_CANTOPENFILE, "%s: cannot open \"%s\": %s", RDR_NAME, name, strerror(ENOENT));
    return -1;
}

static void
unregister_reader(rdr_t *r)
{
    vfdswmr_reg_leave(&r->md.reg);
}

/* True when the HDF5 file (through the lower driver's POSIX descriptor)
 * holds HDF5's signature where the library looks for it (superblock.h:
 * at 0, 512, 1024, ..., every candidate whose signature bytes lie within
 * the file). Without a descriptor (under=core, ...), true: nothing to tell. */
static bool
has_signature(rdr_t *r)
{
    int fd = vfdswmr_lower_fd(r->base.lower);
    uint64_t addr;

    return fd < 0 || vfdswmr_sb_find_fd(fd, &addr) == 1;
}

/* How often, 10 ms apart, a reader that finds no metadata file but a live
 * writer's lock and seal on the HDF5 file looks again for the metadata
 * file (a writer replacing a crashed one's renames its own into place). */
#define ELSEWHERE_LOOKS 100

/* A metadata file at this reader's path that is not the one it holds
 * (it holds none, or a closed writer's kept FINAL one): a writer by this
 * reader's name and configuration, whose metadata file is at its name
 * before its seal is on the superblock, or replaces the one there (a
 * crashed or kept one's) by a rename right after. */
static bool
md_appeared(const rdr_t *r)
{
    struct stat st;

    return stat(r->md.path, &st) == 0 && (r->md.fd < 0 || st.st_dev != r->md.dev || st.st_ino != r->md.ino);
}

/*
 * Holding no live writer's snapshot (none, or a closed writer's kept FINAL
 * one), is the HDF5 file, open on fd, held by a vfd_swmr_writer this reader
 * cannot find? Its lock held (mdlock.h) and its seal on the superblock, and
 * no metadata file of its where this reader looks, nor one the file records
 * (`name`: the HDF5 file's, to follow a record; NULL: none to follow),
 * after looking again up to ELSEWHERE_LOOKS times 10 ms apart while the
 * lock stays held (a writer replacing a crashed or kept metadata file
 * renames its own into place after it sealed). The lock alone is not
 * enough: a process the writer forked may hold the descriptor, and with it
 * the lock, after the writer closed; the seal is gone by then (close clears
 * it before it removes the metadata file). 1 yes; 2 a writer holds it and
 * its metadata file is where this reader looks (now, or recorded and
 * followed); 0 no writer holds it.
 */
static int
writer_elsewhere(rdr_t *r, int fd, const char *name)
{
    int held = 0;

    /* the lock first: one fcntl when no writer holds the file (lag checks) */
    if (fd < 0 || !r->base.cfg.presume_posix_semantics || vfdswmr_mdlock_hdf5_held(fd) <= 0 ||
        vfdswmr_sb_sealed_fd(fd) != 1)
        return 0;
    for (int look = 0; look < ELSEWHERE_LOOKS && (held = vfdswmr_mdlock_hdf5_held(fd)) > 0; look++) {
        if (md_appeared(r) || (name && vfdswmr_rdr_md_follow(&r->md, name)))
            return 2;
        vfdswmr_sleep(0.01);
    }
    if (held <= 0 || vfdswmr_sb_sealed_fd(fd) != 1)
        return 0;
    return md_appeared(r) ? 2 : 1;
}

/* What to do about a writer this reader cannot find (the two messages
 * below). */
#define ELSEWHERE_ADVICE                                                                                  \
    "open it by the name its writer uses, or give the writer's md_file_path/md_file_name (a writer with " \
    "maintain_metadata_file=0 keeps none: read through vfd_swmr_aux's copy)"

/*
 * No live writer's metadata file where this reader looks (none:
 * presume_posix_semantics says "no writer"; or a closed writer's kept
 * FINAL one), yet a live vfd_swmr_writer has the HDF5 file
 * (writer_elsewhere). The reader reached the file by another name (a
 * symbolic or hard link, another path) or with another
 * md_file_path/md_file_name than the writer's, and the file records no
 * metadata file it could follow (mdfile/sessname.h: a file system without
 * extended attributes), and would read the file as it sits on disk,
 * inconsistent while a writer runs. Refused, saying so; a metadata file
 * that appears meanwhile is loaded (a writer's FINAL one replaced: by the
 * lag check of the first read, as for any successor).
 *  - A dead writer's file (sealed, no lock): its seal refuses the
 *    superblock read (pages.c).
 *  - A new file before its first flush has no superblock on disk yet.
 * Returns -1 with the reason on the stack, else 0.
 */
static int
refuse_elsewhere(rdr_t *r, const char *name)
{
    int fd = vfdswmr_lower_fd(r->base.lower);

    if (r->md.fd >= 0 && !(r->md.snap.hdr.flags & VFDSWMR_MDHDR_FINAL))
        return 0; /* a live writer's */
    int found = writer_elsewhere(r, fd, name);

    if (found != 1) /* none; or its metadata file, loaded now (replacing a FINAL one: by the first lag check) */
        return found == 2 && r->md.fd < 0 ? vfdswmr_rdr_md_attach(&r->md, false, 0) : 0;
    vfdswmr_sessname_t rec;
    char why[VFDSWMR_SESSNAME_MAX + 160] = "The file does not record its metadata file (its file system keeps "
                                           "no extended attributes, or the writer predates this)";
    if (vfdswmr_sessname_read(name, &rec) && strcmp(rec.path, VFDSWMR_SESSNAME_NONE) == 0)
        snprintf(why, sizeof why,
                 "The file records a writer that keeps no metadata file: read through "
                 "vfd_swmr_aux's copy");
    else if (rec.path[0])
        snprintf(why, sizeof why,
                 "The file records %s as its session's metadata file, which is not that session's (or not "
                 "there)",
                 rec.path);
    VFDSWMR_ERR(
        H5E_CANTOPENFILE,
        "%s: \"%s\" is open for writing by a vfd_swmr_writer (it holds the file's writer lock), but "
        "there is no metadata file %s%s: this reader reached the file by another name (a symbolic or "
        "hard link, another path) or with another md_file_path/md_file_name than its writer's, and "
        "would read the file as it sits on disk, which is not consistent while the writer runs; " ELSEWHERE_ADVICE
        ". %s",
        RDR_NAME, name, r->md.path, r->md.fd >= 0 ? " of it (only a closed writer's)" : "", why);
    return -1;
}

int
vfdswmr_rdr_writer_unfound(rdr_t *r)
{
    if (!r->md.foreign) {
        if (!r->md.no_record || writer_elsewhere(r, r->md.reg.fd, NULL) != 1)
            return 0;
        r->md.foreign = true;
        vfdswmr_rdr_log(r, "a writer this reader cannot find holds the file: reads fail from now on");
    }
    VFDSWMR_ERR(H5E_READERROR,
                "%s: a vfd_swmr_writer opened this file after this reader did (it holds the file's writer lock and "
                "its seal is on the superblock), by another name (a symbolic or hard link, another path) or with "
                "another md_file_path/md_file_name than this reader's: there is no metadata file %s of it, and "
                "this file system keeps no record of the writer's (no extended attributes). Reading on would read "
                "the file as it sits on disk, which is not consistent while the writer runs: close the file and "
                "reopen it; " ELSEWHERE_ADVICE,
                RDR_NAME, r->md.path);
    return -1;
}

/* A writer's metadata file whose snapshot holds no page (no flush published
 * in its session; the ticks go on regardless) over an HDF5 file without a
 * superblock: the writer created the file and has not flushed it yet, or
 * flushed it less than a tick ago. HDF5 would only say "file signature not found";
 * say what it means. Returns -1 with the reason on the stack, else 0.
 *
 * With a superblock: a file the writer found with one (tick 0 is that file),
 * or one it created and has published since we loaded the snapshot -- it
 * writes the signature only after its first publish (seal.c,
 * vfdswmr_seal_show), so the metadata file now names tick 1 or later: load
 * it again, or tick 0 would be read from a file that holds a later
 * superblock and nothing else. */
static int
refuse_unpublished(rdr_t *r, const char *name)
{
    const vfdswmr_mdhdr_t *h = &r->md.snap.hdr;

    if (r->md.fd < 0 || r->md.snap.idx.nentries != 0 || (h->flags & VFDSWMR_MDHDR_FINAL))
        return 0;
    if (has_signature(r))
        return vfdswmr_rdr_refresh(r) < 0 ? -1 : 0;
    if (r->base.cfg.presume_posix_semantics && vfdswmr_mdlock_held(r->md.fd) == 0)
        VFDSWMR_ERR(H5E_CANTOPENFILE,
                    "%s: \"%s\" has no published snapshot: its writer created it and ended before any flush "
                    "of it was published (tick %llu in \"%s\" holds no page), so it holds nothing to read",
                    RDR_NAME, name, (unsigned long long)h->tick, r->md.path);
    else
        VFDSWMR_ERR(H5E_CANTOPENFILE,
                    "%s: \"%s\" has no published snapshot yet: its writer has created it and not published a "
                    "flush of it yet (tick %llu in \"%s\" holds no page). Wait for the writer's first flush "
                    "(H5Fflush, vfdswmr_end_tick; h5py: File.flush()), which it publishes within a tick, then "
                    "open the file again",
                    RDR_NAME, name, (unsigned long long)h->tick, r->md.path);
    return -1;
}

/* The HDF5 file on *(int *)ctx for vfdswmr_recover_differs: reads (zeros
 * past its end) and its size. */
static int
read_fd_io(void *ctx, uint64_t addr, void *buf, size_t len)
{
    ssize_t n = vfdswmr_pread_upto(*(const int *)ctx, buf, len, addr);

    if (n < 0)
        return -1;
    memset((uint8_t *)buf + n, 0, len - (size_t)n);
    return 0;
}

static int
size_fd_io(void *ctx, uint64_t *size)
{
    struct stat st;

    if (fstat(*(const int *)ctx, &st) < 0)
        return -1;
    *size = (uint64_t)st.st_size;
    return 0;
}

/* A dead or closed writer's snapshot (its metadata file unlocked) that is
 * not the HDF5 file's: the file records another session as its own (a
 * later writer by another name or configuration); or, not FINAL, the file
 * is shorter than the snapshot or does not hold it (vfdswmr_recover_differs: re-created by plain HDF5, or written on
 * after vfd_swmr_recover --force, since).
 * Reading it would lay that snapshot over the file; recovery refuses it
 * too (common/recover.c). Returns -1 with the reason on the stack, else 0. */
static int
refuse_stale(rdr_t *r, const char *name)
{
    const vfdswmr_mdhdr_t *h = &r->md.snap.hdr;
    int fd = vfdswmr_lower_fd(r->base.lower), differs;
    vfdswmr_recover_io_t io = {.read = read_fd_io, .size = size_fd_io, .ctx = &fd};
    vfdswmr_sessname_t recorded;
    struct stat st;

    if (r->md.fd < 0 || !r->base.cfg.presume_posix_semantics || vfdswmr_mdlock_held(r->md.fd) != 0)
        return 0; /* no writer, a live one (or no locks to tell) */
    /* another session recorded elsewhere: this one is stale (a closed one
     * only over a sealed file: else the file is whole as it is) */
    if (vfdswmr_sessname_elsewhere(name, r->md.path, &recorded) && recorded.session != h->session &&
        (!(h->flags & VFDSWMR_MDHDR_FINAL) || (fd >= 0 && vfdswmr_sb_sealed_fd(fd) == 1))) {
        VFDSWMR_ERR(H5E_CANTOPENFILE,
                    "%s: metadata file \"%s\" holds session %016llx of a writer of \"%s\" that ended, but the file "
                    "records session %016llx as its own, %s%s: this metadata file is stale",
                    RDR_NAME, r->md.path, (unsigned long long)h->session, name, (unsigned long long)recorded.session,
                    strcmp(recorded.path, VFDSWMR_SESSNAME_NONE) == 0
                        ? "whose writer kept no metadata file (read through vfd_swmr_aux's copy)"
                        : "with its metadata file at ",
                    strcmp(recorded.path, VFDSWMR_SESSNAME_NONE) == 0 ? "" : recorded.path);
        return -1;
    }
    if (h->flags & VFDSWMR_MDHDR_FINAL)
        return 0; /* closed: the file is whole */
    if (fd >= 0 && fstat(fd, &st) == 0 && (uint64_t)st.st_size < h->eoa) {
        VFDSWMR_ERR(H5E_CANTOPENFILE,
                    "%s: \"%s\" is %llu bytes, shorter than the %llu bytes of the last snapshot of its writer that "
                    "died (metadata file \"%s\"; the writer kept it at least that long): it was truncated or "
                    "replaced since, and the snapshot does not describe it",
                    RDR_NAME, name, (unsigned long long)st.st_size, (unsigned long long)h->eoa, r->md.path);
        return -1;
    }
    if (fd >= 0 && (differs = vfdswmr_recover_differs(r->md.fd, &r->md.snap, &io)) != 0) {
        if (differs < 0)
            VFDSWMR_ERR(H5E_READERROR, "%s: cannot compare \"%s\" with metadata file \"%s\": %s", RDR_NAME, name,
                        r->md.path, strerror(errno));
        else
            VFDSWMR_ERR(H5E_CANTOPENFILE,
                        "%s: metadata file \"%s\" holds the last snapshot (tick %llu) of a writer of \"%s\" that "
                        "died, but the file's superblock carries no writer's seal and its metadata differs from the "
                        "snapshot: the file was written since without the writer (re-created by plain HDF5, or "
                        "written on after vfd_swmr_recover --force); remove the metadata file if it is stale",
                        RDR_NAME, r->md.path, (unsigned long long)h->tick, name);
        return -1;
    }
    return 0;
}

/* The writer whose snapshot we loaded closed since (a reader slow to open:
 * its lock is gone, its metadata file says FINAL now): what we loaded is
 * not the file any more, and the file is whole -- load again, as a reader
 * opening now would (refuse_stale would take the closed writer for a dead
 * one whose file was written since). 0, or -1 with the reason pushed. */
static int
reload_if_closed(rdr_t *r)
{
    vfdswmr_mdhdr_t now;

    if (r->md.fd < 0 || !r->base.cfg.presume_posix_semantics || (r->md.snap.hdr.flags & VFDSWMR_MDHDR_FINAL) ||
        vfdswmr_mdlock_held(r->md.fd) != 0 || vfdswmr_mdr_read_header(r->md.fd, &now) != VFDSWMR_MD_OK ||
        now.session != r->md.snap.hdr.session || !(now.flags & VFDSWMR_MDHDR_FINAL))
        return 0;
    vfdswmr_rdr_md_release(&r->md); /* the same path: gone by now, or a newer writer's */
    return vfdswmr_rdr_md_attach(&r->md, false, r->base.cfg.open_timeout);
}

/* The log file (log_file_path), when one is configured: 0, or -1 pushed. */
static int
open_log(rdr_t *r)
{
    if (vfdswmr_log_open(&r->log, r->base.cfg.log_file_path) < 0)
        VFDSWMR_ERR(H5E_CANTOPENFILE, "%s: cannot open the log file \"%s\" (log_file_path): %s", RDR_NAME,
                    r->base.cfg.log_file_path, strerror(errno));
    return r->base.cfg.log_file_path[0] && r->log.fp == NULL ? -1 : 0;
}

/* forked.h: the fork handler, in a child (async-signal-safe). */
static void
drop_in_child(void *obj, int devnull)
{
    (void)devnull; /* the lower file holds no lock of ours */
    vfdswmr_rdr_md_forget(&((rdr_t *)obj)->md);
}

static H5FD_t *
reader_open(const char *name, unsigned flags, hid_t fapl, haddr_t maxaddr)
{
    rdr_t *r;
    bool lower_open = false;

    /* The configuration is parsed here, once, whatever the access mode. */
    if (NULL == (r = (rdr_t *)vfdswmr_stack_new(fapl, sizeof *r, RDR_NAME, NULL)))
        return NULL;
    if (flags & (H5F_ACC_RDWR | H5F_ACC_TRUNC | H5F_ACC_CREAT | H5F_ACC_EXCL)) {
        refuse_write(&r->base.cfg, name);
        free(r);
        return NULL;
    }
    r->md.fd = -1;
    if (vfdswmr_ccf_init(&r->cc, &r->base.cfg, RDR_NAME) < 0 ||
        vfdswmr_rdr_md_init(&r->md, &r->base.cfg, name) < 0) /* paths only: nothing read */
        goto fini_cc;
    /* every descriptor -1 now: tracked until they are closed (out of
     * memory: a fork child keeps its locks) */
    (void)vfdswmr_fork_track(r, drop_in_child);
    if (register_or_fail(r, name, flags, maxaddr) < 0)
        goto unregister;
    r->md.no_record = r->md.reg.fd >= 0 && vfdswmr_sessname_unsupported(r->md.reg.fd);
    /* Find (or, with presume_posix_semantics=0, wait for) the metadata file
     * -- the one of the session the HDF5 file records, else the configured
     * name's -- and load its snapshot, before the HDF5 file is opened. */
    (void)vfdswmr_rdr_md_follow(&r->md, name);
    if (vfdswmr_rdr_md_attach(&r->md, !r->base.cfg.presume_posix_semantics, r->base.cfg.open_timeout) < 0)
        goto unregister; /* released already */
    vfdswmr_test_kill_point("reader_attached");
    if (vfdswmr_stack_open_lower(&r->base, name, flags, maxaddr) < 0)
        goto release;
    lower_open = true;
    r->lib_eoa = HADDR_UNDEF;
    if (reload_if_closed(r) < 0 || refuse_elsewhere(r, name) < 0 || refuse_unpublished(r, name) < 0 ||
        refuse_stale(r, name) < 0)
        goto release;
    if (open_log(r) < 0 || vfdswmr_rdr_forward_eoa(r) < 0)
        goto close_log;
    vfdswmr_rdr_log(r, "open \"%s\" %s%s%s: tick=%llu session=%016llx entries=%u eoa=%llu attempts=%u max_lag=%u", name,
                    r->md.fd >= 0 ? "with metadata file" : "without writer (no metadata file)",
                    r->md.followed ? ", as the file records it: " : "", r->md.followed ? r->md.path : "",
                    (unsigned long long)r->md.snap.hdr.tick, (unsigned long long)r->md.snap.hdr.session,
                    r->md.snap.idx.nentries, (unsigned long long)r->md.snap.hdr.eoa, r->md.snap.attempts,
                    r->md.max_lag);
    return &r->base.pub;
close_log:
    vfdswmr_log_close(&r->log);
release:
    vfdswmr_rdr_md_release(&r->md);
unregister:
    unregister_reader(r);
fini_cc:
    vfdswmr_fork_untrack(r);
    vfdswmr_ccf_fini(&r->cc);
    if (lower_open)
        vfdswmr_stack_close(&r->base); /* frees r */
    else
        free(r);
    return NULL;
}

/* A fork child's copy of a file its parent reads: every operation refused
 * (forked.h). Its reads would move the parent's read mark. */
#define CHILD(file, what) vfdswmr_forked(RDR(file)->base.fork_gen, RDR_NAME, what)

static herr_t
reader_close(H5FD_t *file)
{
    rdr_t *r = RDR(file);

    if (r->base.fork_gen != vfdswmr_fork_gen()) {
        /* a fork child's copy: let go of the child's descriptors (the fork
         * handler did, unless tracking failed) -- every one -1, what
         * follows only frees: no unmarking (the parent's mark), no log
         * line (the parent's log) */
        vfdswmr_rdr_md_forget(&r->md);
        vfdswmr_log_forget(&r->log);
    }
    else {
        vfdswmr_rdr_log(r, "close");
        vfdswmr_log_close(&r->log);
    }
    vfdswmr_fork_hold(); /* a fork meanwhile would find the descriptors half closed */
    vfdswmr_rdr_md_release(&r->md);
    unregister_reader(r);
    vfdswmr_fork_release();
    vfdswmr_fork_untrack(r);
    vfdswmr_rdr_cache_free(r);
    vfdswmr_ccf_fini(&r->cc);
    return vfdswmr_stack_close(&r->base);
}

static herr_t
reader_delete(const char *name, hid_t fapl)
{
    return vfdswmr_stack_delete(name, fapl, RDR_NAME);
}

static haddr_t
max_addr(haddr_t a, haddr_t b)
{
    if (a == HADDR_UNDEF)
        return b;
    if (b == HADDR_UNDEF)
        return a;
    return a > b ? a : b;
}

static haddr_t
reader_get_eoa(const H5FD_t *file, H5FD_mem_t type)
{
    const rdr_t *r = (const rdr_t *)file;

    (void)type;
    return max_addr(r->lib_eoa == HADDR_UNDEF ? 0 : r->lib_eoa, vfdswmr_rdr_snap_eoa(r));
}

static herr_t
reader_set_eoa(H5FD_t *file, H5FD_mem_t type, haddr_t addr)
{
    (void)type;
    if (CHILD(file, "setting the end of allocation"))
        return -1;
    RDR(file)->lib_eoa = addr;
    return vfdswmr_rdr_forward_eoa(RDR(file));
}

static haddr_t
reader_get_eof(const H5FD_t *file, H5FD_mem_t type)
{
    haddr_t eof = vfdswmr_pt_get_eof(file, type);

    return eof == HADDR_UNDEF ? HADDR_UNDEF : max_addr(eof, vfdswmr_rdr_snap_eoa((const rdr_t *)file));
}

/* How long a raw read waits for the writer's raw write there, seconds. */
#define RDR_RAW_WAIT 10.0

/* A raw read the writer held off for RDR_RAW_WAIT seconds. */
static herr_t
raw_held_off(size_t size, haddr_t addr, const char *what)
{
    VFDSWMR_ERR(H5E_READERROR,
                "%s: cannot read %zu bytes of raw data at address %llu: the writer %s %.0f s (is it stopped?); try "
                "again",
                RDR_NAME, size, (unsigned long long)addr, what, RDR_RAW_WAIT);
    return -1;
}

/* Raw data, from the HDF5 file: while a writer's metadata file is in use,
 * under the raw-data lock, so that a chunk the writer rewrites in place is
 * read wholly before or wholly after (mdlock.h). A file system that cannot
 * lock: read without (the registration failed the same way). */
static herr_t
read_raw(rdr_t *r, hid_t dxpl, haddr_t addr, size_t size, void *buf)
{
    int fd = r->md.fd >= 0 && r->base.cfg.presume_posix_semantics ? r->md.reg.fd : -1;
    vfdswmr_take_t lk = VFDSWMR_TAKE_ERROR;
    herr_t rc;

    /* first past the raw-data gate, held until we leave: the writer lets
     * it go once it sees us registered, and locks each raw write from then
     * on (mdlock.h) */
    if (fd >= 0 && !r->md.reg.gate) {
        if ((lk = vfdswmr_rawgate_take(fd, F_RDLCK, RDR_RAW_WAIT)) == VFDSWMR_TAKE_BUSY)
            return raw_held_off(size, addr, "did not let readers read raw data for");
        r->md.reg.gate = lk == VFDSWMR_TAKEN;
    }
    lk = fd >= 0 ? vfdswmr_rawlock_take(fd, F_RDLCK, RDR_RAW_WAIT) : VFDSWMR_TAKE_ERROR;
    if (lk == VFDSWMR_TAKE_BUSY)
        return raw_held_off(size, addr, "has been writing raw data for more than");
    rc = vfdswmr_ccf_read(&r->cc, &r->base, H5FD_MEM_DRAW, dxpl, addr, size, buf);
    if (lk == VFDSWMR_TAKEN)
        vfdswmr_rawlock_drop(fd);
    if (rc < 0 || vfdswmr_rdr_kept_patch(r, addr, size, buf) < 0)
        return -1;
    return vfdswmr_rdr_overlay_raw(r, addr, size, buf);
}

static herr_t
reader_read(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, void *buf)
{
    if (CHILD(file, "reading"))
        return -1;
    if (type == H5FD_MEM_DRAW)
        return read_raw(RDR(file), dxpl, addr, size, buf);
    return vfdswmr_rdr_read_meta(RDR(file), type, dxpl, addr, size, buf);
}

static herr_t
reader_write(H5FD_t *file, H5FD_mem_t type, hid_t dxpl, haddr_t addr, size_t size, const void *buf)
{
    (void)file, (void)type, (void)dxpl, (void)buf;
    VFDSWMR_ERR(H5E_WRITEERROR, "%s: cannot write %zu bytes at address %llu: the file is open read-only", RDR_NAME,
                size, (unsigned long long)addr);
    return -1;
}

/* The library calls flush from H5Drefresh/H5Grefresh/H5Orefresh on a
 * read-only file, between evicting the object and reloading it. */
static herr_t
reader_flush(H5FD_t *file, hid_t dxpl, hbool_t closing)
{
    (void)dxpl;
    if (!closing && CHILD(file, "refreshing"))
        return -1;
    return closing ? 0 : vfdswmr_rdr_refresh(RDR(file));
}

static herr_t
reader_truncate(H5FD_t *file, hid_t dxpl, hbool_t closing)
{
    (void)file, (void)dxpl, (void)closing;
    return 0;
}

static herr_t
reader_lock(H5FD_t *file, hbool_t rw)
{
    (void)file, (void)rw;
    return 0;
}

static herr_t
reader_unlock(H5FD_t *file)
{
    (void)file;
    return 0;
}

static herr_t
reader_ctl(H5FD_t *file, uint64_t op, uint64_t flags, const void *in, void **out)
{
    int rc;

    if (CHILD(file, "a ctl operation"))
        return -1;
    if ((rc = vfdswmr_ccf_ctl(&RDR(file)->cc, op, in, out)) != 1)
        return rc;
    switch (op) {
    case VFDSWMR_CTL_REFRESH:
        return vfdswmr_rdr_refresh(RDR(file));
    case VFDSWMR_CTL_GET_STATUS: {
        vfdswmr_status_t *s = vfdswmr_status_target(in, out);
        if (s == NULL) {
            VFDSWMR_ERR(H5E_BADVALUE, "%s: GET_STATUS needs a vfdswmr_status_t to fill (output)", RDR_NAME);
            return -1;
        }
        vfdswmr_rdr_status(RDR(file), s);
        return 0;
    }
    case VFDSWMR_CTL_END_TICK:
    case VFDSWMR_CTL_DISABLE_EOT:
    case VFDSWMR_CTL_ENABLE_EOT:
        VFDSWMR_ERR(H5E_FCNTL,
                    "%s: only the writer (%s) can end a tick or disable/enable the end of tick; this file is "
                    "open for reading",
                    RDR_NAME, VFDSWMR_WRITER_NAME);
        return -1;
    default:
        return vfdswmr_pt_ctl(file, op, flags, in, out);
    }
}

static const H5FD_class_t reader_class = {
    VFDSWMR_CLASS_BASE(VFDSWMR_READER_VALUE, VFDSWMR_READER_NAME),
    .open = reader_open,
    .close = reader_close,
    .del = reader_delete,
    .get_eoa = reader_get_eoa,
    .set_eoa = reader_set_eoa,
    .get_eof = reader_get_eof,
    .read = reader_read,
    .write = reader_write,
    .flush = reader_flush,
    .truncate = reader_truncate,
    .lock = reader_lock,
    .unlock = reader_unlock,
    .ctl = reader_ctl,
};

VFDSWMR_PLUGIN_EXPORT(reader_class)
