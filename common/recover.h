/*
 * Crash recovery: turn the HDF5 file into exactly the last snapshot a
 * crashed writer published in its metadata file (docs/DESIGN.md, "Crash
 * recovery"). Used by the writer driver when it opens a file whose
 * metadata file no live writer holds, and by vfd_swmr_recover.
 *
 * Why the result is exact: in a published snapshot every page the index
 * does not name is in the HDF5 file as the snapshot has it (pages reach the
 * file only from published images, and leave the index only max_lag ticks
 * after the file holds their latest image). For the pages the index names,
 * the snapshot's metadata bytes are the image's metadata ranges; every
 * other byte of such a page the file already holds correctly (raw data is
 * written to the file directly and may be newer than the image). So
 * recovery writes exactly the metadata ranges of every indexed image,
 * clears the superblock's "open for writing" flags, and makes the file at
 * least the snapshot's EOA long. It is idempotent: a recovery that is
 * killed is simply run again. The index is read in place
 * (mdfile/mdidx_file.h), images in pieces of 1 MiB, verified all before
 * anything is written and restored a piece at a time: memory is two index
 * windows and two pieces, whatever the snapshot's size or what its index
 * states (docs/DESIGN.md, "Crash recovery", Costs).
 *
 * The writer's seal (common/superblock.h) stays on the superblock in the
 * HDF5 file until everything else is restored and synced: clearing it is
 * recovery's last write, so plain HDF5 refuses the file until recovery has
 * finished (an interrupted recovery leaves it refused).
 *
 * Error contract: functions return 0 or -1; on -1 the reason is written
 * into the caller's buffer `err` (errlen bytes), never kept in an object.
 */
#ifndef VFDSWMR_COMMON_RECOVER_H
#define VFDSWMR_COMMON_RECOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <hdf5.h>
#include <H5FDdevelop.h>

#include "mdreader.h" /* vfdswmr_mdsnap_t */
#include "sessname.h" /* vfdswmr_sessname_t */

/* How recovery reaches the HDF5 file. Each returns 0, or -1 with errno. */
typedef struct vfdswmr_recover_io_t {
    int (*read)(void *ctx, uint64_t addr, void *buf, size_t len); /* zeros past the end */
    int (*write)(void *ctx, uint64_t addr, const void *buf, size_t len);
    int (*extend)(void *ctx, uint64_t size); /* at least `size` bytes */
    int (*size)(void *ctx, uint64_t *size);  /* its size now */
    int (*sync)(void *ctx);                  /* make writes durable */
    void *ctx;
} vfdswmr_recover_io_t;

typedef struct vfdswmr_recover_report_t {
    bool needed;      /* false: the writer had closed cleanly (FINAL), nothing written */
    uint64_t session; /* of the crashed writer */
    uint64_t tick;    /* the snapshot recovered */
    uint64_t eoa;
    uint32_t pages; /* index entries written back */
    uint64_t bytes; /* metadata bytes written back */
} vfdswmr_recover_report_t;

/*
 * Recover from the metadata file open read-write on md_fd, whose writer lock
 * (mdfile/mdlock.h) the caller holds. `hdf5_id` is the HDF5 file's inode
 * (0: unknown); a metadata file recording another one is refused unless
 * `force`, and so is an HDF5 file shorter than the snapshot's EOA (the
 * writer keeps the file at least that long from each consistency point on:
 * a shorter one was truncated or replaced since). `recorded` is the
 * session the HDF5 file records as its own with its metadata file
 * elsewhere (vfdswmr_sessname_elsewhere; NULL: none): a metadata file of
 * another session, FINAL or not, is stale -- a later session of the file
 * has been, or is, elsewhere -- and refused unless `force`. Nothing is
 * written to the HDF5 file before every image has been read and verified.
 * `md_name` and `h5_name` are for messages.
 */
int vfdswmr_recover_run(int md_fd, const char *md_name, const vfdswmr_recover_io_t *io, const char *h5_name,
                        uint64_t hdf5_id, const vfdswmr_sessname_t *recorded, bool force, vfdswmr_recover_report_t *rep,
                        char *err, size_t errlen);

/*
 * What vfdswmr_recover_run (without force) would do, doing none of it: the
 * same checks, refusals and messages, every image verified, *rep filled as
 * the recovery would fill it (pages and bytes counted as it would write
 * them), and nothing written anywhere -- io needs read and size only, and
 * md_fd may be read-only and unlocked (vfd_swmr_inspect). A metadata file
 * its live writer changes meanwhile can make it fail; the caller says so.
 */
int vfdswmr_recover_predict(int md_fd, const char *md_name, const vfdswmr_recover_io_t *io, const char *h5_name,
                            uint64_t hdf5_id, const vfdswmr_sessname_t *recorded, vfdswmr_recover_report_t *rep,
                            char *err, size_t errlen);
/*
 * Does a dead writer's snapshot s (metadata file md_fd) NOT hold over the
 * HDF5 file? 1 when the file's superblock is on disk without a writer's
 * seal and a metadata byte of the snapshot differs from the file's -- the
 * file was written since without the writer (re-created by plain HDF5 with
 * H5F_ACC_TRUNC, same inode; written on after a --force recovery), and
 * restoring or reading the snapshot would roll it back. 0 when the file is
 * sealed (a dead writer's), has no superblock yet (a new file before its
 * first publish showed it), or holds every metadata byte already (a writer
 * killed in its close after the seal went; a finished recovery whose
 * metadata file outlived it: the superblock counts as recovery patched
 * it). -1 with errno. Reads images in pieces; io needs read and size only.
 */
int vfdswmr_recover_differs(int md_fd, const vfdswmr_mdsnap_t *s, const vfdswmr_recover_io_t *io);

/* Is the superblock at addr in the HDF5 file sealed (common/superblock.h)?
 * 1 sealed, 0 not, -2 no superblock of a known version there, -1 with errno. */
int vfdswmr_recover_sealed(const vfdswmr_recover_io_t *io, uint64_t addr);

/* Set (on) or clear the writer's seal on the superblock at addr in the HDF5
 * file; written only when that changes it. 1 done, 0 no superblock of a
 * known version there (nothing written), -1 with errno. */
int vfdswmr_recover_set_seal(const vfdswmr_recover_io_t *io, uint64_t addr, bool on);

/* An io that reads the HDF5 file open on *fd (pread, zeros past the end)
 * and refuses every write (EROFS): for vfdswmr_recover_predict. */
void vfdswmr_recover_io_readonly(int *fd, vfdswmr_recover_io_t *io);
/* An io that reaches the HDF5 file through a lower driver's open file. */
void vfdswmr_recover_io_lower(H5FD_t *lower, vfdswmr_recover_io_t *io);

#endif
