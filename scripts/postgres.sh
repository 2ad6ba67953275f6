#!/usr/bin/env bash
# A private PostgreSQL cluster for tests and CI, listening on 127.0.0.1 only.
#
#   scripts/postgres.sh start    # prints DATABASE_URL=postgres://escoba:...@127.0.0.1:PORT/escoba
#   scripts/postgres.sh url      # prints the URL of the running cluster
#   scripts/postgres.sh stop     # fast shutdown; the data directory stays for the next start
#   scripts/postgres.sh destroy  # stop and delete the data directory
#
# `start` is idempotent: a running cluster is reused, a stopped one started again. The cluster
# runs as the `postgres` system user when we are root (PostgreSQL refuses to run as root), under
# $ESCOBA_PG_DIR (default /tmp/escoba-postgres). The port is picked once, free at the time, and
# kept in the data directory. The role may create databases, so Django can make `test_escoba`.
set -euo pipefail

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
BASE=${ESCOBA_PG_DIR:-/tmp/escoba-postgres}
DATA=$BASE/data
ROLE=escoba
PASSWORD=escoba-test-only
DATABASE=escoba

as_owner() {
    if [[ $(id -u) -eq 0 ]]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

port() { cat "$BASE/port"; }

url() { echo "postgres://$ROLE:$PASSWORD@127.0.0.1:$(port)/$DATABASE"; }

running() { [[ -f $DATA/PG_VERSION ]] && as_owner "$PG_BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; }

psql_admin() {
    as_owner "$PG_BIN/psql" -h 127.0.0.1 -p "$(port)" -U postgres -d postgres -v ON_ERROR_STOP=1 \
        -qtAc "$1"
}

init_cluster() {
    mkdir -p "$BASE"
    free_port >"$BASE/port"
    if [[ $(id -u) -eq 0 ]]; then chown postgres: "$BASE"; fi
    as_owner "$PG_BIN/initdb" -D "$DATA" -U postgres --auth=trust --encoding=UTF8 \
        --locale=C.UTF-8 >"$BASE/initdb.log"
    # Loopback only, and settings for a throwaway test database (durability is not the point).
    cat >>"$DATA/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $(port)
unix_socket_directories = '$BASE'
max_connections = 200
fsync = off
synchronous_commit = off
full_page_writes = off
EOF
}

start() {
    [[ -f $DATA/PG_VERSION ]] || init_cluster
    if ! running; then
        as_owner "$PG_BIN/pg_ctl" -D "$DATA" -l "$BASE/server.log" -w -t 60 start >/dev/null
    fi
    if [[ -z $(psql_admin "SELECT 1 FROM pg_roles WHERE rolname = '$ROLE'") ]]; then
        psql_admin "CREATE ROLE $ROLE LOGIN CREATEDB PASSWORD '$PASSWORD'"
    fi
    if [[ -z $(psql_admin "SELECT 1 FROM pg_database WHERE datname = '$DATABASE'") ]]; then
        psql_admin "CREATE DATABASE $DATABASE OWNER $ROLE"
    fi
    echo "DATABASE_URL=$(url)"
}

stop() {
    if running; then
        as_owner "$PG_BIN/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null
    fi
}

case ${1:-start} in
    start) start ;;
    url) running && url ;;
    stop) stop ;;
    destroy) stop; rm -rf "$BASE" ;;
    *) echo "usage: $0 start|url|stop|destroy" >&2; exit 2 ;;
esac
