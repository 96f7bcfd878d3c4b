#!/usr/bin/env bash
# Builds the pharmacy service and runs its integration tests (a real server on a free loopback
# port, driven over HTTP). For CI: exits non-zero on any build or test failure.
#
#   Integrations/PharmacyService/test.sh [extra `swift test` arguments]
set -euo pipefail
cd "$(dirname "$0")"
swift build --build-tests
swift test --skip-build "$@"
