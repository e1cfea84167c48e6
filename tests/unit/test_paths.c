/*
 * Paths (common/paths.h): splitting a path into its directory and its last
 * component, and where the metadata and updater files of an HDF5 file are.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "drvconfig.h"
#include "paths.h"

static void
dir_is(const char *path, const char *want)
{
    size_t len;
    const char *dir = vfdswmr_path_dir(path, &len);
    char *dup = vfdswmr_path_dir_dup(path);

    assert_int_equal(len, strlen(want));
    assert_memory_equal(dir, want, len);
    assert_non_null(dup);
    assert_string_equal(dup, want);
    free(dup);
}

static void
test_paths_split(void **state)
{
    (void)state;
    dir_is("a/b/c.h5", "a/b");
    dir_is("/abs/c.h5", "/abs");
    dir_is("c.h5", ".");
    dir_is("/c.h5", "/");
    dir_is("./c.h5", ".");
    dir_is("a//c.h5", "a/");
    assert_string_equal(vfdswmr_path_base("a/b/c.h5"), "c.h5");
    assert_string_equal(vfdswmr_path_base("c.h5"), "c.h5");
    assert_string_equal(vfdswmr_path_base("/c.h5"), "c.h5");
    assert_string_equal(vfdswmr_path_base(""), "");
}

static void
md_path_is(const char *config, const char *h5, const char *want_md, const char *want_ud)
{
    vfdswmr_config_t cfg;
    char err[VFDSWMR_CONFIG_ERRLEN], out[64];

    assert_int_equal(vfdswmr_config_parse(config, &cfg, err, sizeof err), 0);
    assert_int_equal(vfdswmr_md_path(&cfg, h5, out, sizeof out), 0);
    assert_string_equal(out, want_md);
    assert_int_equal(vfdswmr_ud_base(&cfg, h5, out, sizeof out), 0);
    assert_string_equal(out, want_ud);
}

static void
test_paths_md_and_ud(void **state)
{
    vfdswmr_config_t cfg;
    char out[16];

    (void)state;
    md_path_is("", "data/x.h5", "data/x.h5.md", "data/x.h5.md.ud");
    md_path_is("", "x.h5", "./x.h5.md", "./x.h5.md.ud");
    md_path_is("", "/x.h5", "/x.h5.md", "/x.h5.md.ud");
    md_path_is("md_file_path=/dev/shm//", "data/x.h5", "/dev/shm/x.h5.md", "/dev/shm/x.h5.md.ud");
    md_path_is("md_file_name=m", "data/x.h5", "data/m", "data/m.ud");
    md_path_is("md_file_path=/run;md_file_name=m;updater_file_path=/u/base", "x.h5", "/run/m", "/u/base");
    vfdswmr_config_defaults(&cfg);
    assert_int_equal(vfdswmr_md_path(&cfg, "a-rather-long-name.h5", out, sizeof out), -1);
    assert_int_equal(vfdswmr_ud_base(&cfg, "x.h5", out, 11), -1); /* "./x.h5.md" fits, ".ud" not */
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paths_split),
        cmocka_unit_test(test_paths_md_and_ud),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
