/*
 * Unit tests of common/drvconfig.c, the configuration string parser.
 *
 * Every check looks at data: the parsed fields, or the exact error message.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drvconfig.h"

#define KEY_LIST                                                                                                \
    "tick_len, max_lag, md_pages_reserved, presume_posix_semantics, maintain_metadata_file, "                   \
    "generate_updater_files, durable, flush_raw_data, publish, md_file_path, md_file_name, updater_file_path, " \
    "log_file_path, pb_expansion_threshold, open_timeout, keep_metadata_file, updater_keep_ticks, "             \
    "chunk_cache_size, chunk_cache_max_entry, chunk_cache_dset_min, chunk_cache_tag, chunk_cache_readahead, "   \
    "versioned_max, under"

#define UNDER_FORM ": expected a driver name ([A-Za-z0-9_]+), optionally followed by (its configuration)"

/* ---------------------------------------------------------------------- */
/* Helpers                                                                  */

static vfdswmr_config_t *
new_config(void)
{
    vfdswmr_config_t *cfg = malloc(sizeof *cfg);
    assert_non_null(cfg);
    memset(cfg, 0xA5, sizeof *cfg); /* garbage: the parser must reset it */
    return cfg;
}

static void
assert_defaults(const vfdswmr_config_t *cfg)
{
    assert_int_equal(cfg->tick_len, VFDSWMR_DEFAULT_TICK_LEN);
    assert_int_equal(cfg->max_lag, VFDSWMR_DEFAULT_MAX_LAG);
    assert_int_equal(cfg->md_pages_reserved, VFDSWMR_DEFAULT_MD_PAGES_RESERVED);
    assert_true(cfg->presume_posix_semantics);
    assert_true(cfg->maintain_metadata_file);
    assert_false(cfg->generate_updater_files);
    assert_false(cfg->durable);
    assert_int_equal(cfg->pb_expansion_threshold, 0);
    assert_int_equal(cfg->open_timeout, VFDSWMR_DEFAULT_OPEN_TIMEOUT);
    assert_false(cfg->keep_metadata_file);
    assert_int_equal(cfg->updater_keep_ticks, 0);
    assert_string_equal(cfg->md_file_path, "");
    assert_string_equal(cfg->md_file_name, "");
    assert_string_equal(cfg->updater_file_path, "");
    assert_string_equal(cfg->log_file_path, "");
    assert_string_equal(cfg->under_name, VFDSWMR_DEFAULT_UNDER);
    assert_string_equal(cfg->under_config, "");
    assert_false(cfg->under_has_config);
}

/* Parses text, which must succeed; the caller frees the result. */
static vfdswmr_config_t *
parse_ok(const char *text)
{
    vfdswmr_config_t *cfg = new_config();
    char err[VFDSWMR_CONFIG_ERRLEN];
    memcpy(err, "stale", sizeof "stale");
    int rc = vfdswmr_config_parse(text, cfg, err, sizeof err);
    if (rc != 0)
        print_error("unexpected failure for \"%s\": %s\n", text ? text : "(null)", err);
    assert_int_equal(rc, 0);
    assert_string_equal(err, "");
    return cfg;
}

/* Parses text, which must fail with exactly `message`. */
static void
expect_error(const char *text, const char *message)
{
    vfdswmr_config_t *cfg = new_config();
    char err[VFDSWMR_CONFIG_ERRLEN];
    memset(err, 'x', sizeof err);
    int rc = vfdswmr_config_parse(text, cfg, err, sizeof err);
    free(cfg);
    assert_int_equal(rc, -1);
    assert_non_null(memchr(err, '\0', sizeof err));
    assert_string_equal(err, message);
}

/* "key=value" for one key. */
static void
parse_one(char *buf, size_t len, const char *key, const char *value)
{
    int n = snprintf(buf, len, "%s=%s", key, value);
    assert_true(n > 0 && (size_t)n < len);
}

