/*
 * Test hooks: points in the drivers' code where a test can kill or stop the
 * process (crash harness, races a test must hit exactly).
 */
#ifndef VFDSWMR_COMMON_TESTHOOK_H
#define VFDSWMR_COMMON_TESTHOOK_H

/* Test hook, in invariant builds only (configure --enable-invariants;
 * elsewhere it compiles to nothing, so no environment variable can reach a
 * production process): VFDSWMR_TEST_KILL_AT=<where>:<k> in the environment
 * makes the k-th call of vfdswmr_test_kill_point(where) raise SIGKILL, and
 * VFDSWMR_TEST_STOP_AT=<where>:<k> raise SIGSTOP (a test then does something
 * at exactly that point, and sends SIGCONT). */
#include <stdbool.h>

/* And VFDSWMR_TEST_FLAGS=<name>[,<name>...] makes vfdswmr_test_flag(name)
 * true: what a test cannot otherwise make on this machine, e.g. "no_xattr"
 * (the file system keeps no extended attributes: mdfile/sessname.c). */
#ifdef VFDSWMR_INVARIANTS
void vfdswmr_test_kill_point(const char *where);
bool vfdswmr_test_flag(const char *name);
#else
#define vfdswmr_test_kill_point(where) ((void)(where))
#define vfdswmr_test_flag(name)        ((void)(name), false)
#endif

#endif
