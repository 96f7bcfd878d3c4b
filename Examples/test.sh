#!/usr/bin/env bash
# Builds the examples package and runs all its tests: the examples' own (FeedbackExamplesTests)
# and the pharmacy service's integration tests (a real server on a free loopback port, driven over
# HTTP). For CI: exits non-zero on any build or test failure, and on a hang.
#
#   Examples/test.sh [extra test arguments, e.g. --filter HarnessTests]
#
# The tests are Swift Testing tests; the script runs the test bundle itself (as `swift test`
# does), so that the process it watches is the one running them. Every wait in the tests is
# bounded (60 s) and fails naming what it waited for, with the sessions' state. This script is the
# backstop for a hang outside those waits: past PHARMACY_TEST_LIMIT seconds (default 300; the
# suite takes about 10 s) it prints the stacks of the test process (every thread with gdb, if
# installed; otherwise the Swift runtime's backtrace on SIGABRT), ends it, and exits 1.
#
# The fault tests start `pharmacy-service` processes and kill them when they end; should the test
# process itself die first, the pids they wrote to $PHARMACY_TEST_CHILDREN are killed on exit.
# Their PostgreSQL half runs only with FEEDBACKLOOP_POSTGRES_URL set:
#
#   .ci/postgres.sh Examples/test.sh      (from the repository's root)
#
# EXAMPLES_SCRATCH_PATH names another build folder (CI shares the root package's: this package
# asks FeedbackLoop for the root's own trait set, so the modules built there are reused).
set -euo pipefail
cd "$(dirname "$0")"
build=(swift build)
if [ -n "${EXAMPLES_SCRATCH_PATH:-}" ]; then build+=(--scratch-path "$EXAMPLES_SCRATCH_PATH"); fi
"${build[@]}" --build-tests
tests="$("${build[@]}" --show-bin-path)/FeedbackLoopExamplesPackageTests.xctest"

children=$(mktemp)
export PHARMACY_TEST_CHILDREN="$children"
kill_children() {
    while read -r pid; do
        # Only if the pid is still a pharmacy-service (not a reused pid).
        if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "pharmacy-servic" ]; then kill -KILL "$pid" 2>/dev/null || true; fi
    done <"$children"
    rm -f "$children"
}
trap kill_children EXIT

limit="${PHARMACY_TEST_LIMIT:-300}"

# Runs the test bundle with these arguments under the watchdog; returns its status.
run_tests() {
    # Local: the caller keeps its own status across the two runs below.
    local runner waited status
    SWIFT_BACKTRACE="enable=yes,interactive=no,threads=all" "$tests" --testing-library swift-testing "$@" &
    runner=$!

    waited=0
    while kill -0 "$runner" 2>/dev/null && [ "$waited" -lt "$limit" ]; do
        sleep 1
        waited=$((waited + 1))
    done
    if ! kill -0 "$runner" 2>/dev/null; then
        status=0
        wait "$runner" || status=$?
        return "$status"
    fi

    echo "error: the PharmacyService tests did not finish in $limit s; the test process's stacks follow" >&2
    if command -v gdb >/dev/null; then
        gdb -p "$runner" -batch -ex "thread apply all bt" 2>/dev/null | grep -E '^(Thread|#)' >&2 || true
    fi
    # The Swift runtime's backtracer prints the stack on SIGABRT, then the process ends.
    kill -ABRT "$runner" 2>/dev/null || true
    waited=0
    while kill -0 "$runner" 2>/dev/null && [ "$waited" -lt 30 ]; do
        sleep 1
        waited=$((waited + 1))
    done
    kill -KILL "$runner" 2>/dev/null || true
    wait "$runner" 2>/dev/null || true
    return 1
}

if [ "$#" -gt 0 ]; then
    run_tests "$@"
    exit $?
fi
# Three test processes, one after the other:
# - the in-process tests;
# - the journal's in-process tests, on their own so that neither set loads the machine under the
#   other's timers (idle and read timeouts, leases);
# - the tests that spawn `pharmacy-service` (its command line; the journal's fault tests, server
#   processes under SIGKILL and SIGSTOP), one at a time: spawns beside other tests' fresh
#   loopback connections are where those connections were closed before their request was written
#   (Foundation's `Process`, which the tests no longer use; see Support/ChildProcess.swift).
journal_tests="DurableSessionTests"
process_tests="CommandTests|KillNineTests|PostgresFaultTests"
status=0
run_tests --skip "$journal_tests|$process_tests" || status=$?
run_tests --filter "$journal_tests" || status=$?
run_tests --filter "$process_tests" --no-parallel || status=$?
exit "$status"
