#!/usr/bin/env bash
# `make cluster`: Redis and PostgreSQL on loopback with their data in var/cluster/, then NODES
# Parlour nodes (2 by default: `make cluster NODES=3`) sharing them, on consecutive ports from
# FIRST_PORT (8080, 8081, ...; docs/cluster.md). Ctrl-C stops everything; the data stays for
# the next run (`rm -rf var/cluster` starts afresh).
#
# Ports can be changed with REDIS_PORT, PG_PORT, FIRST_PORT (the first node's), or PORTS (a list,
# e.g. PORTS="8080 8090 8100", which then sets the number of nodes), and the first node's Fish
# and Tsuro ports with FISH_PORT and TSURO_PORT (0 turns them off; node n adds 10 * (n - 1)).
# WORKERS=N makes each node a supervisor of N worker processes on its port (docs/deploy.md,
# "One machine, all its cores").
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DATA="$ROOT/var/cluster"
BIN="$ROOT/.venv/bin"
REDIS_PORT=${REDIS_PORT:-6379}
PG_PORT=${PG_PORT:-5432}
NODES=${NODES:-2}
WORKERS=${WORKERS:-1}
FIRST_PORT=${FIRST_PORT:-8080}
case "$NODES" in
  '' | *[!0-9]* | 0) echo "NODES must be a number of nodes, at least 1 (not '$NODES')" >&2; exit 2 ;;
esac
PORTS=${PORTS:-$(seq -s " " "$FIRST_PORT" $((FIRST_PORT + NODES - 1)))}
FISH_PORT=${FISH_PORT:-8001}
TSURO_PORT=${TSURO_PORT:-8000}
nth() { [ "$1" = 0 ] && echo 0 || echo $(($1 + 10 * ($2 - 1))); }
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -x "$PG_BIN/initdb" ] || { echo "PostgreSQL is not installed (make postgres)" >&2; exit 1; }
command -v redis-server >/dev/null || { echo "redis-server is not installed (make redis)" >&2; exit 1; }

mkdir -p "$DATA"
pids=()
stop() {
  trap - INT TERM EXIT
  # Nodes first (they hand their leases over and commit what they hold), then the engines.
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  as_pg "$PG_BIN/pg_ctl" -D "$DATA/pg" -m fast -w stop >/dev/null 2>&1 || true
  redis-cli -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
  echo "cluster stopped; its data is in $DATA"
}

# PostgreSQL refuses to run as root: as root, its programs run as the postgres user.
if [ "$(id -u)" = 0 ]; then
  as_pg() { setpriv --reuid="$(id -u postgres)" --regid="$(id -g postgres)" --clear-groups -- "$@"; }
  chown postgres: "$DATA"
else
  as_pg() { "$@"; }
fi

if [ ! -f "$DATA/pg/PG_VERSION" ]; then
  as_pg "$PG_BIN/initdb" -D "$DATA/pg" -U parlour --auth=trust --no-locale --encoding=UTF8 >"$DATA/initdb.log"
fi
as_pg "$PG_BIN/pg_ctl" -D "$DATA/pg" -l "$DATA/postgresql.log" -w -t 30 \
  -o "-p $PG_PORT -c listen_addresses=127.0.0.1 -c unix_socket_directories=$DATA" start >/dev/null
trap stop INT TERM EXIT
createdb() { "$BIN/python" - "$PG_PORT" <<'PY'
import sys, psycopg
with psycopg.connect(f"postgresql://parlour@127.0.0.1:{sys.argv[1]}/postgres", autocommit=True) as conn:
    if not conn.execute("SELECT 1 FROM pg_database WHERE datname = 'parlour'").fetchone():
        conn.execute('CREATE DATABASE "parlour"')
PY
}
createdb
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$DATA" --daemonize yes \
  --logfile "$DATA/redis.log" --pidfile "$DATA/redis.pid" --appendonly yes >/dev/null

STORE="postgresql://parlour@127.0.0.1:$PG_PORT/parlour"
REDIS="redis://127.0.0.1:$REDIS_PORT/0"
n=0
for port in $PORTS; do
  n=$((n + 1))
  # Fish and Tsuro tables are each node's own: ports 8001/8000 on the first, 8011/8010...
  "$BIN/parlour" serve --port "$port" --store "$STORE" --cluster "$REDIS" --workers "$WORKERS" \
    --fish-port "$(nth "$FISH_PORT" $n)" --tsuro-port "$(nth "$TSURO_PORT" $n)" \
    >>"$DATA/node$n.log" 2>&1 &
  pids+=("$!")
  sleep 1  # the first node takes the leases and restores the games before the next starts
done
echo "Redis on $REDIS, PostgreSQL on $STORE"
for port in $PORTS; do echo "node: http://127.0.0.1:$port/ (logs in $DATA)"; done
echo "Ctrl-C stops the cluster"
wait -n "${pids[@]}" || true
