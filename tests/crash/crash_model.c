/*
 * The crash harness's workload model; see crash_model.h.
 */
#include "crash_model.h"

#include "../swmr/swmr_common.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define U H5S_UNLIMITED

const cm_dkind_t cm_dkinds[CM_NDKINDS] = {
    {"1e", 1, 1, false, false, false, {16, 1}, H5D_CHUNK_IDX_EARRAY},
    {"1ez", 1, 1, false, false, true, {16, 1}, H5D_CHUNK_IDX_EARRAY},
    {"1f", 1, 1, true, false, false, {16, 1}, H5D_CHUNK_IDX_FARRAY},
    {"2e", 2, 5, false, false, false, {8, 5}, H5D_CHUNK_IDX_EARRAY},
    {"2ez", 2, 5, false, false, true, {8, 5}, H5D_CHUNK_IDX_EARRAY},
    {"2b", 2, 3, false, true, false, {8, 3}, H5D_CHUNK_IDX_BT2},
    {"2bz", 2, 3, false, true, true, {8, 3}, H5D_CHUNK_IDX_BT2},
};

/*                                       APPEND GCREATE GDELETE DCREATE DDELETE ACREATE AWRITE ADELETE */
const cm_mix_t cm_mixes[] = {
    {"append", {24, 0, 0, 2, 0, 1, 1, 0}}, /* appends to datasets, the occasional new one */
    {"objects", {3, 5, 3, 5, 3, 4, 2, 3}}, /* groups, datasets and attributes created and deleted */
    {"mixed", {10, 2, 1, 3, 1, 2, 2, 1}},  /* both */
    {NULL, {0}}};

const cm_mix_t *
cm_mix_find(const char *name)
{
    for (const cm_mix_t *m = cm_mixes; m->name; m++)
        if (!strcmp(m->name, name))
            return m;
    return NULL;
}

static const char *const op_names[OP_NKINDS] = {"append",  "gcreate", "gdelete", "dcreate",
                                                "ddelete", "acreate", "awrite",  "adelete"};

const char *
cm_op_name(cm_opkind_t k)
{
    return k < OP_NKINDS ? op_names[k] : "?";
}

cm_opkind_t
cm_op_kind(const char *name)
{
    int k;

    for (k = 0; k < OP_NKINDS && strcmp(op_names[k], name); k++)
        ;
    return (cm_opkind_t)k;
}

int64_t
cm_dvalue(uint64_t seed, int dset_id, hsize_t r, hsize_t c)
{
    hsize_t idx[3] = {r, c, 0};

    return swmr_value(seed, (uint64_t)dset_id, idx, 0);
}

int64_t
cm_avalue(uint64_t seed, int attr_id, int k, int version)
{
    hsize_t idx[3] = {(hsize_t)k, 0, 0};

    return swmr_value(seed, CM_ATTR_ID(attr_id), idx, version);
}

uint64_t
cm_sum_init(void)
{
    return 0x6a09e667f3bcc908ull;
}

uint64_t
cm_sum_row(uint64_t sum, const int64_t *row, hsize_t cols)
{
    for (hsize_t c = 0; c < cols; c++)
        sum = swmr_mix64(sum ^ (uint64_t)row[c]);
    return sum;
}

void
cm_init(cm_state_t *s, uint64_t seed, const cm_mix_t *mix, bool swmr_write)
{
    memset(s, 0, sizeof *s);
    s->seed = seed;
    s->mix = mix;
    s->swmr_write = swmr_write;
    s->nobj = 1;
    s->obj[0].id = 0;
    s->obj[0].parent = -1;
    s->obj[0].group = true;
    snprintf(s->obj[0].path, sizeof s->obj[0].path, "/");
}

int
cm_find_obj(const cm_state_t *s, int id)
{
    for (int i = 0; i < s->nobj; i++)
        if (s->obj[i].id == id)
            return i;
    return -1;
}

