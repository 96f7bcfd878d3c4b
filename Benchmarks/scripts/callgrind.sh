#!/usr/bin/env bash
# Instructions per unit for the peers' workloads (W1 send, W2 ping-pong, W3 switch-latest churn
# with a `.run` effect, W3 with a `.callback` effect), counted by valgrind callgrind on a release
# build of feedback-bench's --instructions mode, for the bare limit, every backend and the peer
# (the `system` operator on OpenCombine). Instruction counts are deterministic where wall time on
# shared VMs is not.
#
# Measured as a user would see them: feedback-bench is built in the Benchmarks package, which
# depends on FeedbackLoop by path as a user's package would, so the library's generic code is
# specialised only as far as its public, inlinable API allows (built inside FeedbackLoop's own
# package, cross-module optimisation between its modules would hide what an outside caller pays).
#
# Each figure is the difference between two runs, (I(2n) - I(n)) / n, so that process start-up,
# loop creation and teardown cancel out and what remains is the steady-state cost of one unit.
#
# A second table, for every backend in the run, is the composition bound in instructions: an
# event into a parent of 1,000 keyed children of a feature (one changing per event) over an event
# into a loop holding the same 1,000 children in a plain array (issue 27), and over an event into
# the child feature's own loop (issue 13, information); each figure the median of three. A
# third is the life of an idle loop (create, start, stop, release), per loop. A fourth is issue 27's
# service shape: 1,000 live counter loops, one sender, events round robin, each sent once the
# previous one was observed (a DispatchSemaphore the loop's observer signals), so that every event
# wakes an idle loop; beside the backends, the two bare hand-offs they are built on: a task parked
# per unit on a continuation and resumed per event, and an actor per unit entered by a new Task
# per event. With `actor` in the run, two more rows: the same loops given one executor and the
# sender an actor on it, once through Loop.send(_:isolation:) (reduced in place) and once
# passing no isolation (a task per wake-up).
#
#   Benchmarks/scripts/callgrind.sh                          # all four tables (about 25 minutes on 2 cores)
#   Benchmarks/scripts/callgrind.sh --only "callback actor"  # some rows
#   Benchmarks/scripts/callgrind.sh --tables "service"       # some tables: peers, composition, loops, service
#   Benchmarks/scripts/callgrind.sh --profile w1 actor       # one profile, annotated (top functions, inclusive)
#   Benchmarks/scripts/callgrind.sh --propagate-context yes --only callback   # loops that propagate ServiceContext (issue 30)
#
# The build lives in Benchmarks/.build-callgrind/, a folder of its own: its flags differ from a
# plain release build's, which would otherwise be rebuilt after every callgrind run.
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."

command -v valgrind >/dev/null || { echo "error: valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }

outside="$(pwd)/.build-callgrind"
# -gdwarf-4: clang's default DWARF 5 (OpenCombine's C helper target) makes valgrind 3.19 give up.
build=(swift build --scratch-path "$outside" -c release -Xcc -gdwarf-4)
"${build[@]}" --product feedback-bench >&2
bench=$("${build[@]}" --show-bin-path)/feedback-bench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# n per workload; the peer runs a fifth as many units (it costs ~20-100x more per unit, and the
# difference of two runs is as exact at 20,000 units as at 100,000).
units_of() { # workload contender
    local n
    case $1 in
        w1 | child) n=100000 ;;
        w2) n=50000 ;;
        w3 | w3-callback | loops) n=10000 ;;
        keyed-children | plain-array | service | service-actor | service-executor | service-executor-hop) n=20000 ;;
    esac
    if [ "$2" = opencombine ]; then n=$((n / 5)); fi
    echo "$n"
}
contender_flags() { if [ "$1" = bare ]; then echo --bare; else echo "--backend $1"; fi; }

# Total instructions (all threads) of one run.
instructions() { # workload contender units
    local out="$work/callgrind.$1.$2.$3"
    # shellcheck disable=SC2046
    valgrind --tool=callgrind --callgrind-out-file="$out" \
        "$bench" --instructions --workload "$1" $(contender_flags "$2") ${propagation:+"$propagation"} --events "$3" \
        >/dev/null 2>"$out.log" || { cat "$out.log" >&2; exit 1; }
    awk '/^(summary|totals):/ { print $2; exit }' "$out"
}

per_unit() { # workload contender
    local n one two
    n=$(units_of "$1" "$2")
    one=$(instructions "$1" "$2" "$n")
    two=$(instructions "$1" "$2" $((2 * n)))
    echo $(((two - one) / n))
}

# The median of three per-unit figures. On `actor` and `stream` a figure depends on how the
# sends batch, which valgrind's serialised threads leave to chance: runs of one build spread over
# +-15 %, enough to move issue 13's ratio across its limit.
per_unit_median() { # workload contender
    local a b c
    a=$(per_unit "$1" "$2")
    b=$(per_unit "$1" "$2")
    c=$(per_unit "$1" "$2")
    printf '%s\n' "$a" "$b" "$c" | sort -n | sed -n 2p
}

if [ "${1:-}" = --profile ]; then
    workload=${2:?workload: w1, w2, w3, w3-callback, child, keyed-children, plain-array, loops, service or service-actor}
    contender=${3:?contender: bare, callback, actor, stream or opencombine}
    out="$work/profile"
    # shellcheck disable=SC2046
    valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file="$out" \
        "$bench" --instructions --workload "$workload" $(contender_flags "$contender") \
        --events "$(units_of "$workload" "$contender")" >/dev/null 2>"$out.log"
    cp "$out" "$outside/callgrind.out.$workload.$contender"
    echo "kept Benchmarks/.build-callgrind/callgrind.out.$workload.$contender (for callgrind_annotate --auto=yes or kcachegrind)" >&2
    callgrind_annotate --inclusive=yes --threshold=99 "$out" | head -60
    exit 0
