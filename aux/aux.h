/*
 * vfd_swmr_aux: the auxiliary process for readers on other hosts (NFS,
 * docs/DESIGN.md section 8). It follows the
 * updater files <ud_base>.<n> a writer publishes (on NFS, typically) and
 * applies them, in strict sequence order, to a local copy of the metadata
 * file that local vfd_swmr_reader processes read as if the writer kept it.
 *
 * Invariants of the daemon (apply.c):
 *  - Updater n+1 is never looked at before updater n was applied (or found
 *    already applied): gaps are waited out, never skipped.
 *  - The local file only ever receives whole, verified updaters, through the
 *    writer's own vfdswmr_mdplan_apply(), durably: images, index, fsync,
 *    header, fsync. A crash at any point leaves a header naming only data
 *    that is on disk, and re-applying the interrupted updater is harmless.
 *  - One updater is applied completely or not started: signals are acted on
 *    only between updaters.
 *  - Updater files are only read; removing them is the writer's business.
 *
 * The code is split by concern: options.c (command line), udir.c (the
 * updater directory: names, scans, garbage), report.c (log and statistics),
 * apply.c (the daemon's state machine), main.c (process: signals, exit
 * status). Tests drive aux_open()/aux_poll() in-process, one step at a time.
 *
 * Error contract (common/errtext.h): option parsing, aux_open(), aux_poll()
 * and aux_run() write one line into the caller's err buffer when they fail
 * (aux_poll: AUX_FATAL); the daemon keeps no error text. Nothing is printed
 * except through the report (log, stderr) and by main.c.
 */
#ifndef VFDSWMR_AUX_H
#define VFDSWMR_AUX_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "drvconfig.h"
#include "log.h"

#define AUX_PROG   "vfd_swmr_aux"
#define AUX_ERRLEN 1024
/* Longest md_file or ud_base accepted (an updater name adds ".<20 digits>", a
 * temporary file VFDSWMR_TEMP_SUFFIX_LEN bytes). */
#define AUX_MAX_PATH 4000

#define AUX_MIN_POLLS     1u
#define AUX_MAX_POLLS     1000u
#define AUX_DEFAULT_POLLS 10u

/* ---- options (options.c) -------------------------------------------------- */

typedef struct aux_opts_t {
    const char *md_file;                     /* the local metadata file (it need not exist) */
    const char *ud_base;                     /* updater files are <ud_base>.<n> */
    const char *log_file;                    /* NULL: no log file */
    uint32_t polls_per_tick;                 /* AUX_MIN_POLLS..AUX_MAX_POLLS */
    uint32_t tick_len;                       /* tenths of a second, 0..VFDSWMR_MAX_TICK_LEN; 0 polls as if 1 */
    uint32_t max_lag;                        /* ticks; a gap older than max_lag ticks is warned about */
    uint32_t md_pages_reserved;              /* pages the local file has from its creation */
    char under[VFDSWMR_MAX_DRIVER_NAME + 1]; /* --vfd_config's lower driver, ignored (POSIX I/O) */
    bool stats;                              /* print counters on exit */
    bool verbose;                            /* log lines also to stdout */
    bool help, version;                      /* print and exit 0; nothing else is required then */
    /* Test hook, not reachable from the command line: the clock gap warnings
     * are timed with (NULL: vfdswmr_now). */
    double (*clock)(void);
} aux_opts_t;

/* The defaults: 10 polls per tick, tick_len 4, max_lag 7, 4 reserved pages. */
void aux_opts_defaults(aux_opts_t *o);

/*
 * Parse argv[1..argc-1] into *o (starting from the defaults). Options are
 * --name value or --name=value, each at most once, anywhere before "--";
 * exactly two positional arguments unless --help or --version came first.
 * Returns 0, or -1 with one line in err (no program name, no newline).
 * The strings in *o point into argv. Uses (and first resets) getopt_long's
 * global state: one parse at a time per process.
 */
int aux_opts_parse(aux_opts_t *o, int argc, char *const argv[], char *err, size_t errlen);

void aux_usage(FILE *fp);
void aux_version(FILE *fp);

/* ---- the updater directory (udir.c) -------------------------------------- */

typedef enum aux_name_kind_t {
    AUX_NAME_OTHER,   /* not <base>.<anything>: someone else's file, not looked at */
    AUX_NAME_UPDATER, /* <base>.<n>, n canonical decimal (no leading zeros) < 2^64 */
    AUX_NAME_TMP,     /* <base>.<n><temporary suffix> (safefile.h) or <base>.<n>.tmp: being written */
    AUX_NAME_GARBAGE, /* <base>.<something else> */
} aux_name_kind_t;

