/*
 * idletick: the writer's ticks end while the application makes no call
 * (vfd-swmr-writer/ticker.c), for tests/integration/idle_ticks.sh.
 *
 *   idletick FILE CONFIG at-open|never
 *
 * Creates FILE through vfd_swmr_writer configured by CONFIG, writes
 * dataset "d" (1000 ints, 3i) and flushes; then, with no call of HDF5's but
 * the status query, waits (up to 60 s) for the writer's published tick to
 * advance by 3 -- at-open: the tick thread runs from the open, so ticks
 * end while the application is idle (a close after an idle spell then
 * finds the pages due that the idle ticks made due, instead of waiting
 * max_lag ticks for a reader that holds an older snapshot); never
 * (tick_len=0): they do not, three ticks' time later the tick is the
 * same. Then rewrites "d" (4i), flushes and closes; opens it again for
 * writing (the same thread, parked since the close, runs the new session:
 * no thread more; its ticks advance by themselves too), rewrites "d" (5i),
 * flushes, closes; after a hundred short sessions back to back (create,
 * close) the thread is still the only one, and a session opened right
 * after them and one opened after a 1.5 s pause tick by themselves too
 * (6i); a fork child then runs three writer sessions of its own
 * (the parent's parked thread stays with the parent) and must exit 0; and
 * "d" is read back through plain HDF5. With at-open the
 * process has more threads once the file is open than before, and as many
 * from then on; with never, no more.
 * One "ok: ..." line per check on stdout; exit status 0, 1 on a failure
 * (message on stderr), 2 bad usage.
 */
#include <hdf5.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "vfdswmr.h"

#define N              1000
#define SHORT_SESSIONS 100
#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#else
#define UNDER_TSAN 0
#endif

