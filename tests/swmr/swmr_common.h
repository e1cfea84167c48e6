/*
 * Shared by swmr_writer and swmr_reader: options, the pure value function,
 * the step schedules of the data workloads, the expected-state model, the
 * progress and acknowledgement files, and the zoo's names and values.
 *
 * Both programs are ordinary HDF5 programs: file access property lists come
 * from H5Pcreate(H5P_FILE_ACCESS) (or are H5P_DEFAULT), so the driver is
 * whatever HDF5_DRIVER / HDF5_DRIVER_CONFIG select.
 */
#ifndef SWMR_COMMON_H
#define SWMR_COMMON_H

#include <hdf5.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "clock.h"

#define SWMR_FILL       ((int64_t)-1) /* fill value of every data-workload dataset */
#define SWMR_MAX_DSETS  16
#define SWMR_MAX_BOXES  2
#define SWMR_NCOLS      16 /* columns of the append datasets */
#define SWMR_CHUNK_ROWS 8  /* rows per chunk of the append datasets */
#define ZOO_NSTAGES     15 /* stages 0..14 of the zoo */

typedef enum { W_APPEND, W_GROW, W_ZOO } workload_t;

typedef enum {
    K_SINGLE,   /* single chunk: fixed size, chunk == max dims, written in pieces */
    K_IMPLICIT, /* implicit index: fixed max dims, early allocation, no filter */
    K_FARRAY,   /* fixed array: fixed max dims, late allocation */
    K_EARRAY,   /* extensible array: one unlimited dimension */
    K_BTREE2,   /* version 2 B-tree: two unlimited dimensions */
    K_BTREE1,   /* version 1 B-tree: libver earliest (not legacy-SWMR capable) */
    K_GROW2D,   /* grow, shrink, regrow in two dimensions (v2 B-tree) */
    K_GROW3D    /* grow, shrink, regrow in three dimensions (v2 B-tree) */
} kind_t;

typedef struct {
    hsize_t start[3], count[3];
} box_t;

typedef struct {
    kind_t kind;
    bool deflate;
    char name[48]; /* dataset name (no leading slash) */
    uint64_t id;   /* hash of the name: an input of the value function */
    int rank;
    hsize_t chunk[3];
    hsize_t maxdims[3];     /* H5S_UNLIMITED or a fixed size */
    hsize_t box[3];         /* largest extent over the whole schedule */
    H5D_chunk_index_t idx;  /* the chunk index type this dataset must get */
    H5D_alloc_time_t alloc; /* H5D_ALLOC_TIME_DEFAULT: leave the library's default */
} dspec_t;

typedef struct {
    const char *prog;
    const char *name;                  /* label in messages (--name) */
    const char *file[2], *progress[2]; /* --file/--file2, --progress/--progress2 */
    char progress_buf[2][4096];        /* default progress paths: FILE.progress */
    int nfiles;
    workload_t workload;
    dspec_t dsets[SWMR_MAX_DSETS];
    int ndsets;
    int steps;      /* the schedule has steps 0..steps-1 */
    int first_step; /* writer: first step this run performs */
    int last_step;  /* writer: last step this run performs; reader: step to wait for */
    int rows_per_step;
    bool swmr;           /* writer: H5F_ACC_SWMR_WRITE; reader: H5F_ACC_SWMR_READ */
    bool earliest;       /* libver bounds (earliest, latest) instead of (latest, latest) */
    bool existing;       /* writer: open an existing file read-write and continue */
    bool no_space_reuse; /* writer: create with H5F_FSPACE_STRATEGY_NONE (freed space never reused) */
    bool no_shrink;      /* grow workload: grow only */
    bool flush_dset;     /* writer: H5Dflush each dataset instead of H5Fflush */
    bool evict_on_close;
    bool lenient;            /* zoo reader: tolerate persistent inconsistency (never fail on it) */
    bool tolerate_transient; /* reader: a failed read or a misfit is retried at the next poll */
    int interval_ms;         /* writer: pause between steps */
    int acks;                /* writer: wait for this many readers' acknowledgements per step */
    int ack_id;              /* reader: write acknowledgements as reader number ack_id */
    int tick_len;            /* tenths of a second, for reporting latency in ticks */
    int poll_us;
    uint64_t seed;
    double timeout_s;
    double max_latency_ticks; /* reader: fail if a latency exceeds this (0: no check) */
    int check_stage;          /* zoo reader: verify once against this stage (-1..14) and exit; -99: off */
} opts_t;

