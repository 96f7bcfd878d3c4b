#!/usr/bin/env bash
# Runs a command against a throwaway PostgreSQL server: installs Debian's `postgresql` with
# apt-get when it is missing, starts a server on a free loopback port with a temporary data
# directory, runs the command with FEEDBACKLOOP_POSTGRES_URL set to it, and stops the server and
# deletes the directory at the end, whatever the command's exit status (which is this script's).
#
#   .ci/postgres.sh swift test --enable-all-traits --filter FeedbackLoopPostgresTests
#
# As root (CI, these VMs) the server runs as the `postgres` user, which initdb requires.
set -euo pipefail
[ "$#" -gt 0 ] || { echo "usage: $0 COMMAND [ARGS...]" >&2; exit 2; }

bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
    echo "postgres.sh: installing Debian's postgresql" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    bindir=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
fi

dir=$(mktemp -d /tmp/feedbackloop-postgres.XXXXXX)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
as_server() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; fi

stop_server() {
    as_server "$bindir/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$dir"
}
trap stop_server EXIT

as_server "$bindir/initdb" -D "$dir/data" -U feedbackloop --auth=trust >/dev/null
as_server "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=on" start >/dev/null
as_server "$bindir/createdb" -h 127.0.0.1 -p "$port" -U feedbackloop feedbackloop

export FEEDBACKLOOP_POSTGRES_URL="postgres://feedbackloop@127.0.0.1:$port/feedbackloop"
echo "postgres.sh: PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') on 127.0.0.1:$port ($dir)" >&2
status=0
"$@" || status=$?
exit "$status"
