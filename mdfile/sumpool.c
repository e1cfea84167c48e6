/* The checksums of a publish's page images, shared with helper threads; see sumpool.h. */
/* sched_getaffinity, CPU_COUNT: _GNU_SOURCE (config.h) */
#include "sumpool.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <unistd.h>

#include "check.h"
#include "checksum.h"

/* Images are taken about this many bytes at a time (8 pages of 4 KiB, some
 * 20 us of hashing): the longest the caller can wait for a helper's run. */
#define RUN_BYTES (32u * 1024u)

/* One call's work. It lives on the caller's stack: helpers reach it only
 * through pool.job, which the caller clears before it waits for them. */
struct job {
    vfdswmr_mdimage_t *im;
    size_t n, step;
    atomic_size_t next; /* the first image nobody took yet */
    unsigned active;    /* helpers working on it (under pool.mu) */
    unsigned long id;   /* a helper joins each job once */
};

/* Invariants, all under mu: `job` is the one job helpers may join, NULL
 * while none; a job's `active` counts the helpers that joined it and have
 * not finished; `nth` helpers run, started once (`started`) per process
 * image. */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    struct job *job;
    unsigned long last_id;
    pthread_t th[VFDSWMR_SUMPOOL_MAX_HELPERS];
    unsigned nth;
    bool started, exiting;
} pool = {.mu = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER, .done = PTHREAD_COND_INITIALIZER};
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

/* Take runs of images and hash them until none is left. */
static void
work(struct job *j)
{
    size_t i;

    while ((i = atomic_fetch_add_explicit(&j->next, j->step, memory_order_relaxed)) < j->n) {
        size_t end = j->n - i > j->step ? i + j->step : j->n;
        for (; i < end; i++)
            j->im[i].checksum = vfdswmr_checksum(j->im[i].image, j->im[i].length);
    }
}

static void *
helper(void *arg)
{
    unsigned long seen = 0;

    (void)arg;
    pthread_mutex_lock(&pool.mu);
    for (;;) {
        while (!pool.exiting && (pool.job == NULL || pool.job->id == seen))
            pthread_cond_wait(&pool.work, &pool.mu);
        if (pool.exiting)
            break;
        struct job *j = pool.job;
        seen = j->id;
        j->active++;
        pthread_mutex_unlock(&pool.mu);
        work(j);
        pthread_mutex_lock(&pool.mu);
        if (--j->active == 0)
            pthread_cond_broadcast(&pool.done);
    }
    pthread_mutex_unlock(&pool.mu);
    return NULL;
}

/* The CPUs this process may run on. */
static unsigned
cpus(void)
{
    cpu_set_t set;
    long n;

    if (sched_getaffinity(0, sizeof set, &set) == 0)
        return (unsigned)CPU_COUNT(&set);
    n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

/* Under mu: start the helpers the first time; how many run. They take no
 * signals (the application's go to its own threads). */
static unsigned
start_helpers(void)
{
    sigset_t all, old;
    unsigned want;

    if (pool.started)
        return pool.nth;
    pool.started = true;
    want = cpus() - 1;
    if (want > VFDSWMR_SUMPOOL_MAX_HELPERS)
        want = VFDSWMR_SUMPOOL_MAX_HELPERS;
    sigfillset(&all);
    if (pthread_sigmask(SIG_SETMASK, &all, &old) != 0)
        return 0;
    while (pool.nth < want && pthread_create(&pool.th[pool.nth], NULL, helper, NULL) == 0)
        pool.nth++;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return pool.nth;
}

static void
pool_prepare(void)
{
    pthread_mutex_lock(&pool.mu);
}
static void
pool_parent(void)
{
    pthread_mutex_unlock(&pool.mu);
}
/* The helpers stayed with the parent, and so did a job under way and their
 * waits on the conditions: the child starts afresh. */
static void
pool_child(void)
{
    pthread_mutex_unlock(&pool.mu);
    pthread_cond_init(&pool.work, NULL);
    pthread_cond_init(&pool.done, NULL);
    pool.job = NULL;
    pool.nth = 0;
    pool.started = false;
}
static void
pool_init(void)
{
    (void)pthread_atfork(pool_prepare, pool_parent, pool_child);
}

/* At unload (HDF5 closes its plugins, or the process exits): the helpers
 * run this code, so they end before it goes. */
__attribute__((destructor)) static void
pool_fini(void)
{
    unsigned n;

    pthread_mutex_lock(&pool.mu);
    pool.exiting = true;
    n = pool.nth;
    pool.nth = 0;
    pthread_cond_broadcast(&pool.work);
    pthread_mutex_unlock(&pool.mu);
    for (unsigned k = 0; k < n; k++)
        pthread_join(pool.th[k], NULL);
}

void
vfdswmr_sumpool_checksums(vfdswmr_mdimage_t *images, size_t n)
{
    vfdswmr_sumpool_checksums_while(images, n, NULL, NULL);
}

void
vfdswmr_sumpool_checksums_while(vfdswmr_mdimage_t *images, size_t n, void (*meanwhile)(void *ctx), void *ctx)
{
    struct job j = {.im = images, .n = n, .step = 1};
    size_t total = 0;
    bool shared = false;

    atomic_init(&j.next, 0);
    for (size_t i = 0; i < n; i++)
        total += images[i].length;
    if (n > 1 && total >= VFDSWMR_SUMPOOL_MIN_BYTES) {
        size_t avg = total / n;
        j.step = avg < RUN_BYTES ? RUN_BYTES / avg : 1;
        pthread_once(&pool_once, pool_init);
        pthread_mutex_lock(&pool.mu);
        if (pool.job == NULL && !pool.exiting && start_helpers() > 0) {
            j.id = ++pool.last_id;
            pool.job = &j;
            shared = true;
            pthread_cond_broadcast(&pool.work);
        }
        pthread_mutex_unlock(&pool.mu);
    }
    if (meanwhile)
        meanwhile(ctx); /* the helpers take runs meanwhile; the rest is the caller's below */
    work(&j);
    if (!shared)
        return;
    pthread_mutex_lock(&pool.mu);
    pool.job = NULL;     /* no helper joins any more ... */
    while (j.active > 0) /* ... and those that did finish their runs */
        pthread_cond_wait(&pool.done, &pool.mu);
    VFDSWMR_ASSERT(atomic_load(&j.next) >= j.n);
    pthread_mutex_unlock(&pool.mu);
}

unsigned
vfdswmr_sumpool_helpers(void)
{
    unsigned n;

    pthread_mutex_lock(&pool.mu);
    n = pool.nth;
    pthread_mutex_unlock(&pool.mu);
    return n;
}
