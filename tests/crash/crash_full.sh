#!/usr/bin/env bash
# make check-crash: the full crash harness, CRASH_TRIALS trials (default 50) from CRASH_SEED
# (default 1). Fails when the recovery command is missing.
set -u
exec bash "$(dirname "$0")/crash_harness.sh" "${CRASH_TRIALS:-50}" "${CRASH_SEED:-1}"