/* --- messages --------------------------------------------------------------------------- */
extern const opts_t *swmr_opts; /* for message prefixes */
void swmr_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void swmr_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* swmr_fail after printing HDF5's error stack */
_Noreturn void swmr_h5fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Describe HDF5's current error stack in one line (innermost frames last). */
void h5_error_string(char *buf, size_t n);

/* --- time: common/clock.h (vfdswmr_now, vfdswmr_sleep) ---------------------------------- */
/* vfdswmr_now() in nanoseconds: the stamps of the progress files. */
int64_t now_ns(void);

/* --- options ---------------------------------------------------------------------------- */
void swmr_parse(opts_t *o, int argc, char **argv, bool writer);
const char *kind_name(kind_t k);

/* --- values and schedules -------------------------------------------------------------- */
/* The value of element idx of dataset dsid written at step t: (t+1) in bits 40.., a hash of
 * (seed, dsid, idx, t) below. Never equal to SWMR_FILL. */
int64_t swmr_value(uint64_t seed, uint64_t dsid, const hsize_t idx[3], int t);
/* Decode: the step a value claims to be written at, and whether its hash part is right. */
int value_step(int64_t v);
bool value_ok(uint64_t seed, uint64_t dsid, const hsize_t idx[3], int64_t v);

/* Extent of the dataset after step s (s == -1: at creation). */
void sched_shape(const opts_t *o, const dspec_t *d, int s, hsize_t out[3]);
/* The boxes written at step s (each inside sched_shape(s)); returns how many. */
int sched_writes(const opts_t *o, const dspec_t *d, int s, box_t out[SWMR_MAX_BOXES]);
/* Phase name of step s of the grow workload. */
const char *sched_phase(const opts_t *o, int s);

/* Check the dataset's type, rank, maximum dimensions, chunk dimensions, filters, fill
 * value and chunk index type against the spec. Returns 0, or -1 with a message in err. */
int check_dataset(hid_t did, const dspec_t *d, char *err, size_t n);

/* --- expected-state model ------------------------------------------------------------------
 * The model holds the state after step m ("cur") and the state just before step m's writes
 * ("pre": after its extent change). An observation (extent + every element) is the state after
 * step u when its extent is step u's and every element shows
 *   - its value after step u, or
 *   - its value before step u's write (that write not visible yet: "incomplete"), or
 *   - a value a later step u < t <= limit writes to it (raw data is not versioned: an
 *     in-place write shows before the metadata of its step; checked by the value's hash), or
 *   - the fill value when a step u < t <= limit prunes it (shrink);
 * and no element shows a value older than one seen before (per element, until pruned).
 * The step chosen is the largest such u in [m, limit]: the state never goes back.
 * An element whose bytes are a splice of two of those values (low bytes from one, high
 * bytes from the other) is a torn read of an in-place write that straddles a page boundary:
 * POSIX reads are not atomic against concurrent writes, and SWMR does not version raw data.
 * Such an observation is "torn": it proves nothing and is not used. */
typedef struct {
    int nsteps;
    hsize_t (*shape)[3];        /* [nsteps + 1]: shape[s + 1] after step s */
    int *nw;                    /* [nsteps] */
    box_t (*w)[SWMR_MAX_BOXES]; /* [nsteps] */
} sched_t;

