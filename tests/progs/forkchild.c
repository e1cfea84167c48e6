/*
 * forkchild: a program that forks while it has a file open (a daemon, a
 * worker pool, a failed exec) -- the child's copy of the file must not
 * touch its parent's session (common/forked.h). An ordinary HDF5 program:
 * the environment selects the driver.
 *
 *   forkchild write FILE exit|close|hold|reread|spawn
 *       create FILE with /a (N ints i * 5), H5Fflush, print "flushed a";
 *       fork. The child reports a result (on a pipe: valgrind may
 *       change its exit status) and ends: `exit` reports 0 and calls
 *       exit(0) (HDF5's atexit handler closes the file in the child);
 *       `close` calls H5Fclose on its copy: 0 when H5Fclose failed as it
 *       must (2 when it returned success: the child wrote nothing, so it
 *       must not say it closed the file whole), 3 when a read of /a
 *       through its copy succeeded; `reread` opens FILE again read-only, checks /a and
 *       closes it, then closes its copy (0, or 4/5/6: that open, check or
 *       close failed); `hold` waits until it is killed; `spawn`: no
 *       fork, the parent starts `sleep 600` with posix_spawn. The parent: print
 *       "child RESULT" once the child ended ("child killed SIGNAL", "child
 *       silent": no result; `hold`, `spawn`: "child PID" at once),
 *       wait for a line; create /b (N ints i * 7), H5Fflush, print
 *       "flushed b", wait for a line; H5Fclose, print "closed".
 *   forkchild read FILE
 *       open FILE read-only, check /a, fork; the child calls exit(0) (its
 *       copy closed by HDF5's atexit handler); print "child RESULT", wait
 *       for a line; check /a again through the same open file, print "ok",
 *       wait for a line; H5Fclose, print "closed".
 *   forkchild check FILE a|ab
 *       open FILE read-only, check /a (and /b), print "ok".
 *   forkchild reopen FILE
 *       open FILE read-write and close it, print "reopened".
 *
 * Exit status 0 when everything succeeded, 1 otherwise (HDF5's error stack
 * on stderr), 2 on bad usage.
 */
#include <hdf5.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "steps.h"

#define N 1000

extern char **environ;

static int
fail(const char *what)
{
    return step_fail("forkchild", what);
}

