/*
 * The HDF5 file names its session (docs/DESIGN.md, "Other names reach the
 * session"): while a vfd_swmr_writer has an HDF5 file, and after it died
 * until its session is recovered, the file carries the absolute path of the
 * session's metadata file in an extended attribute (user.vfdswmr.md,
 * docs/FORMAT.md "Session name"). A writer, a reader or vfd_swmr_recover
 * that finds no metadata file where its own configuration puts it -- it
 * reached the file through a symbolic or hard link, another path, or with
 * another md_file_path -- looks there, and uses what it names when that is
 * a metadata file of this very HDF5 file (its header's hdf5_id).
 *
 * It is a hint, never a permission: a file system without extended
 * attributes (NFSv3, some FUSE file systems) keeps none, and then the
 * opener is refused as before, saying what to do; a copy of the HDF5 file
 * (cp -a keeps extended attributes) names a metadata file whose header
 * names another inode, and is not followed.
 *
 * Invariants:
 *  - the value is "vfdswmr-md 1 " followed by an absolute path of at most
 *    VFDSWMR_SESSNAME_MAX bytes without NUL; exactly one encoder and one
 *    decoder (below) write and read it;
 *  - a path is followed only to a regular file (never a symbolic link:
 *    vfdswmr_open_md) whose metadata header decodes and belongs to the
 *    HDF5 file (vfdswmr_hdf5_id_foreign is false for its inode).
 *
 * Error contract: vfdswmr_sessname_record returns 0 or -1 with errno (the
 * writer logs it and goes on: a hint); the others never fail -- what they
 * cannot read is "nothing recorded". Nothing is printed.
 */
#ifndef VFDSWMR_MDFILE_SESSNAME_H
#define VFDSWMR_MDFILE_SESSNAME_H

#include <stddef.h>

#include "vfdswmr.h" /* VFDSWMR_MAX_PATH */

#define VFDSWMR_SESSNAME_XATTR  "user.vfdswmr.md"
#define VFDSWMR_SESSNAME_PREFIX "vfdswmr-md 1 "
/* The longest path a value holds (an absolute metadata file path). */
#define VFDSWMR_SESSNAME_MAX (VFDSWMR_MAX_PATH + 64)
/* The longest value: prefix and path. */
#define VFDSWMR_SESSNAME_VALUE_MAX (sizeof VFDSWMR_SESSNAME_PREFIX - 1 + VFDSWMR_SESSNAME_MAX)

/* The value naming the absolute path abs_path into out (len bytes): its
 * length, or 0 when abs_path is not absolute, is empty past its '/', or
 * does not fit. */
size_t vfdswmr_sessname_encode(const char *abs_path, char *out, size_t len);

/* The path a value of len bytes names, NUL-terminated into out (outlen
 * bytes): 0, or -1 when it is not such a value (wrong prefix or version, a
 * relative or empty path, a NUL inside, too long for out). */
int vfdswmr_sessname_decode(const void *buf, size_t len, char *out, size_t outlen);

/* Record md_path (made absolute: its directory resolved with realpath(3))
 * on the HDF5 file open on h5_fd. 0, or -1 with errno (ENOTSUP/EOPNOTSUPP:
 * the file system keeps no extended attributes). */
int vfdswmr_sessname_record(int h5_fd, const char *md_path);

/* Remove the record from the HDF5 file open on h5_fd if it names md_path
 * (as vfdswmr_sessname_record wrote it); anything else is left alone. */
void vfdswmr_sessname_erase(int h5_fd, const char *md_path);

/* What the HDF5 file h5_name records, decoded, into out: 1, or 0 (none, not
 * readable, not a value). Nothing is checked about the path itself. */
int vfdswmr_sessname_read(const char *h5_name, char *out, size_t outlen);

/* The metadata file h5_name records, when it is there and is a metadata
 * file of this HDF5 file (see the invariants): 1 with its path in out, else
 * 0. */
int vfdswmr_sessname_find(const char *h5_name, char *out, size_t outlen);
/* The same for the HDF5 file open on h5_fd. */
int vfdswmr_sessname_find_fd(int h5_fd, char *out, size_t outlen);

#endif