static hsize_t
max_rows(const cm_obj_t *o)
{
    return cm_dkinds[o->dkind].fixed ? CM_FIXED_ROWS : CM_MAX_ROWS;
}

/* A small deterministic generator for one operation's choices. */
typedef struct {
    uint64_t x;
} rng_t;

static uint64_t
draw(rng_t *r)
{
    r->x = swmr_mix64(r->x);
    return r->x;
}

static int
pick(rng_t *r, int n)
{
    return (int)(draw(r) % (uint64_t)n);
}

static void
child_path(char *out, const char *parent, const char *name)
{
    snprintf(out, CM_PATHLEN, "%s%s%s", parent, strcmp(parent, "/") ? "/" : "", name);
}

typedef struct {
    int ngroups, ndsets, nappendable, nparents, nholders;
} counts_t;

/* The weight of each kind for the next operation: the mix's, or 0 where it cannot apply. */
static int
weights(const cm_state_t *s, counts_t *c, int w[OP_NKINDS])
{
    int total = 0;

    memset(c, 0, sizeof *c);
    for (int i = 0; i < s->nobj; i++) {
        const cm_obj_t *o = &s->obj[i];

        if (o->group) {
            c->ngroups += i > 0;
            c->nparents += o->depth < CM_MAXDEPTH;
        }
        else {
            c->ndsets++;
            c->nappendable += o->rows < max_rows(o);
        }
        c->nholders += o->group || !s->swmr_write;
    }
    for (int k = 0; k < OP_NKINDS; k++) {
        bool ok = false;

        switch ((cm_opkind_t)k) {
        case OP_APPEND:
            ok = c->nappendable > 0;
            break;
        case OP_GCREATE:
            ok = s->nobj < CM_MAXOBJ && c->ngroups < 12 && c->nparents > 0;
            break;
        /* deletions only in a populated file, so that it stays populated */
        case OP_GDELETE:
            ok = c->ngroups > 3 && s->nobj > 12 && !s->swmr_write;
            break;
        case OP_DCREATE:
            ok = s->nobj < CM_MAXOBJ && c->ndsets < 14;
            break;
        case OP_DDELETE:
            ok = c->ndsets > 3 && !s->swmr_write;
            break;
        case OP_ACREATE:
            ok = s->nattr < CM_MAXATTR;
            break;
        case OP_AWRITE:
            ok = s->nattr > 0;
            break;
        case OP_ADELETE:
            ok = s->nattr > 8;
            break;
        default:
            break;
        }
        w[k] = ok ? s->mix->w[k] : 0;
        total += w[k];
    }
    return total;
}

bool
cm_possible(const cm_state_t *s, cm_opkind_t kind)
{
    counts_t c;
    int w[OP_NKINDS];

    weights(s, &c, w);
    return kind < OP_NKINDS && w[kind] > 0;
}

