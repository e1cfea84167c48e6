#!/usr/bin/env bash
# The committed fixture files are exactly what the generator makes today:
# the encoders and the fixtures cannot drift apart unnoticed.
. "${VFDSWMR_TESTLIB:?}"

"${VFDSWMR_GEN_FIXTURES:?}" "$WORK" || fail "gen_fixtures failed"
for sub in md ud; do
    n=$(ls "$WORK/$sub" | wc -l)
    [ "$n" -gt 10 ] || fail "gen_fixtures made only $n $sub files"
    diff -r "$VFDSWMR_FIXTURES/$sub" "$WORK/$sub" >/dev/null \
        || fail "tests/fixtures/$sub differs from what gen_fixtures makes: run 'make fixtures' and review"
    ok "$n $sub fixtures are up to date"
done
finish
