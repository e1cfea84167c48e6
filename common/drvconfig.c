/*
 * drvconfig.c - parser of the vfd-swmr configuration string (grammar in
 * drvconfig.h, keys in include/vfdswmr.h).
 *
 * Invariants:
 *  - The input is read only through slices (pointer, length) that lie inside
 *    the NUL-terminated text; every scan stops at its slice's end or at the
 *    terminating NUL, so nothing is read out of bounds.
 *  - Every write into a fixed-size field or into errbuf is bounded by its
 *    capacity and leaves it NUL-terminated. Over-long input is reported,
 *    never silently truncated (only error messages are truncated).
 *  - No heap, no mutable global or static state, no locale-dependent calls:
 *    the functions are reentrant and thread-safe.
 *  - A backslash always escapes the next character: ';', '=', '(', ')' and
 *    blanks have their structural meaning only when unescaped.
 *  - CONFIG_KEYS below names every key exactly once; it generates both
 *    vfdswmr_config_keys[] and the table that dispatches a key to its
 *    parser, so the two cannot diverge.
 *
 * Decisions the grammar in drvconfig.h leaves open:
 *  - Empty segments (only blanks between two ';', a leading or trailing ';')
 *    are allowed and ignored: "a=1;;b=2" and "  ;  " are accepted.
 *  - The string is split on ';' only outside parentheses, for every key
 *    (that is what lets under=NAME(a=1;b=2) carry a nested configuration).
 *    In a path, unescaped parentheses are kept literally when they balance
 *    and rejected otherwise; write "\(" and "\)" for unbalanced ones.
 *  - Integer and boolean values are unescaped before they are read, like
 *    paths ("max_lag=\5" is 5).
 *  - Offsets in messages are 0-based byte offsets into the whole string.
 *  - A path must not contain a newline (it could not be logged or shown on
 *    one line); other characters are accepted.
 */
#include "drvconfig.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errtext.h"

/* Longest raw value echoed in a message, in bytes, before "..." is added. */
#define ECHO_MAX  64
#define ECHO_SIZE (ECHO_MAX + sizeof "...")

/* A piece of the configuration string; off is the offset of p[0] in it. */
struct slice {
    const char *p;
    size_t len;
    size_t off;
};

struct parse_ctx {
    vfdswmr_config_t *cfg;
    char *errbuf;
    size_t errlen;
    uint32_t seen; /* bit i set: vfdswmr_config_keys[i] already given */
};

struct key_spec;
typedef int (*value_parser)(struct parse_ctx *ctx, const struct key_spec *spec, const struct slice *value);

struct key_spec {
    const char *name;
    size_t name_len;
    value_parser parse;
    size_t offset; /* of the field in vfdswmr_config_t */
    uint32_t min;  /* integers only */
    uint32_t max;
    const char *unit;
};

static int parse_uint(struct parse_ctx *, const struct key_spec *, const struct slice *);
static int parse_bool(struct parse_ctx *, const struct key_spec *, const struct slice *);
static int parse_publish(struct parse_ctx *, const struct key_spec *, const struct slice *);
static int parse_path(struct parse_ctx *, const struct key_spec *, const struct slice *);
static int parse_file_name(struct parse_ctx *, const struct key_spec *, const struct slice *);
static int parse_under(struct parse_ctx *, const struct key_spec *, const struct slice *);
static int parse_size(struct parse_ctx *, const struct key_spec *, const struct slice *);