void
cm_next(const cm_state_t *s, cm_op_t *op)
{
    rng_t r = {swmr_mix64(s->seed ^ swmr_mix64((uint64_t)(s->state + 1) * 0x2545f4914f6cdd1dull))};
    counts_t c;
    int w[OP_NKINDS], total = weights(s, &c, w), k;
    int ngroups = c.ngroups, ndsets = c.ndsets, nappendable = c.nappendable, nparents = c.nparents,
        nholders = c.nholders;

    memset(op, 0, sizeof *op);
    op->n = s->state + 1;
    if (!total) /* nothing the mix wants applies (e.g. no dataset yet): create one */
        op->kind = ndsets < 14 && s->nobj < CM_MAXOBJ ? OP_DCREATE : s->nattr ? OP_AWRITE : OP_ACREATE;
    else {
        int x = pick(&r, total);

        for (k = 0; x >= w[k]; k++)
            x -= w[k];
        op->kind = (cm_opkind_t)k;
    }
    op->flush = draw(&r) % 2 == 0;
    op->obj = op->attr = -1;
    switch (op->kind) {
    case OP_APPEND: {
        int j = pick(&r, nappendable), i;
        const cm_obj_t *o;
        hsize_t add;

        for (i = 0;; i++)
            if (!s->obj[i].group && s->obj[i].rows < max_rows(&s->obj[i]) && j-- == 0)
                break;
        o = &s->obj[i];
        op->obj = i;
        add = cm_dkinds[o->dkind].rank == 1 ? 1 + (hsize_t)pick(&r, 24) : 1 + (hsize_t)pick(&r, 6);
        op->rows0 = o->rows;
        op->rows1 = o->rows + add > max_rows(o) ? max_rows(o) : o->rows + add;
        snprintf(op->path, sizeof op->path, "%s", o->path);
        break;
    }
    case OP_GCREATE:
    case OP_DCREATE: {
        int j, i;

        if (op->kind == OP_GCREATE) {
            j = pick(&r, nparents);
            for (i = 0;; i++)
                if (s->obj[i].group && s->obj[i].depth < CM_MAXDEPTH && j-- == 0)
                    break;
            snprintf(op->name, sizeof op->name, "g%d", op->n);
        }
        else {
            j = pick(&r, ngroups + 1);
            for (i = 0;; i++)
                if (s->obj[i].group && j-- == 0)
                    break;
            snprintf(op->name, sizeof op->name, "d%d", op->n);
            op->dkind = pick(&r, CM_NDKINDS);
            op->rows1 = cm_dkinds[op->dkind].rank == 1 ? (hsize_t)pick(&r, 21) : (hsize_t)pick(&r, 5);
        }
        op->obj = i;
        child_path(op->path, s->obj[i].path, op->name);
        break;
    }
    case OP_GDELETE:
    case OP_DDELETE: {
        bool group = op->kind == OP_GDELETE;
        int j = pick(&r, group ? ngroups : ndsets), i;

        for (i = 1;; i++)
            if (s->obj[i].group == group && j-- == 0)
                break;
        op->obj = i;
        snprintf(op->path, sizeof op->path, "%s", s->obj[i].path);
        break;
    }
    case OP_ACREATE: {
        int j = pick(&r, nholders), i;

        for (i = 0;; i++)
            if ((s->obj[i].group || !s->swmr_write) && j-- == 0)
                break;
        op->obj = i;
        op->alen = 1 + pick(&r, 6);
        snprintf(op->name, sizeof op->name, "a%d", op->n);
        snprintf(op->path, sizeof op->path, "%s", s->obj[op->obj].path);
        break;
    }
    case OP_AWRITE:
    case OP_ADELETE:
        op->attr = pick(&r, s->nattr);
        op->obj = cm_find_obj(s, s->attr[op->attr].obj);
        snprintf(op->name, sizeof op->name, "a%d", s->attr[op->attr].id);
        snprintf(op->path, sizeof op->path, "%s", s->obj[op->obj].path);
        break;
    default:
        break;
    }
}

/* Fold rows r0..r1-1 of dataset o into its checksum. */
static void
sum_rows(uint64_t seed, cm_obj_t *o, hsize_t r0, hsize_t r1)
{
    hsize_t cols = cm_dkinds[o->dkind].cols;
    int64_t row[8];

    for (hsize_t r = r0; r < r1; r++) {
        for (hsize_t c = 0; c < cols; c++)
            row[c] = cm_dvalue(seed, o->id, r, c);
        o->sum = cm_sum_row(o->sum, row, cols);
    }
}

/* Remove object i and, for a group, everything below it, with their attributes. */
static void
remove_subtree(cm_state_t *s, int i)
{
    char prefix[CM_PATHLEN + 1];
    int n = 0;

    snprintf(prefix, sizeof prefix, "%s/", s->obj[i].path);
    for (int j = 0; j < s->nobj; j++) {
        const cm_obj_t *o = &s->obj[j];
        bool gone = j == i || !strncmp(o->path, prefix, strlen(prefix));

        if (gone) {
            int m = 0;

            for (int a = 0; a < s->nattr; a++)
                if (s->attr[a].obj != o->id)
                    s->attr[m++] = s->attr[a];
            s->nattr = m;
        }
        else
            s->obj[n++] = *o;
    }
    s->nobj = n;
}

