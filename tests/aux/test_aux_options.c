/*
 * The command line of vfd_swmr_aux (aux/options.c): every option in both
 * forms, the defaults, the precedence of explicit options over
 * --vfd_config, and every usage error with its exact message.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aux.h"

/* Parse a NULL-terminated argument list (argv[0] is added). */
static int
parse_v(aux_opts_t *o, char *err, size_t errlen, va_list ap)
{
    char *argv[32] = {"vfd_swmr_aux"};
    int argc = 1;
    char *a;

    while ((a = va_arg(ap, char *)) != NULL) {
        assert_true(argc < 31);
        argv[argc++] = a;
    }
    err[0] = '\0';
    return aux_opts_parse(o, argc, argv, err, errlen);
}

/* parse_ok(&o, args..., NULL): must succeed. */
static void
parse_ok(aux_opts_t *o, ...)
{
    char err[AUX_ERRLEN];
    va_list ap;
    int rc;

    va_start(ap, o);
    rc = parse_v(o, err, sizeof err, ap);
    va_end(ap);
    if (rc != 0)
        fail_msg("unexpected error: %s", err);
}

/* parse_err("expected message", args..., NULL): must fail with exactly it. */
static void
parse_err(const char *want, ...)
{
    char err[AUX_ERRLEN];
    aux_opts_t o;
    va_list ap;
    int rc;

    va_start(ap, want);
    rc = parse_v(&o, err, sizeof err, ap);
    va_end(ap);
    assert_int_equal(rc, -1);
    assert_string_equal(err, want);
}

static void
test_defaults(void **state)
{
    aux_opts_t o;

    (void)state;
    parse_ok(&o, "local.md", "nfs/f.h5.md.ud", NULL);
    assert_string_equal(o.md_file, "local.md");
    assert_string_equal(o.ud_base, "nfs/f.h5.md.ud");
    assert_null(o.log_file);
    assert_int_equal(o.polls_per_tick, 10);
    assert_int_equal(o.tick_len, 4);
    assert_int_equal(o.max_lag, 7);
    assert_int_equal(o.md_pages_reserved, 4);
    assert_string_equal(o.under, "sec2");
    assert_false(o.stats || o.verbose || o.help || o.version);
    assert_null(o.clock);
}

/* Every option with a value, as "--name value" and as "--name=value". */
static void
test_both_forms(void **state)
{
    static const char *forms[][2] = {{"--log_file", "aux.log"},
                                     {"--polls_per_tick", "25"},
                                     {"--tick_len", "12"},
                                     {"--max_lag", "30"},
                                     {"--vfd_config", "md_pages_reserved=9;under=core"}};
    aux_opts_t o;

    (void)state;
    for (int joined = 0; joined < 2; joined++) {
        char *argv[16] = {"vfd_swmr_aux"}, buf[5][128];
        int argc = 1;
        for (int i = 0; i < 5; i++) {
            if (joined) {
                snprintf(buf[i], sizeof buf[i], "%s=%s", forms[i][0], forms[i][1]);
                argv[argc++] = buf[i];
            }
            else {
                argv[argc++] = (char *)forms[i][0];
                argv[argc++] = (char *)forms[i][1];
            }
        }
        argv[argc++] = "--stats";
        argv[argc++] = "--verbose";
        argv[argc++] = "m";
        argv[argc++] = "u";
        char err[AUX_ERRLEN];
        assert_int_equal(aux_opts_parse(&o, argc, argv, err, sizeof err), 0);
        assert_string_equal(o.log_file, "aux.log");
        assert_int_equal(o.polls_per_tick, 25);
        assert_int_equal(o.tick_len, 12);
        assert_int_equal(o.max_lag, 30);
        assert_int_equal(o.md_pages_reserved, 9);
        assert_string_equal(o.under, "core");
        assert_true(o.stats && o.verbose);
        assert_string_equal(o.md_file, "m");
        assert_string_equal(o.ud_base, "u");
    }
}