/* X(key, parser, field, min, max, unit), in the order of vfdswmr.h. */
#define CONFIG_KEYS(X)                                                                                  \
    X(tick_len, parse_uint, tick_len, 0, VFDSWMR_MAX_TICK_LEN, "tenths of a second")                    \
    X(max_lag, parse_uint, max_lag, VFDSWMR_MIN_MAX_LAG, VFDSWMR_MAX_MAX_LAG, "ticks")                  \
    X(md_pages_reserved, parse_uint, md_pages_reserved, 1, VFDSWMR_MAX_MD_PAGES_RESERVED, "pages")      \
    X(presume_posix_semantics, parse_bool, presume_posix_semantics, 0, 1, NULL)                         \
    X(maintain_metadata_file, parse_bool, maintain_metadata_file, 0, 1, NULL)                           \
    X(generate_updater_files, parse_bool, generate_updater_files, 0, 1, NULL)                           \
    X(durable, parse_bool, durable, 0, 1, NULL)                                                         \
    X(flush_raw_data, parse_bool, durable, 0, 1, NULL) /* durable's former name */                      \
    X(publish, parse_publish, publish_at_tick_only, 0, 1, NULL)                                         \
    X(md_file_path, parse_path, md_file_path, 0, 0, NULL)                                               \
    X(md_file_name, parse_file_name, md_file_name, 0, 0, NULL)                                          \
    X(updater_file_path, parse_path, updater_file_path, 0, 0, NULL)                                     \
    X(log_file_path, parse_path, log_file_path, 0, 0, NULL)                                             \
    X(pb_expansion_threshold, parse_uint, pb_expansion_threshold, 0, 100, "times the page buffer size") \
    X(open_timeout, parse_uint, open_timeout, 0, VFDSWMR_MAX_TICK_LEN, "tenths of a second")            \
    X(keep_metadata_file, parse_bool, keep_metadata_file, 0, 1, NULL)                                   \
    X(updater_keep_ticks, parse_uint, updater_keep_ticks, 0, VFDSWMR_MAX_MAX_LAG, "ticks")              \
    X(chunk_cache_size, parse_size, chunk_cache_size, 0, 0, NULL)                                       \
    X(chunk_cache_max_entry, parse_size, chunk_cache_max_entry, 0, 0, NULL)                             \
    X(chunk_cache_dset_min, parse_size, chunk_cache_dset_min, 0, 0, NULL)                               \
    X(chunk_cache_tag, parse_bool, chunk_cache_tag, 0, 1, NULL)                                         \
    X(chunk_cache_readahead, parse_bool, chunk_cache_readahead, 0, 1, NULL)                             \
    X(versioned_max, parse_size, versioned_max, 0, 0, NULL)                                             \
    X(under, parse_under, under_name, 0, 0, NULL)

