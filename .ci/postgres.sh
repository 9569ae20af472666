#!/usr/bin/env bash
# A throwaway Postgres server (Debian's postgresql 15) for the shared job store's tests: its own
# data folder, port and unix socket in one scratch folder, stopped by its pid. The `winnower` role
# logs in with a password over TCP (as a deployment would) and may create databases, so each test
# makes its own and drops it.
#
#   .ci/postgres.sh start DIR    initdb, start, create the role; prints the URL (postgres://winnower:…@127.0.0.1:PORT/winnower)
#   .ci/postgres.sh stop DIR     stop the server started in DIR (SIGINT: a fast shutdown, then KILL), remove DIR
#   .ci/postgres.sh halt DIR     stop the server started in DIR, keeping its data (a database outage, for the restart test)
#   .ci/postgres.sh resume DIR   start a halted server again on the same data folder and port
#   .ci/postgres.sh restart DIR  halt, then resume
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cmd="${1:?start|stop|halt|resume|restart}"
dir=$(realpath -m "${2:?scratch folder}")
bin="${WINNOWER_POSTGRES_BIN:-/usr/lib/postgresql/15/bin}"

# initdb and postgres refuse to run as root: as root they run as the `postgres` user.
as_owner() {
  # From /: the caller's folder may be one the postgres user cannot enter (a checkout in a 0700 folder).
  # exec: the launcher pid the script keeps is then runuser's own, not a subshell's that would leave it behind.
  if [ "$(id -u)" = 0 ]; then (cd / && exec runuser -u postgres -- "$@"); else "$@"; fi
}

# A fast shutdown (SIGINT to the postmaster, by the pid in its data folder): Postgres takes TERM
# as a smart shutdown, which waits for every client to leave, and the test replicas never do.
# Then the launcher (runuser as root) by its pid, TERM then KILL.
halt_server() {
  local pid
  pid=$(head -n 1 "$dir/data/postmaster.pid" 2>/dev/null || true)
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -INT "$pid"
    for _ in $(seq 120); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; fi
  fi
  stop_pidfile "$dir/launcher.pid" 60
}

# Starts the server on $dir/data and $port, and waits until it answers.
launch() {
  as_owner "$bin/postgres" -D "$dir/data" -k "$dir" -p "$port" -c listen_addresses=127.0.0.1 -c max_connections=200 \
    -c fsync=off >>"$dir/postgres.log" 2>&1 &
  echo $! >"$dir/launcher.pid"
  if ! wait_ready "$dir/launcher.pid" 120 "$bin/pg_isready" -h "$dir" -p "$port" -U postgres; then
    echo "postgres did not start; its log:" >&2
    tail -n 40 "$dir/postgres.log" >&2
    exit 1
  fi
}

case "$cmd" in
start)
  started=$EPOCHREALTIME
  mkdir -p "$dir"
  [ "$(id -u)" = 0 ] && chown postgres: "$dir"
  chmod 0700 "$dir"
  password=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
  as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 \
    >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
  port=$(node -e 'const s=require("node:net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
  # Kept, so a resume listens where the clients' URL points.
  echo "$port" >"$dir/port"
  launch
  as_owner "$bin/psql" -h "$dir" -p "$port" -U postgres -d postgres -q -v ON_ERROR_STOP=1 \
    -c "CREATE ROLE winnower LOGIN CREATEDB PASSWORD '$password'" -c 'CREATE DATABASE winnower OWNER winnower' >&2
  printf 'postgres: %s up in %s s on 127.0.0.1:%s (socket in %s)\n' "$("$bin/postgres" --version)" "$(since "$started")" "$port" "$dir" >&2
  echo "postgres://winnower:$password@127.0.0.1:$port/winnower"
  ;;
stop)
  halt_server
  rm -rf "$dir"
  ;;
halt)
  halt_server
  ;;
resume)
  port=$(cat "$dir/port")
  launch
  ;;
restart)
  halt_server
  port=$(cat "$dir/port")
  launch
  ;;
*)
  echo "usage: $0 start|stop|halt|resume|restart DIR" >&2
  exit 2
  ;;
esac