/* A string of n copies of c (caller frees). */
static char *
repeat(char c, size_t n)
{
    char *s = malloc(n + 1);
    assert_non_null(s);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

/* ---------------------------------------------------------------------- */
/* Keys and defaults                                                        */

static void
test_keys_table(void **state)
{
    (void)state;
    static const char *const expected[] = {"tick_len",
                                           "max_lag",
                                           "md_pages_reserved",
                                           "presume_posix_semantics",
                                           "maintain_metadata_file",
                                           "generate_updater_files",
                                           "durable",
                                           "flush_raw_data",
                                           "publish",
                                           "md_file_path",
                                           "md_file_name",
                                           "updater_file_path",
                                           "log_file_path",
                                           "pb_expansion_threshold",
                                           "open_timeout",
                                           "keep_metadata_file",
                                           "updater_keep_ticks",
                                           "chunk_cache_size",
                                           "chunk_cache_max_entry",
                                           "chunk_cache_dset_min",
                                           "chunk_cache_tag",
                                           "chunk_cache_readahead",
                                           "versioned_max",
                                           "under"};
    size_t n = sizeof expected / sizeof expected[0];
    for (size_t i = 0; i < n; i++) {
        assert_non_null(vfdswmr_config_keys[i]);
        assert_string_equal(vfdswmr_config_keys[i], expected[i]);
    }
    assert_null(vfdswmr_config_keys[n]);
}

static void
test_defaults(void **state)
{
    (void)state;
    vfdswmr_config_t *cfg = new_config();
    vfdswmr_config_defaults(cfg);
    assert_defaults(cfg);
    vfdswmr_config_defaults(NULL); /* must not crash */
    free(cfg);
}

static void
test_parse_empty_gives_defaults(void **state)
{
    (void)state;
    const char *texts[] = {NULL, "", "  ;  ", ";", ";;;", " \t\n", "max_lag=9;;", ";;tick_len=4"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        vfdswmr_config_t *cfg = parse_ok(texts[i]);
        if (i == 6) {
            assert_int_equal(cfg->max_lag, 9);
            cfg->max_lag = VFDSWMR_DEFAULT_MAX_LAG;
        }
        assert_defaults(cfg);
        free(cfg);
    }
}

static void
test_parse_resets_previous_values(void **state)
{
    (void)state;
    vfdswmr_config_t *cfg = parse_ok("max_lag=50;under=core(x=1);md_file_path=/p");
    assert_int_equal(cfg->max_lag, 50);
    char err[VFDSWMR_CONFIG_ERRLEN];
    assert_int_equal(vfdswmr_config_parse("tick_len=1", cfg, err, sizeof err), 0);
    assert_int_equal(cfg->tick_len, 1);
    cfg->tick_len = VFDSWMR_DEFAULT_TICK_LEN;
    assert_defaults(cfg);
    free(cfg);
}

static void
test_all_keys_at_once(void **state)
{
    (void)state;
    vfdswmr_config_t *cfg = parse_ok("tick_len=10;max_lag=20;md_pages_reserved=30;"
                                     "presume_posix_semantics=false;maintain_metadata_file=0;"
                                     "generate_updater_files=true;flush_raw_data=1;"
                                     "md_file_path=/mnt/md;md_file_name=f.md;"
                                     "updater_file_path=/mnt/ud/u;log_file_path=/tmp/log;"
                                     "pb_expansion_threshold=40;open_timeout=25;"
                                     "keep_metadata_file=true;under=core(a=1)");
    assert_int_equal(cfg->tick_len, 10);
    assert_int_equal(cfg->max_lag, 20);
    assert_int_equal(cfg->md_pages_reserved, 30);
    assert_false(cfg->presume_posix_semantics);
    assert_false(cfg->maintain_metadata_file);
    assert_true(cfg->generate_updater_files);
    assert_true(cfg->durable);
    assert_string_equal(cfg->md_file_path, "/mnt/md");
    assert_string_equal(cfg->md_file_name, "f.md");
    assert_string_equal(cfg->updater_file_path, "/mnt/ud/u");
    assert_string_equal(cfg->log_file_path, "/tmp/log");
    assert_int_equal(cfg->pb_expansion_threshold, 40);
    assert_int_equal(cfg->open_timeout, 25);
    assert_true(cfg->keep_metadata_file);
    assert_string_equal(cfg->under_name, "core");
    assert_string_equal(cfg->under_config, "a=1");
    assert_true(cfg->under_has_config);
    free(cfg);
}

/* ---------------------------------------------------------------------- */
/* Integers                                                                 */

struct int_key {
    const char *key;
    size_t offset;
    uint32_t min, max;
    const char *unit;
};

static const struct int_key int_keys[] = {
    {"tick_len", offsetof(vfdswmr_config_t, tick_len), 0, VFDSWMR_MAX_TICK_LEN, "tenths of a second"},
    {"max_lag", offsetof(vfdswmr_config_t, max_lag), VFDSWMR_MIN_MAX_LAG, VFDSWMR_MAX_MAX_LAG, "ticks"},
    {"md_pages_reserved", offsetof(vfdswmr_config_t, md_pages_reserved), 1, VFDSWMR_MAX_MD_PAGES_RESERVED, "pages"},
    {"pb_expansion_threshold", offsetof(vfdswmr_config_t, pb_expansion_threshold), 0, 100,
     "times the page buffer size"},
    {"open_timeout", offsetof(vfdswmr_config_t, open_timeout), 0, VFDSWMR_MAX_TICK_LEN, "tenths of a second"},
    {"updater_keep_ticks", offsetof(vfdswmr_config_t, updater_keep_ticks), 0, VFDSWMR_MAX_MAX_LAG, "ticks"},
};

static uint32_t
int_field(const vfdswmr_config_t *cfg, const struct int_key *k)
{
    uint32_t v;
    memcpy(&v, (const char *)cfg + k->offset, sizeof v);
    return v;
}

static void
expect_int(const struct int_key *k, const char *value, uint32_t expected)
{
    char text[128];
    parse_one(text, sizeof text, k->key, value);
    vfdswmr_config_t *cfg = parse_ok(text);
    assert_int_equal(int_field(cfg, k), expected);
    free(cfg);
}

static void
expect_int_error(const struct int_key *k, const char *value, const char *what)
{
    char text[128], message[256];
    parse_one(text, sizeof text, k->key, value);
    snprintf(message, sizeof message, "%s=%s: %s; expected an integer from %u to %u (%s)", k->key, value, what,
             (unsigned)k->min, (unsigned)k->max, k->unit);
    expect_error(text, message);
}

static void
test_integers_valid_and_bounds(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof int_keys / sizeof int_keys[0]; i++) {
        const struct int_key *k = &int_keys[i];
        char buf[32];
        snprintf(buf, sizeof buf, "%u", (unsigned)k->min);
        expect_int(k, buf, k->min);
        snprintf(buf, sizeof buf, "%u", (unsigned)k->max);
        expect_int(k, buf, k->max);
        snprintf(buf, sizeof buf, "%u", (unsigned)(k->min + k->max) / 2);
        expect_int(k, buf, (k->min + k->max) / 2);
        snprintf(buf, sizeof buf, "000%u", (unsigned)k->max); /* leading zeros are decimal */
        expect_int(k, buf, k->max);
    }
}

