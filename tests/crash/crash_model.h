/*
 * The crash harness's workload model: a seeded sequence of operations on an HDF5 file and the
 * state after each of them, computed without any file.
 *
 * State k is the file after operations 1..k (state 0: an empty root group). Operation k is a
 * pure function of (seed, mix, state k-1), so the writer (which performs it), the readers
 * (which match what they see against it) and the verifier (which matches the recovered file
 * against it) all compute the same sequence. Every value in the file is a pure function too:
 *   - element [r, c] of dataset dN: swmr_value(seed, N, {r, c, 0}, 0);
 *   - element k of attribute aN written by operation V: swmr_value(seed, CM_ATTR_ID(N), {k}, V).
 * Datasets only grow (appends of whole rows), so every element inside an extent holds its
 * value; objects are named by the operation that created them (gN, dN, aN), never reused.
 *
 * A state is described by sorted text lines (cm_describe); a walk of a file produces lines of
 * the same form (crash_walk.h), and two states are the same when their lines are:
 *   G <path>                                   a group (the root group is "G /")
 *   D <path> <kind> <rows>x<cols> <checksum>   a dataset, its extent and data checksum
 *   A <object path> <name> n=<len> v=<V>       an attribute: length and the operation that wrote it
 */
#ifndef CRASH_MODEL_H
#define CRASH_MODEL_H

#include <hdf5.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CM_MAXOBJ     48 /* objects alive at once, the root group included */
#define CM_MAXATTR    48 /* attributes alive at once */
#define CM_MAXDEPTH   3  /* groups nest at most this deep below the root */
#define CM_PATHLEN    64
#define CM_LINELEN    160
#define CM_ATTR_ID(n) ((uint64_t)(n) | (1ull << 40)) /* value-function id of attribute aN */

typedef enum {
    OP_APPEND,  /* append rows to a dataset */
    OP_GCREATE, /* create a group */
    OP_GDELETE, /* delete a group and everything below it */
    OP_DCREATE, /* create a dataset (with a few rows) */
    OP_DDELETE, /* delete a dataset */
    OP_ACREATE, /* create an attribute on the root, a group or a dataset */
    OP_AWRITE,  /* rewrite an attribute's value */
    OP_ADELETE, /* delete an attribute */
    OP_NKINDS
} cm_opkind_t;

/* Dataset kinds: rank, maximum extent, chunking, deflate, hence the chunk index type. */
typedef struct {
    const char *name;
    int rank;
    hsize_t cols; /* second dimension (1 for rank 1) */
    bool fixed;   /* maximum rows CM_FIXED_ROWS instead of unlimited */
    bool unlim2;  /* second dimension unlimited too (version 2 B-tree index) */
    bool deflate;
    hsize_t chunk[2];
    H5D_chunk_index_t idx;
} cm_dkind_t;

#define CM_NDKINDS    7
#define CM_FIXED_ROWS 512
#define CM_MAX_ROWS   1024 /* appends stop here */
extern const cm_dkind_t cm_dkinds[CM_NDKINDS];

typedef struct {
    int id;     /* the operation that created it; 0: the root group */
    int parent; /* id of the parent group; -1 for the root */
    bool group;
    int depth;    /* 0: the root; 1: below the root ... */
    int dkind;    /* datasets: index into cm_dkinds */
    hsize_t rows; /* datasets: current extent in dimension 0 */
    uint64_t sum; /* datasets: checksum of rows 0..rows-1 (cm_sum_row) */
    char path[CM_PATHLEN];
} cm_obj_t;

typedef struct {
    int id;      /* the operation that created it: name aN */
    int obj;     /* id of the object it belongs to */
    int len;     /* number of int64 elements */
    int version; /* the operation that last wrote it */
} cm_attr_t;

/* The workload mixes: relative weights of the operation kinds. */
typedef struct {
    const char *name;
    int w[OP_NKINDS];
} cm_mix_t;
extern const cm_mix_t cm_mixes[];
const cm_mix_t *cm_mix_find(const char *name); /* NULL when unknown */
const char *cm_op_name(cm_opkind_t k);

typedef struct {
    uint64_t seed;
    const cm_mix_t *mix;
    bool swmr_write;         /* the writer uses H5F_ACC_SWMR_WRITE: see cm_init */
    int state;               /* operations applied */
    cm_obj_t obj[CM_MAXOBJ]; /* obj[0] is the root group; ordered by id */
    int nobj;
    cm_attr_t attr[CM_MAXATTR]; /* ordered by id */
    int nattr;
} cm_state_t;

typedef struct {
    cm_opkind_t kind;
    int n;                 /* the operation's number: the new state's index */
    int obj;               /* index in obj[]: the target (append, deletes, attribute holder) or parent (creates) */
    int attr;              /* index in attr[]: the target of AWRITE/ADELETE */
    int dkind;             /* DCREATE */
    hsize_t rows0, rows1;  /* APPEND/DCREATE: extent before and after */
    int alen;              /* ACREATE: length */
    bool flush;            /* without SWMR-write mode: end the batch with H5Fflush after this operation */
    char path[CM_PATHLEN]; /* the created object's path (GCREATE/DCREATE), or the target's */
    char name[32];         /* the created object's or attribute's name */
} cm_op_t;

/* swmr_write: the writer opens the file with H5F_ACC_SWMR_WRITE, in which HDF5 1.14.5 itself
 * (on sec2 as well) fails to delete a chunked dataset ("Target already protected"), crashes
 * deleting a group whose object header has continuation chunks, and fails to add an attribute
 * to a dataset once its object header needs a new chunk ("Parent entry isn't pinned or
 * protected"): the workload then deletes no groups or datasets (attributes still) and puts
 * attributes only on groups. */
void cm_init(cm_state_t *s, uint64_t seed, const cm_mix_t *mix, bool swmr_write);
void cm_next(const cm_state_t *s, cm_op_t *op);          /* plan operation s->state + 1 */
void cm_apply(cm_state_t *s, const cm_op_t *op);         /* and apply it to the model */
void cm_advance(cm_state_t *s);                          /* cm_next + cm_apply */
int cm_find_obj(const cm_state_t *s, int id);            /* index in obj[], or -1 */
bool cm_possible(const cm_state_t *s, cm_opkind_t kind); /* may the next operation be of this kind? */
cm_opkind_t cm_op_kind(const char *name);                /* OP_NKINDS when unknown */

/* values and checksums */
int64_t cm_dvalue(uint64_t seed, int dset_id, hsize_t r, hsize_t c);
int64_t cm_avalue(uint64_t seed, int attr_id, int k, int version);
uint64_t cm_sum_init(void);
uint64_t cm_sum_row(uint64_t sum, const int64_t *row, hsize_t cols); /* fold in one row */

/* Sorted description lines of a state (see above). lines: CM_LINELEN each, room for
 * cm_desc_max() lines. Returns the count. */
size_t cm_desc_max(void);
size_t cm_describe(const cm_state_t *s, char (*lines)[CM_LINELEN]);
uint64_t cm_desc_hash(char (*lines)[CM_LINELEN], size_t n);
void cm_sort_lines(char (*lines)[CM_LINELEN], size_t n);

#endif
