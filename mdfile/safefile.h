/*
 * Creating and opening files in directories other users may write to
 * (a shared NFS directory, /tmp), without being led astray by what they
 * planted there: a symbolic link where a file is about to be created or
 * truncated, a FIFO or device where a file is about to be read.
 *
 * Error contract: every function returns -1 with errno set on failure
 * (vfdswmr_open_regular() also VFDSWMR_OPEN_NOT_REGULAR, see there) and
 * prints nothing; the caller formats the message, naming the path.
 */
#ifndef VFDSWMR_MDFILE_SAFEFILE_H
#define VFDSWMR_MDFILE_SAFEFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Random characters in a temporary name (6 bits each: 72 bits). */
#define VFDSWMR_TEMP_RANDOM_LEN 12
/* Bytes vfdswmr_create_temp() appends to the target: ".<random>.tmp". */
#define VFDSWMR_TEMP_SUFFIX_LEN (1 + VFDSWMR_TEMP_RANDOM_LEN + 4)
/* Names tried before vfdswmr_create_temp() gives up with EEXIST. */
#define VFDSWMR_TEMP_ATTEMPTS 16

/*
 * Create a new, empty file next to `target` under a name nobody can have
 * planted in advance: "<target>.<12 random characters>.tmp", the characters
 * from getrandom(2) in [A-Za-z0-9_-]. Opened O_RDWR | O_CREAT | O_EXCL |
 * O_NOFOLLOW | O_CLOEXEC with `mode` (less the umask): whatever exists at
 * the name -- a file, a symbolic link to anything -- is never opened,
 * followed or changed; another name is tried, up to VFDSWMR_TEMP_ATTEMPTS
 * names. The name goes to tmp (tmplen bytes, ENAMETOOLONG when it does not
 * fit). Returns the descriptor, or -1 with errno.
 */
int vfdswmr_create_temp(const char *target, char *tmp, size_t tmplen, mode_t mode);

/* Whether s is exactly a suffix vfdswmr_create_temp() appends to its target. */
bool vfdswmr_is_temp_suffix(const char *s);

/* Call fn(path, ctx) for every regular file (lstat: never a link) in
 * target's directory named "<target's name>.<random>.tmp" -- the names
 * vfdswmr_create_temp() makes for target -- with its path. 0, or -1 with
 * errno when the directory cannot be read (ENOENT: no directory, 0). */
int vfdswmr_temps_each(const char *target, void (*fn)(const char *path, void *ctx), void *ctx);

/*
 * Open an existing regular file with open(2) flags `flags` (O_RDONLY,
 * O_WRONLY or O_RDWR, possibly with others), adding O_NONBLOCK and
 * O_CLOEXEC, and O_NOFOLLOW when it opens for writing (a symbolic link to
 * be written through fails with ELOOP; one to be read is followed). With
 * O_CREAT a missing file is created with mode 0666 less the umask, as
 * fopen(3) does.
 *
 * Anything but a regular file -- a FIFO, a device, a directory, a socket,
 * or a symbolic link (read) to one -- is refused with
 * VFDSWMR_OPEN_NOT_REGULAR (errno EINVAL)
 * without blocking: it is looked at with stat(2) before it is opened (a
 * device is not even opened), and the opened file is checked again with
 * fstat(2) (it may have been swapped in between; O_NONBLOCK keeps that
 * open from waiting for a FIFO's other end).
 *
 * Returns the descriptor, O_NONBLOCK cleared again; VFDSWMR_OPEN_NOT_REGULAR;
 * or VFDSWMR_OPEN_FAILED with errno when open(2) or fstat(2) fails (ENOENT:
 * it does not exist).
 */
int vfdswmr_open_regular(const char *path, int flags);
/* vfdswmr_open_regular()'s failures (a descriptor is >= 0), and
 * vfdswmr_open_md()'s one more. */
enum { VFDSWMR_OPEN_FAILED = -1, VFDSWMR_OPEN_NOT_REGULAR = -2, VFDSWMR_OPEN_LINK = -3 };

/*
 * Open a metadata file (writers', readers', vfd_swmr_recover's one rule):
 * as vfdswmr_open_regular(), and never through a symbolic link, read or
 * write -- VFDSWMR_OPEN_LINK (errno ELOOP). Writers make metadata files as
 * regular files; a link at that name was put there by hand, and a writer or
 * recovery would write through it into another file.
 */
int vfdswmr_open_md(const char *path, int flags);
/* The message for VFDSWMR_OPEN_LINK: what the link is, where it points,
 * what to do (into buf, len bytes). */
void vfdswmr_md_link_text(const char *path, char *buf, size_t len);

/*
 * A side file of the writer (read-mark table, raw-data write log) made
 * whole before it gets its name: `len` bytes of buf written to a new
 * temporary file next to `path` (vfdswmr_create_temp), then renamed to
 * `path`. Returns the descriptor (open for reading and writing) with *id
 * naming the file, or -1 with errno (nothing left behind).
 */
typedef struct vfdswmr_file_id {
    dev_t dev;
    ino_t ino;
} vfdswmr_file_id_t;
int vfdswmr_create_named(const char *path, const void *buf, size_t len, mode_t mode, vfdswmr_file_id_t *id);
/*
 * A file made whole before it gets its name, which it takes only if nothing
 * has it: `len` bytes of buf, owner uid:gid (fchown; only root gives a file
 * to another user) and `mode`, in an unnamed file (O_TMPFILE) or, where the
 * file system has none, a temporary (vfdswmr_create_temp), then link(2)ed
 * to `path`. 0 with *id naming the file; -1 with errno: EEXIST when
 * something has the name (a link, too: never followed), else why it could
 * not be made (nothing left behind, but a named temporary when the process
 * dies on the way).
 */
int vfdswmr_create_linked(const char *path, const void *buf, size_t len, mode_t mode, uid_t uid, gid_t gid,
                          vfdswmr_file_id_t *id);
/* Does path name the file *id? 1 yes, 0 no (nothing there, or another
 * file), -1 with errno when it cannot be told. */
int vfdswmr_names_file(const char *path, const vfdswmr_file_id_t *id);
/* Remove path if it still names the file *id (not one that replaced it). */
void vfdswmr_unlink_if_same(const char *path, const vfdswmr_file_id_t *id);

/*
 * What path is, for a message: "a regular file", "a directory", "a FIFO",
 * "a character device", "a block device", "a socket", "a symbolic link"
 * (dangling), or "missing". Follows symbolic links. Never fails.
 */
const char *vfdswmr_path_kind(const char *path);

#endif
