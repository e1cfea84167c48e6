/*
 * peakrss: run a command and report its peak resident size, for tests that
 * bound a program's memory (what /usr/bin/time -f %M gives, without the
 * package).
 *   peakrss OUT COMMAND [ARG...]
 * Runs COMMAND (its output as it is), writes its peak resident size in KiB
 * (wait4's ru_maxrss) to the file OUT, and exits with COMMAND's status (128
 * + the signal when a signal ended it); 127 when it cannot be run, 2 usage.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
    struct rusage ru;
    int status;
    pid_t pid;
    FILE *out;

    if (argc < 3) {
        fputs("usage: peakrss OUT COMMAND [ARG...]\n", stderr);
        return 2;
    }
    if ((pid = fork()) < 0) {
        fprintf(stderr, "peakrss: fork: %s\n", strerror(errno));
        return 127;
    }
    if (pid == 0) {
        execvp(argv[2], argv + 2);
        fprintf(stderr, "peakrss: %s: %s\n", argv[2], strerror(errno));
        _exit(127);
    }
    while (wait4(pid, &status, 0, &ru) < 0)
        if (errno != EINTR) {
            fprintf(stderr, "peakrss: wait4: %s\n", strerror(errno));
            return 127;
        }
    if (NULL == (out = fopen(argv[1], "w")) || fprintf(out, "%ld\n", ru.ru_maxrss) < 0 || fclose(out) != 0) {
        fprintf(stderr, "peakrss: %s: %s\n", argv[1], strerror(errno));
        return 127;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