fi

contenders="bare callback actor stream opencombine"
tables="peers composition loops service"
propagation=""
while [ $# -gt 0 ]; do
    case $1 in
        --propagate-context)
            case ${2:-} in
                yes) propagation=--propagate-context ;;
                no) propagation="" ;;
                *) echo "error: --propagate-context takes yes or no" >&2; exit 64 ;;
            esac ;;
        --only) contenders=${2:?--only needs a list of contenders: bare callback actor stream opencombine} ;;
        --tables) tables=${2:?--tables needs a list of tables: peers composition loops service} ;;
        *) echo "error: unknown argument '$1' (use --only, --tables, --propagate-context or --profile)" >&2; exit 64 ;;
    esac
    shift 2
done
for table in $tables; do
    case $table in peers | composition | loops | service) ;; *) echo "error: unknown table '$table'; use peers, composition, loops or service" >&2; exit 64 ;; esac
done
for contender in $contenders; do
    case $contender in bare | callback | actor | stream | opencombine) ;; *) echo "error: unknown contender '$contender'; use bare, callback, actor, stream or opencombine" >&2; exit 64 ;; esac
done
wants() { case " $tables " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
# Said with the tables, so that figures pasted elsewhere keep the fact.
if [ -n "$propagation" ]; then echo "Every loop propagates ServiceContext (--propagate-context yes)."; fi
wants_contender() { case " $contenders " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

# What CombineFeedback on OpenCombine 0.14 measured on this kind of machine (/work/shared's
# MEASUREMENTS.md): the peer written here is faithful if it lands within ±30 % of these.
published() { case $1 in w1) echo 18083 ;; w2) echo 49689 ;; w3 | w3-callback) echo 59457 ;; esac; }

if wants peers; then
printf '| instructions per unit (callgrind) | W1 send | W2 ping-pong | W3 churn (.run) | W3 churn (.callback) |\n|---|---|---|---|---|\n'
for contender in $contenders; do
    row="| $contender"
    for workload in w1 w2 w3 w3-callback; do
        echo "callgrind: $workload on $contender" >&2
        figure=$(per_unit "$workload" "$contender")
        if [ "$contender" = opencombine ]; then
            target=$(published "$workload")
            figure="$figure ($((100 * figure / target)) % of CombineFeedback's $target)"
        fi
        row="$row | $figure"
    done
    echo "$row |"
done
fi

# The composition bound (issue 27): an event into 1,000 keyed children against an event into a
# loop holding the same 1,000 children in a plain array, no feedback, on the same backend; the
# ratio to the child's own loop (issue 13's first reading) stays as information. The backends of
# this run only (the peer has no composition, the bare limit is the same loop for every workload).
backends=$(for contender in $contenders; do case $contender in bare | opencombine) ;; *) echo "$contender" ;; esac; done)
if [ -n "$backends" ] && wants composition; then
    printf '\n| composition (callgrind) | an event into 1,000 keyed children | into a plain array of 1,000 (no composition) | ratio (issue 27: at most 3) | into the child'"'"'s own loop | ratio to it (information) |\n|---|---|---|---|---|---|\n'
    for backend in $backends; do
        echo "callgrind: keyed-children, plain-array and child on $backend" >&2
        children=$(per_unit_median keyed-children "$backend")
        plain=$(per_unit_median plain-array "$backend")
        child=$(per_unit_median child "$backend")
        bound=$(awk -v a="$children" -v b="$plain" 'BEGIN { printf "%.2f", a / b }')
        ratio=$(awk -v a="$children" -v b="$child" 'BEGIN { printf "%.1f", a / b }')
        echo "| $backend | $children | $plain | $bound | $child | $ratio |"
    done
fi

# Issue 12's create + stop, per idle loop (the `loops` scenario's memory is RSS, in feedback-bench).
if wants loops; then
    printf '\n| idle loops (callgrind) | create, start, stop and release, per loop |\n|---|---|\n'
    for contender in $contenders; do
        echo "callgrind: loops on $contender" >&2
        echo "| $contender | $(per_unit loops "$contender") |"
    done
fi

# Issue 27's wake-up: the backends against the bare hand-offs (the peer reduces on the sender's
# thread: it has no wake-up to measure). The ratio column is to the parked task, the service
# scenario's limit, when this run measures it. Medians of three: runs of one build spread over
# +-4 % (actor 11,753-12,348, stream 18,048-19,548), as much as a step of the engine may save.
if wants service; then
    printf '\n| service (callgrind): 1,000 idle loops, one event at a time | instructions per event | x a parked task resumed per event |\n|---|---|---|\n'
    parked=""
    service_row() { # label workload contender
        local figure ratio=""
        echo "callgrind: $2 on $3" >&2
        figure=$(per_unit_median "$2" "$3")
        if [ -n "$parked" ]; then ratio=$(awk -v a="$figure" -v b="$parked" 'BEGIN { printf "%.2f", a / b }'); fi
        echo "| $1 | $figure | $ratio |"
        if [ "$2 $3" = "service bare" ]; then parked=$figure; fi
    }
    for contender in $contenders; do
        case $contender in
            opencombine) ;;
            bare)
                service_row "bare: a task parked per unit on a continuation, resumed per event" service bare
                service_row "bare: an actor per unit, entered by a new Task per event" service-actor bare
                ;;
            *) service_row "$contender" service "$contender" ;;
        esac
    done
    if wants_contender actor; then
        service_row "actor on its executor, the sender an actor on it: send(_:isolation:)" service-executor actor
        service_row "actor on its executor, the same sender passing no isolation" service-executor-hop actor
    fi
fi
