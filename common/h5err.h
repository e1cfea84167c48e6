/*
 * Error reporting on the HDF5 error stack, and the guard that keeps that
 * stack intact across calls into the public H5FD* API from inside a driver
 * callback.
 *
 * Why the guard: every public HDF5 call clears the error stack on entry and
 * prints it on failure. A driver that forwards to its lower driver through
 * H5FDread() & co. would otherwise (a) erase errors the library had already
 * recorded in the same outer call and (b) print a partial stack before the
 * library adds its own context. Inside a guard, automatic printing is off;
 * errors present before the guard are restored afterwards, with the inner
 * call's errors appended when it failed.
 */
#ifndef VFDSWMR_COMMON_H5ERR_H
#define VFDSWMR_COMMON_H5ERR_H

#include <stdbool.h>

#include <hdf5.h>

/* Push one message (printf-style) onto the default error stack, under the
 * major class "Virtual File Layer" and the given minor class (H5E_BADVALUE,
 * H5E_CANTOPENFILE, ...). */
void vfdswmr_err_push(const char *file, const char *func, unsigned line, hid_t minor, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#define VFDSWMR_ERR(minor, ...) vfdswmr_err_push(__FILE__, __func__, __LINE__, (minor), __VA_ARGS__)

typedef struct vfdswmr_eguard_t {
    hid_t saved;          /* errors recorded before the guard, or H5I_INVALID_HID */
    H5E_auto2_t auto_func; /* automatic printing, restored on leave */
    void *auto_data;
    bool auto_saved;
} vfdswmr_eguard_t;

void vfdswmr_eguard_enter(vfdswmr_eguard_t *g);
/* `failed`: the guarded call failed, so its errors are kept. */
void vfdswmr_eguard_leave(vfdswmr_eguard_t *g, bool failed);

/*
 * Evaluate `call` (an expression returning herr_t or a pointer/handle) inside
 * a guard. `bad` is an expression over `_r` telling failure, e.g. `_r < 0`.
 */
#define VFDSWMR_GUARDED(type, call, bad)                                                                     \
    __extension__({                                                                                        \
        vfdswmr_eguard_t _g;                                                                               \
        vfdswmr_eguard_enter(&_g);                                                                         \
        type _r = (call);                                                                                  \
        vfdswmr_eguard_leave(&_g, (bad));                                                                  \
        _r;                                                                                                \
    })

#endif
