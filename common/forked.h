/*
 * Fork children. A child of fork() shares the parent's open file
 * descriptions -- and with them the locks that say a writer or reader is
 * alive (mdlock.h; sec2's flock) -- and holds a copy of every open HDF5
 * file, which it closes when it calls exit() (HDF5's atexit handler).
 * Through the drivers that close would publish a final snapshot, remove the
 * metadata file and clear the seal of a file its parent is still writing,
 * or release a reader's read mark its parent still relies on; and a child
 * that lives on would keep the parent's locks after the parent ended, so
 * that no new writer could open the file. So a driver handle remembers the
 * fork generation it was opened in and, in a child, refuses every
 * operation but close, which only lets go of it; and each handle is
 * tracked here, so that a pthread_atfork child handler drops the child's
 * references to its locked descriptors at once (DESIGN.md section 4,
 * "Fork children").
 */
#ifndef VFDSWMR_COMMON_FORKED_H
#define VFDSWMR_COMMON_FORKED_H

#include <stdbool.h>

/* 0 in the process that loaded the plugin, one more in each generation of
 * fork children. The first call installs the fork handlers. */
unsigned vfdswmr_fork_gen(void);

/* Was `gen` taken in an ancestor of this process? Then push an error naming
 * `driver` and `what` (the operation) on HDF5's stack and return true. */
bool vfdswmr_forked(unsigned gen, const char *driver, const char *what);

/* Track obj (until vfdswmr_fork_untrack, also in a child): in a fork child,
 * drop(obj, devnull) runs in the fork handler,
 * before fork() returns there -- it may only call async-signal-safe
 * functions (close, dup2); devnull is a descriptor of /dev/null (or -1), to
 * dup2 over a descriptor another layer (sec2) will close itself. 0, or -1
 * (out of memory: that handle's locks then stay with a child). */
int vfdswmr_fork_track(void *obj, void (*drop)(void *obj, int devnull));
void vfdswmr_fork_untrack(void *obj);

/* Around closing a tracked handle's descriptors: fork() waits meanwhile,
 * so a child's handler finds them open or closed, never half. */
void vfdswmr_fork_hold(void);
void vfdswmr_fork_release(void);

/* A fork child's copy of a handle, closed: kept (reachable) rather than
 * freed -- freeing would walk structures another thread of the parent may
 * have been changing at the fork. */
void vfdswmr_fork_keep(void *obj);

#endif
