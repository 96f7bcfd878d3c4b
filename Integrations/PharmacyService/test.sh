#!/usr/bin/env bash
# Builds the pharmacy service and runs its integration tests (a real server on a free loopback
# port, driven over HTTP). For CI: exits non-zero on any build or test failure, and on a hang.
#
#   Integrations/PharmacyService/test.sh [extra `swift test` arguments]
#
# Every wait in the tests is bounded (60 s) and fails naming what it waited for, with the
# sessions' state. This script is the backstop for a hang outside those waits: past
# PHARMACY_TEST_LIMIT seconds (default 300; the suite takes about 10 s) it prints the stacks of
# the test process (every thread with gdb, if installed; otherwise the Swift runtime's backtrace
# on SIGABRT), ends it, and exits 1.
set -euo pipefail
cd "$(dirname "$0")"
swift build --build-tests

limit="${PHARMACY_TEST_LIMIT:-300}"
export SWIFT_BACKTRACE="enable=yes,interactive=no,threads=all"
swift test --skip-build "$@" &
runner=$!

waited=0
while kill -0 "$runner" 2>/dev/null && [ "$waited" -lt "$limit" ]; do
    sleep 1
    waited=$((waited + 1))
done
if ! kill -0 "$runner" 2>/dev/null; then
    wait "$runner"
    exit $?
fi

echo "error: the PharmacyService tests did not finish in $limit s; stacks of the test process follow" >&2
for pid in $(pgrep -P "$runner" || true); do
    command=$(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null || true)
    case "$command" in *.xctest*) ;; *) continue ;; esac
    echo "--- process $pid: $command" >&2
    if command -v gdb >/dev/null; then
        gdb -p "$pid" -batch -ex "thread apply all bt" 2>/dev/null | grep -E '^(Thread|#)' >&2 || true
    fi
    # The Swift runtime's backtracer prints the stack on SIGABRT, then the process ends.
    kill -ABRT "$pid" 2>/dev/null || true
done
for _ in $(seq 30); do
    [ -z "$(pgrep -P "$runner" || true)" ] && break
    sleep 1
done
for pid in $(pgrep -P "$runner" || true); do kill -KILL "$pid" 2>/dev/null || true; done
kill -KILL "$runner" 2>/dev/null || true
wait "$runner" 2>/dev/null || true
exit 1
