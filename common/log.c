#include "log.h"

#include <stdarg.h>

double
vfdswmr_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int
vfdswmr_log_open(vfdswmr_log_t *log, const char *path)
{
    log->fp = NULL;
    clock_gettime(CLOCK_MONOTONIC, &log->start);
    if (path == NULL || path[0] == '\0')
        return 0;
    if (NULL == (log->fp = fopen(path, "w")))
        return -1;
    setvbuf(log->fp, NULL, _IOLBF, 0);
    return 0;
}

void
vfdswmr_log_close(vfdswmr_log_t *log)
{
    if (log->fp)
        fclose(log->fp);
    log->fp = NULL;
}

void
vfdswmr_log_line(vfdswmr_log_t *log, const char *tag, const char *fmt, ...)
{
    struct timespec now;
    va_list ap;
    double t;

    clock_gettime(CLOCK_MONOTONIC, &now);
    t = (double)(now.tv_sec - log->start.tv_sec) + (double)(now.tv_nsec - log->start.tv_nsec) * 1e-9;
    flockfile(log->fp);
    fprintf(log->fp, "%.6f %s ", t, tag);
    va_start(ap, fmt);
    vfprintf(log->fp, fmt, ap);
    va_end(ap);
    fputc('\n', log->fp);
    funlockfile(log->fp);
}
