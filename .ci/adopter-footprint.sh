#!/usr/bin/env bash
# The adopter footprint (issue 29): for each way a user depends on FeedbackLoop, a scratch package
# that depends on this checkout by path resolves, and the packages it fetched must be exactly the
# expected ones. A new dependency of a product, or one that escapes its trait guard, fails here.
# Usage: .ci/adopter-footprint.sh [REPO]   (REPO defaults to the repository this script is in)
# README's product table lists the same packages per trait: change both together.
set -euo pipefail
repo=$(cd "${1:-$(dirname "$0")/..}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0

# check NAME 'TRAITS' 'PRODUCTS' 'EXPECTED IDENTITIES (sorted)'
check() {
    local name=$1 traits=$2 products=$3 expected=$4 dir="$work/$1" deps="" imports=""
    mkdir -p "$dir/Sources/Adopter"
    for p in $products; do
        deps+=".product(name: \"$p\", package: \"FeedbackLoop\"), "
        imports+="import $p"$'\n'
    done
    cat > "$dir/Package.swift" <<SWIFT
// swift-tools-version: 6.1
import PackageDescription
let package = Package(
    name: "Adopter",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "FeedbackLoop", path: "$repo"$traits)],
    targets: [.target(name: "Adopter", dependencies: [$deps])]
)
SWIFT
    printf '%s' "$imports" > "$dir/Sources/Adopter/Adopter.swift"
    if ! swift package --package-path "$dir" resolve > "$dir/resolve.log" 2>&1; then
        echo "FAIL $name: swift package resolve failed:"; grep -E "error|warning" "$dir/resolve.log" | sed "s/^/    /"
        failed=1; return
    fi
    local got
    got=$(python3 -c 'import json,sys; print(" ".join(sorted(p["identity"] for p in json.load(open(sys.argv[1]))["pins"])))' "$dir/Package.resolved")
    if [ "$got" = "$expected" ]; then
        echo "ok   $name: $(wc -w <<<"$got") packages: $got"
    else
        echo "FAIL $name"; echo "    expected: $expected"; echo "    resolved: $got"; failed=1
    fi
}

check core       ''                                   'FeedbackLoop FeedbackLoopRecording' \
    'swift-distributed-tracing swift-log'
# The products that need no trait also compile with none (a stray `#if Testing` in the core, or a
# guarded dependency the core came to rely on, fails here rather than in a user's build).
if [ -f "$work/core/Package.resolved" ]; then
    if swift build --package-path "$work/core" > "$work/core/build.log" 2>&1; then
        echo "ok   core: builds with no trait enabled"
    else
        echo "FAIL core: does not build with no trait enabled:"; grep -E "error" "$work/core/build.log" | sed 's/^/    /' | head -20; failed=1
    fi
fi
check test-kit   ', traits: ["Testing"]'              'FeedbackLoop FeedbackLoopTesting' \
    'swift-clocks swift-concurrency-extras swift-custom-dump swift-distributed-tracing swift-log xctest-dynamic-overlay'
check services   ', traits: ["Services"]'             'FeedbackLoop FeedbackLoopServices' \
    'swift-async-algorithms swift-collections swift-distributed-tracing swift-log swift-metrics swift-service-lifecycle'
check tracing    ', traits: ["Tracing"]'              'FeedbackLoop FeedbackLoopTracing' \
    'swift-distributed-tracing swift-log'
check durable    ', traits: ["Durable"]'              'FeedbackLoop FeedbackLoopDurable' \
    'grdb.swift swift-distributed-tracing swift-log'
check durable-testing ', traits: ["Durable", "Testing"]' 'FeedbackLoop FeedbackLoopDurable FeedbackLoopDurableTesting' \
    'grdb.swift swift-clocks swift-concurrency-extras swift-custom-dump swift-distributed-tracing swift-log xctest-dynamic-overlay'
check postgres   ', traits: ["Postgres"]'             'FeedbackLoop FeedbackLoopDurable FeedbackLoopPostgres' \
    'grdb.swift postgres-nio swift-asn1 swift-async-algorithms swift-atomics swift-collections swift-crypto swift-distributed-tracing swift-log swift-metrics swift-nio swift-nio-ssl swift-nio-transport-services swift-service-lifecycle swift-system'
exit $failed