#define KEY_NAME(key, parser, field, lo, hi, unit) #key,
#define KEY_SPEC(key, parser, field, lo, hi, unit) \
    {#key, sizeof #key - 1, parser, offsetof(vfdswmr_config_t, field), lo, hi, unit},

const char *const vfdswmr_config_keys[] = {CONFIG_KEYS(KEY_NAME) NULL};

static const struct key_spec key_specs[] = {CONFIG_KEYS(KEY_SPEC)};

#define N_KEYS (sizeof key_specs / sizeof key_specs[0])

_Static_assert(N_KEYS <= 32, "the seen-key mask has 32 bits");
_Static_assert(sizeof VFDSWMR_DEFAULT_UNDER <= VFDSWMR_MAX_DRIVER_NAME + 1,
               "default lower driver name fits under_name");
_Static_assert(sizeof(((vfdswmr_config_t *)0)->md_file_path) == VFDSWMR_MAX_PATH + 1 &&
                   sizeof(((vfdswmr_config_t *)0)->md_file_name) == VFDSWMR_MAX_PATH + 1 &&
                   sizeof(((vfdswmr_config_t *)0)->updater_file_path) == VFDSWMR_MAX_PATH + 1 &&
                   sizeof(((vfdswmr_config_t *)0)->log_file_path) == VFDSWMR_MAX_PATH + 1,
               "path fields hold VFDSWMR_MAX_PATH bytes and a NUL");

/* ---------------------------------------------------------------------- */
/* Characters and slices                                                    */

static bool
is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool
is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static char
ascii_lower(char c)
{
    return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

static struct slice
sub(const struct slice *v, size_t from, size_t to)
{
    struct slice s = {v->p + from, to - from, v->off + from};
    return s;
}

/* The unescaped character at *i (< v->len); advances *i past it. */
static char
next_char(const struct slice *v, size_t *i)
{
    char c = v->p[*i];
    if (c == '\\' && *i + 1 < v->len) {
        c = v->p[*i + 1];
        *i += 2;
    }
    else {
        *i += 1;
    }
    return c;
}

/* v without its leading and trailing unescaped blanks. */
static struct slice
trim(const struct slice *v)
{
    size_t start = 0;
    while (start < v->len && is_blank(v->p[start]))
        start++;
    size_t end = start;
    for (size_t i = start; i < v->len;) {
        char raw = v->p[i];
        next_char(v, &i);
        if (!is_blank(raw))
            end = i;
    }
    return sub(v, start, end);
}

/* Index of the first unescaped c outside parentheses, or v->len. */
static size_t
find_top_level(const struct slice *v, char c)
{
    size_t depth = 0;
    for (size_t i = 0; i < v->len; i++) {
        char x = v->p[i];
        if (x == '\\')
            i++;
        else if (x == c && depth == 0)
            return i;
        else if (x == '(')
            depth++;
        else if (x == ')' && depth > 0)
            depth--;
    }
    return v->len;
}

/* Index of the ')' closing the '(' at v->p[open], or v->len if none. */
static size_t
matching_paren(const struct slice *v, size_t open)
{
    size_t depth = 0;
    for (size_t i = open; i < v->len; i++) {
        char x = v->p[i];
        if (x == '\\')
            i++;
        else if (x == '(')
            depth++;
        else if (x == ')' && --depth == 0)
            return i;
    }
    return v->len;
}

static bool
parens_balance(const struct slice *v)
{
    size_t depth = 0;
    for (size_t i = 0; i < v->len; i++) {
        char x = v->p[i];
        if (x == '\\')
            i++;
        else if (x == '(')
            depth++;
        else if (x == ')') {
            if (depth == 0)
                return false;
            depth--;
        }
    }
    return depth == 0;
}

/* ---------------------------------------------------------------------- */
/* Messages                                                                 */

/*
 * Raw text of v for a message: at most ECHO_MAX bytes (cut at a UTF-8
 * character boundary) followed by "..." when longer, control characters
 * replaced by '?'.
 */
static void
echo(const struct slice *v, char out[ECHO_SIZE])
{
    size_t n = v->len;
    if (n > ECHO_MAX) {
        n = ECHO_MAX;
        while (n > 0 && ((unsigned char)v->p[n] & 0xC0u) == 0x80u)
            n--;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)v->p[i];
        out[i] = (c < 0x20u || c == 0x7Fu) ? '?' : (char)c;
    }
    if (n < v->len) {
        memcpy(out + n, "...", sizeof "...");
    }
    else {
        out[n] = '\0';
    }
}

/* Appends src to dst (capacity cap, current length *len), truncating. */
static void
append(char *dst, size_t cap, size_t *len, const char *src)
{
    size_t n = strlen(src);
    if (n > cap - 1 - *len)
        n = cap - 1 - *len;
    memcpy(dst + *len, src, n);
    *len += n;
    dst[*len] = '\0';
}

static int
fail_unknown_key(const struct parse_ctx *ctx, const struct slice *key)
{
    char list[N_KEYS * 32];
    size_t len = 0;
    list[0] = '\0';
    for (size_t i = 0; i < N_KEYS; i++) {
        if (i > 0)
            append(list, sizeof list, &len, ", ");
        append(list, sizeof list, &len, key_specs[i].name);
    }
    char shown[ECHO_SIZE];
    echo(key, shown);
    return vfdswmr_errtext(ctx->errbuf, ctx->errlen, "unknown key \"%s\"; accepted keys: %s", shown, list);
}

/* ---------------------------------------------------------------------- */
/* Values                                                                   */

static void *
field(vfdswmr_config_t *cfg, const struct key_spec *spec)
{
    return (char *)cfg + spec->offset;
}

static int
parse_uint(struct parse_ctx *ctx, const struct key_spec *spec, const struct slice *v)
{
    uint64_t n = 0;
    bool digits = v->len > 0;
    for (size_t i = 0; i < v->len && digits;) {
        char c = next_char(v, &i);
        digits = c >= '0' && c <= '9';
        if (digits && n <= UINT32_MAX)
            n = n * 10 + (uint64_t)(c - '0');
    }
    const char *what = NULL;
    if (!digits)
        what = "not a number";
    else if (n < spec->min || n > spec->max)
        what = "out of range";
    if (what != NULL) {
        char shown[ECHO_SIZE];
        echo(v, shown);
        return vfdswmr_errtext(ctx->errbuf, ctx->errlen,
                               "%s=%s: %s; expected an integer from %" PRIu32 " to %" PRIu32 " (%s)", spec->name, shown,
                               what, spec->min, spec->max, spec->unit);
    }
    *(uint32_t *)field(ctx->cfg, spec) = (uint32_t)n;
    return 0;
}

/* A byte count: digits, then optionally K, M, G or T (powers of 1024, either
 * case, an optional "iB" or "B" after), at most VFDSWMR_MAX_CACHE_SIZE. */
static int
parse_size(struct parse_ctx *ctx, const struct key_spec *spec, const struct slice *v)
{
    char text[32];
    size_t n = 0, i = 0;
    uint64_t value = 0, unit = 1;
    bool ok = v->len > 0;

    while (i < v->len && n < sizeof text - 1)
        text[n++] = ascii_lower(next_char(v, &i));
    text[n] = '\0';
    ok = ok && i == v->len;
    size_t d = 0;
    for (; ok && text[d] >= '0' && text[d] <= '9'; d++) {
        value = value * 10 + (uint64_t)(text[d] - '0');
        ok = value <= VFDSWMR_MAX_CACHE_SIZE;
    }
    ok = ok && d > 0;
    if (ok && text[d]) {
        const char *units = "kmgt", *u = strchr(units, text[d]);
        if (u == NULL || !*u)
            ok = false;
        else {
            unit = (uint64_t)1 << (10 * (u - units + 1));
            const char *rest = text + d + 1;
            ok = !*rest || !strcmp(rest, "b") || !strcmp(rest, "ib");
        }
    }
    if (!ok || value > VFDSWMR_MAX_CACHE_SIZE / unit) {
        char shown[ECHO_SIZE];
        echo(v, shown);
        return vfdswmr_errtext(
            ctx->errbuf, ctx->errlen,
            "%s=%s: expected a byte count up to 1T, e.g. 67108864, 64M or 2G (K, M, G, T: powers of 1024)", spec->name,
            shown);
    }
    *(uint64_t *)field(ctx->cfg, spec) = value * unit;
    return 0;
}

/* The value as one of a few words, any case: its index in words[]
 * (NULL-terminated), or -1. */
static int
word_index(const struct slice *v, const char *const *words)
{
    char word[8]; /* longer than every word: a longer value matches none */
    size_t n = 0;
    for (size_t i = 0; i < v->len && n < sizeof word - 1;)
        word[n++] = ascii_lower(next_char(v, &i));
    word[n] = '\0';
    for (int k = 0; words[k] != NULL; k++)
        if (strcmp(word, words[k]) == 0)
            return k;
    return -1;
}

/* A boolean key written as one of `words`: the field gets values[k] for
 * words[k]; anything else is refused with `expected`. */
static int
parse_words(struct parse_ctx *ctx, const struct key_spec *spec, const struct slice *v, const char *const *words,
            const bool *values, const char *expected)
{
    int k = word_index(v, words);

    if (k < 0) {
        char shown[ECHO_SIZE];
        echo(v, shown);
        return vfdswmr_errtext(ctx->errbuf, ctx->errlen, "%s=%s: expected %s", spec->name, shown, expected);
    }
    *(bool *)field(ctx->cfg, spec) = values[k];
    return 0;
}

static int
parse_bool(struct parse_ctx *ctx, const struct key_spec *spec, const struct slice *v)
{
    static const char *const words[] = {"0", "false", "1", "true", NULL};
    static const bool values[] = {false, false, true, true};

    return parse_words(ctx, spec, v, words, values, "0, 1, false or true");
}

/* publish=flush (a consistency point is published before the flush
 * returns) or publish=tick (only at the end of each tick): the field is
 * publish_at_tick_only. */
static int
parse_publish(struct parse_ctx *ctx, const struct key_spec *spec, const struct slice *v)
{
    static const char *const words[] = {"flush", "tick", NULL};
    static const bool values[] = {false, true};

    return parse_words(ctx, spec, v, words, values, "flush or tick");
}

/* Unescapes a path value into its field; *len receives its length. */
static int
store_path(struct parse_ctx *ctx, const struct key_spec *spec, const struct slice *v, size_t *len)
{
    char *dst = field(ctx->cfg, spec);
    char shown[ECHO_SIZE];
    size_t n = 0;
    dst[0] = '\0';
    if (!parens_balance(v)) {
        echo(v, shown);
        return vfdswmr_errtext(ctx->errbuf, ctx->errlen,
                               "%s=%s: unbalanced parentheses; write \\( and \\) for literal ones", spec->name, shown);
    }
    for (size_t i = 0; i < v->len;) {
        char c = next_char(v, &i);
        if (c == '\n') {
            echo(v, shown);
            return vfdswmr_errtext(ctx->errbuf, ctx->errlen, "%s=%s: a path must not contain a newline", spec->name,
                                   shown);
        }
        if (n == VFDSWMR_MAX_PATH)
            return vfdswmr_errtext(ctx->errbuf, ctx->errlen, "%s: path longer than %d bytes", spec->name,
                                   VFDSWMR_MAX_PATH);
        dst[n++] = c;
        dst[n] = '\0';
    }
    *len = n;
    return 0;
}

static int
parse_path(struct parse_ctx *ctx, const struct key_spec *spec, const struct slice *v)
{
    size_t len;
    return store_path(ctx, spec, v, &len);
}

static int
parse_file_name(struct parse_ctx *ctx, const struct key_spec *spec, const struct slice *v)
{
    size_t len;
    if (store_path(ctx, spec, v, &len) < 0)
        return -1;
    if (memchr(field(ctx->cfg, spec), '/', len) != NULL) {
        char shown[ECHO_SIZE];
        echo(v, shown);
        return vfdswmr_errtext(ctx->errbuf, ctx->errlen, "%s=%s: must be a file name without a directory part",
                               spec->name, shown);
    }
    return 0;
}

/* under := NAME [blanks] [ '(' nested ')' ], nested kept verbatim. */
static int
parse_under(struct parse_ctx *ctx, const struct key_spec *spec, const struct slice *v)
{
    char shown[ECHO_SIZE];
    size_t name_len = 0;
    while (name_len < v->len && is_name_char(v->p[name_len]))
        name_len++;
    size_t i = name_len;
    while (i < v->len && is_blank(v->p[i]))
        i++;

    bool has_config = i < v->len;
    size_t nested_start = i + 1, nested_len = 0;
    bool well_formed = name_len > 0;
    if (well_formed && has_config) {
        /* v is trimmed, so whatever follows the ')' is not a blank */
        well_formed = v->p[i] == '(' && matching_paren(v, i) == v->len - 1;
        if (well_formed)
            nested_len = v->len - 1 - nested_start;
    }
    echo(v, shown);
    if (!well_formed)
        return vfdswmr_errtext(ctx->errbuf, ctx->errlen,
                               "%s=%s: expected a driver name ([A-Za-z0-9_]+), optionally followed by "
                               "(its configuration)",
                               spec->name, shown);
    if (name_len > VFDSWMR_MAX_DRIVER_NAME)
        return vfdswmr_errtext(ctx->errbuf, ctx->errlen, "%s=%s: driver name longer than %d characters", spec->name,
                               shown, VFDSWMR_MAX_DRIVER_NAME);
    if (nested_len > VFDSWMR_MAX_NESTED_CONFIG)
        return vfdswmr_errtext(ctx->errbuf, ctx->errlen,
                               "%s=%s: configuration of the lower driver longer than %d bytes", spec->name, shown,
                               VFDSWMR_MAX_NESTED_CONFIG);

    vfdswmr_config_t *cfg = ctx->cfg;
    memcpy(cfg->under_name, v->p, name_len);
    cfg->under_name[name_len] = '\0';
    if (has_config)
        memcpy(cfg->under_config, v->p + nested_start, nested_len);
    cfg->under_config[nested_len] = '\0';
    cfg->under_has_config = has_config;
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Segments                                                                 */

static const struct key_spec *
lookup(const struct slice *key, size_t *index)
{
    for (size_t i = 0; i < N_KEYS; i++) {
        if (key_specs[i].name_len == key->len && memcmp(key_specs[i].name, key->p, key->len) == 0) {
            *index = i;
            return &key_specs[i];
        }
    }
    return NULL;
}

/* One `key=value` segment (without its ';'); blank segments are ignored. */
static int
parse_segment(struct parse_ctx *ctx, const struct slice *segment)
{
    struct slice s = trim(segment);
    if (s.len == 0)
        return 0;

    size_t eq = find_top_level(&s, '=');
    if (eq == s.len) {
        char shown[ECHO_SIZE];
        echo(&s, shown);
        return vfdswmr_errtext(ctx->errbuf, ctx->errlen, "\"%s\" at offset %zu: expected key=value", shown, s.off);
    }
    struct slice raw_key = sub(&s, 0, eq);
    struct slice key = trim(&raw_key);
    if (key.len == 0)
        return vfdswmr_errtext(ctx->errbuf, ctx->errlen, "empty key at offset %zu: expected key=value", s.off);

    size_t index = 0;
    const struct key_spec *spec = lookup(&key, &index);
    if (spec == NULL)
        return fail_unknown_key(ctx, &key);
    uint32_t bit = UINT32_C(1) << index;
    if (ctx->seen & bit)
        return vfdswmr_errtext(ctx->errbuf, ctx->errlen, "duplicate key \"%s\"", spec->name);
    for (size_t i = 0; i < N_KEYS; i++) /* two names of one setting */
        if (((ctx->seen >> i) & 1u) && key_specs[i].offset == spec->offset)
            return vfdswmr_errtext(ctx->errbuf, ctx->errlen, "\"%s\" and \"%s\" name one setting: give one of them",
                                   key_specs[i].name, spec->name);
    ctx->seen |= bit;

    struct slice raw_value = sub(&s, eq + 1, s.len);
    struct slice value = trim(&raw_value);
    return spec->parse(ctx, spec, &value);
}

/*
 * End of the segment that starts at text[pos]: the first ';' outside
 * escapes and parentheses, or the terminating NUL.
 */
static int
segment_end(const struct parse_ctx *ctx, const char *text, size_t pos, size_t *end)
{
    size_t depth = 0;
    for (size_t i = pos;; i++) {
        char c = text[i];
        if (c == '\0' || (c == ';' && depth == 0)) {
            *end = i;
            return 0;
        }
        if (c == '\\') {
            if (text[i + 1] == '\0')
                return vfdswmr_errtext(ctx->errbuf, ctx->errlen, "trailing backslash at offset %zu", i);
            i++;
        }
        else if (c == '(') {
            depth++;
        }
        else if (c == ')' && depth > 0) {
            depth--;
        }
    }
}

/* ---------------------------------------------------------------------- */
/* Public functions                                                         */

void
vfdswmr_config_defaults(vfdswmr_config_t *cfg)
{
    if (cfg == NULL)
        return;
    memset(cfg, 0, sizeof *cfg);
    cfg->tick_len = VFDSWMR_DEFAULT_TICK_LEN;
    cfg->max_lag = VFDSWMR_DEFAULT_MAX_LAG;
    cfg->md_pages_reserved = VFDSWMR_DEFAULT_MD_PAGES_RESERVED;
    cfg->presume_posix_semantics = true;
    cfg->maintain_metadata_file = true;
    cfg->generate_updater_files = false;
    cfg->durable = false;
    cfg->publish_at_tick_only = false;
    cfg->pb_expansion_threshold = 0;
    cfg->open_timeout = VFDSWMR_DEFAULT_OPEN_TIMEOUT;
    cfg->keep_metadata_file = false;
    cfg->chunk_cache_tag = true;
    cfg->chunk_cache_readahead = true;
    cfg->chunk_cache_max_entry = UINT64_MAX; /* not given: from chunk_cache_size */
    cfg->chunk_cache_dset_min = UINT64_MAX;
    cfg->versioned_max = VFDSWMR_DEFAULT_VERSIONED_MAX;
    memcpy(cfg->under_name, VFDSWMR_DEFAULT_UNDER, sizeof VFDSWMR_DEFAULT_UNDER);
    cfg->under_has_config = false;
}

int
vfdswmr_config_parse(const char *text, vfdswmr_config_t *cfg, char *errbuf, size_t errlen)
{
    struct parse_ctx ctx = {cfg, errbuf, errlen, 0};
    if (errbuf != NULL && errlen > 0)
        errbuf[0] = '\0';
    if (cfg == NULL)
        return vfdswmr_errtext(errbuf, errlen, "no configuration structure to fill");
    vfdswmr_config_defaults(cfg);
    if (text == NULL)
        return 0;

    size_t pos = 0;
    while (text[pos] != '\0') {
        size_t end = 0;
        if (segment_end(&ctx, text, pos, &end) < 0)
            return -1;
        struct slice segment = {text + pos, end - pos, pos};
        if (parse_segment(&ctx, &segment) < 0)
            return -1;
        pos = text[end] == ';' ? end + 1 : end;
    }
    cfg->given = ctx.seen;
    return 0;
}

bool
vfdswmr_config_given(const vfdswmr_config_t *cfg, const char *key)
{
    for (size_t i = 0; i < N_KEYS; i++)
        if (!strcmp(key_specs[i].name, key))
            return (cfg->given >> i) & 1u;
    return false;
}

int
vfdswmr_config_check_writer(const vfdswmr_config_t *cfg, char *errbuf, size_t errlen)
{
    if (errbuf != NULL && errlen > 0)
        errbuf[0] = '\0';
    if (cfg == NULL)
        return vfdswmr_errtext(errbuf, errlen, "no configuration to check");
    if (!cfg->maintain_metadata_file && !cfg->generate_updater_files)
        return vfdswmr_errtext(errbuf, errlen,
                               "maintain_metadata_file=0 and generate_updater_files=0: the writer must do "
                               "at least one of them");
    return 0;
}

const char *
vfdswmr_config_env(void)
{
    const char *drv = getenv("HDF5_DRIVER");

    if (drv && (!strcmp(drv, "vfd_swmr_writer") || !strcmp(drv, "vfd_swmr_reader")))
        return getenv("HDF5_DRIVER_CONFIG");
    return NULL;
}
