/*
 * The writer's liveness lock on its metadata file.
 *
 * A live writer holds an open-file-description lock (fcntl F_OFD_SETLK, a
 * write lock on byte 0) on its metadata file from before the file becomes
 * visible until the end of its session. The kernel drops the lock when the
 * last descriptor of that open file goes away, i.e. at the latest when the
 * process dies, however it dies. So:
 *   - a metadata file whose lock is held belongs to a running writer (or to
 *     one recovering the file): a second writer is refused;
 *   - a metadata file nobody locks, without the FINAL flag in its header, is
 *     what a crashed writer left: the next writer (or vfd_swmr_recover) takes
 *     the lock and recovers the HDF5 file from it.
 * OFD locks are per open file description, not per process, so the test also
 * sees a lock held by another descriptor in the same process, and closing an
 * unrelated descriptor of the file never drops it (unlike POSIX locks).
 * Locks are advisory: readers never take the writer's, they only probe it
 * (their own registration locks are below).
 *
 * Error contract: functions return -1 with errno set (or the failure value
 * of their named result); callers write the messages. DESIGN.md 4a.
 */
#ifndef VFDSWMR_MDFILE_MDLOCK_H
#define VFDSWMR_MDFILE_MDLOCK_H

#include <fcntl.h>
#include <stdbool.h>
#include <sys/types.h>

/*
 * The one place the project's OFD locks are set and asked about (the locks
 * below, and the read-mark table's, marks.c): fcntl(fd, cmd, fl) with *fl
 * set to a lock of `type` (F_RDLCK, F_WRLCK or F_UNLCK) on the len bytes
 * from `start`, retried while a signal interrupts it. cmd is F_OFD_SETLK
 * (never waits: fails with EAGAIN or EACCES when someone else's lock
 * conflicts) or F_OFD_GETLK (*fl then describes a conflicting lock, or has
 * l_type F_UNLCK). 0, or -1 with errno.
 */
int vfdswmr_mdlock_fcntl(int fd, int cmd, short type, off_t start, off_t len, struct flock *fl);

/* What taking a lock found. */
typedef enum vfdswmr_take_t {
    VFDSWMR_TAKEN = 0,
    VFDSWMR_TAKE_BUSY = 1,  /* held by someone else */
    VFDSWMR_TAKE_ERROR = -1 /* errno; ENOLCK/EINVAL: the file system cannot lock */
} vfdswmr_take_t;

/* Take the writer lock on fd (open for writing). */
vfdswmr_take_t vfdswmr_mdlock_take(int fd);

/* Is the writer lock on fd's file held through another open file
 * description? fd may be read-only. Returns 1 held, 0 free, -1 error. */
int vfdswmr_mdlock_held(int fd);

/*
 * A live writer also holds an OFD write lock on one byte of the HDF5 file
 * (VFDSWMR_WRITER_LOCK_OFFSET, far past any data), so a second writer is
 * refused even when the metadata file was removed or moved under the first.
 */
#define VFDSWMR_WRITER_LOCK_OFFSET ((off_t)0x7ffffffffffffff8LL)

/* Take the writer's lock on the HDF5 file open for writing on fd. */
vfdswmr_take_t vfdswmr_mdlock_hdf5_take(int fd);
/* Is it held through another open file description? 1, 0, -1 (errno). */
int vfdswmr_mdlock_hdf5_held(int fd);

/*
 * Readers register on the HDF5 file itself, from before they read anything
 * until they close (or die, when the kernel drops the lock): each holds an
 * OFD read lock on a byte of its own among VFDSWMR_READER_SLOTS bytes far
 * past any data (from VFDSWMR_READER_SLOTS_OFFSET), so that the writer can
 * count them. Readers open the file read-only and so can take read locks
 * only, which do not conflict with each other: a reader finds a free byte by
 * asking (F_OFD_GETLK) whether anyone else locks it, locks it, and asks
 * again; of two readers that picked one byte at the same moment at least
 * one sees the other on its second look and moves on. A byte is registered
 * once its second look saw nobody else; from then on nobody else stays on
 * it. A reader that finds no byte of its own in a few tries takes the
 * shared byte VFDSWMR_READER_LOCK_OFFSET instead: readers there are seen but
 * not counted. HDF5's own flock()-based locks are a different kind, and a
 * byte no file reaches is never read or written.
 */
