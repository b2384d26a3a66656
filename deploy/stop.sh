#!/usr/bin/env bash
# Stop what deploy/start.sh started: workers (their job in hand goes back to the queue), dashboards, then
# the local PostgreSQL server if it started one.
set -uo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DEPLOY_DIR="${DEPLOY_DIR:-$ROOT/deploy/.run}"
PG_BIN="${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}"

for pidfile in "$DEPLOY_DIR"/worker-*.pid "$DEPLOY_DIR"/dashboard-*.pid; do
  [ -f "$pidfile" ] || continue
  pid="$(cat "$pidfile")"
  kill -TERM "$pid" 2>/dev/null  # a worker's consumer interrupts its worker process and waits for it
  for _ in $(seq 1 75); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  kill -KILL "$pid" 2>/dev/null
  rm -f "$pidfile"
done
if [ -f "$DEPLOY_DIR/pgdata/PG_VERSION" ]; then
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$DEPLOY_DIR/pgdata" -m fast -w stop >/dev/null 2>&1
  else
    "$PG_BIN/pg_ctl" -D "$DEPLOY_DIR/pgdata" -m fast -w stop >/dev/null 2>&1
  fi
fi
echo "stopped"