static void
test_positionals_anywhere(void **state)
{
    aux_opts_t o;

    (void)state;
    parse_ok(&o, "m", "--stats", "u", "--tick_len", "3", NULL);
    assert_string_equal(o.md_file, "m");
    assert_string_equal(o.ud_base, "u");
    assert_true(o.stats);
    assert_int_equal(o.tick_len, 3);
    /* "--" ends the options; a lone "-" is an argument */
    parse_ok(&o, "--verbose", "--", "--stats", "-", NULL);
    assert_string_equal(o.md_file, "--stats");
    assert_string_equal(o.ud_base, "-");
    assert_true(o.verbose && !o.stats);
    /* a value may look like anything in the joined form */
    parse_ok(&o, "--log_file=--x", "m", "u", NULL);
    assert_string_equal(o.log_file, "--x");
}

/* A prefix no other option shares names that option (getopt_long). */
static void
test_abbreviations(void **state)
{
    aux_opts_t o;

    (void)state;
    parse_ok(&o, "--tick", "3", "--st", "--vfd=max_lag=9", "m", "u", NULL);
    assert_true(o.tick_len == 3 && o.stats && o.max_lag == 9);
    parse_err("--tick_len=x: not a number; expected an integer from 0 to 36000 (tenths of a second)", "--t=x", "m", "u",
              NULL);
    parse_err("--tick_len given more than once", "--tick_len=4", "--tick", "4", "m", "u", NULL);
    parse_err("unknown option \"--ver\"", "--ver", "m", "u", NULL); /* --verbose or --version */
}

static void
test_help_version(void **state)
{
    aux_opts_t o;

    (void)state;
    parse_ok(&o, "--help", NULL);
    assert_true(o.help && !o.version);
    parse_ok(&o, "--version", NULL);
    assert_true(o.version && !o.help);
    /* what follows --help is not looked at; what precedes it is */
    parse_ok(&o, "--help", "--bogus", NULL);
    assert_true(o.help);
    parse_err("unknown option \"--bogus\"", "--bogus", "--help", NULL);
    parse_err("--help takes no value", "--help=1", NULL);
}

static void
test_limits(void **state)
{
    aux_opts_t o;

    (void)state;
    parse_ok(&o, "--polls_per_tick=1", "--tick_len=0", "--max_lag=3", "m", "u", NULL);
    assert_true(o.polls_per_tick == 1 && o.tick_len == 0 && o.max_lag == 3);
    parse_ok(&o, "--polls_per_tick=1000", "--tick_len=36000", "--max_lag=100000", "m", "u", NULL);
    assert_true(o.polls_per_tick == 1000 && o.tick_len == 36000 && o.max_lag == 100000);
}

static void
test_bad_numbers(void **state)
{
    (void)state;
    parse_err("--tick_len=x: not a number; expected an integer from 0 to 36000 (tenths of a second)", "--tick_len=x",
              "m", "u", NULL);
    parse_err("--tick_len=: not a number; expected an integer from 0 to 36000 (tenths of a second)", "--tick_len=", "m",
              "u", NULL);
    parse_err("--tick_len=-1: not a number; expected an integer from 0 to 36000 (tenths of a second)", "--tick_len",
              "-1", "m", "u", NULL);
    parse_err("--tick_len=4.5: not a number; expected an integer from 0 to 36000 (tenths of a second)", "--tick_len",
              "4.5", "m", "u", NULL);
    parse_err("--tick_len=36001: out of range; expected an integer from 0 to 36000 (tenths of a second)",
              "--tick_len=36001", "m", "u", NULL);
    parse_err("--tick_len=99999999999999999999: out of range; expected an integer from 0 to 36000 (tenths of a "
              "second)",
              "--tick_len=99999999999999999999", "m", "u", NULL);
    parse_err("--polls_per_tick=0: out of range; expected an integer from 1 to 1000 (polls per tick)",
              "--polls_per_tick", "0", "m", "u", NULL);
    parse_err("--polls_per_tick=1001: out of range; expected an integer from 1 to 1000 (polls per tick)",
              "--polls_per_tick=1001", "m", "u", NULL);
    parse_err("--polls_per_tick= 5: not a number; expected an integer from 1 to 1000 (polls per tick)",
              "--polls_per_tick= 5", "m", "u", NULL);
    parse_err("--max_lag=2: out of range; expected an integer from 3 to 100000 (ticks)", "--max_lag=2", "m", "u", NULL);
    parse_err("--max_lag=100001: out of range; expected an integer from 3 to 100000 (ticks)", "--max_lag", "100001",
              "m", "u", NULL);
    parse_err("--max_lag=7x: not a number; expected an integer from 3 to 100000 (ticks)", "--max_lag=7x", "m", "u",
              NULL);
}

