#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "forked.h"
#include "h5err.h"

struct tracked {
    void *obj;
    void (*drop)(void *obj, int devnull);
    bool dropped; /* in this child or an ancestor: never again (its numbers may be reused since) */
};

static atomic_uint gen;
static pthread_once_t once = PTHREAD_ONCE_INIT;
/* fork() waits for a thread inside the list (prepare takes the lock), so a
 * child finds it whole */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct tracked *list;
static size_t n, cap;
static void **kept; /* vfdswmr_fork_keep: reachable, never freed */
static size_t nkept, capkept;

static void
prepare(void)
{
    pthread_mutex_lock(&lock);
}

static void
parent(void)
{
    pthread_mutex_unlock(&lock);
}

static void
child(void)
{
    int devnull = -1;

    atomic_fetch_add(&gen, 1);
    for (size_t i = 0; i < n; i++) /* they stay tracked: each close untracks its own */
        if (!list[i].dropped) {
            if (devnull < 0)
                devnull = open("/dev/null", O_RDWR | O_CLOEXEC); /* fails: the lower file's locks stay */
            list[i].drop(list[i].obj, devnull);
            list[i].dropped = true;
        }
    if (devnull >= 0)
        close(devnull);
    pthread_mutex_unlock(&lock);
}

static void
install(void)
{
    (void)pthread_atfork(prepare, parent, child); /* fails only for lack of memory: then no fork is told apart */
}

unsigned
vfdswmr_fork_gen(void)
{
    pthread_once(&once, install);
    return atomic_load(&gen);
}

bool
vfdswmr_forked(unsigned g, const char *driver, const char *what)
{
    if (g == vfdswmr_fork_gen())
        return false;
    VFDSWMR_ERR(H5E_CANTOPERATE,
                "%s: %s refused: this process (%ld) is a fork child of the process that opened the file, whose "
                "writer or reader it is; close the file in the child (H5Fclose only lets go of it) and open it "
                "again there if it needs it",
                driver, what, (long)getpid());
    return true;
}

int
vfdswmr_fork_track(void *obj, void (*drop)(void *obj, int devnull))
{
    int rc = 0;

    pthread_once(&once, install);
    pthread_mutex_lock(&lock);
    if (n == cap) {
        size_t c = cap ? 2 * cap : 8;
        struct tracked *p = realloc(list, c * sizeof *p);
        if (p == NULL)
            rc = -1;
        else {
            list = p;
            cap = c;
        }
    }
    if (rc == 0)
        list[n++] = (struct tracked){obj, drop, false};
    pthread_mutex_unlock(&lock);
    return rc;
}

void
vfdswmr_fork_untrack(void *obj)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n; i++)
        if (list[i].obj == obj) {
            list[i] = list[--n];
            break;
        }
    if (n == 0) {
        free(list);
        list = NULL;
        cap = 0;
    }
    pthread_mutex_unlock(&lock);
}

void
vfdswmr_fork_keep(void *obj)
{
    pthread_mutex_lock(&lock);
    if (nkept == capkept) {
        size_t c = capkept ? 2 * capkept : 8;
        void **p = realloc(kept, c * sizeof *p);
        if (p != NULL) {
            kept = p;
            capkept = c;
        }
    }
    if (nkept < capkept)
        kept[nkept++] = obj; /* else lost: a child's copy, out of memory */
    pthread_mutex_unlock(&lock);
}

void
vfdswmr_fork_hold(void)
{
    pthread_once(&once, install);
    pthread_mutex_lock(&lock);
}

void
vfdswmr_fork_release(void)
{
    pthread_mutex_unlock(&lock);
}