/* Classify a directory entry `name` against the base name `base`; *seq gets n. */
aux_name_kind_t aux_classify_name(const char *base, const char *name, uint64_t *seq);

typedef struct aux_udir_t aux_udir_t;

typedef struct aux_scan_t {
    bool any;          /* some <base>.<n> exists */
    uint64_t min, max; /* smallest and largest n, when any */
    bool dir_missing;  /* the directory does not exist (yet) */
} aux_scan_t;

/* Split ud_base into directory and base name. NULL when out of memory. */
aux_udir_t *aux_udir_new(const char *ud_base);
void aux_udir_free(aux_udir_t *d);
/*
 * List the directory. Each garbage name not seen before is passed to
 * on_garbage once (over the udir's whole life). Returns 0, or -1 with errno
 * (ENOENT is not an error: dir_missing is set).
 */
int aux_udir_scan(aux_udir_t *d, aux_scan_t *out, void (*on_garbage)(void *ctx, const char *name), void *ctx);
const char *aux_udir_dir(const aux_udir_t *d);

/* ---- log and statistics (report.c) ---------------------------------------- */

typedef struct aux_stats_t {
    uint64_t applied;              /* updater files applied (CREATE_ONLY included) */
    uint64_t skipped;              /* found already applied after a restart */
    uint64_t bytes;                /* bytes written to the local file */
    uint64_t gaps;                 /* times the expected updater was missing while a later one existed */
    uint64_t retries;              /* polls that found the expected updater torn or incomplete */
    uint64_t garbage;              /* distinct garbage names in the updater directory */
    uint64_t warnings;             /* lag warnings (gaps or torn files older than max_lag ticks) */
    double apply_total, apply_max; /* seconds per updater: read, verify, write, sync */
} aux_stats_t;

typedef struct aux_report_t {
    vfdswmr_log_t file; /* --log_file, or fp NULL */
    vfdswmr_log_t out;  /* --verbose: stdout, or fp NULL */
} aux_report_t;

/* Open the log file (creating or truncating it; never through a symbolic
 * link) and/or stdout. Returns 0, -1 with errno (ELOOP: a symbolic link), or
 * -2: the log file is not a regular file (vfdswmr_open_regular()). */
int aux_report_open(aux_report_t *r, const char *log_file, bool verbose);
void aux_report_close(aux_report_t *r);
/* One event line, "<seconds> <tag> <text>", to every open sink. */
void aux_report(aux_report_t *r, const char *tag, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Report and also print "vfd_swmr_aux: warning: <text>" on stderr. */
void aux_warn(aux_report_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void aux_stats_print(const aux_stats_t *s, FILE *fp);

/* ---- the daemon (apply.c) ------------------------------------------------- */

typedef struct aux_t aux_t;

typedef enum aux_status_t {
    AUX_PROGRESS, /* an updater was applied or skipped: poll again at once */
    AUX_WAITING,  /* the next updater is not there (whole) yet: poll again later */
    AUX_DONE,     /* the FINAL updater was applied and the local file removed */
    AUX_FATAL,    /* damaged updater or local I/O error: the caller's err says which */
} aux_status_t;

/*
 * Open the log, look at the local metadata file and decide where to start:
 * no file -> sequence 0; a file without a valid header (created, nothing
 * applied yet) -> sequence 1; a valid header of tick T -> the updater after
 * the one that carried tick T. Returns 0, or -1 with a message in err.
 */
int aux_open(const aux_opts_t *o, aux_t **out, char *err, size_t errlen);
/* One step: apply (or skip) at most one updater, or note that it is not
 * there. AUX_FATAL: the reason is in err (and reported); every later poll
 * is AUX_FATAL too. */
aux_status_t aux_poll(aux_t *a, char *err, size_t errlen);
/* Poll until DONE, FATAL or *stop, sleeping tick_len / polls_per_tick between
 * polls that find nothing. Returns the exit status: 0 (DONE, stopped), or 1
 * with the reason in err. */
int aux_run(aux_t *a, volatile sig_atomic_t *stop, char *err, size_t errlen);
void aux_close(aux_t *a);

const aux_stats_t *aux_stats(const aux_t *a);
/* The sequence number of the next updater to apply. */
uint64_t aux_expected(const aux_t *a);

#endif
