/*
 * expect_abort(): run a function in a child process and require that it
 * dies of SIGABRT having written a given text to stderr -- how the tests of
 * the invariant builds (common/check.h) see an assertion fire without
 * dying themselves. Include after <cmocka.h>.
 *
 * The child runs nothing of cmocka's: fn must not use cmocka's asserts (a
 * failing one would go on running the remaining tests in the child). What
 * the child writes to stderr is captured, up to 4 KiB, and printed by the
 * parent when the expectation fails.
 */
#ifndef VFDSWMR_TEST_ABORT_H
#define VFDSWMR_TEST_ABORT_H

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static inline void
expect_abort(void (*fn)(void *arg), void *arg, const char *needle)
{
    char out[4096];
    size_t len = 0;
    ssize_t n;
    int fds[2], status;
    pid_t pid;

    assert_int_equal(pipe(fds), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], STDERR_FILENO);
        fn(arg);
        _exit(0); /* no assertion fired */
    }
    close(fds[1]);
    while ((n = read(fds[0], out + len, sizeof out - 1 - len)) > 0 || (n < 0 && errno == EINTR))
        len += n > 0 ? (size_t)n : 0;
    out[len] = '\0';
    close(fds[0]);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT || strstr(out, needle) == NULL)
        fail_msg("expected SIGABRT and \"%s\" on stderr; the child %s %d, stderr: %s", needle,
                 WIFSIGNALED(status) ? "died of signal" : "exited with",
                 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), out);
}

#endif