static void
test_integers_invalid(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof int_keys / sizeof int_keys[0]; i++) {
        const struct int_key *k = &int_keys[i];
        char buf[32];
        if (k->min > 0) {
            snprintf(buf, sizeof buf, "%u", (unsigned)k->min - 1);
            expect_int_error(k, buf, "out of range");
        }
        snprintf(buf, sizeof buf, "%u", (unsigned)k->max + 1);
        expect_int_error(k, buf, "out of range");
        expect_int_error(k, "99999999999999999999", "out of range");
        expect_int_error(k, "4294967296", "out of range");           /* 2^32 must not wrap to 0 */
        expect_int_error(k, "4294967299", "out of range");           /* nor to 3 */
        expect_int_error(k, "18446744073709551621", "out of range"); /* 2^64 + 5 */
        expect_int_error(k, "abc", "not a number");
        expect_int_error(k, "", "not a number");
        expect_int_error(k, "+5", "not a number");
        expect_int_error(k, "-1", "not a number");
        expect_int_error(k, "0x10", "not a number");
        expect_int_error(k, "1 0", "not a number");
        expect_int_error(k, "5.0", "not a number");
        expect_int_error(k, "5e1", "not a number");
        expect_int_error(k, "(5)", "not a number");
    }
}

static void
test_integer_messages_verbatim(void **state)
{
    (void)state;
    expect_error("max_lag=2", "max_lag=2: out of range; expected an integer from 3 to 100000 (ticks)");
    expect_error("tick_len=abc",
                 "tick_len=abc: not a number; expected an integer from 0 to 36000 (tenths of a second)");
    expect_error("md_pages_reserved=0",
                 "md_pages_reserved=0: out of range; expected an integer from 1 to 65536 (pages)");
    expect_error("pb_expansion_threshold=101", "pb_expansion_threshold=101: out of range; "
                                               "expected an integer from 0 to 100 (times the page buffer size)");
}

static void
test_integer_escapes_and_blanks(void **state)
{
    (void)state;
    vfdswmr_config_t *cfg = parse_ok("max_lag=\\5;tick_len= \t12\n ");
    assert_int_equal(cfg->max_lag, 5);
    assert_int_equal(cfg->tick_len, 12);
    free(cfg);
    /* an escaped blank is part of the value */
    expect_error("max_lag=5\\ ", "max_lag=5\\ : not a number; expected an integer from 3 to 100000 (ticks)");
}

/* ---------------------------------------------------------------------- */
/* Booleans                                                                 */

static const struct {
    const char *key;
    size_t offset;
} bool_keys[] = {
    {"presume_posix_semantics", offsetof(vfdswmr_config_t, presume_posix_semantics)},
    {"maintain_metadata_file", offsetof(vfdswmr_config_t, maintain_metadata_file)},
    {"generate_updater_files", offsetof(vfdswmr_config_t, generate_updater_files)},
    {"durable", offsetof(vfdswmr_config_t, durable)},
    {"flush_raw_data", offsetof(vfdswmr_config_t, durable)},
    {"keep_metadata_file", offsetof(vfdswmr_config_t, keep_metadata_file)},
};