typedef struct {
    const opts_t *o;
    const dspec_t *d;
    sched_t *sc; /* shared by clones */
    bool owner;
    size_t nbox; /* elements of the box */
    int m;       /* model step, -1 .. steps-1 */
    hsize_t shape[3];
    int64_t *cur, *pre;
    int32_t *last_t; /* newest write step seen per element since it was last exposed, -1: none */
} model_t;

typedef struct {
    bool mismatch;
    bool torn; /* the described element is torn (see above) */
    int step;  /* candidate step that came closest */
    hsize_t idx[3];
    int64_t got, want, want_pre;
    int last_t;
    size_t count; /* elements that do not fit this step */
    char what[200];
} mismatch_t;

void model_init(model_t *mo, const opts_t *o, const dspec_t *d);
void model_clone(model_t *dst, const model_t *src); /* dst from model_init or an earlier clone */
void model_free(model_t *mo);
void model_advance(model_t *mo); /* m -> m+1 */
/* Find the largest step u in [mo->m, limit] whose state the observation (extent dims, data
 * obs in row-major order over dims) can be (see above); advance the model to u, record what
 * was seen, and return 1 when all of step u's writes are visible, 0 when some are not yet;
 * -2 when the observation fits only with torn elements (the model is left unchanged);
 * -1 when no step fits (*mm then describes why, for the candidate that came closest).
 * scratch: a model of the same dataset used for trying candidates. */
int model_match(model_t *mo, model_t *scratch, const hsize_t dims[3], const int64_t *obs, int limit, mismatch_t *mm);
void describe_mismatch(const model_t *mo, const mismatch_t *mm, char *buf, size_t n);

/* --- progress file: what the writer has flushed, and when ------------------------------------ */
typedef struct {
    bool valid;
    int step;  /* last step flushed (-1: set up, nothing written yet) */
    bool done; /* the writer closed the file */
    int nsteps;
    int64_t *pub_ns; /* [nsteps], 0 when not published by this run */
} progress_t;

void progress_write(const char *path, int step, bool done, const int64_t *pub_ns, int nsteps);
bool progress_read(const char *path, progress_t *p, int nsteps); /* false: missing */
void progress_free(progress_t *p);

/* --- acknowledgements (zoo): reader i writes the last stage it verified -------------------------- */
void ack_write(const char *file, int id, int stage, bool failed);
int ack_read(const char *file, int id, bool *failed); /* -2: no file yet */

/* --- the zoo ----------------------------------------------------------------------------- */
#define ZOO_NCHILD     20 /* /g1/c00..c19 */
#define ZOO_NKEEP      3  /* /g1/c00..c02 survive stage 9 */
#define ZOO_NBATTR     12 /* /d_chunked attributes b00..b11 */
#define ZOO_NBKEEP     3  /* b00..b02 survive stage 10 */
#define ZOO_NG2        10 /* /g2/e00..e09 */
#define ZOO_CONTIG_N   40
#define ZOO_COMPACT_N  10
#define ZOO_CHUNKED_0  20
#define ZOO_CHUNKED_1  12
#define ZOO_TYPED_N    8
#define ZOO_G2D_N      30
#define ZOO_ID_CHUNKED 0x5a4f4f01u /* dataset ids of the zoo's value function */
#define ZOO_ID_G2D     0x5a4f4f02u
extern const char *const zoo_stage_text[ZOO_NSTAGES];
int32_t zoo_contig(int i);
int16_t zoo_compact(int i);
int32_t zoo_attr_a(int a, int j);
typedef struct {
    int32_t a;
    double b;
} zoo_pair_t;
hid_t zoo_pair_type(void);      /* native compound {a: int32, b: double} */
hid_t zoo_pair_file_type(void); /* little-endian file type of the same */
#define ZOO_TITLE "group one: compact attributes, then dense links, then compact again"

/* --- small helpers --------------------------------------------------------------------- */
void *xcalloc(size_t n, size_t size);
size_t box_elems(int rank, const hsize_t dims[3]);

/* A 64-bit mixing function (splitmix64's finaliser): the value functions' hash. */
uint64_t swmr_mix64(uint64_t x);

#endif
