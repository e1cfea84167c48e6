/*
 * The crash harness's two logs, both appended line by line and fflush'd, so that what a
 * process wrote before SIGKILL is there afterwards:
 *
 * progress file (the writer):
 *   crash-progress seed=S mix=M swmr=0|1
 *   begin K fflush|dflush|close   about to publish state K (H5Fflush, H5Dflush, H5Fclose)
 *   flushed K                     the flush call returned
 *   kill K OP PHASE               the writer SIGKILLs itself inside operation K (K-1 is the state)
 *   closed K                      H5Fclose returned
 *
 * seen log (a reader): one record per walk that showed a state the reader had not logged yet
 *   crash-seen seed=S mix=M reader=NAME
 *   walk N state K lines L
 *   ...L description lines (crash_model.h)...
 *   end N
 */
#ifndef CRASH_LOG_H
#define CRASH_LOG_H

#include "crash_model.h"

#include <stdio.h>

typedef struct {
    uint64_t seed;
    char mix[32];
    bool swmr;
    int last_begin;   /* the newest state the writer may have published (-1: none) */
    int last_flushed; /* the newest state a flush call returned for (-1: none) */
    int killed_in;    /* operation the writer killed itself in (-1: none) */
    char kill_what[64];
    bool close_begun, closed;
} cl_progress_t;

/* Read a progress file; exits with a message when it is missing or malformed. */
void cl_progress_read(const char *path, cl_progress_t *p);

typedef struct {
    char reader[64];
    int walk;
    int state;
    size_t nlines;
    char (*lines)[CM_LINELEN];
} cl_walk_t;

typedef struct {
    uint64_t seed;
    char mix[32];
    cl_walk_t *walks;
    size_t nwalks, cap;
} cl_seen_t;

/* Append the walks of one seen log (the header's seed and mix must match those already
 * read, if any); exits with a message when it is malformed or a record is incomplete. */
void cl_seen_read(const char *path, cl_seen_t *s);
void cl_seen_free(cl_seen_t *s);

/* Writers of the logs (each line fflush'd). */
FILE *cl_open_append(const char *path);
void cl_line(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The value of option --what, an integer from lo to hi; otherwise a message
 * naming prog and the option, and exit status 2. */
long cl_num(const char *prog, const char *what, const char *s, long lo, long hi);

/* The options the writer, the readers and the verifier share:
 * --file F --progress P --seed S --mix M (getopt_long values 'f', 'p', 's', 'm'). */
typedef struct {
    const char *file, *progress;
    uint64_t seed;
    const cm_mix_t *mix;
} cl_run_t;

/* One getopt_long answer c (argument arg): true when it is a shared option, now
 * stored in r; false for any other option. Exits with status 2 on a bad value. */
bool cl_run_opt(const char *prog, int c, const char *arg, cl_run_t *r);

#endif
