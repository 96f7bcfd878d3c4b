#!/usr/bin/env bash
# The allocation gate: runs the W1 steady-state send benchmarks (1,000 external sends into a
# drained counter loop per iteration) and fails if the p90 allocations per event exceed the goal:
# 0 on the callback backend, 0.05 on the actor backend (issue 4). Allocation counts are
# deterministic, unlike wall time on shared VMs, so this gates on nothing else.
#
# Usage: Benchmarks/check-allocations.sh      (from anywhere; exit 0 = within goals, 1 = breach)
# Override a goal with FEEDBACK_MAX_ALLOCS_CALLBACK / FEEDBACK_MAX_ALLOCS_ACTOR (per event).
set -euo pipefail
cd "$(dirname "$0")"

export_dir=$(mktemp -d)
trap 'rm -rf "$export_dir"' EXIT

swift package --allow-writing-to-directory "$export_dir" benchmark \
    --no-progress --filter 'W1 send.*' \
    --format metricP90AbsoluteThresholds --path "$export_dir"

python3 - "$export_dir" <<'PY'
import glob, json, os, re, sys

events_per_iteration = 1000
limits = {
    "callback": float(os.environ.get("FEEDBACK_MAX_ALLOCS_CALLBACK", "0")),
    "actor": float(os.environ.get("FEEDBACK_MAX_ALLOCS_ACTOR", "0.05")),
}
seen, failed = set(), False
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.p90.json"))):
    match = re.search(r"W1.send.(callback|actor)", os.path.basename(path))
    if not match:
        continue
    backend = match.group(1)
    with open(path) as f:
        metrics = json.load(f)
    if "mallocCountTotal" not in metrics:
        print(f"FAIL {backend}: no mallocCountTotal in {path} (is the MallocInterposer trait on?)")
        failed = True
        continue
    per_event = metrics["mallocCountTotal"] / events_per_iteration
    ok = per_event <= limits[backend]
    failed |= not ok
    seen.add(backend)
    print(f"{'ok  ' if ok else 'FAIL'} W1 {backend}: {per_event:.3f} allocations/event at p90 "
          f"({metrics['mallocCountTotal']} per {events_per_iteration} sends), goal <= {limits[backend]}")
missing = set(limits) - seen
if missing:
    print(f"FAIL: no W1 result for {', '.join(sorted(missing))}")
    failed = True
sys.exit(1 if failed else 0)
PY
