/*
 * The HDF5 file names its session (docs/DESIGN.md, "Other names reach the
 * session"): while a vfd_swmr_writer has an HDF5 file, and after it died
 * until its session is recovered, the file carries the session's identity
 * and the absolute path of its metadata file in an extended attribute
 * (user.vfdswmr.md, docs/FORMAT.md "The session name on the HDF5 file"). A
 * writer, a reader or vfd_swmr_recover that finds no metadata file where
 * its own configuration puts it -- it reached the file through a symbolic
 * or hard link, another path, or with another md_file_path -- looks there.
 *
 * It is a hint, never a permission: a file system without extended
 * attributes (NFSv3, some FUSE file systems) keeps none, and then the
 * opener is refused as before, saying what to do. What decides is the
 * metadata file itself and the HDF5 file's own state (the invariants).
 *
 * Invariants:
 *  - the value is "vfdswmr-md 1 " DEV " " SESSION " " PATH (PATH
 *    VFDSWMR_SESSNAME_NONE for a writer keeping no metadata file): DEV the HDF5
 *    file's st_dev and SESSION the writer's session, 16 lower-case hex
 *    digits each, PATH absolute, at most VFDSWMR_SESSNAME_MAX bytes, no NUL;
 *    exactly one encoder and one decoder (below) write and read it; when
 *    the session ends the value stays, its prefix replaced by
 *    VFDSWMR_SESSNAME_ENDED, which the decoder refuses (nothing recorded);
 *  - a record is followed only (vfdswmr_sessname_find) when the HDF5 file
 *    is on device DEV and PATH is a regular file (never a symbolic link:
 *    vfdswmr_open_md) whose metadata header decodes and names this file's
 *    inode -- of SESSION, or of the session that took SESSION's metadata
 *    file over (a writer killed between its rename and its record: the
 *    file at PATH is the one to use either way); SESSION decides what is
 *    stale elsewhere (vfdswmr_sessname_elsewhere); by readers only while
 *    its superblock on disk is sealed
 *    or absent (a live or dead writer's file, or a new one before its first
 *    publish -- never a file that was closed, rewritten, or recovered with
 *    --force since).
 *
 * Error contract: vfdswmr_sessname_record returns 0 or -1 with errno (the
 * writer logs it and goes on: a hint); the others never fail -- what they
 * cannot read is "nothing recorded". Nothing is printed.
 */
#ifndef VFDSWMR_MDFILE_SESSNAME_H
#define VFDSWMR_MDFILE_SESSNAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vfdswmr.h" /* VFDSWMR_MAX_PATH */

#define VFDSWMR_SESSNAME_XATTR  "user.vfdswmr.md"
#define VFDSWMR_SESSNAME_PREFIX "vfdswmr-md 1 "
/* An ended session's record: the same bytes under this prefix, which no
 * decoder takes for a session. Removing the attribute would free the
 * block a record too long for the inode takes, at every session's close,
 * and a file system mounted with `discard` waits for the device then (a
 * few hundred microseconds measured on ext4); rewritten in place at the
 * same length it stays where it is. */
#define VFDSWMR_SESSNAME_ENDED "vfdswmr-md - "
/* The path a writer keeping no metadata file (updater files only) records:
 * no metadata file is ever there, and every other one is "elsewhere". */
#define VFDSWMR_SESSNAME_NONE "/(no metadata file)"
/* The longest path a record holds: what the drivers' metadata file path
 * buffers (VFDSWMR_MAX_PATH + 64 bytes) hold with their NUL. */
#define VFDSWMR_SESSNAME_MAX (VFDSWMR_MAX_PATH + 63)
/* The longest value: prefix, two 16-digit numbers with their spaces, path. */
#define VFDSWMR_SESSNAME_VALUE_MAX (sizeof VFDSWMR_SESSNAME_PREFIX - 1 + 34 + VFDSWMR_SESSNAME_MAX)