static void
test_booleans(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        bool value;
    } good[] = {{"0", false},   {"1", true},      {"false", false}, {"true", true}, {"FALSE", false},
                {"TRUE", true}, {"False", false}, {"tRuE", true},   {" 1 ", true},  {"\\0", false}};
    static const char *const bad[] = {"maybe", "2",  "",   "yes",  "no", "truee",
                                      "01",    "00", "-1", "fals", "t",  "true false"};
    for (size_t k = 0; k < sizeof bool_keys / sizeof bool_keys[0]; k++) {
        char text[128], message[256];
        for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
            parse_one(text, sizeof text, bool_keys[k].key, good[i].text);
            vfdswmr_config_t *cfg = parse_ok(text);
            bool v;
            memcpy(&v, (const char *)cfg + bool_keys[k].offset, sizeof v);
            assert_int_equal(v, good[i].value);
            free(cfg);
        }
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            parse_one(text, sizeof text, bool_keys[k].key, bad[i]);
            snprintf(message, sizeof message, "%s=%s: expected 0, 1, false or true", bool_keys[k].key, bad[i]);
            expect_error(text, message);
        }
    }
    expect_error("flush_raw_data=maybe", "flush_raw_data=maybe: expected 0, 1, false or true");
    /* durable and its former name are one setting: one of them, once */
    expect_error("durable=1;flush_raw_data=1", "\"durable\" and \"flush_raw_data\" name one setting: give one of them");
    expect_error("flush_raw_data=0;durable=1", "\"flush_raw_data\" and \"durable\" name one setting: give one of them");
}

/* ---------------------------------------------------------------------- */
/* Paths                                                                    */

static const struct {
    const char *key;
    size_t offset;
} path_keys[] = {
    {"md_file_path", offsetof(vfdswmr_config_t, md_file_path)},
    {"md_file_name", offsetof(vfdswmr_config_t, md_file_name)},
    {"updater_file_path", offsetof(vfdswmr_config_t, updater_file_path)},
    {"log_file_path", offsetof(vfdswmr_config_t, log_file_path)},
};

static void
test_paths(void **state)
{
    (void)state;
    static const struct {
        const char *raw, *value;
    } cases[] = {
        {"x.md", "x.md"},
        {"", ""},
        {"  spaced  ", "spaced"},
        {"a\\;b\\(c\\)\\\\d", "a;b(c)\\d"},
        {"trail\\ ", "trail "},
        {"\\ lead", " lead"},
        {"\\ ", " "},
        {"in ner", "in ner"},
        {"x(1)", "x(1)"},     /* balanced parentheses are literal */
        {"x(1;2)", "x(1;2)"}, /* and protect a ';' */
        {"\\=\\x", "=x"},
        {"a=b", "a=b"}, /* only the first '=' separates */
        {"caf\xc3\xa9", "caf\xc3\xa9"},
    };
    for (size_t k = 0; k < sizeof path_keys / sizeof path_keys[0]; k++) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            char text[128];
            parse_one(text, sizeof text, path_keys[k].key, cases[i].raw);
            vfdswmr_config_t *cfg = parse_ok(text);
            assert_string_equal((const char *)cfg + path_keys[k].offset, cases[i].value);
            free(cfg);
        }
    }
    vfdswmr_config_t *cfg = parse_ok("md_file_path=/a\\;b\\(c\\)\\\\d;max_lag=8");
    assert_string_equal(cfg->md_file_path, "/a;b(c)\\d");
    assert_int_equal(cfg->max_lag, 8);
    free(cfg);
    cfg = parse_ok("updater_file_path=/nfs/u/x(1);log_file_path=/l");
    assert_string_equal(cfg->updater_file_path, "/nfs/u/x(1)");
    assert_string_equal(cfg->log_file_path, "/l");
    free(cfg);
}