#define VFDSWMR_READER_LOCK_OFFSET  ((off_t)0x7ffffffffffffff0LL)
#define VFDSWMR_READER_SLOTS_OFFSET ((off_t)0x7fffffffffff0000LL)
#define VFDSWMR_READER_SLOTS        4096
/*
 * A reader that holds read mark `slot` in the writer's table (marks.h) is
 * registered instead on byte VFDSWMR_MARKED_OFFSET + slot: it takes that
 * byte after its mark holds the tick of the snapshot it holds, then drops
 * its own byte; before it gives up the mark, it takes a byte of its own
 * again, then drops the slot's. So a reader is always registered, and one
 * registered on a slot's byte has its mark there -- unless it died, when
 * the kernel drops its locks in no promised order: a slot byte without a
 * live mark then only makes the writer wait, and a live mark without its
 * slot byte is not looked at.
 */
#define VFDSWMR_MARKED_OFFSET ((off_t)0x7fffffffffff2000LL)
#define VFDSWMR_MARKED_SLOTS  4096 /* at least marks.h's slots; below the shared byte */

/*
 * Raw data is not versioned: HDF5 rewrites a chunk in place (a partly
 * filled chunk, or a filtered one whose new size equals its old), and a
 * reader reading it at that moment would get part old, part new bytes --
 * for a filtered chunk, a stream its filter rejects. So every raw read of a
 * reader that holds a live writer's snapshot holds an OFD read lock on
 * byte VFDSWMR_RAW_LOCK_OFFSET of the HDF5 file, and the writer holds the
 * write lock there while it writes raw data below the end of a snapshot a
 * reader may hold (appends above it need none): each read sees a raw write
 * wholly or not at all. Neither side waits for ever (vfdswmr_rawlock_take):
 * a reader stopped inside a read (a debugger, SIGSTOP) must not stop the
 * writer, nor a stopped writer its readers.
 */
#define VFDSWMR_RAW_LOCK_OFFSET ((off_t)0x7ffffffffffffff4LL)

/*
 * The raw-data gate, byte VFDSWMR_RAW_GATE_OFFSET. Taking and dropping the
 * raw-data lock around each raw write costs two system calls, which a
 * writer appending to a thousand datasets pays a hundred thousand times a
 * second. While no reader is registered the writer holds the gate (a write
 * lock) instead and writes without the raw-data lock. A reader that holds a
 * live writer's snapshot takes the gate for reading before its first raw
 * read (it is registered by then) and keeps it until it closes; while the
 * writer holds it, the reader waits. The writer looks for registered
 * readers at every publish and tick, and every VFDSWMR_RAW_GATE_POLL seconds
 * while it holds the gate; seeing one, it takes the raw-data lock for each
 * raw write from then on, and only then drops the gate. Once no reader is
 * registered it takes the gate again, which fails while any reader still
 * holds it for reading. So a raw write without the raw-data lock never
 * meets a reader's raw read.
 */
#define VFDSWMR_RAW_GATE_OFFSET ((off_t)0x7ffffffffffffff5LL)
#define VFDSWMR_RAW_GATE_POLL   0.05

/* Take the raw-data lock of `type` (F_RDLCK, F_WRLCK) on the HDF5 file open
 * on fd, waiting (short sleeps) at most `timeout` seconds for another's
 * conflicting lock to go. VFDSWMR_TAKEN, VFDSWMR_TAKE_BUSY (still held when
 * the time was up), or VFDSWMR_TAKE_ERROR (errno; ENOLCK/EINVAL: the file
 * system cannot lock). */
vfdswmr_take_t vfdswmr_rawlock_take(int fd, short type, double timeout);
/* Drop it. */
void vfdswmr_rawlock_drop(int fd);
/* The same for the raw-data gate. */
vfdswmr_take_t vfdswmr_rawgate_take(int fd, short type, double timeout);
void vfdswmr_rawgate_drop(int fd);

