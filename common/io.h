/*
 * Whole-buffer positional I/O on a POSIX file descriptor and directory
 * durability: the one pread/pwrite loop of the project and the one fsync of
 * the directory that holds a file. No HDF5 and no file format inside.
 *
 * Invariants:
 *  - a transfer goes on after EINTR and after a short transfer until all of
 *    `len` bytes moved, or end of file (reads), or an error; so a caller
 *    never sees a partial transfer that a retry would have completed;
 *  - the offset and the buffer advance together: byte i of buf is byte
 *    off + i of the file.
 *
 * Error contract: functions return 0 (vfdswmr_pread_upto: the bytes read),
 * or -1 with errno set; nothing is printed. The caller writes the message.
 */
#ifndef VFDSWMR_COMMON_IO_H
#define VFDSWMR_COMMON_IO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

/* Read up to len bytes at off: returns the bytes read, fewer than len only
 * at end of file, or -1 with errno. */
ssize_t vfdswmr_pread_upto(int fd, void *buf, size_t len, uint64_t off);

/* pread/pwrite all of `len` bytes at off. Return 0, or -1 with errno set
 * (off + len past INT64_MAX: EFBIG; a read past end of file: ENODATA). */
int vfdswmr_pread_all(int fd, void *buf, size_t len, uint64_t off);
int vfdswmr_pwrite_all(int fd, const void *buf, size_t len, uint64_t off);
/* pwritev all of the n buffers, one after another from off (n at most
 * IOV_MAX). The iov array is the caller's scratch: it is changed after a
 * short write. Returns 0, or -1 with errno set. */
int vfdswmr_pwritev_all(int fd, struct iovec *iov, int n, uint64_t off);

/* fsync the directory holding `path` (common/paths.h, vfdswmr_path_dir()),
 * so that a create, rename or unlink in it is durable. Returns 0, or -1
 * with errno set. */
int vfdswmr_fsync_dir_of(const char *path);

#endif