static void
test_path_length_limit(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof path_keys / sizeof path_keys[0]; k++) {
        const char *key = path_keys[k].key;
        size_t keylen = strlen(key);
        char *value = repeat('p', VFDSWMR_MAX_PATH + 1);
        char *text = malloc(keylen + 1 + 2 * VFDSWMR_MAX_PATH + 8);
        assert_non_null(text);

        /* exactly VFDSWMR_MAX_PATH bytes */
        value[VFDSWMR_MAX_PATH] = '\0';
        sprintf(text, "%s=%s", key, value);
        vfdswmr_config_t *cfg = parse_ok(text);
        assert_int_equal(strlen((const char *)cfg + path_keys[k].offset), VFDSWMR_MAX_PATH);
        assert_string_equal((const char *)cfg + path_keys[k].offset, value);
        free(cfg);

        /* one more is rejected */
        char message[128];
        snprintf(message, sizeof message, "%s: path longer than %d bytes", key, VFDSWMR_MAX_PATH);
        value[VFDSWMR_MAX_PATH] = 'p';
        sprintf(text, "%s=%s", key, value);
        expect_error(text, message);

        /* the limit applies after unescaping: 1024 escaped characters fit */
        char *p = text + sprintf(text, "%s=", key);
        for (size_t i = 0; i < VFDSWMR_MAX_PATH; i++) {
            *p++ = '\\';
            *p++ = ';';
        }
        *p = '\0';
        cfg = parse_ok(text);
        char *semis = repeat(';', VFDSWMR_MAX_PATH);
        assert_string_equal((const char *)cfg + path_keys[k].offset, semis);
        free(semis);
        free(cfg);
        strcpy(p, "\\;");
        expect_error(text, message);

        free(text);
        free(value);
    }
    /* the message as documented, with the macro's value spelled out */
    char *text = repeat('x', sizeof "md_file_path=" - 1 + 1025);
    memcpy(text, "md_file_path=", sizeof "md_file_path=" - 1);
    expect_error(text, "md_file_path: path longer than 1024 bytes");
    text[strlen(text) - 1] = '\0';
    vfdswmr_config_t *cfg = parse_ok(text);
    assert_int_equal(strlen(cfg->md_file_path), 1024);
    free(cfg);
    free(text);
}

static void
test_path_errors(void **state)
{
    (void)state;
    expect_error("md_file_name=a/b", "md_file_name=a/b: must be a file name without a directory part");
    expect_error("md_file_name=/abs.md", "md_file_name=/abs.md: must be a file name without a directory part");
    expect_error("md_file_name=a\\/b", "md_file_name=a\\/b: must be a file name without a directory part");
    expect_error("md_file_path=/a\nb", "md_file_path=/a?b: a path must not contain a newline");
    expect_error("log_file_path=/a\\\nb", "log_file_path=/a\\?b: a path must not contain a newline");
    expect_error("md_file_path=/a(b", "md_file_path=/a(b: unbalanced parentheses; write \\( and \\) for literal ones");
    expect_error("md_file_path=/a)b;max_lag=5",
                 "md_file_path=/a)b: unbalanced parentheses; write \\( and \\) for literal ones");
    /* an unclosed '(' protects the rest of the string, which stays in the value */
    expect_error("updater_file_path=/u(;max_lag=5", "updater_file_path=/u(;max_lag=5: unbalanced "
                                                    "parentheses; write \\( and \\) for literal ones");
}

/* ---------------------------------------------------------------------- */
/* Syntax                                                                   */

static void
test_blanks_and_separators(void **state)
{
    (void)state;
    vfdswmr_config_t *cfg = parse_ok(" \t max_lag \n = \t 9 \n; tick_len= 5 ;;  ;md_file_name = n.md\t;");
    assert_int_equal(cfg->max_lag, 9);
    assert_int_equal(cfg->tick_len, 5);
    assert_string_equal(cfg->md_file_name, "n.md");
    free(cfg);
    /* CRLF line ends, as in a configuration kept in a Windows-edited file */
    cfg = parse_ok("max_lag=11\r\n;\r\ntick_len=3\r\n");
    assert_int_equal(cfg->max_lag, 11);
    assert_int_equal(cfg->tick_len, 3);
    free(cfg);
}

static void
test_trailing_backslash(void **state)
{
    (void)state;
    expect_error("md_file_path=/a\\", "trailing backslash at offset 15");
    expect_error("\\", "trailing backslash at offset 0");
    expect_error("max_lag=5;log_file_path=x\\\\\\", "trailing backslash at offset 27");
    expect_error("under=core(a\\", "trailing backslash at offset 12");
    /* an escaped backslash at the end is fine */
    vfdswmr_config_t *cfg = parse_ok("log_file_path=x\\\\");
    assert_string_equal(cfg->log_file_path, "x\\");
    free(cfg);
}

/* publish=flush (the default) or publish=tick, any case; nothing else. */
static void
test_publish(void **state)
{
    (void)state;
    vfdswmr_config_t *cfg = parse_ok("");
    assert_false(cfg->publish_at_tick_only);
    free(cfg);
    cfg = parse_ok("publish=tick");
    assert_true(cfg->publish_at_tick_only);
    free(cfg);
    cfg = parse_ok("publish = Tick ");
    assert_true(cfg->publish_at_tick_only);
    free(cfg);
    cfg = parse_ok("publish=flush");
    assert_false(cfg->publish_at_tick_only);
    free(cfg);
    expect_error("publish=1", "publish=1: expected flush or tick");
    expect_error("publish=flushes", "publish=flushes: expected flush or tick");
    expect_error("publish=", "publish=: expected flush or tick");
    expect_error("publish=tick;publish=flush", "duplicate key \"publish\"");
}