static void
test_missing_values(void **state)
{
    (void)state;
    parse_err("--tick_len: missing value; expected an integer from 0 to 36000 (tenths of a second)", "m", "u",
              "--tick_len", NULL);
    parse_err("--max_lag: missing value; expected an integer from 3 to 100000 (ticks)", "--max_lag", "--stats", "m",
              "u", NULL);
    parse_err("--polls_per_tick: missing value; expected an integer from 1 to 1000 (polls per tick)", "m", "u",
              "--polls_per_tick", NULL);
    parse_err("--log_file: missing value; expected a path", "--log_file", "--stats", "m", "u", NULL);
    parse_err("--log_file: missing value; expected a path", "m", "u", "--log_file", NULL);
    parse_err("--log_file: empty path", "--log_file=", "m", "u", NULL);
    parse_err("--vfd_config: missing value; expected a configuration string", "m", "u", "--vfd_config", NULL);
}

static void
test_unknown_and_misused(void **state)
{
    (void)state;
    parse_err("unknown option \"--foo\"", "--foo", "m", "u", NULL);
    parse_err("unknown option \"--foo=1\"", "m", "--foo=1", "u", NULL);
    parse_err("unknown option \"--tick-len=4\"", "--tick-len=4", "m", "u", NULL);
    parse_err("unknown option \"--TICK_LEN\"", "--TICK_LEN", "4", "m", "u", NULL);
    parse_err("unknown option \"--=x\"", "--=x", "m", "u", NULL); /* no name */
}

static void
test_unknown_short_and_misc(void **state)
{
    char long_opt[200];

    (void)state;
    parse_err("unknown option \"-v\"", "-v", "m", "u", NULL);
    parse_err("unknown option \"-tick_len\"", "-tick_len", "m", "u", NULL);
    parse_err("--stats takes no value", "--stats=yes", "m", "u", NULL);
    parse_err("--verbose takes no value", "--verbose=", "m", "u", NULL);
    parse_err("--tick_len given more than once", "--tick_len=4", "--tick_len", "4", "m", "u", NULL);
    parse_err("--stats given more than once", "--stats", "m", "u", "--stats", NULL);
    parse_err("--vfd_config given more than once", "--vfd_config=", "--vfd_config=tick_len=1", "m", "u", NULL);
    /* long values are cut after 64 bytes in messages */
    memset(long_opt, 'x', sizeof long_opt);
    memcpy(long_opt, "--", 2);
    long_opt[sizeof long_opt - 1] = '\0';
    {
        char want[128];
        snprintf(want, sizeof want, "unknown option \"--%.62s...\"", long_opt + 2);
        assert_int_equal(strlen(want), strlen("unknown option \"\"...") + 64);
        parse_err(want, long_opt, "m", "u", NULL);
    }
}

static void
test_positional_errors(void **state)
{
    static char long_path[AUX_MAX_PATH + 2];

    (void)state;
    parse_err("missing <md_file> and <ud_base>", NULL);
    parse_err("missing <md_file> and <ud_base>", "--stats", NULL);
    parse_err("missing <ud_base>", "m", NULL);
    parse_err("missing <ud_base>", "--", "m", NULL);
    parse_err("unexpected argument \"x\" (only <md_file> and <ud_base> are expected)", "m", "u", "x", NULL);
    parse_err("<md_file>: empty path", "", "u", NULL);
    parse_err("<ud_base>: empty path", "m", "", NULL);
    parse_err("<ud_base> nfs/ names a directory; give the base path of the updater files, e.g. DIR/FILE.h5.md.ud", "m",
              "nfs/", NULL);
    memset(long_path, 'p', AUX_MAX_PATH + 1);
    parse_err("<md_file>: path longer than 4000 bytes", long_path, "u", NULL);
    parse_err("<ud_base>: path longer than 4000 bytes", "m", long_path, NULL);
    parse_err("--log_file: path longer than 4000 bytes", "--log_file", long_path, "m", "u", NULL);
    long_path[AUX_MAX_PATH] = '\0';
    aux_opts_t o;
    parse_ok(&o, long_path, long_path, NULL);
}

