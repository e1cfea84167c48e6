/*
 * Executable invariants: the assertions of the invariant builds.
 *
 * `configure --enable-invariants` defines VFDSWMR_INVARIANTS (scripts/build
 * does so for build/ and build-asan/, the builds the tests run in). Then
 *
 *   VFDSWMR_ASSERT(cond)
 *       evaluates cond; when it is false, prints "FILE:LINE: FUNCTION:
 *       invariant violated: COND" to stderr and calls abort();
 *   VFDSWMR_CHECK_INVARIANTS(pace, why)
 *       runs a whole-structure checker: `why` is an expression of type
 *       const char * -- NULL when every invariant holds, else what is
 *       broken -- evaluated when `pace` (a vfdswmr_pace_t *) says a check is
 *       due; a non-NULL answer aborts as above, with the answer appended.
 *
 * Without VFDSWMR_INVARIANTS (a plain `./configure`, the production build)
 * VFDSWMR_ASSERT compiles to `(void)sizeof(cond)`: the condition is never
 * evaluated, yet variables it names count as used; VFDSWMR_CHECK_INVARIANTS
 * compiles to nothing and its arguments are not even compiled, so the pace
 * members it names exist only in invariant builds (declare them inside
 * `#ifdef VFDSWMR_INVARIANTS`).
 *
 * Pacing. A checker costs O(n) or O(n log n) for a structure of n elements.
 * It runs after every mutation while the structure is small (n at most
 * VFDSWMR_PACE_SMALL at the last check), and once every
 * n / VFDSWMR_PACE_RATIO mutations beyond: about VFDSWMR_PACE_RATIO times
 * the checker's cost per element for each mutation, so tests that build
 * large structures (100,000 cache entries, a million inserts) stay fast.
 * The checker reports n by setting pace->size.
 *
 * Invariant: in a production build nothing here generates code; an
 * assertion never changes what the program does unless it fails.
 */
#ifndef VFDSWMR_COMMON_CHECK_H
#define VFDSWMR_COMMON_CHECK_H

#ifdef VFDSWMR_INVARIANTS

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define VFDSWMR_PACE_SMALL 64u
#define VFDSWMR_PACE_RATIO 8u

/* When a structure's whole-structure check is next due (check.h, "Pacing"). */
typedef struct vfdswmr_pace {
    uint64_t calls; /* VFDSWMR_CHECK_INVARIANTS seen */
    uint64_t next;  /* the call at which the next check runs */
    uint64_t size;  /* the structure's size at the last check, set by the checker */
} vfdswmr_pace_t;

static inline _Noreturn void
vfdswmr_invariant_failed(const char *file, int line, const char *func, const char *cond, const char *why)
{
    fprintf(stderr, "%s:%d: %s: invariant violated: %s%s%s%s\n", file, line, func, cond, why ? " (" : "",
            why ? why : "", why ? ")" : "");
    fflush(stderr);
    abort();
}

/* Whether a check is due now; counts the call. */
static inline bool
vfdswmr_pace_due(vfdswmr_pace_t *p)
{
    return p->calls++ >= p->next;
}

/* After a check that found p->size elements: when the next one is due. */
static inline void
vfdswmr_pace_checked(vfdswmr_pace_t *p)
{
    p->next = p->calls + (p->size > VFDSWMR_PACE_SMALL ? p->size / VFDSWMR_PACE_RATIO : 0);
}

#define VFDSWMR_ASSERT(cond) ((cond) ? (void)0 : vfdswmr_invariant_failed(__FILE__, __LINE__, __func__, #cond, NULL))

#define VFDSWMR_CHECK_INVARIANTS(pace, why)                                                 \
    do {                                                                                    \
        vfdswmr_pace_t *vfdswmr_pace_ = (pace);                                             \
        if (vfdswmr_pace_due(vfdswmr_pace_)) {                                              \
            const char *vfdswmr_why_ = (why);                                               \
            if (vfdswmr_why_ != NULL)                                                       \
                vfdswmr_invariant_failed(__FILE__, __LINE__, __func__, #why, vfdswmr_why_); \
            vfdswmr_pace_checked(vfdswmr_pace_);                                            \
        }                                                                                   \
    } while (0)

#else /* production: nothing is evaluated */

#define VFDSWMR_ASSERT(cond)                ((void)sizeof(!(cond)))
#define VFDSWMR_CHECK_INVARIANTS(pace, why) ((void)0)

#endif

/* A checker function only VFDSWMR_CHECK_INVARIANTS calls: compiled (and so
 * kept compiling) in every build, unused in production. */
#define VFDSWMR_CHECKER __attribute__((__unused__)) static

#endif
