/*
 * What vfd_swmr_aux tells: event lines through common/log.h (to --log_file
 * and, with --verbose, to stdout, with the same timestamps), warnings on
 * stderr, and the --stats counters.
 *
 * Invariants:
 *  - Each event is formatted once and written whole to every sink
 *    (log.h writes one line per call, under the stream's lock).
 *  - stdout is never closed here; only the log file is.
 *  - The log file is a regular file reached without following a link:
 *    it is created, or truncated, only after vfdswmr_open_regular() said
 *    so (a planted link cannot make the daemon truncate its target).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <unistd.h>

#include "aux.h"
#include "safefile.h"

/* The log file, created or truncated: 0, -1 with errno, -2 not a regular file. */
static int
open_log(vfdswmr_log_t *log, const char *path)
{
    int fd, e;

    vfdswmr_log_open(log, NULL); /* the start time; no file */
    if (path == NULL)
        return 0;
    if ((fd = vfdswmr_open_regular(path, O_WRONLY | O_CREAT)) < 0)
        return fd;
    if (ftruncate(fd, 0) < 0 || NULL == (log->fp = fdopen(fd, "w"))) {
        e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    setvbuf(log->fp, NULL, _IOLBF, 0);
    return 0;
}

int
aux_report_open(aux_report_t *r, const char *log_file, bool verbose)
{
    int rc = open_log(&r->file, log_file);

    if (rc < 0)
        return rc;
    r->out = (vfdswmr_log_t){.fp = verbose ? stdout : NULL, .start = r->file.start};
    if (verbose)
        setvbuf(stdout, NULL, _IOLBF, 0);
    return 0;
}

void
aux_report_close(aux_report_t *r)
{
    vfdswmr_log_close(&r->file);
    if (r->out.fp)
        fflush(r->out.fp);
    r->out.fp = NULL;
}

static void
vreport(aux_report_t *r, const char *tag, const char *fmt, va_list ap)
{
    char line[AUX_ERRLEN + 256];

    if (!r->file.fp && !r->out.fp)
        return;
    vsnprintf(line, sizeof line, fmt, ap);
    VFDSWMR_LOG(&r->file, tag, "%s", line);
    VFDSWMR_LOG(&r->out, tag, "%s", line);
}

void
aux_report(aux_report_t *r, const char *tag, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vreport(r, tag, fmt, ap);
    va_end(ap);
}

void
aux_warn(aux_report_t *r, const char *fmt, ...)
{
    char line[AUX_ERRLEN + 256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    aux_report(r, "warning", "%s", line);
    fprintf(stderr, "%s: warning: %s\n", AUX_PROG, line);
}

void
aux_stats_print(const aux_stats_t *s, FILE *fp)
{
    double mean = s->applied ? s->apply_total / (double)s->applied : 0.0;

    fprintf(fp,
            "%s statistics:\n"
            "  updater files applied:    %llu\n"
            "  updater files skipped:    %llu (already applied before a restart)\n"
            "  bytes applied:            %llu\n"
            "  gaps seen:                %llu\n"
            "  retries of torn files:    %llu\n"
            "  garbage files ignored:    %llu\n"
            "  lag warnings:             %llu\n"
            "  apply time total:         %.6f s\n"
            "  apply time mean:          %.6f s\n"
            "  apply time max:           %.6f s\n",
            AUX_PROG, (unsigned long long)s->applied, (unsigned long long)s->skipped, (unsigned long long)s->bytes,
            (unsigned long long)s->gaps, (unsigned long long)s->retries, (unsigned long long)s->garbage,
            (unsigned long long)s->warnings, s->apply_total, mean, s->apply_max);
    fflush(fp);
}