static int
make(hid_t f, const char *name, int mul)
{
    int v[N];
    hsize_t n = N;
    hid_t s = H5Screate_simple(1, &n, NULL), d;

    for (int i = 0; i < N; i++)
        v[i] = i * mul;
    if ((d = H5Dcreate2(f, name, H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
        H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0 || H5Dclose(d) < 0)
        return 1;
    H5Sclose(s);
    return 0;
}

/* 0: /name holds i * mul; 1: it does not or cannot be read. */
static int
check(hid_t f, const char *name, int mul)
{
    int v[N];
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    int rc = d < 0 || H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0;

    for (int i = 0; rc == 0 && i < N; i++)
        if (v[i] != i * mul) {
            fprintf(stderr, "forkchild: /%s[%d] is %d, not %d\n", name, i, v[i], i * mul);
            rc = 1;
        }
    if (d >= 0)
        H5Dclose(d);
    return rc;
}

/* The child's result, a byte on a pipe rather than its exit status (which
 * valgrind replaces with its own when the child leaks what the parent's
 * other threads held at the fork). */
static int result[2] = {-1, -1};

static void
report(int rc)
{
    unsigned char b = (unsigned char)rc;

    if (write(result[1], &b, 1) != 1)
        _exit(1);
}

/* After the child ended (waitpid's st): "child RESULT", "child killed
 * SIGNAL", or "child silent" (it ended without a result). */
static void
child_status(char *line, size_t len, int st)
{
    unsigned char b;

    if (WIFSIGNALED(st))
        snprintf(line, len, "child killed %d", WTERMSIG(st));
    else if (read(result[0], &b, 1) == 1)
        snprintf(line, len, "child %d", b);
    else
        snprintf(line, len, "child silent");
}

static int
child(hid_t f, const char *name, const char *mode)
{
    if (strcmp(mode, "exit") == 0) {
        report(0);
        exit(0); /* HDF5's atexit handler closes the copy: the parent waits for it to end */
    }
    if (strcmp(mode, "reread") == 0) {
        /* a new read-only open, before the copy is closed: the file as the
         * parent published it, not the refused copy */
        hid_t g = H5Fopen(name, H5F_ACC_RDONLY, H5P_DEFAULT);
        int rc = g < 0 ? 4 : check(g, "a", 5) ? 5 : H5Fclose(g) < 0 ? 6 : 0;
        if (rc)
            H5Eprint2(H5E_DEFAULT, stderr);
        H5E_BEGIN_TRY
        {
            H5Fclose(f);
        }
        H5E_END_TRY
        report(rc);
        _exit(0);
    }
    if (strcmp(mode, "hold") == 0)
        for (;;)
            pause();
    int rc = 0;
    H5E_BEGIN_TRY
    {
        /* a read through the copy is refused too (it would move the
         * parent's read marks through a reader, and the writer's page
         * buffer is the parent's) */
        hid_t d = H5Dopen2(f, "a", H5P_DEFAULT);
        int v[N];
        if (d >= 0 && H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0)
            rc = 3;
        if (d >= 0)
            H5Dclose(d);
        if (rc == 0 && H5Fclose(f) >= 0)
            rc = 2;
    }
    H5E_END_TRY
    report(rc);
    _exit(0);
}

static int
write_file(const char *name, const char *mode)
{
    hid_t f = H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    char line[64];
    pid_t pid;
    int st;

    if (f < 0)
        return fail("H5Fcreate");
    if (make(f, "a", 5) || H5Fflush(f, H5F_SCOPE_GLOBAL) < 0)
        return fail("writing /a");
    printf("flushed a\n");
    fflush(stdout);
    if (pipe(result) < 0)
        return fail("pipe");
    if (strcmp(mode, "spawn") == 0) {
        /* no fork handler runs (glibc: clone with CLONE_VFORK), so only
         * close-on-exec keeps the program from the writer's descriptors */
        char *args[] = {"sleep", "600", NULL};
        if (posix_spawnp(&pid, "sleep", NULL, NULL, args, environ) != 0)
            return fail("posix_spawnp");
    }
    else if ((pid = fork()) < 0)
        return fail("fork");
    if (pid == 0)
        return child(f, name, mode);
    if (strcmp(mode, "hold") == 0 || strcmp(mode, "spawn") == 0)
        snprintf(line, sizeof line, "child %ld", (long)pid);
    else if (waitpid(pid, &st, 0) != pid)
        return fail("waitpid");
    else
        child_status(line, sizeof line, st);
    step_answer(line);
    if (make(f, "b", 7) || H5Fflush(f, H5F_SCOPE_GLOBAL) < 0)
        return fail("writing /b");
    step_answer("flushed b");
    return step_close("forkchild", f);
}

static int
read_file(const char *name)
{
    hid_t f = H5Fopen(name, H5F_ACC_RDONLY, H5P_DEFAULT);
    char line[64];
    pid_t pid;
    int st;

    if (f < 0)
        return fail("H5Fopen");
    if (check(f, "a", 5))
        return fail("checking /a");
    if (pipe(result) < 0 || (pid = fork()) < 0)
        return fail("fork");
    if (pid == 0) {
        report(0);
        exit(0);
    }
    if (waitpid(pid, &st, 0) != pid)
        return fail("waitpid");
    child_status(line, sizeof line, st);
    step_answer(line);
    if (check(f, "a", 5))
        return fail("checking /a after the child ended");
    step_answer("ok");
    return step_close("forkchild", f);
}

int
main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "read") == 0)
        return read_file(argv[2]);
    if (argc == 4 && strcmp(argv[1], "write") == 0 &&
        (!strcmp(argv[3], "exit") || !strcmp(argv[3], "close") || !strcmp(argv[3], "hold") ||
         !strcmp(argv[3], "reread") || !strcmp(argv[3], "spawn")))
        return write_file(argv[2], argv[3]);
    if (argc == 4 && strcmp(argv[1], "check") == 0 && (!strcmp(argv[3], "a") || !strcmp(argv[3], "ab"))) {
        hid_t f = H5Fopen(argv[2], H5F_ACC_RDONLY, H5P_DEFAULT);
        if (f < 0)
            return fail("H5Fopen");
        if (check(f, "a", 5) || (argv[3][1] == 'b' && check(f, "b", 7)) || H5Fclose(f) < 0)
            return fail("checking");
        printf("ok\n");
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "reopen") == 0) {
        hid_t f = H5Fopen(argv[2], H5F_ACC_RDWR, H5P_DEFAULT);
        if (f < 0 || H5Fclose(f) < 0)
            return fail("reopening");
        printf("reopened\n");
        return 0;
    }
    fprintf(
        stderr,
        "usage: forkchild write FILE exit|close|hold|reread|spawn | forkchild read FILE | forkchild check FILE a|ab | "
        "forkchild reopen FILE\n");
    return 2;
}
