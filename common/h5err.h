/*
 * Error reporting on the HDF5 error stack, and the guard that keeps that
 * stack intact across calls into the public H5FD* API from inside a driver
 * callback.
 *
 * Error contract of the layers that run inside HDF5 (the drivers, common/):
 *  - Errors go on HDF5's default error stack (H5E_DEFAULT) of the calling
 *    thread, where the application finds them (H5Eprint2, H5Ewalk2, the
 *    automatic printing of the failed API call).
 *  - A function that fails returns a negative value (herr_t, int, ssize_t),
 *    NULL, H5I_INVALID_HID or HADDR_UNDEF, after pushing at least one entry
 *    that says what failed and why.
 *  - The pusher formats the whole message itself (VFDSWMR_ERR, printf-style)
 *    at the moment of the failure; the text is copied onto the stack, so it
 *    never refers to memory of an object that is freed later.
 *
 * Why the guard: every public HDF5 call clears the error stack on entry and
 * prints it on failure. A driver that forwards to its lower driver through
 * H5FDread() & co. would otherwise (a) erase errors the library had already
 * recorded in the same outer call and (b) print a partial stack before the
 * library adds its own context. Inside a guard, automatic printing is off;
 * errors present before the guard are restored afterwards, with the inner
 * call's errors appended when it failed.
 *
 * The 32-entry limit: an HDF5 error stack holds at most 32 entries
 * (H5E_MAX_ENTRIES in HDF5's private H5Epkg.h; VFDSWMR_H5E_SLOTS here).
 * Pushing is bounded: H5Epush2 goes through H5E__push_stack, which drops an
 * entry when the stack is full (checked in HDF5 1.14.5, H5Eint.c), so
 * VFDSWMR_ERR never overflows -- though H5Epush2 leaks the copies of file
 * and function name it made for a dropped entry, so VFDSWMR_ERR does not
 * push onto a full stack at all (the first 32 entries are kept).
 * Appending is not bounded: H5Eappend_stack (H5E__append_stack) copies an
 * entry before it checks for room, so appending to a full stack writes past
 * its array and corrupts the heap
 * ("free(): invalid pointer", a crash). That happens when one API call meets
 * many failing lower writes -- HDF5 keeps flushing the other chunks of a
 * dataset after one fails, and each failure adds its entries. So the guard
 * never lets the combined stack exceed 32 entries: it appends only what
 * fits, dropping the inner stack's most recently pushed entries (its outer
 * context) first, so the root cause of each kept failure stays; when the
 * stack is already full it appends nothing (the first failures are kept).
 */
#ifndef VFDSWMR_COMMON_H5ERR_H
#define VFDSWMR_COMMON_H5ERR_H

#include <stdbool.h>

#include <hdf5.h>

/* Set in a thread of the project's own (the writer's ticker): HDF5 is not
 * thread-safe, so such a thread never calls it -- neither a guarded call nor
 * an error push; both assert it. */
extern _Thread_local bool vfdswmr_no_hdf5;

/* Push one message (printf-style) onto the default error stack, under the
 * major class "Virtual File Layer" and the given minor class (H5E_BADVALUE,
 * H5E_CANTOPENFILE, ...). */
void vfdswmr_err_push(const char *file, const char *func, unsigned line, hid_t minor, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#define VFDSWMR_ERR(minor, ...) vfdswmr_err_push(__FILE__, __func__, __LINE__, (minor), __VA_ARGS__)

/* Entries an HDF5 error stack holds (H5E_MAX_ENTRIES, private to HDF5). */
#define VFDSWMR_H5E_SLOTS 32

typedef struct vfdswmr_eguard_t {
    hid_t saved;           /* errors recorded before the guard, or H5I_INVALID_HID */
    H5E_auto2_t auto_func; /* automatic printing, restored on leave */
    void *auto_data;
    bool auto_saved;
} vfdswmr_eguard_t;

void vfdswmr_eguard_enter(vfdswmr_eguard_t *g);
/* `failed`: the guarded call failed, so its errors are kept (as many as fit
 * in VFDSWMR_H5E_SLOTS together with the errors from before the guard). */
void vfdswmr_eguard_leave(vfdswmr_eguard_t *g, bool failed);

/*
 * Evaluate `call` (an expression returning herr_t or a pointer/handle) inside
 * a guard. `bad` is an expression over `_r` telling failure, e.g. `_r < 0`.
 */
#define VFDSWMR_GUARDED(type, call, bad)  \
    __extension__({                       \
        vfdswmr_eguard_t _g;              \
        vfdswmr_eguard_enter(&_g);        \
        type _r = (call);                 \
        vfdswmr_eguard_leave(&_g, (bad)); \
        _r;                               \
    })

#endif
