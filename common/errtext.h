/*
 * Messages into the caller's text: the convention of the layers that run
 * outside HDF5's error stack (mdfile/ writers, common/recover.c, the
 * configuration parser, vfd_swmr_aux). A function of those layers that
 * fails returns -1 (or its own named failure value) after writing one line
 * into the caller's err[errlen] -- no program name, no newline -- and
 * nothing else; no object keeps the text. DESIGN.md "Results and messages"
 * lists the conventions of every layer.
 */
#ifndef VFDSWMR_ERRTEXT_H
#define VFDSWMR_ERRTEXT_H

#include <stddef.h>

/* Format into err[errlen] (NUL-terminated, truncated; nothing when err is
 * NULL or errlen is 0). Returns -1, so a failure path reads
 * `return vfdswmr_errtext(err, errlen, ...)`. */
int vfdswmr_errtext(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
