/*
 * The writer's lock (writer.h, "Locking"), taken and released only here, so
 * that invariant builds know which thread holds it and which thread writes a
 * publish without it -- and the functions whose comments say "lock held" or
 * "publishing thread only" assert it (VFDSWMR_ASSERT_LOCKED,
 * VFDSWMR_ASSERT_MDW). Production builds record nothing: the helpers are the
 * pthread calls.
 *
 * A thread is named by the address of a thread-local byte: distinct for
 * every live thread, never 0.
 */
#include "check.h"
#include "writer.h"

#ifdef VFDSWMR_INVARIANTS
static _Thread_local char self_byte;
#define SELF ((uintptr_t)&self_byte)

static void
set_owner(vfdswmr_writer_t *w, uintptr_t was, uintptr_t now)
{
    VFDSWMR_ASSERT(atomic_load_explicit(&w->lock_owner, memory_order_relaxed) == was);
    atomic_store_explicit(&w->lock_owner, now, memory_order_relaxed);
}
#endif

void
vfdswmr_writer_lock(vfdswmr_writer_t *w)
{
    pthread_mutex_lock(&w->lock);
#ifdef VFDSWMR_INVARIANTS
    set_owner(w, 0, SELF);
#endif
}

void
vfdswmr_writer_unlock(vfdswmr_writer_t *w)
{
#ifdef VFDSWMR_INVARIANTS
    set_owner(w, SELF, 0);
#endif
    pthread_mutex_unlock(&w->lock);
}

int
vfdswmr_writer_wait(vfdswmr_writer_t *w, pthread_cond_t *cond, const struct timespec *until)
{
    int rc;

#ifdef VFDSWMR_INVARIANTS
    set_owner(w, SELF, 0);
#endif
    rc = until ? pthread_cond_timedwait(cond, &w->lock, until) : pthread_cond_wait(cond, &w->lock);
#ifdef VFDSWMR_INVARIANTS
    set_owner(w, 0, SELF);
#endif
    return rc;
}

void
vfdswmr_writer_publishing(vfdswmr_writer_t *w, bool on)
{
    VFDSWMR_ASSERT_LOCKED(w);
    VFDSWMR_ASSERT(w->publishing != on);
    w->publishing = on;
#ifdef VFDSWMR_INVARIANTS
    atomic_store_explicit(&w->publisher, on ? SELF : 0, memory_order_relaxed);
#endif
}

bool
vfdswmr_writer_locked(const vfdswmr_writer_t *w)
{
#ifdef VFDSWMR_INVARIANTS
    return atomic_load_explicit(&w->lock_owner, memory_order_relaxed) == SELF;
#else
    (void)w;
    return true;
#endif
}

bool
vfdswmr_writer_owns_mdw(const vfdswmr_writer_t *w)
{
#ifdef VFDSWMR_INVARIANTS
    /* `publishing` changes only under the lock, and the publishing thread
     * reads its own setting: no race either way */
    if (atomic_load_explicit(&w->publisher, memory_order_relaxed) == SELF)
        return true;
    return vfdswmr_writer_locked(w) && !w->publishing;
#else
    (void)w;
    return true;
#endif
}