static void
test_sizes(void **state)
{
    static const struct {
        const char *text;
        uint64_t bytes;
    } good[] = {{"0", 0},
                {"4096", 4096},
                {"1k", 1024},
                {"64M", 64ull << 20},
                {"64MiB", 64ull << 20},
                {"2g", 2ull << 30},
                {"3GB", 3ull << 30},
                {"1T", 1ull << 40},
                {" 8K ", 8192},
                {"1099511627776", 1ull << 40}};
    static const char *const bad[] = {
        "", "-1", "1.5M", "M", "12Q", "1Mx", "1KiBB", "2T", "1099511627777", "99999999999999999999999"};
    char text[128], want[256];

    (void)state;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        parse_one(text, sizeof text, "chunk_cache_size", good[i].text);
        vfdswmr_config_t *cfg = parse_ok(text);
        assert_true(cfg->chunk_cache_size == good[i].bytes);
        free(cfg);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        parse_one(text, sizeof text, "chunk_cache_max_entry", bad[i]);
        snprintf(want, sizeof want,
                 "chunk_cache_max_entry=%s: expected a byte count up to 1T, e.g. 67108864, 64M or 2G (K, M, G, "
                 "T: powers of 1024)",
                 bad[i]);
        expect_error(text, want);
    }
    vfdswmr_config_t *cfg = parse_ok("chunk_cache_size=1M;chunk_cache_dset_min=0;chunk_cache_tag=0");
    assert_true(cfg->chunk_cache_dset_min == 0 && cfg->chunk_cache_max_entry == UINT64_MAX && !cfg->chunk_cache_tag);
    free(cfg);
}

static void
test_key_errors(void **state)
{
    (void)state;
    expect_error("foo=1", "unknown key \"foo\"; accepted keys: " KEY_LIST);
    expect_error("max_lag=5;Max_lag=6", "unknown key \"Max_lag\"; accepted keys: " KEY_LIST);
    expect_error("tick len=4", "unknown key \"tick len\"; accepted keys: " KEY_LIST);
    expect_error("max_la\\g=4", "unknown key \"max_la\\g\"; accepted keys: " KEY_LIST);
    expect_error("max_lag=5;max_lag=6", "duplicate key \"max_lag\"");
    expect_error("under=core; max_lag=5 ;under=sec2", "duplicate key \"under\"");
    expect_error("md_file_path=;md_file_path=", "duplicate key \"md_file_path\"");
    expect_error("tick_len 4", "\"tick_len 4\" at offset 0: expected key=value");
    expect_error("max_lag=5;  tick_len 4 ;", "\"tick_len 4\" at offset 12: expected key=value");
    expect_error("max_lag=5;tick_len\\=4", "\"tick_len\\=4\" at offset 10: expected key=value");
    expect_error("under core(a=1)", "\"under core(a=1)\" at offset 0: expected key=value");
    expect_error("=5", "empty key at offset 0: expected key=value");
    expect_error("max_lag=5; \t=5", "empty key at offset 12: expected key=value");
}

static void
test_echo_truncated_and_sanitized(void **state)
{
    (void)state;
    char *junk = repeat('z', 100);
    char text[256];
    snprintf(text, sizeof text, "%s=1", junk);
    char message[512];
    snprintf(message, sizeof message, "unknown key \"%.64s...\"; accepted keys: " KEY_LIST, junk);
    expect_error(text, message);

    snprintf(text, sizeof text, "max_lag=%s", junk);
    snprintf(message, sizeof message, "max_lag=%.64s...: not a number; expected an integer from 3 to 100000 (ticks)",
             junk);
    expect_error(text, message);

    /* exactly 64 bytes: no "..." */
    snprintf(text, sizeof text, "max_lag=%.64s", junk);
    snprintf(message, sizeof message, "max_lag=%.64s: not a number; expected an integer from 3 to 100000 (ticks)",
             junk);
    expect_error(text, message);
    free(junk);

    /* a multi-byte character is not cut in the middle */
    char value[80];
    memset(value, 'a', 63);
    memcpy(value + 63, "\xc3\xa9", 3);
    snprintf(text, sizeof text, "max_lag=%s", value);
    snprintf(message, sizeof message, "max_lag=%.63s...: not a number; expected an integer from 3 to 100000 (ticks)",
             value);
    expect_error(text, message);

    expect_error("flush_raw_data=a\tb\x01", "flush_raw_data=a?b?: expected 0, 1, false or true");
    expect_error("x\ry=1", "unknown key \"x?y\"; accepted keys: " KEY_LIST);
}

