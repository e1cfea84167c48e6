/*
 * Unit tests of common/check.h, the assertions of the invariant builds.
 *
 * Invariant builds (configure --enable-invariants): a false VFDSWMR_ASSERT
 * and a checker that answers with a defect abort the process with file,
 * line, function and condition on stderr (seen from a child process); a
 * true assertion evaluates its condition once and goes on; the pace runs a
 * checker at every call while the structure is small, then periodically.
 * Production builds: nothing is evaluated and nothing aborts.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>

#include "abort.h"
#include "check.h"

static int evaluations;

static bool
counted(bool v)
{
    evaluations++;
    return v;
}

#ifdef VFDSWMR_INVARIANTS

static void
false_assertion(void *arg)
{
    int one = *(int *)arg;

    VFDSWMR_ASSERT(one + one == 3);
}

static void
test_false_assertion_aborts(void **state)
{
    int one = 1;

    (void)state;
    expect_abort(false_assertion, &one, "test_check.c:");
    expect_abort(false_assertion, &one, ": false_assertion: invariant violated: one + one == 3\n");
}

static void
test_true_assertion_evaluates_once(void **state)
{
    (void)state;
    evaluations = 0;
    VFDSWMR_ASSERT(counted(true));
    assert_int_equal(evaluations, 1);
}

static const char *
broken(uint64_t *size)
{
    *size = 3;
    return "the counter does not match the list";
}

static void
failing_checker(void *arg)
{
    vfdswmr_pace_t *pace = arg;

    VFDSWMR_CHECK_INVARIANTS(pace, broken(&pace->size));
}

static void
test_failing_checker_aborts(void **state)
{
    vfdswmr_pace_t pace = {0};

    (void)state;
    expect_abort(failing_checker, &pace,
                 ": failing_checker: invariant violated: broken(&pace->size) (the counter does not match the list)\n");
}

static const char *
sized(uint64_t *size, uint64_t n)
{
    evaluations++;
    *size = n;
    return NULL;
}

/* Every call while the size is at most VFDSWMR_PACE_SMALL; then once per
 * size / VFDSWMR_PACE_RATIO calls. */
_Static_assert(10 * VFDSWMR_PACE_RATIO > VFDSWMR_PACE_SMALL, "test_pace needs a size beyond the small ones");

static void
test_pace(void **state)
{
    vfdswmr_pace_t pace = {0};

    (void)state;
    evaluations = 0;
    for (int i = 0; i < 100; i++)
        VFDSWMR_CHECK_INVARIANTS(&pace, sized(&pace.size, VFDSWMR_PACE_SMALL));
    assert_int_equal(evaluations, 100);
    evaluations = 0;
    for (int i = 0; i < 1000; i++)
        VFDSWMR_CHECK_INVARIANTS(&pace, sized(&pace.size, 10 * VFDSWMR_PACE_RATIO));
    assert_int_equal(evaluations, 91); /* calls 0, 11, ..., 990: a check, then 10 calls without */
    evaluations = 0;
    for (int i = 0; i < 100; i++) /* small again: at every call once the next check saw it */
        VFDSWMR_CHECK_INVARIANTS(&pace, sized(&pace.size, 1));
    assert_true(evaluations >= 90 && evaluations <= 100); /* not assert_in_range: deprecated in cmocka 2 */
}

#else /* production build */

/* Nothing is evaluated; a variable named only in an assertion is used
 * (this file compiles with -Wall -Wextra -Werror). */
static void
test_nothing_evaluated(void **state)
{
    int only_in_assertion = 0;

    (void)state;
    evaluations = 0;
    VFDSWMR_ASSERT(counted(false));
    VFDSWMR_ASSERT(only_in_assertion == 1);
    VFDSWMR_CHECK_INVARIANTS(&no_such_pace, no_such_checker()); /* not even compiled */
    assert_int_equal(evaluations, 0);
}

#endif

int
main(void)
{
    const struct CMUnitTest tests[] = {
#ifdef VFDSWMR_INVARIANTS
        cmocka_unit_test(test_false_assertion_aborts),
        cmocka_unit_test(test_true_assertion_evaluates_once),
        cmocka_unit_test(test_failing_checker_aborts),
        cmocka_unit_test(test_pace),
#else
        cmocka_unit_test(test_nothing_evaluated),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