static void
test_vfd_config(void **state)
{
    aux_opts_t o;

    (void)state;
    parse_ok(&o, "--vfd_config", "tick_len=2;max_lag=9;md_pages_reserved=8", "m", "u", NULL);
    assert_true(o.tick_len == 2 && o.max_lag == 9 && o.md_pages_reserved == 8);
    assert_string_equal(o.under, "sec2");
    /* the keys it does not use are accepted (a reader's string works as is) */
    parse_ok(&o, "--vfd_config=md_file_path=/local;presume_posix_semantics=0;open_timeout=300;under=core", "m", "u",
             NULL);
    assert_true(o.tick_len == 4 && o.max_lag == 7 && o.md_pages_reserved == 4);
    assert_string_equal(o.under, "core");
    /* explicit options win, before or after */
    parse_ok(&o, "--tick_len=5", "--vfd_config=tick_len=2;max_lag=9", "--max_lag", "11", "m", "u", NULL);
    assert_true(o.tick_len == 5 && o.max_lag == 11 && o.md_pages_reserved == 4);
    /* empty: all defaults */
    parse_ok(&o, "--vfd_config=", "m", "u", NULL);
    assert_true(o.tick_len == 4 && o.max_lag == 7);
    /* errors are the parser's, prefixed */
    parse_err("--vfd_config: max_lag=2: out of range; expected an integer from 3 to 100000 (ticks)",
              "--vfd_config=max_lag=2", "m", "u", NULL);
    parse_err("--vfd_config: tick_len=x: not a number; expected an integer from 0 to 36000 (tenths of a second)",
              "--vfd_config", "tick_len=x", "m", "u", NULL);
    {
        char want[VFDSWMR_CONFIG_ERRLEN + 32], why[VFDSWMR_CONFIG_ERRLEN];
        vfdswmr_config_t cfg;
        assert_int_equal(vfdswmr_config_parse("bogus=1", &cfg, why, sizeof why), -1);
        snprintf(want, sizeof want, "--vfd_config: %s", why);
        assert_non_null(strstr(want, "unknown key \"bogus\"; accepted keys: tick_len, max_lag"));
        parse_err(want, "--vfd_config=bogus=1", "m", "u", NULL);
    }
    /* the whole string is checked even when its values are overridden */
    parse_err("--vfd_config: max_lag=1: out of range; expected an integer from 3 to 100000 (ticks)", "--max_lag=9",
              "--vfd_config=max_lag=1", "m", "u", NULL);
}

/* The usage text names every option, and --version the program. */
static void
test_usage_text(void **state)
{
    static const char *names[] = {"--log_file PATH", "--polls_per_tick N",  "--stats", "--tick_len T", "--max_lag N",
                                  "--verbose",       "--vfd_config STRING", "--help",  "--version"};
    char *text = NULL;
    size_t len = 0;
    FILE *fp;

    (void)state;
    assert_non_null(fp = open_memstream(&text, &len));
    aux_usage(fp);
    fclose(fp);
    assert_true(strncmp(text, "Usage: vfd_swmr_aux [options] <md_file> <ud_base>\n", 50) == 0);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strstr(text, names[i]) == NULL)
            fail_msg("usage does not mention %s", names[i]);
    free(text);
    assert_non_null(fp = open_memstream(&text, &len));
    aux_version(fp);
    fclose(fp);
    assert_true(strncmp(text, "vfd_swmr_aux (vfd-swmr) ", 24) == 0);
    free(text);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_both_forms),
        cmocka_unit_test(test_positionals_anywhere),
        cmocka_unit_test(test_abbreviations),
        cmocka_unit_test(test_help_version),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_bad_numbers),
        cmocka_unit_test(test_missing_values),
        cmocka_unit_test(test_unknown_and_misused),
        cmocka_unit_test(test_unknown_short_and_misc),
        cmocka_unit_test(test_positional_errors),
        cmocka_unit_test(test_vfd_config),
        cmocka_unit_test(test_usage_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