/*
 * The quiet window. A reader that holds the file as it is (no writer's
 * metadata file) must notice a writer that starts under it before that
 * writer writes any byte the reader's HDF5 may still read (its seal aside):
 * it looks for one (the file's record and the metadata file's name, two
 * system calls) after each metadata read -- or, once it looked and found
 * none, not again for VFDSWMR_QUIET_US, counted from before it looked.
 * A writer, once readers can find it (its metadata file at its name, its
 * record on the file), asks whether a reader is registered on a byte of
 * its own or the shared one (a reader holding no writer's snapshot is
 * always; one registering later finds the writer); if so it waits
 * VFDSWMR_QUIET_WAIT_US before it goes on, writing nothing of the file
 * meanwhile. A reader's look that found nothing came before the writer
 * could be found, so before the writer's wait began: each read the reader
 * does not look after ended less than VFDSWMR_QUIET_US after that look,
 * before the wait ended, so before the writer wrote anything. Only
 * durations on each side's own monotonic clock are compared, so two
 * processes' clocks need not agree, only run at the same rate.
 */
#define VFDSWMR_QUIET_US      20000
#define VFDSWMR_QUIET_WAIT_US 40000
_Static_assert(VFDSWMR_QUIET_WAIT_US >= VFDSWMR_QUIET_US, "a writer waits out every reader's quiet window");
/* The writer's side, on the HDF5 file open on fd: wait VFDSWMR_QUIET_WAIT_US
 * when a reader is registered on a byte of its own or the shared byte.
 * 1 waited, 0 no such reader (or the file system cannot lock: no reader
 * could register then either). */
int vfdswmr_mdlock_quiet_wait(int fd);

/* A reader's registration on the HDF5 file (fd < 0: none). */
typedef struct vfdswmr_reg {
    int fd;    /* the HDF5 file, read-only is enough; owned */
    off_t own; /* the byte of its own, or -1 */
    long slot; /* the read-mark slot whose byte it holds, or -1 */
    bool gate; /* holds the raw-data gate for reading (until it leaves) */
} vfdswmr_reg_t;

/* Register on the HDF5 file open on fd (taken over: closed by
 * vfdswmr_reg_leave, or here on failure). 0, or -1 with errno (the file
 * system cannot lock: the reader is then not seen). */
int vfdswmr_reg_join(vfdswmr_reg_t *g, int fd);
/* Move the registration to the byte of read mark `slot` (which holds the
 * tick of the snapshot held). 0, or -1 (errno; still registered as before). */
int vfdswmr_reg_marked(vfdswmr_reg_t *g, unsigned slot);
/* Move it back to a byte of its own, before the mark goes. 0, or -1 (errno;
 * the slot's byte is kept: the writer then waits, as it must). */
int vfdswmr_reg_unmarked(vfdswmr_reg_t *g);
/* Drop the registration (closes the descriptor). */
void vfdswmr_reg_leave(vfdswmr_reg_t *g);

/* What counting the readers found. */
typedef enum vfdswmr_count_t {
    VFDSWMR_COUNTED = 0,      /* *count is exact */
    VFDSWMR_COUNT_SHARED = 1, /* some reader is registered on the shared byte (not counted) */
    VFDSWMR_COUNT_ERROR = -1  /* errno */
} vfdswmr_count_t;
/* The readers registered on the HDF5 file open on fd on bytes of their
 * own (not on a slot's byte), into *count. A reader still looking for its
 * byte may be counted; one that registered is counted until it moves to a
 * slot's byte or closes. */
vfdswmr_count_t vfdswmr_mdlock_readers(int fd, unsigned *count);
/* All readers registered on the HDF5 file open on fd: those on bytes of
 * their own and those on a read mark's byte (vfd_swmr_inspect). */
vfdswmr_count_t vfdswmr_mdlock_registered(int fd, unsigned *count);
/* Is some reader registered on read mark slot's byte? 1, 0, -1 (errno). */
int vfdswmr_mdlock_marked(int fd, unsigned slot);
/* Is any reader registered at all (a byte of its own, the shared byte, a
 * slot's byte)? One query. 1, 0, -1 (errno). */
int vfdswmr_mdlock_any_reader(int fd);
/* Is a reader registered on a byte of its own or the shared byte (one not
 * marked in a writer's table)? 1, 0, -1 (errno). */
int vfdswmr_mdlock_unmarked_reader(int fd);
/* Is a reader registered on any slot's byte? 1, 0, -1 (errno). */
int vfdswmr_mdlock_any_marked(int fd);

#endif
