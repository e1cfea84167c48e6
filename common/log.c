#include "log.h"

#include <stdarg.h>
#include <stdio_ext.h>

#include "clock.h"

int
vfdswmr_log_open(vfdswmr_log_t *log, const char *path)
{
    log->fp = NULL;
    log->start = vfdswmr_now();
    if (path == NULL || path[0] == '\0')
        return 0;
    if (NULL == (log->fp = fopen(path, "w")))
        return -1;
    setvbuf(log->fp, NULL, _IOLBF, 0);
    return 0;
}

void
vfdswmr_log_forget(vfdswmr_log_t *log)
{
    if (log->fp)
        __fpurge(log->fp);
    vfdswmr_log_close(log);
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
    double t = vfdswmr_now() - log->start;
    va_list ap;

    flockfile(log->fp);
    fprintf(log->fp, "%.6f %s ", t, tag);
    va_start(ap, fmt);
    vfprintf(log->fp, fmt, ap);
    va_end(ap);
    fputc('\n', log->fp);
    funlockfile(log->fp);
}
