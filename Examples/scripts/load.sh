#!/usr/bin/env bash
# The load figure of the README: Debian's wrk (apt-get install wrk) against a release build on
# loopback, per backend (and the actor pinned to the server's event loops), for 50 and 500
# sessions (one connection per session). Bounded: six runs of DURATION seconds (default 10), each on a fresh server.
#
#   Examples/scripts/load.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v wrk >/dev/null || { echo "error: wrk is not installed (apt-get install wrk)" >&2; exit 1; }
DURATION="${DURATION:-10}"
swift build -c release --product pharmacy-service >/dev/null 2>&1 \
  || { echo "error: the release build failed; run swift build -c release to see why" >&2; exit 1; }
binary="$(swift build -c release --show-bin-path)/pharmacy-service"

echo "machine: $(nproc) vCPU, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(uname -r); wrk $(wrk --version 2>&1 | head -1 | awk '{print $2}'); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| backend | sessions | connections | requests/s | p50 | p99 | non-200 |"
echo "|---|---|---|---|---|---|---|"
# actor-pinned: the actor backend with each session's loop on one of the server's event loops
# (--pin-sessions), against the same backend on the Swift concurrency pool.
for variant in callback actor actor-pinned; do
  backend=${variant%-pinned}
  flags=()
  [ "$variant" = actor-pinned ] && flags=(--pin-sessions)
  for sessions in 50 500; do
    out="$(mktemp)"
    "$binary" --port 0 --backend "$backend" "${flags[@]}" --latency-ms 0 --maximum-sessions 1000 >"$out" 2>/dev/null &
    server=$!
    for _ in $(seq 1 100); do grep -q listening "$out" && break; sleep 0.1; done
    port="$(grep -o '[0-9]*$' <(grep listening "$out"))"
    for i in $(seq 0 $((sessions - 1))); do
      curl -sf -o /dev/null -X PUT "http://127.0.0.1:$port/sessions/s$i"
    done
    result="$(SESSIONS=$sessions wrk -t2 -c"$sessions" -d"${DURATION}s" --timeout 5s -s scripts/load.lua \
      "http://127.0.0.1:$port" | grep RESULT)"
    kill -TERM "$server"; wait "$server" || true
    rm -f "$out"
    eval "${result#RESULT }"
    echo "| $variant | $sessions | $sessions | $rps | ${p50_ms} ms | ${p99_ms} ms | $non200 |"
  done
done