/* ---------------------------------------------------------------------- */
/* under                                                                    */

static void
expect_under(const char *text, const char *name, const char *config, bool has_config)
{
    vfdswmr_config_t *cfg = parse_ok(text);
    assert_string_equal(cfg->under_name, name);
    assert_string_equal(cfg->under_config, config);
    assert_int_equal(cfg->under_has_config, has_config);
    free(cfg);
}

static void
test_under_valid(void **state)
{
    (void)state;
    expect_under("under=core", "core", "", false);
    expect_under("under = my_Driver_2 ", "my_Driver_2", "", false);
    expect_under("under=sec2()", "sec2", "", true);
    expect_under("under=core ( x=1 ) ", "core", " x=1 ", true);
    expect_under("under=core\t(a)", "core", "a", true);
    expect_under("under=my_driver(a=1\\;b=2)", "my_driver", "a=1\\;b=2", true);
    expect_under("under=d(p=/x\\)y\\(z;q=\\\\)", "d", "p=/x\\)y\\(z;q=\\\\", true);
    expect_under("under=d(a(b(c)d)e)", "d", "a(b(c)d)e", true);
    expect_under("under=d(a\\))", "d", "a\\)", true);

    vfdswmr_config_t *cfg = parse_ok("under=vfd_swmr_reader(under=core(x=1);max_lag=5);max_lag=9");
    assert_string_equal(cfg->under_name, "vfd_swmr_reader");
    assert_string_equal(cfg->under_config, "under=core(x=1);max_lag=5");
    assert_true(cfg->under_has_config);
    assert_int_equal(cfg->max_lag, 9);
    free(cfg);

    /* the nested configuration is not parsed here */
    expect_under("under=d(bogus;;=;max_lag=1)", "d", "bogus;;=;max_lag=1", true);
}

static void
test_under_invalid(void **state)
{
    (void)state;
    expect_error("under=", "under=" UNDER_FORM);
    expect_error("under=x-y", "under=x-y" UNDER_FORM);
    expect_error("under=a b", "under=a b" UNDER_FORM);
    expect_error("under=a.b", "under=a.b" UNDER_FORM);
    expect_error("under=\\core", "under=\\core" UNDER_FORM);
    expect_error("under=(a)", "under=(a)" UNDER_FORM);
    expect_error("under=x(a", "under=x(a" UNDER_FORM);
    expect_error("under=x(a(b);max_lag=5", "under=x(a(b);max_lag=5" UNDER_FORM);
    expect_error("under=x(a\\)", "under=x(a\\)" UNDER_FORM);
    expect_error("under=x)", "under=x)" UNDER_FORM);
    expect_error("under=x(a))", "under=x(a))" UNDER_FORM);
    expect_error("under=x(a)b", "under=x(a)b" UNDER_FORM);
    expect_error("under=x(a) b;max_lag=5", "under=x(a) b" UNDER_FORM);
    expect_error("under=x(a)\\ ", "under=x(a)\\ " UNDER_FORM);
    expect_error("under=x(a)(b)", "under=x(a)(b)" UNDER_FORM);
}

static void
test_under_lengths(void **state)
{
    (void)state;
    char text[VFDSWMR_MAX_NESTED_CONFIG + 128];
    char message[256];

    char *name = repeat('n', VFDSWMR_MAX_DRIVER_NAME + 1);
    name[VFDSWMR_MAX_DRIVER_NAME] = '\0';
    snprintf(text, sizeof text, "under=%s", name);
    expect_under(text, name, "", false);
    name[VFDSWMR_MAX_DRIVER_NAME] = 'n';
    snprintf(text, sizeof text, "under=%s(a)", name);
    snprintf(message, sizeof message, "under=%.64s...: driver name longer than %d characters", name,
             VFDSWMR_MAX_DRIVER_NAME);
    expect_error(text, message);
    free(name);

    char *nested = repeat('c', VFDSWMR_MAX_NESTED_CONFIG + 1);
    nested[VFDSWMR_MAX_NESTED_CONFIG] = '\0';
    snprintf(text, sizeof text, "under=core(%s)", nested);
    expect_under(text, "core", nested, true);
    nested[VFDSWMR_MAX_NESTED_CONFIG] = 'c';
    snprintf(text, sizeof text, "under=core(%s)", nested);
    snprintf(message, sizeof message, "under=core(%.59s...: configuration of the lower driver longer than %d bytes",
             nested, VFDSWMR_MAX_NESTED_CONFIG);
    expect_error(text, message);
    free(nested);
}