typedef struct vfdswmr_sessname_t {
    uint64_t dev;     /* st_dev of the HDF5 file */
    uint64_t session; /* the writer's session (metadata file header) */
    char path[VFDSWMR_SESSNAME_MAX + 1];
} vfdswmr_sessname_t;

/* The value for r into out (len bytes): its length, or 0 when r->path is not
 * absolute, is empty past its '/', or does not fit. */
size_t vfdswmr_sessname_encode(const vfdswmr_sessname_t *r, char *out, size_t len);

/* Decode a value of len bytes into *r: 0, or -1 (r->path empty) when it is
 * not such a value (prefix or version, numbers, a relative or empty path, a
 * NUL inside, too long). */
int vfdswmr_sessname_decode(const void *buf, size_t len, vfdswmr_sessname_t *r);

/* Record md_path (made absolute: its directory resolved with realpath(3))
 * and session on the HDF5 file open on h5_fd. 0, or -1 with errno
 * (ENOTSUP/EOPNOTSUPP: the file system keeps no extended attributes); on
 * failure an older record is removed as far as possible -- unless `keep`
 * (the caller refuses to go on: the older record must stay). */
int vfdswmr_sessname_record(int h5_fd, const char *md_path, uint64_t session, bool keep);

/* End the record on the HDF5 file open on h5_fd (vfdswmr_sessname_clear)
 * if it names md_path (as vfdswmr_sessname_record wrote it); anything else
 * is left alone. */
void vfdswmr_sessname_erase(int h5_fd, const char *md_path);

/* The same if it names session. */
void vfdswmr_sessname_erase_session(int h5_fd, uint64_t session);

/* End any record on the HDF5 file open on h5_fd: a session's becomes the
 * ended form (VFDSWMR_SESSNAME_ENDED), anything else is removed. */
void vfdswmr_sessname_clear(int h5_fd);

/* The session the HDF5 file h5_name records, when it records one on its
 * own device whose metadata file is elsewhere than md_path (whether or not
 * it can be followed, or is one at all: a writer keeping none records
 * "<its metadata file path> (no metadata file)"): 1 with *r, else 0. A metadata file at md_path
 * of another session is then not the file's: a later session of the file
 * has been, or is, elsewhere (the record is written before the seal, and
 * goes with it). A record naming md_path itself with another session is
 * a writer that died taking md_path over before its metadata file got the
 * name: the one there is still the file's. */
int vfdswmr_sessname_elsewhere(const char *h5_name, const char *md_path, vfdswmr_sessname_t *r);

/* What the HDF5 file h5_name records, decoded, into *r: 1, or 0 (none, not
 * readable, not a value). Nothing is checked about it. */
int vfdswmr_sessname_read(const char *h5_name, vfdswmr_sessname_t *r);
/* The same for the HDF5 file open on fd. */
int vfdswmr_sessname_read_fd(int fd, vfdswmr_sessname_t *r);

/* Does the file system of the HDF5 file open on h5_fd keep no extended
 * attributes (no record can be kept or read there)? */
bool vfdswmr_sessname_unsupported(int h5_fd);

/* The seal of the HDF5 file open on fd as vfdswmr_sb_sealed_fd() tells it
 * (common/superblock.h): 1 sealed, 0 not, -2 no superblock. The caller
 * passes it (mdfile/ does not read HDF5's format). */
typedef int (*vfdswmr_sessname_seal_fn)(int h5_fd);

/* The metadata file the HDF5 file h5_name records, when it may be followed
 * (the invariants; with sealed NULL, whatever the superblock says: writers
 * and recovery, whose recovery refuses a snapshot an unsealed file does not
 * hold): 1 with its path in out (outlen bytes), else 0 (out empty). */
int vfdswmr_sessname_find(const char *h5_name, vfdswmr_sessname_seal_fn sealed, char *out, size_t outlen);
/* The same for the HDF5 file open on h5_fd. */
int vfdswmr_sessname_find_fd(int h5_fd, vfdswmr_sessname_seal_fn sealed, char *out, size_t outlen);

#endif