static int
threads(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int n = 0;

    if (d == NULL) {
        perror("idletick: /proc/self/task");
        exit(1);
    }
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

static void
nap(double s)
{
    struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

static void
check(int cond, const char *what, long long got, long long want)
{
    if (!cond) {
        fprintf(stderr, "idletick: %s: got %lld, want %lld\n", what, got, want);
        exit(1);
    }
    printf("ok: %s (%lld)\n", what, got);
    fflush(stdout);
}

static unsigned long long
tick_of(hid_t f, unsigned *tick_len)
{
    vfdswmr_status_t st;

    if (vfdswmr_get_status(f, &st) < 0) {
        fprintf(stderr, "idletick: vfdswmr_get_status failed\n");
        exit(1);
    }
    if (tick_len)
        *tick_len = st.tick_len;
    return st.tick;
}

static void
write_d(hid_t f, int k)
{
    int v[N];
    hid_t d = H5Dopen2(f, "d", H5P_DEFAULT);

    for (int i = 0; i < N; i++)
        v[i] = k * i;
    if (d < 0 || H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0 || H5Dclose(d) < 0 ||
        H5Fflush(f, H5F_SCOPE_GLOBAL) < 0) {
        fprintf(stderr, "idletick: writing d failed\n");
        exit(1);
    }
}

int
main(int argc, char **argv)
{
    hsize_t n = N;
    hid_t fapl, f, s, d;
    int v[N], before, live, at_open;
    unsigned tick_len;
    unsigned long long t0;

    if (argc != 4 || (strcmp(argv[3], "at-open") && strcmp(argv[3], "never"))) {
        fprintf(stderr, "usage: idletick FILE CONFIG at-open|never\n");
        return 2;
    }
    at_open = !strcmp(argv[3], "at-open");
    before = threads();
    if ((fapl = H5Pcreate(H5P_FILE_ACCESS)) < 0 || vfdswmr_set_fapl_writer(fapl, argv[2]) < 0 ||
        (f = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) < 0 || (s = H5Screate_simple(1, &n, NULL)) < 0 ||
        (d = H5Dcreate2(f, "d", H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0 || H5Dclose(d) < 0 ||
        H5Sclose(s) < 0) {
        fprintf(stderr, "idletick: creating %s failed\n", argv[1]);
        return 1;
    }
    write_d(f, 3);
    /* a sanitizer may start a thread of its own with the first thread the
     * program creates: that one stays to the end */
    live = threads();
    check(at_open ? live > before : live == before, "threads after open and a flush, more than before", live - before,
          at_open);
    t0 = tick_of(f, &tick_len);
    if (at_open) {
        /* the thread ends ticks with no call of ours but the query */
        unsigned long long t = t0;
        for (int i = 0; i < 6000 && (t = tick_of(f, NULL)) < t0 + 3; i++)
            nap(0.01);
        check(t >= t0 + 3, "ticks published while the application was idle", (long long)(t - t0), 3);
    }
    else {
        nap(0.3);
        check(tick_of(f, NULL) == t0, "ticks published while the application was idle",
              (long long)(tick_of(f, NULL) - t0), 0);
    }
    write_d(f, 4);
    if (H5Fclose(f) < 0) {
        fprintf(stderr, "idletick: close failed\n");
        return 1;
    }
    /* the tick thread waits for the process's next session (ticker.c) */
    check(threads() == live, "threads after close, as while open", threads() - before, live - before);
    /* Short sessions back to back: each is handed to the parked thread,
     * which, looking by itself for a while after its last session, is not
     * woken, and most stop before it took them (ticker.c). None may lose
     * the thread or start another one, and the sessions after them still
     * tick (below). */
    for (int k = 0; k < SHORT_SESSIONS; k++) {
        char name[4200];
        hid_t g;
        snprintf(name, sizeof name, "%s.short", argv[1]);
        if ((g = H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) < 0 || H5Fclose(g) < 0) {
            fprintf(stderr, "idletick: short session %d on %s failed\n", k, name);
            return 1;
        }
        remove(name);
    }
    check(threads() == live, "threads after short sessions back to back, as while open", threads() - before,
          live - before);
    /* the next session while the thread looks by itself (just after the
     * short ones), then one after it stopped looking (PARK_WARM, 1 s, of
     * no session: it is woken) */
    for (int k = 5; k <= 6; k++) {
        if (k == 6)
            nap(1.5);
        if ((f = H5Fopen(argv[1], H5F_ACC_RDWR, fapl)) < 0) {
            fprintf(stderr, "idletick: opening %s again failed\n", argv[1]);
            return 1;
        }
        check(threads() == live, "threads in the next session, as in the first: it took that thread",
              threads() - before, live - before);
        t0 = tick_of(f, NULL);
        if (at_open) {
            unsigned long long t = t0;
            for (int i = 0; i < 6000 && (t = tick_of(f, NULL)) < t0 + 3; i++)
                nap(0.01);
            check(t >= t0 + 3,
                  k == 5 ? "ticks published while idle in the next session"
                         : "ticks published while idle in a session after a pause",
                  (long long)(t - t0), 3);
        }
        write_d(f, k);
        if (H5Fclose(f) < 0) {
            fprintf(stderr, "idletick: close failed\n");
            return 1;
        }
    }
    /* A fork child of a process with a parked thread: three sessions of
     * its own, then exit (each parks and hands over in the child).
     * ThreadSanitizer does not let a child of a threaded process start
     * threads (die_after_fork): not there. */
    if (!UNDER_TSAN) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            char name[4200];
            alarm(60); /* a hang fails the check below instead of the test run */
            for (int k = 0; k < 3; k++) {
                hid_t g;
                snprintf(name, sizeof name, "%s.child%d", argv[1], k);
                if ((g = H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) < 0 || H5Fclose(g) < 0)
                    _exit(1);
                remove(name);
            }
            exit(0);
        }
        int status = -1;
        check(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "a fork child runs three writer sessions of its own and exits", status, 0);
    }
    if (H5Pclose(fapl) < 0)
        return 1;
    if ((f = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT)) < 0 || (d = H5Dopen2(f, "d", H5P_DEFAULT)) < 0 ||
        H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0 || H5Dclose(d) < 0 || H5Fclose(f) < 0) {
        fprintf(stderr, "idletick: reading %s back through plain HDF5 failed\n", argv[1]);
        return 1;
    }
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += v[i] != 6 * i;
    check(bad == 0, "values read back through plain HDF5 that differ from 6i", bad, 0);
    return 0;
}
