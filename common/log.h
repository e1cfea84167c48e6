/*
 * The per-process log (log_file_path, include/vfdswmr.h): one line per event,
 * "<seconds since open, 6 decimals> <tag> <text>". Costs one branch when no
 * log file is configured. Thread-safe (stdio locks each line).
 *
 * Error contract: vfdswmr_log_open() returns -1 with errno set; writing a
 * line never fails visibly (a log must not break the program).
 */
#ifndef VFDSWMR_COMMON_LOG_H
#define VFDSWMR_COMMON_LOG_H

#include <stdio.h>

typedef struct vfdswmr_log_t {
    FILE *fp;     /* NULL: logging off */
    double start; /* vfdswmr_now() at the open (common/clock.h) */
} vfdswmr_log_t;

/* Open (truncate) path; "" turns logging off. Returns 0, or -1 with errno. */
int vfdswmr_log_open(vfdswmr_log_t *log, const char *path);
void vfdswmr_log_close(vfdswmr_log_t *log);
/* A fork child's copy: close without writing what the parent had buffered. */
void vfdswmr_log_forget(vfdswmr_log_t *log);
void vfdswmr_log_line(vfdswmr_log_t *log, const char *tag, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define VFDSWMR_LOG(log, tag, ...)                       \
    do {                                                 \
        if ((log)->fp)                                   \
            vfdswmr_log_line((log), (tag), __VA_ARGS__); \
    } while (0)

#endif
