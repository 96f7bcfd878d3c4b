#!/usr/bin/env bash
# Instructions per unit for the peers' three workloads (W1 send, W2 ping-pong, W3 switch-latest
# churn), counted by valgrind callgrind on a release build of feedback-bench's --instructions mode.
# Instruction counts are deterministic where wall time on shared VMs is not.
#
# Each figure is the difference between two runs, (I(2n) - I(n)) / n, so that process start-up,
# loop creation and teardown cancel out and what remains is the steady-state cost of one unit.
#
#   scripts/callgrind.sh                      # the table: bare limit, callback, actor × W1 W2 W3
#   scripts/callgrind.sh --profile w1 actor   # one profile, annotated (top functions, inclusive)
set -euo pipefail
cd "$(dirname "$0")/.."

swift build -c release --product feedback-bench >&2
bench=$(swift build -c release --show-bin-path)/feedback-bench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

scenario_of() { case $1 in w1) echo throughput ;; w2) echo pingpong ;; w3) echo cancellation ;; esac; }
units_of() { case $1 in w1) echo 100000 ;; w2) echo 50000 ;; w3) echo 10000 ;; esac; }
target_flags() { if [ "$1" = bare ]; then echo --bare; else echo "--backend $1"; fi; }

# Total instructions (all threads) of one run.
instructions() { # workload target units
    local out="$work/callgrind.$1.$2.$3"
    # shellcheck disable=SC2046
    valgrind --tool=callgrind --callgrind-out-file="$out" \
        "$bench" --instructions --scenario "$(scenario_of "$1")" $(target_flags "$2") --events "$3" \
        >/dev/null 2>"$out.log" || { cat "$out.log" >&2; exit 1; }
    awk '/^(summary|totals):/ { print $2; exit }' "$out"
}

per_unit() { # workload target
    local n; n=$(units_of "$1")
    local one two
    one=$(instructions "$1" "$2" "$n")
    two=$(instructions "$1" "$2" $((2 * n)))
    echo $(((two - one) / n))
}

if [ "${1:-}" = --profile ]; then
    workload=${2:?workload: w1, w2 or w3}
    target=${3:?target: callback, actor or bare}
    out="$work/profile"
    # shellcheck disable=SC2046
    valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file="$out" \
        "$bench" --instructions --scenario "$(scenario_of "$workload")" $(target_flags "$target") \
        --events "$(units_of "$workload")" >/dev/null 2>"$out.log"
    mkdir -p .build
    cp "$out" ".build/callgrind.out.$workload.$target"
    echo "kept .build/callgrind.out.$workload.$target (for callgrind_annotate --auto=yes or kcachegrind)" >&2
    callgrind_annotate --inclusive=yes --threshold=99 "$out" | head -60
    exit 0
fi

printf '| instructions per unit (callgrind) | W1 send | W2 ping-pong | W3 churn |\n|---|---|---|---|\n'
for target in bare callback actor; do
    row="| $target"
    for workload in w1 w2 w3; do
        echo "callgrind: $workload on $target" >&2
        row="$row | $(per_unit "$workload" "$target")"
    done
    echo "$row |"
done
