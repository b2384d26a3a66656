#!/usr/bin/env bash
# A team's setup on one machine, all on 127.0.0.1: PostgreSQL (the store and the job queue), two dashboard
# replicas and two workers. Every process's pid is written under $DEPLOY_DIR; deploy/stop.sh stops them.
#
#   bash deploy/start.sh            # PostgreSQL on :55432, dashboards on :8601 and :8602, two workers
#   bash deploy/stop.sh
#
# Sign-in: on 127.0.0.1 the dashboards ask nobody to sign in (unless the store holds a built-in account).
# Any other DASHBOARD_ADDR needs sign-in configured, or nothing starts: a built-in account (the first
# admin: EVALCORE_ADMIN=NAME asks for its password once, or reads it from EVALCORE_ADMIN_PASSWORD_FILE;
# later ones with `evalcore users add`), or OIDC in .streamlit/secrets.toml [auth] (see the README).
#
# Settings (environment): DEPLOY_DIR (default deploy/.run), PG_PORT (55432), DASHBOARD_PORTS ("8601 8602"),
# DASHBOARD_ADDR (127.0.0.1; 0.0.0.0 to serve the team's network), WORKERS (2), PG_BIN (the newest
# /usr/lib/postgresql/*/bin). To use a PostgreSQL server you already have, set EVALCORE_DATABASE_URL: no
# local server is started. The local one listens on 127.0.0.1 only, without passwords: a setup over
# several machines needs a server they all reach; run `evalcore worker --db URL` (and dashboards) on
# each with its URL.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PY="${PY:-$ROOT/.venv/bin/python}"
DEPLOY_DIR="${DEPLOY_DIR:-$ROOT/deploy/.run}"
PG_PORT="${PG_PORT:-55432}"
DASHBOARD_PORTS="${DASHBOARD_PORTS:-8601 8602}"
DASHBOARD_ADDR="${DASHBOARD_ADDR:-127.0.0.1}"
WORKERS="${WORKERS:-2}"
PG_BIN="${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}"
mkdir -p "$DEPLOY_DIR/logs"

# A second start would run a second set of dashboards and workers beside the first.
for pidfile in "$DEPLOY_DIR"/*.pid; do
  if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    echo "deploy: already running ($(basename "$pidfile" .pid), pid $(cat "$pidfile")); bash deploy/stop.sh first" >&2
    exit 1
  fi
done
if [ -z "${EVALCORE_DATABASE_URL:-}" ] && [ ! -x "${PG_BIN:-}/initdb" ]; then
  echo "deploy: no PostgreSQL server found: install Debian's postgresql (bash scripts/setup.sh --test does)," \
    "or set EVALCORE_DATABASE_URL to a server you have" >&2
  exit 1
fi

# initdb and postgres refuse to run as root: then the cluster belongs to the `postgres` user.
as_owner() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

if [ -z "${EVALCORE_DATABASE_URL:-}" ]; then
  PGDATA="$DEPLOY_DIR/pgdata"
  if [ ! -f "$PGDATA/PG_VERSION" ]; then
    mkdir -p "$PGDATA"
    [ "$(id -u)" = 0 ] && chown -R postgres "$DEPLOY_DIR/pgdata" && chmod 755 "$DEPLOY_DIR"
    as_owner "$PG_BIN/initdb" -D "$PGDATA" -U postgres --auth=trust --encoding=UTF8 --locale=C >/dev/null
  fi
  if ! as_owner "$PG_BIN/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1; then
    as_owner "$PG_BIN/pg_ctl" -D "$PGDATA" -l "$PGDATA/server.log" -w \
      -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -c unix_socket_directories=$PGDATA -c max_connections=200" \
      start >/dev/null
  fi
  "$PY" - "$PG_PORT" <<'PYTHON'
import sys, psycopg
with psycopg.connect(f"postgresql://postgres@127.0.0.1:{sys.argv[1]}/postgres", autocommit=True) as conn:
    if not conn.execute("SELECT 1 FROM pg_database WHERE datname = 'evalcore'").fetchone():
        conn.execute("CREATE DATABASE evalcore")
PYTHON
  export EVALCORE_DATABASE_URL="postgresql://postgres@127.0.0.1:$PG_PORT/evalcore"
fi
export EVALCORE_DATABASE_URL
cd "$ROOT"
"$PY" -m evalcore init >/dev/null  # migrations once, before the replicas open the store

accounts_exist() {
  "$PY" -c 'import sys; from evalcore.auth.accounts import built_in_accounts_exist as e; from evalcore.store import Store; sys.exit(0 if e(Store()) else 1)'
}
if [ -n "${EVALCORE_ADMIN:-}" ] && ! accounts_exist; then
  if [ -n "${EVALCORE_ADMIN_PASSWORD_FILE:-}" ]; then
    head -n 1 "$EVALCORE_ADMIN_PASSWORD_FILE" | "$PY" -m evalcore users add "$EVALCORE_ADMIN" --role admin --password-stdin
  else
    "$PY" -m evalcore users add "$EVALCORE_ADMIN" --role admin  # asks for the password twice
  fi
fi
# A dashboard on another address than 127.0.0.1 with no way to sign in would let anyone in: refuse here,
# before anything starts (dashboard.py refuses too, but its refusal would only reach its log).
"$PY" -c 'import sys
from evalcore.auth.serving import check_address
from evalcore.errors import EvalcoreError
from evalcore.store import Store
try:
    check_address(Store(), sys.argv[1])
except EvalcoreError as exc:
    sys.exit(f"deploy: {exc}")' "$DASHBOARD_ADDR"

start() {  # name, command...: run in the background, pid and log under $DEPLOY_DIR
  local name="$1"; shift
  nohup "$@" >"$DEPLOY_DIR/logs/$name.log" 2>&1 &
  echo $! >"$DEPLOY_DIR/$name.pid"
}
for port in $DASHBOARD_PORTS; do
  start "dashboard-$port" "$PY" "$ROOT/dashboard.py" --server.address "$DASHBOARD_ADDR" --server.port "$port" \
    --server.headless true --browser.gatherUsageStats false
  echo "dashboard: http://$DASHBOARD_ADDR:$port"
done
for i in $(seq 1 "$WORKERS"); do
  start "worker-$i" "$PY" -m evalcore worker --workers 1
done
echo "store and queue: ${EVALCORE_DATABASE_URL}; $WORKERS worker(s); logs in $DEPLOY_DIR/logs"
