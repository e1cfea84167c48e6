/*
 * vfd_swmr_inspect: what a VFD SWMR session is doing and whether its files
 * are sound (tools/inspect/vfd_swmr_inspect.1). It never writes and never
 * takes a lock: it asks the kernel who holds the drivers' locks
 * (F_OFD_GETLK) and reads the files through the project's one decoder for
 * each format (mdfile/format.h), the one snapshot loader (mdreader.h) and
 * recovery's own passes, run dry (vfdswmr_recover_predict).
 *
 *   main.c      options, finding the files, dispatch
 *   gather.c    the state of a session (insp_t): writer, snapshot, readers, log, recovery
 *   show.c      the default view, --pages, --watch (text and JSON)
 *   verify.c    --verify
 *   updaters.c  --updater
 *   out.c       JSON output and the problem lists
 *
 * Error contract: functions return 0 or -1; -1 means a message was printed
 * on stderr (the exit status is then 1).
 */
#ifndef VFDSWMR_TOOLS_INSPECT_H
#define VFDSWMR_TOOLS_INSPECT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "drvconfig.h"
#include "format.h"
#include "mdreader.h"
#include "recover.h"

#define PROG "vfd_swmr_inspect"

typedef struct insp_opts_t {
    const char *file;        /* the HDF5 file; NULL with --updater alone */
    const char *config_text; /* as given (for the recovery command), or NULL */
    vfdswmr_config_t cfg;
    bool json;
} insp_opts_t;

/* A read mark: the tick count (epoch) of the snapshot a reader holds --
 * what the read-mark table records; under publish=flush several snapshots
 * (ticks) share one tick count, and the table does not say which. */
typedef struct insp_mark_t {
    unsigned slot;
    uint64_t epoch;
} insp_mark_t;

/* One session as found now. Members are meaningful when their have_* is set. */
typedef struct insp_t {
    char md_path[VFDSWMR_MAX_PATH + 64];
    int h5_fd; /* the HDF5 file, read-only, or -1 (missing) */
    uint64_t h5_ino;
    int md_fd; /* the metadata file, read-only, or -1 (none there) */
    bool h5_locked, md_locked;
    const char *state; /* "running", "failed", "closed", "died", "none" */
    bool foreign;      /* the metadata file names another HDF5 file: not this file's session */
    char message[2048];
    bool have_hdr;
    vfdswmr_mdhdr_t hdr;
    bool have_snap; /* hdr and snap.idx: the same consistent snapshot */
    vfdswmr_mdsnap_t snap;
    char load_err[512]; /* why have_snap is false, when a header was there */
    uint64_t md_size;
    bool have_age;
    double age_s;
    bool have_rawlog;
    vfdswmr_rawloghdr_t raw;
    bool have_readers; /* the read-mark table of the session was read */
    long registered;   /* readers registered on the HDF5 file; -1 uncountable or unknown */
    bool shared;       /* a reader is on the shared registration byte (registered is then -1) */
    uint64_t release_below;
    unsigned nmarks, unmarked;
    insp_mark_t *marks;
    bool have_recovery;
    vfdswmr_recover_report_t rep;
    char refused[2048]; /* "" unless recovery would refuse */
} insp_t;

/* gather.c */
/* Why vfdswmr_open_md() or vfdswmr_open_regular() failed with rc (errno
 * from that call still set): "a symbolic link", "not a regular file", or
 * strerror(errno). */
const char *insp_open_error(int rc);
int insp_gather(const insp_opts_t *o, insp_t *s);
/* The readers (registered count, read marks) again, for --watch. */
void insp_readers(insp_t *s);
/* The metadata file's header and index again (have_hdr/have_snap). */
void insp_reload(insp_t *s);
/* Everything but the recovery prediction again, for --watch: the locks, the
 * metadata file (opened anew when it was replaced or removed), the state. */
void insp_restate(const insp_opts_t *o, insp_t *s);
void insp_release(insp_t *s);
/* Read and decode the raw-data log next to s->md_path (a torn read is read
 * again a few times): 1 with *h, 0 no log, -1 with why. */
int insp_rawlog(const insp_t *s, vfdswmr_rawloghdr_t *h, char *why, size_t whylen);

/* show.c */
int insp_show(const insp_opts_t *o, insp_t *s);
int insp_pages(const insp_opts_t *o, insp_t *s);
int insp_watch(const insp_opts_t *o, insp_t *s, double seconds);

/* verify.c: 0 sound, 1 problems found, -1 error */
int insp_verify(const insp_opts_t *o, insp_t *s);

/* updaters.c: 0 sound, 1 problems found, -1 error */
int insp_updaters(const insp_opts_t *o, const char *base);

/* out.c */
void out_str(FILE *f, const char *s); /* a JSON string */
/* Text: control characters (C0, DEL, C1) and bytes outside well-formed
 * UTF-8 written as \xHH, so that no name in a line (a file may be called
 * anything) can move the cursor, recolour the terminal or start a line. */
void out_text(FILE *f, const char *s);
/* printf, escaped as out_text, then a newline */
void out_line(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void out_session(FILE *f, uint64_t session); /* "%016x" as a JSON string */
/* A view's first members: {"schema": 1, "file": ..., "metadata_file": ... */
void out_begin(FILE *f, const insp_opts_t *o, const insp_t *s);

typedef struct insp_problem_t {
    char *file;
    const char *structure; /* a literal */
    uint64_t offset;
    int64_t entry; /* -1: none */
    char *error;
} insp_problem_t;
typedef struct insp_list_t {
    insp_problem_t *v;
    size_t n, cap;
} insp_list_t;
void list_add(insp_list_t *l, const char *file, const char *structure, uint64_t offset, int64_t entry, const char *fmt,
              ...) __attribute__((format(printf, 6, 7)));
void list_json(FILE *f, const insp_list_t *l);
void list_text(FILE *f, const char *label, const insp_list_t *l);
void list_free(insp_list_t *l);

#endif