void
cm_apply(cm_state_t *s, const cm_op_t *op)
{
    if (op->n != s->state + 1)
        swmr_fail("internal error: operation %d applied to state %d", op->n, s->state);
    switch (op->kind) {
    case OP_APPEND:
        sum_rows(s->seed, &s->obj[op->obj], op->rows0, op->rows1);
        s->obj[op->obj].rows = op->rows1;
        break;
    case OP_GCREATE:
    case OP_DCREATE: {
        cm_obj_t *o = &s->obj[s->nobj++];

        memset(o, 0, sizeof *o);
        o->id = op->n;
        o->parent = s->obj[op->obj].id;
        o->group = op->kind == OP_GCREATE;
        o->depth = s->obj[op->obj].depth + 1;
        snprintf(o->path, sizeof o->path, "%s", op->path);
        if (!o->group) {
            o->dkind = op->dkind;
            o->sum = cm_sum_init();
            sum_rows(s->seed, o, 0, op->rows1);
            o->rows = op->rows1;
        }
        break;
    }
    case OP_GDELETE:
    case OP_DDELETE:
        remove_subtree(s, op->obj);
        break;
    case OP_ACREATE: {
        cm_attr_t *a = &s->attr[s->nattr++];

        a->id = op->n;
        a->obj = s->obj[op->obj].id;
        a->len = op->alen;
        a->version = op->n;
        break;
    }
    case OP_AWRITE:
        s->attr[op->attr].version = op->n;
        break;
    case OP_ADELETE:
        memmove(&s->attr[op->attr], &s->attr[op->attr + 1], (size_t)(s->nattr - op->attr - 1) * sizeof s->attr[0]);
        s->nattr--;
        break;
    default:
        break;
    }
    s->state = op->n;
}

void
cm_advance(cm_state_t *s)
{
    cm_op_t op;

    cm_next(s, &op);
    cm_apply(s, &op);
}

size_t
cm_desc_max(void)
{
    return CM_MAXOBJ + CM_MAXATTR + 1;
}

static int
cmp_line(const void *a, const void *b)
{
    return strcmp(a, b);
}

void
cm_sort_lines(char (*lines)[CM_LINELEN], size_t n)
{
    qsort(lines, n, CM_LINELEN, cmp_line);
}

size_t
cm_describe(const cm_state_t *s, char (*lines)[CM_LINELEN])
{
    size_t n = 0;

    for (int i = 0; i < s->nobj; i++) {
        const cm_obj_t *o = &s->obj[i];

        if (o->group)
            snprintf(lines[n++], CM_LINELEN, "G %s", o->path);
        else
            snprintf(lines[n++], CM_LINELEN, "D %s %s %llux%llu %016" PRIx64, o->path, cm_dkinds[o->dkind].name,
                     (unsigned long long)o->rows, (unsigned long long)cm_dkinds[o->dkind].cols, o->sum);
    }
    for (int a = 0; a < s->nattr; a++)
        snprintf(lines[n++], CM_LINELEN, "A %s a%d n=%d v=%d", s->obj[cm_find_obj(s, s->attr[a].obj)].path,
                 s->attr[a].id, s->attr[a].len, s->attr[a].version);
    cm_sort_lines(lines, n);
    return n;
}

uint64_t
cm_desc_hash(char (*lines)[CM_LINELEN], size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;

    for (size_t i = 0; i < n; i++) {
        for (const char *p = lines[i]; *p; p++)
            h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
        h = (h ^ '\n') * 0x100000001b3ull;
    }
    return h;
}