/* ---------------------------------------------------------------------- */
/* Error buffer handling                                                    */

static void
test_small_errbuf(void **state)
{
    (void)state;
    vfdswmr_config_t *cfg = new_config();
    char buf[8 + 8];
    memset(buf, 'C', sizeof buf);
    assert_int_equal(vfdswmr_config_parse("foo=1", cfg, buf, 8), -1);
    assert_string_equal(buf, "unknown");
    for (size_t i = 8; i < sizeof buf; i++)
        assert_int_equal(buf[i], 'C');

    memset(buf, 'C', sizeof buf);
    assert_int_equal(vfdswmr_config_parse("max_lag=1", cfg, buf, 1), -1);
    assert_int_equal(buf[0], '\0');
    assert_int_equal(buf[1], 'C');

    /* errlen 0: nothing is written */
    memset(buf, 'C', sizeof buf);
    assert_int_equal(vfdswmr_config_parse("max_lag=1", cfg, buf, 0), -1);
    assert_int_equal(buf[0], 'C');

    /* success clears the message */
    memset(buf, 'C', sizeof buf);
    assert_int_equal(vfdswmr_config_parse("max_lag=3", cfg, buf, 8), 0);
    assert_int_equal(buf[0], '\0');
    assert_int_equal(cfg->max_lag, 3);
    assert_int_equal(buf[8], 'C');

    /* no buffer at all */
    assert_int_equal(vfdswmr_config_parse("max_lag=1", cfg, NULL, 0), -1);
    assert_int_equal(vfdswmr_config_parse("max_lag=1", cfg, NULL, 64), -1);
    assert_int_equal(vfdswmr_config_parse("max_lag=4", cfg, NULL, 0), 0);
    assert_int_equal(cfg->max_lag, 4);
    free(cfg);

    memset(buf, 'C', sizeof buf);
    assert_int_equal(vfdswmr_config_parse("max_lag=4", NULL, buf, 8), -1);
    assert_string_equal(buf, "no conf");
    assert_int_equal(buf[8], 'C');
}

/* ---------------------------------------------------------------------- */
/* Writer checks                                                            */

static void
test_check_writer(void **state)
{
    (void)state;
    char err[VFDSWMR_CONFIG_ERRLEN];
    static const struct {
        const char *text;
        int rc;
    } cases[] = {
        {NULL, 0},
        {"maintain_metadata_file=0;generate_updater_files=1", 0},
        {"maintain_metadata_file=1;generate_updater_files=1", 0},
        {"maintain_metadata_file=1;generate_updater_files=0", 0},
        {"maintain_metadata_file=false;generate_updater_files=0", -1},
        {"maintain_metadata_file=0", -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        vfdswmr_config_t *cfg = parse_ok(cases[i].text);
        memcpy(err, "stale", sizeof "stale");
        assert_int_equal(vfdswmr_config_check_writer(cfg, err, sizeof err), cases[i].rc);
        assert_string_equal(err, cases[i].rc == 0 ? ""
                                                  : "maintain_metadata_file=0 and "
                                                    "generate_updater_files=0: the writer must do "
                                                    "at least one of them");
        free(cfg);
    }

    vfdswmr_config_t *cfg = parse_ok("maintain_metadata_file=0");
    char small[8 + 4];
    memset(small, 'C', sizeof small);
    assert_int_equal(vfdswmr_config_check_writer(cfg, small, 8), -1);
    assert_string_equal(small, "maintai");
    assert_int_equal(small[8], 'C');
    assert_int_equal(vfdswmr_config_check_writer(cfg, NULL, 0), -1);
    assert_false(cfg->maintain_metadata_file);
    free(cfg);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys_table),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_parse_empty_gives_defaults),
        cmocka_unit_test(test_parse_resets_previous_values),
        cmocka_unit_test(test_all_keys_at_once),
        cmocka_unit_test(test_integers_valid_and_bounds),
        cmocka_unit_test(test_integers_invalid),
        cmocka_unit_test(test_integer_messages_verbatim),
        cmocka_unit_test(test_integer_escapes_and_blanks),
        cmocka_unit_test(test_booleans),
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_path_length_limit),
        cmocka_unit_test(test_path_errors),
        cmocka_unit_test(test_blanks_and_separators),
        cmocka_unit_test(test_trailing_backslash),
        cmocka_unit_test(test_key_errors),
        cmocka_unit_test(test_publish),
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_echo_truncated_and_sanitized),
        cmocka_unit_test(test_under_valid),
        cmocka_unit_test(test_under_invalid),
        cmocka_unit_test(test_under_lengths),
        cmocka_unit_test(test_small_errbuf),
        cmocka_unit_test(test_check_writer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
